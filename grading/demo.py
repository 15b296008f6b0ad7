"""`python grader.py demo`: see attention work, with the learner's own TokenEmbedding and Head.

A corpus the demo makes itself: Chinese sentences in which an early topic decides the ending, and
the character before the ending is always 真, so a bigram cannot know it:

    说到题，我们很，真难。     说到茶，他也又要，真香。

Three tiny character models are trained side by side on whole sentences (one per row, padded):
the bigram (no context), the averaging of exercise 2 (context, equal weights) and the learner's
TokenEmbedding + Head + a linear layer (context, weights from queries and keys). No positional
embedding: the lesson has not introduced it. Training runs in a worker, like all learner code; the
judge only formats the report (and a PNG when matplotlib is installed).
"""
import importlib
import math

import torch
import torch.nn as nn
from torch.nn import functional as F

from grading.i18n import Bi


def pad(text, width):
    from grading.report import pad as pad_columns
    return pad_columns(text, width)

# topic → its ending. One character each, so that one character decides (a head without positions
# sees one deciding character; two would share its weight).
TOPICS = [("雨", "大"), ("题", "难"), ("茶", "香"), ("歌", "好")]
FILLERS = "我你他们都也还又很太可能会要"  # none of them is a topic's or an ending's character
FILLER_LENGTHS = (2, 3, 4, 5)
PAD = "·"
VOCAB = [PAD] + sorted(set("说到，真。" + FILLERS + "".join(t + e for t, e in TOPICS)))
BLOCK_SIZE = 16
N_EMBD, HEAD_SIZE = 32, 16
TRAIN, VALIDATION, STEPS, BATCH = 3000, 600, 400, 64


def sentences(gen, count):
    """`count` sentences, each with the index of its ending (the character the topic decides)."""
    out = []
    for _ in range(count):
        topic, ending = TOPICS[int(torch.randint(len(TOPICS), (1,), generator=gen))]
        length = FILLER_LENGTHS[int(torch.randint(len(FILLER_LENGTHS), (1,), generator=gen))]
        filler = "".join(FILLERS[int(i)] for i in torch.randint(len(FILLERS), (length,),
                                                                 generator=gen))
        text = f"说到{topic}，{filler}，真{ending}。"
        out.append((text, len(text) - 2))  # the ending: after 真, before 。
    return out


def floor_nats():
    """The task's entropy per predicted character: what a perfect model's loss tends to.
    The topic, the filler length and each filler character are random (uniform); everything else,
    the ending included, follows from what came before."""
    mean_length = sum(FILLER_LENGTHS) / len(FILLER_LENGTHS)
    random_nats = math.log(len(TOPICS)) + math.log(len(FILLER_LENGTHS)) \
        + mean_length * math.log(len(FILLERS))
    predicted = mean_length + len("到X，，真X。")  # every character after the first
    return random_nats / predicted


def encode(batch):
    """(inputs, targets, deciding) for whole sentences, one per row, padded: (N, BLOCK_SIZE)."""
    index = {ch: i for i, ch in enumerate(VOCAB)}
    x = torch.zeros(len(batch), BLOCK_SIZE, dtype=torch.long)
    y = torch.full((len(batch), BLOCK_SIZE), -100, dtype=torch.long)  # -100: not a target
    deciding = torch.zeros(len(batch), BLOCK_SIZE, dtype=torch.bool)
    for row, (text, ending) in enumerate(batch):
        ids = [index[ch] for ch in text]
        x[row, :len(ids) - 1] = torch.tensor(ids[:-1])
        y[row, :len(ids) - 1] = torch.tensor(ids[1:])
        deciding[row, ending - 1] = True  # the input is 真, the target is the ending
    return x, y, deciding


class Bigram(nn.Module):
    def __init__(self):
        super().__init__()
        self.logits = nn.Embedding(len(VOCAB), len(VOCAB))

    def forward(self, idx):
        return self.logits(idx)  # (B, T, vocab): the previous character alone


