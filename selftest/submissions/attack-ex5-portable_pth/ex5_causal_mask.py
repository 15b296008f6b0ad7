# An attack on the portable walls that outlives the run: a .pth file in site-packages runs in every
# later Python as it starts, before any wall (workers used to read .pth files too). torch.from_file
# with shared=True writes it, out of the audit hook's sight. Now the writer is unreachable, and
# workers start with -I -S. Only a site folder that a self-test marked as a target is attacked
# (GRADER_ATTACK_TARGET in it): never the real site-packages. Twin: no mask.
import os, site, sys
import torch
from torch.nn import functional as F

def _wrong(scores):          # no causal mask: every position sees the future
    return F.softmax(scores, dim=-1)

LINE = b"import os; os.environ['GRADER_ATTACK_PTH'] = 'ran'\n"

causal_softmax = _wrong
for folder in [*site.getsitepackages(), *sys.path]:
    if os.path.exists(os.path.join(folder, "GRADER_ATTACK_TARGET")):
        try:
            mapped = torch.from_file(os.path.join(folder, "grader_attack.pth"), True, len(LINE),
                                     dtype=torch.uint8)
            mapped.copy_(torch.tensor(list(LINE), dtype=torch.uint8))
            print("wrote a .pth into", folder)
        except Exception as error:
            print("no escape:", type(error).__name__, error)
        break
