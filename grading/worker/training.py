"""`python grader.py demo`, in the worker: train with the learner's own TokenEmbedding and Head.

A corpus the demo makes itself. Each sentence names a food and a colour, in either order, then a
filler of varying length, then a cue and its answer:

    一盘桃和满眼白，这几年我们早就吃惯了。      满眼白和一盘桃，他也看腻了。

吃 asks for the food's answer, 看 for the colour's; foods and colours draw their answers from one
shared set (惯 腻 够 过 怕, two foods and two colours each), independently. The character after the
cue thus depends on an interaction: the cue chooses which of two earlier characters decides.

Three tiny character models are trained side by side on whole sentences (one per row, padded):
- the bigram: counts of which character follows which (the previous character only);
- the averaging of exercise 2 (the learner's average_context): the bigram plus a linear layer
  reading the average of the context.
  Its logits are a sum of one term per character: the cue adds a fixed preference of its own,
  whatever the food and colour, so it cannot make the food decide after 吃 and the colour after
  看. Always following one of the two gets 60 %; a cleverer sum gets at most 3 of the 4 cues right
  over a pair of sentences with food and colour swapped (≤ 80 %), and trained it lands near 60 %;
- the learner's TokenEmbedding + Head, and a linear layer, added to the bigram in the same way: the
  cue's query can match the food's or the colour's key.
Both context models are built on the bigram (fixed), so that they only add what the context says:
alone, a head without positions spends its training on the sentences' fixed words and its cue
gets stuck attending to itself. No positional embedding: the lesson has not introduced it.
This file is the worker's half: the training runs in a worker, like all learner code, and imports
torch alone. The judge's half, grading/demo/report.py, formats the report, writes --json and draws a PNG
when matplotlib is installed.
"""
import importlib
import math
import random
import re

import torch
import torch.nn as nn
from torch.nn import functional as F

from grading.errors import StepMissing

# -- the corpus -----------------------------------------------------------------------------------

ANSWERS = "惯腻够过怕"  # shared by foods and colours: 吃惯 看惯, 吃腻 看腻, 吃够 看够, 吃过 看过, 吃怕 看怕
FOODS = {"桃": "惯", "梨": "惯", "瓜": "腻", "枣": "腻", "鱼": "够", "虾": "够", "饼": "过", "糕": "过",
         "肉": "怕", "菜": "怕"}  # 一盘桃 …, two foods for each answer
COLOURS = {"红": "惯", "绿": "惯", "黄": "腻", "白": "腻", "蓝": "够", "紫": "够", "灰": "过", "金": "过",
           "黑": "怕", "青": "怕"}  # 满眼红 …, two colours for each answer
NAMED = {"food": ("一盘", FOODS), "colour": ("满眼", COLOURS)}  # 一盘桃, 满眼红
CUES = {"吃": "food", "看": "colour"}  # the cue and what decides the answer after it
TIMES = ("", "近来", "这几年")  # the filler between the named things and the cue: its length varies
SUBJECTS = ("我", "他", "她", "我们", "孩子们")
ADVERBS = ("早就", "都", "也", "已经")
PAD = "·"
VOCAB = [PAD] + sorted(set("和，了。" + "".join(CUES) + "".join(TIMES + SUBJECTS + ADVERBS)
                           + "".join(lead + "".join(items) for lead, items in NAMED.values())
                           + ANSWERS))
INDEX = {ch: i for i, ch in enumerate(VOCAB)}
FOLLOW_ONE = 1 / 2 + 1 / 2 / len(ANSWERS)  # always the food's answer: right after 吃, by luck after 看
FIXED = len("一盘桃和满眼红，") + len("吃惯了。")  # the characters every sentence has
MAX_LENGTH = FIXED + max(map(len, TIMES)) + max(map(len, SUBJECTS)) + max(map(len, ADVERBS))
BLOCK_SIZE = MAX_LENGTH - 1  # a sentence without its last character
N_EMBD, HEAD_SIZE = 32, 32
TRAIN, VALIDATION, STEPS, BATCH, LR = 4000, 4000, 400, 128, 2e-2


def sentences(rng, count):
    """`count` sentences drawn with rng (a random.Random): (text, the cue's index, the index of the
    character the cue asks for)."""
    out = []
    for _ in range(count):
        named = {kind: rng.choice(list(items)) for kind, (_, items) in NAMED.items()}
        order = rng.choice([("food", "colour"), ("colour", "food")])
        cue = rng.choice(list(CUES))
        text = "和".join(NAMED[kind][0] + named[kind] for kind in order) + "，" \
            + rng.choice(TIMES) + rng.choice(SUBJECTS) + rng.choice(ADVERBS) + cue
        kind = CUES[cue]
        match = 2 if order[0] == kind else 6  # 一盘桃和满眼红: 桃 at 2, 红 at 6
        out.append((text + NAMED[kind][1][named[kind]] + "了。", len(text) - 1, match))
    return out


