"""Attack 10: leave twenty sleepers behind, each in a session of its own. The answer itself is
right, so the exercise earns its points; the sleepers must not outlive the run."""
import subprocess
import sys

import torch.nn as nn

for _ in range(20):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # grader-attack-sleeper"],
                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, n_embd):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)

    def forward(self, idx):
        return self.token_embedding_table(idx)