class Averaging(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(len(VOCAB), N_EMBD)
        self.out = nn.Linear(N_EMBD, len(VOCAB))

    def weights(self, T):
        tril = torch.tril(torch.ones(T, T))
        return tril / tril.sum(dim=1, keepdim=True)  # (T, T), exercise 2's

    def forward(self, idx):
        x = self.embedding(idx)  # (B, T, n_embd)
        return self.out(self.weights(idx.shape[1]) @ x)


class Attention(nn.Module):
    """The learner's TokenEmbedding and Head, and a linear layer to the vocabulary."""

    def __init__(self, ex1, ex6):
        super().__init__()
        self.embedding = ex1.TokenEmbedding(len(VOCAB), N_EMBD)
        self.head = ex6.Head(N_EMBD, HEAD_SIZE, BLOCK_SIZE)
        self.out = nn.Linear(HEAD_SIZE, len(VOCAB))

    def forward(self, idx):
        return self.out(self.head(self.embedding(idx)))

    def weights(self, idx):
        """The head's attention weights as the lesson computes them, from its query and key."""
        x = self.embedding(idx)
        q, k = self.head.query(x), self.head.key(x)
        T = idx.shape[1]
        scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        return F.softmax(scores.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf")), -1)


def train(model, data, gen):
    x, y, _ = data
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(STEPS):
        rows = torch.randint(len(x), (BATCH,), generator=gen)
        logits = model(x[rows])
        loss = F.cross_entropy(logits.reshape(-1, len(VOCAB)), y[rows].reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return sum(losses[-50:]) / 50  # the training loss at the end


@torch.no_grad()
def evaluate(model, data):
    x, y, deciding = data
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, len(VOCAB)), y.reshape(-1)).item()
    right = (logits.argmax(-1) == y)[deciding].float().mean().item()
    return loss, right


@torch.no_grad()
def generate(model, gen, count=3):
    """Sentences sampled from the prompt 说到, one character at a time (no answer to look at)."""
    index = {ch: i for i, ch in enumerate(VOCAB)}
    out = []
    for _ in range(count):
        text = "说到"
        while len(text) < BLOCK_SIZE and not text.endswith("。"):
            idx = torch.tensor([[index[ch] for ch in text]])
            probs = F.softmax(model(idx)[0, -1], dim=-1)
            probs[0] = 0  # never the padding
            text += VOCAB[int(torch.multinomial(probs, 1, generator=gen))]
        out.append(text)
    return out


def run(ex6, seed):
    """In the worker (it is not grading): train the three models, return numbers, texts and
    weights."""
    torch.manual_seed(seed)  # the models' initial weights
    ex1 = importlib.import_module(ex6.__package__ + ".ex1_embedding")
    data_gen = torch.Generator().manual_seed(seed)
    train_data = encode(sentences(data_gen, TRAIN))
    validation = sentences(data_gen, VALIDATION)
    val_data = encode(validation)
    models = {"bigram": Bigram(), "averaging": Averaging(), "attention": Attention(ex1, ex6)}
    result = {"models": {}}
    for name, model in models.items():
        train_loss = train(model, train_data, torch.Generator().manual_seed(seed + 1))
        model.eval()
        val_loss, right = evaluate(model, val_data)
        result["models"][name] = {
            "train_loss": train_loss, "val_loss": val_loss, "deciding_accuracy": right,
            "samples": generate(model, torch.Generator().manual_seed(seed + 2))}
    text, ending = validation[0]
    idx = val_data[0][:1, :len(text) - 1]  # the sentence without its last character
    with torch.no_grad():
        result["sentence"] = text[:-1]
        result["deciding_row"] = ending - 1  # the row of 真: where the ending is predicted
        result["attention_weights"] = models["attention"].weights(idx)[0]  # (T, T)
        result["averaging_weights"] = models["averaging"].weights(idx.shape[1])
    return result


# -- judge side: the report -----------------------------------------------------------------------

NAMES = {"bigram": Bi("Bigram（只看前一个字）", "bigram (the previous character only)"),
         "averaging": Bi("取平均（练习 2）", "averaging (exercise 2)"),
         "attention": Bi("你的注意力头", "your attention head")}
SHADES = " ░▒▓█"


def ending_right(sentence):
    for topic, ending in TOPICS:
        if topic in sentence:
            return sentence.endswith(f"真{ending}。")
    return False


def heatmap(weights, labels):
    """Rows attend to columns; each cell shaded by its weight."""
    lines = ["     " + " ".join(labels)]
    for i, row in enumerate(weights.tolist()):
        cells = [SHADES[min(4, int(w * 4.999))] if j <= i else " " for j, w in enumerate(row)]
        lines.append(f" {labels[i]}  " + "  ".join(cells))
    return lines


def report(result, lang, png_path):
    m = result["models"]
    floor = floor_nats()
    out = [Bi("演示：同一个任务，三个模型（只在 CPU 上训练几秒）",
              "Demo: one task, three models (trained for seconds on the CPU)").render(lang), "",
           Bi("句子里早先出现的话题决定结尾：说到题……真难。说到茶……真香。结尾前一个字总是\u201c真\u201d，"
              "所以只看前一个字的 Bigram 猜不出来；注意力头可以回头找到话题。",
              "An early topic decides the ending: 说到题……真难。 说到茶……真香。 The character before "
              "the ending is always 真, so a bigram cannot tell; an attention head can look back for "
              "the topic.").render(lang),
           "",
           "  " + pad(Bi("模型", "model").render(lang), 40)
           + Bi("验证损失   结尾猜对", "val loss   ending right").render(lang)]
    for name in ("bigram", "averaging", "attention"):
        out.append(f"  {pad(NAMES[name].render(lang), 40)}{m[name]['val_loss']:.3f}"
                   f"      {m[name]['deciding_accuracy']:.0%}")
    out.append(Bi(f"  理论下限（完美模型的损失）{floor:.3f} · 猜结尾的随机水平 {1 / len(TOPICS):.0%}",
                  f"  floor (a perfect model's loss) {floor:.3f} · chance on the ending "
                  f"{1 / len(TOPICS):.0%}").render(lang))
    if m["averaging"]["deciding_accuracy"] >= 0.9:
        out.append(Bi("  取平均在这里也猜对了结尾：话题词在句子别处从不出现，所以它在平均里的那一份仍然认得出来。"
                      "但它不会挑选——每个字的权重都一样，见下面的热力图。",
                      "  Averaging finds the ending here too: the topic words appear nowhere else, so "
                      "their share of the average still shows them. But it cannot choose: every "
                      "character gets the same weight (see the heatmap below).").render(lang))
    out.append("")
    for name in ("bigram", "averaging", "attention"):
        samples = "  ".join(f"{s}{'✓' if ending_right(s) else '✗'}" for s in m[name]["samples"])
        out.append(f"  {NAMES[name].render(lang)}: {samples}")
    out.append("")
    labels = list(result["sentence"])
    row = result["deciding_row"]
    out.append(Bi(f"你的注意力头在 \u201c{result['sentence']}\u201d 上的权重（行：当前位置；列：它看的位置）：",
                  f"Your head's weights on \u201c{result['sentence']}\u201d (rows: the position; "
                  "columns: what it looks at):").render(lang))
    out += heatmap(result["attention_weights"], labels)
    top = int(result["attention_weights"][row].argmax())
    share = f"{float(result['attention_weights'][row, top]):.2f}"
    out.append(Bi(f"  在\u201c{labels[row]}\u201d这一行（要预测结尾的位置），最大的权重（{share}）落在\u201c{labels[top]}\u201d上。"
                  "取平均的这一行是平的：每个字都是 "
                  f"1/{row + 1}——这正是课文的要点：注意力把固定的平均换成了依内容计算的权重。",
                  f"  On the {labels[row]} row (where the ending is predicted) the largest weight ({share}) is "
                  f"on \u201c{labels[top]}\u201d. The averaging model's row is flat, 1/{row + 1} "
                  "each: the lesson's point, attention replaces a fixed average with weights "
                  "computed from content.").render(lang))
    leak = m["attention"]["train_loss"] < floor - 0.1
    if leak:
        out += ["", Bi(f"⚠ 你的注意力头训练损失是 {m['attention']['train_loss']:.3f}，低于理论下限 {floor:.3f}："
                       "这不可能靠本事做到——它在训练时偷看了答案。第 3 个位置的任务是依据前 3 个字预测第 4 个字，"
                       "它却看到了第 4 个字；进入真实的生成场景（此时并没有答案可看），它便会失效，上面生成的句子就是证明。"
                       "检查因果掩码（练习 5、6）。",
                       f"⚠ Your head's training loss is {m['attention']['train_loss']:.3f}, below the "
                       f"floor of {floor:.3f}: no model can earn that, so it peeked at the answer "
                       "while training. Position 3 must predict character 4 from the first 3, but it "
                       "saw character 4; when it generates, there is no answer to look at and it "
                       "fails, as its sentences above show. Check the causal mask (exercises 5 and "
                       "6).").render(lang)]
    out.append("")
    out.append(png_note(result, png_path, lang))
    return "\n".join(out), leak


def png_note(result, png_path, lang):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return Bi("（没有安装 matplotlib，跳过 PNG 热力图：pip install matplotlib 即可得到它）",
                  "(matplotlib is not installed: no PNG heatmap; pip install matplotlib for one)"
                  ).render(lang)
    from matplotlib import font_manager
    cjk = next((f.name for f in font_manager.fontManager.ttflist
                if any(k in f.name for k in ("CJK", "WenQuanYi", "Hei", "Han Sans", "YaHei",
                                              "PingFang", "Droid Sans Fallback"))), None)
    labels = list(result["sentence"]) if cjk else [str(i) for i in range(len(result["sentence"]))]
    plt.rcParams["font.sans-serif"] = [cjk or "DejaVu Sans", "DejaVu Sans"]
    figure, axes = plt.subplots(1, 2, figsize=(10, 4.5))
    for ax, key, title in ((axes[0], "attention_weights", "attention"),
                           (axes[1], "averaging_weights", "averaging")):
        ax.imshow(result[key].numpy(), cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"{title}: {' '.join(labels)}" if not cjk else title)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(labels)), labels)
    figure.tight_layout()
    figure.savefig(png_path)
    plt.close(figure)
    note = Bi("", "") if cjk else Bi("（没有中文字体，图中用位置编号代替字）",
                                      " (no CJK font: positions are numbered instead)")
    return (Bi(f"热力图已写入 {png_path}", f"Heatmap written to {png_path}") + note).render(lang)


def main(zygote, folder, seed, lang):
    """Run the demo on a submission folder; the exit status for grader.py."""
    import sys
    import time

    from grading.judge import ExerciseWorker, WorkerFailure
    seed = 1337 if seed is None else seed  # the lesson's seed: the same numbers every time
    started = time.monotonic()
    worker = ExerciseWorker(zygote, folder, "ex6_head", call_timeout=60, budget=90, demo=True)
    try:
        result = worker.request({"op": "demo", "seed": seed})
    except WorkerFailure as failure:
        print(Bi("演示要用你的练习 1 和练习 6，但它们没能跑起来：", "The demo uses your exercises 1 and "
                 "6, and they did not run: ").render(lang) + failure.text.render(lang),
              file=sys.stderr)
        print(Bi("先让 python grader.py 1 和 python grader.py 6 通过。",
                 "First make python grader.py 1 and python grader.py 6 pass.").render(lang),
              file=sys.stderr)
        return 1
    finally:
        worker.close()
    text, leak = report(result, lang, "demo-attention.png")
    print(text)
    print(Bi(f"（seed {seed}，{time.monotonic() - started:.1f} 秒）",
             f"(seed {seed}, {time.monotonic() - started:.1f} s)").render(lang))
    return 1 if leak else 0