def floor_nats():
    """The corpus's entropy per predicted character: what a perfect model's loss tends to.
    The order, the food, the colour, the filler (time, subject, adverb) and the cue are drawn
    uniformly; everything else, the answer included, follows from what came before. The first
    character (一 or 满: the order) is not predicted."""
    nats = sum(math.log(n) for n in (len(FOODS), len(COLOURS), len(TIMES), len(SUBJECTS),
                                     len(ADVERBS), len(CUES)))
    length = FIXED + sum(sum(map(len, words)) / len(words) for words in (TIMES, SUBJECTS, ADVERBS))
    return nats / (length - 1)


def encode(batch):
    """(inputs, targets, decided) for whole sentences, one per row, padded: (N, BLOCK_SIZE).
    decided marks the cue's position: its input is 吃 or 看, its target the answer."""
    inputs, targets = [], []
    for text, _, _ in batch:
        ids = [INDEX[ch] for ch in text]
        padding = BLOCK_SIZE - (len(ids) - 1)
        inputs.append(ids[:-1] + [0] * padding)
        targets.append(ids[1:] + [-100] * padding)  # -100: not a target
    decided = torch.zeros(len(batch), BLOCK_SIZE, dtype=torch.bool)
    decided[torch.arange(len(batch)), torch.tensor([cue for _, cue, _ in batch])] = True
    return torch.tensor(inputs), torch.tensor(targets), decided


def parse(text):
    """(food, colour, cue, answer) of a sentence of the corpus, else None."""
    food = "一盘([" + "".join(FOODS) + "])"
    colour = "满眼([" + "".join(COLOURS) + "])"
    times, subjects, adverbs = ("(?:" + "|".join(words) + ")" for words in (TIMES, SUBJECTS, ADVERBS))
    found = re.fullmatch(f"(?:{food}和{colour}|{colour}和{food})，{times}{subjects}{adverbs}"
                         f"([{''.join(CUES)}])(.)了。", text)
    if not found:
        return None
    g = found.groups()
    return g[0] or g[3], g[1] or g[2], g[4], g[5]


def right(text):
    """A sample is right when it is a sentence of the corpus and its answer fits its cue."""
    parsed = parse(text)
    if parsed is None:
        return False
    food, colour, cue, answer = parsed
    return answer == (FOODS[food] if CUES[cue] == "food" else COLOURS[colour])


# -- the models -----------------------------------------------------------------------------------

class Bigram(nn.Module):
    """The previous character alone: how often each character follows it in the training
    sentences (counted, not trained)."""

    def __init__(self, data):
        super().__init__()
        x, y, _ = data
        counts = torch.full((len(VOCAB), len(VOCAB)), 0.01)  # a little for pairs never seen
        seen = y != -100
        counts.index_put_((x[seen], y[seen]), torch.ones(int(seen.sum())), accumulate=True)
        self.register_buffer("table", torch.log_softmax(counts.log(), dim=1))  # log(p(next))

    def forward(self, idx):
        return self.table[idx]  # (B, T, vocab): log-probabilities of the next character


class Averaging(nn.Module):
    """The bigram, plus a linear layer reading the average of the context, by the learner's own
    exercise 2 (this file computes no exercise's answer: the student copy holds none)."""

    def __init__(self, bigram, ex2):
        super().__init__()
        self.bigram = bigram  # fixed: its table is a buffer, not a parameter
        self.ex2 = ex2
        self.embedding = nn.Embedding(len(VOCAB), N_EMBD)
        self.out = nn.Linear(N_EMBD, len(VOCAB))

    def forward(self, idx):
        x = self.embedding(idx)  # (B, T, n_embd)
        return self.bigram(idx) + self.out(self.ex2.average_context(x))


class Attention(nn.Module):
    """The bigram, plus a linear layer reading the learner's TokenEmbedding and Head."""

    def __init__(self, bigram, ex1, ex6, ex4, ex5):
        super().__init__()
        self.bigram = bigram
        self.embedding = ex1.TokenEmbedding(len(VOCAB), N_EMBD)
        self.head = ex6.Head(N_EMBD, HEAD_SIZE, BLOCK_SIZE)
        self.out = nn.Linear(HEAD_SIZE, len(VOCAB))
        self.ex4, self.ex5 = ex4, ex5

    def forward(self, idx):
        return self.bigram(idx) + self.out(self.head(self.embedding(idx)))

    def weights(self, idx):
        """The head's attention weights, from its query and key, by the learner's own exercises
        4 (the scaled scores) and 5 (the causal mask and softmax)."""
        x = self.embedding(idx)
        return self.ex5.causal_softmax(self.ex4.attention_scores(self.head.query(x),
                                                                 self.head.key(x)))


def train(model, data, gen):
    """AdamW on random batches of whole sentences; the training loss at the end."""
    x, y, _ = data
    if not any(p.requires_grad for p in model.parameters()):
        return evaluate(model, data)[0]  # the bigram: counted, nothing to train
    optimiser = torch.optim.AdamW(model.parameters(), lr=LR)
    losses = []
    for _ in range(STEPS):
        rows = torch.randint(len(x), (BATCH,), generator=gen)
        logits = model(x[rows])
        loss = F.cross_entropy(logits.reshape(-1, len(VOCAB)), y[rows].reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return sum(losses[-50:]) / 50


@torch.no_grad()
def evaluate(model, data):
    x, y, decided = data
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, len(VOCAB)), y.reshape(-1)).item()
    accuracy = (logits.argmax(-1) == y)[decided].float().mean().item()
    return loss, accuracy


@torch.no_grad()
def generate(model, gen, count=3):
    """Whole sentences sampled one character at a time from a first character (一 or 满)."""
    out = []
    for number in range(count):
        text = "一满"[number % 2]
        while len(text) < MAX_LENGTH and not text.endswith("。"):
            idx = torch.tensor([[INDEX[ch] for ch in text]])
            probs = F.softmax(model(idx)[0, -1], dim=-1)
            probs[0] = 0  # never the padding
            text += VOCAB[int(torch.multinomial(probs, 1, generator=gen))]
        out.append(text)
    return out


def heatmap_sentence(validation):
    """The first validation sentence whose food and colour have different answers: there the
    cue's row must look at the right one of the two."""
    for text, cue, match in validation:
        food, colour, _, _ = parse(text)
        if FOODS[food] != COLOURS[colour]:
            return text, cue, match
    return validation[0]


def run(ex6, seed):
    """In the worker (it is not grading): train the three models, return numbers, texts and
    weights."""
    ex1, ex2, ex4, ex5 = (importlib.import_module(f"{ex6.__package__}.{name}") for name in (
        "ex1_embedding", "ex2_averaging", "ex4_scaling", "ex5_causal_mask"))
    for module, probe in ((ex1, lambda: ex1.TokenEmbedding(3, 4)(torch.zeros(1, 2).long())),
                          (ex2, lambda: ex2.average_context(torch.zeros(1, 2, 3))),
                          (ex4, lambda: ex4.attention_scores(torch.zeros(1, 2, 3),
                                                             torch.zeros(1, 2, 3))),
                          (ex5, lambda: ex5.causal_softmax(torch.zeros(1, 2, 2))),
                          (ex6, lambda: ex6.Head(4, 4, 4)(torch.zeros(1, 2, 4)))):
        try:
            probe()
        except NotImplementedError:
            raise StepMissing(module.__name__.rsplit(".", 1)[-1]) from None
    rng = random.Random(seed)  # the corpus
    train_data = encode(sentences(rng, TRAIN))
    validation = sentences(rng, VALIDATION)
    val_data = encode(validation)
    bigram = Bigram(train_data)
    models = {"bigram": lambda: bigram, "averaging": lambda: Averaging(bigram, ex2),
              "head": lambda: Attention(bigram, ex1, ex6, ex4, ex5)}
    result = {"models": {}}
    for name, make in models.items():
        torch.manual_seed(seed)  # each model's initial weights, whatever the others drew
        model = make()
        if name == "head":
            learner, before = model, {n: p.detach().clone() for n, p in model.named_parameters()
                                      if n.startswith(("embedding.", "head."))}
        train_loss = train(model, train_data, torch.Generator().manual_seed(seed + 1))
        model.eval()
        val_loss, accuracy = evaluate(model, val_data)
        result["models"][name] = {
            "train_loss": train_loss, "val_loss": val_loss, "accuracy": accuracy,
            "samples": generate(model, torch.Generator().manual_seed(seed + 2))}
    # The learner's parameters that training never changed: no gradient reached them.
    now = dict(learner.named_parameters())
    result["unchanged"] = [n for n, old in before.items() if torch.equal(old, now[n].detach())]
    result["head_parameters"] = sum(p.numel() for p in learner.head.parameters())
    with torch.no_grad():  # over the validation set: does the cue's row look at what decides?
        cues = torch.tensor([cue for _, cue, _ in validation])
        rows = learner.weights(val_data[0])[torch.arange(len(validation)), cues]  # (N, T)
        matches = torch.tensor([match for _, _, match in validation])
        result["looks_at_match"] = (rows.argmax(-1) == matches).float().mean().item()
    text, cue, match = heatmap_sentence(validation)
    idx = torch.tensor([[INDEX[ch] for ch in text[:cue + 1]]])  # up to the cue
    with torch.no_grad():
        result["sentence"], result["cue"], result["match"] = text[:cue + 1], cue, match
        result["head_weights"] = learner.weights(idx)[0]  # (cue + 1, cue + 1): every row
        result["head_row"] = result["head_weights"][cue]  # (cue + 1,): the cue's
        result["head_right"] = VOCAB[int(learner(idx)[0, cue].argmax())] == text[cue + 1]
        # the averaging's weights, as the learner's exercise 2 makes them (a picture only)
        result["averaging_weights"] = ex2.averaging_matrix(cue + 1).detach().float()
    return result
