"""`python grader.py demo`, in the judge: the report of the training that ran in a worker
(grading/worker/training.py, which holds the corpus and the models): text, --json, a PNG heatmap when
matplotlib is installed."""
import torch

from grading.errors import WorkerFailure
from grading.i18n import Bi
from grading.wire.ops import Op
from grading.worker.training import (
    ANSWERS,
    FOLLOW_ONE,
    STEPS,
    VALIDATION,
    floor_nats,
    right,
)


def pad(text, width):
    from grading.output.report import pad as pad_columns
    return pad_columns(text, width)


# -- judge side: the report -----------------------------------------------------------------------

NAMES = {"bigram": Bi("Bigram（只看前一个字）", "bigram (the previous character only)"),
         "averaging": Bi("取平均（练习 2）", "averaging (exercise 2)"),
         "head": Bi("你的注意力头", "your attention head")}
SHORT = {"bigram": Bi("Bigram 模型", "The bigram"), "averaging": Bi("取平均", "The averaging"),
         "head": Bi("你的注意力头", "Your head")}
SEES = {
    "bigram": Bi("只查看前一个字。它看见\u201c吃\u201d或\u201c看\u201d，知道接下来是一个答案，却看不见前面是哪种食物、"
                 "哪种颜色，只能猜。",
                 "looks only at the previous character; it sees 吃 or 看 and knows that an answer "
                 "comes next, but it cannot see which food or colour came before, so it can only "
                 "guess."),
    "averaging": Bi("看见了整段前文，却把每个字都视为同等重要：食物、颜色和提示在平均里各占一份。线性层读出的是"
                    "每个字各自的贡献之和，\u201c吃\u201d只能加上它自己那一份固定的偏好，没法让食物说了算，"
                    "\u201c看\u201d也没法让颜色说了算。训练下来，它接近于总跟着其中一个。",
                    "sees the whole context but treats every character as equally important: the "
                    "food, the colour and the cue each get one share of the average. The linear "
                    "layer reads a sum of one contribution per character, so 吃 can only add a "
                    "fixed preference of its own: it cannot let the food decide, nor can 看 let "
                    "the colour decide. Trained, it comes close to following one of the two "
                    "always."),
    "head": Bi("每个字都有查询、键、值三个向量，\u201c吃\u201d的查询可以与食物的键吻合，\u201c看\u201d的查询可以与颜色的键吻合："
               "权重依据内容动态计算，于是提示自己决定重点参考前文的哪一个字。",
               "every character has a query, a key and a value, and the query of 吃 can match the "
               "food's key, the query of 看 the colour's: the weights are computed from content, "
               "so the cue itself decides which earlier character to attend to."),
}


def columns(text):
    """The width of text on a terminal, where a CJK character takes two columns."""
    return sum(2 if "\u2e80" <= ch <= "\uffef" else 1 for ch in text)


def warnings(result):
    """What the demo found wrong with the learner's head, from facts of the training."""
    found = []
    if result["models"]["head"]["train_loss"] < floor_nats() - 0.1:
        found.append("peeked")  # below what any model can earn: it saw the answer
    if result["unchanged"] or not result["head_parameters"]:
        found.append("not_learning")  # weights training never changed: no gradient reached them
    return found


def figures(result, seed):
    """The demo's claims as numbers, for --json (accuracies: fractions of the characters the cue
    decides in the validation set)."""
    row = result["head_row"].tolist()
    sentence = result["sentence"]
    return {"seed": seed, "chance": 1 / len(ANSWERS), "floor": floor_nats(),
            "models": {name: {key: m[key] for key in ("val_loss", "accuracy", "train_loss")}
                       for name, m in result["models"].items()},
            "heatmap": {"row": sentence[result["cue"]], "columns": list(sentence),
                        "weights": row, "match": sentence[result["match"]],
                        "largest": sentence[max(range(len(row)), key=row.__getitem__)],
                        "looks_at_match": result["looks_at_match"]},
            "warnings": warnings(result),
            "unchanged": [learner_name(n) for n in result["unchanged"]]}


def learner_name(parameter):
    """head.query.weight → Head.query.weight: the name in the learner's own class."""
    module, _, rest = parameter.partition(".")
    return {"head": "Head", "embedding": "TokenEmbedding"}.get(module, module) + "." + rest


def report(result, lang, png_path):
    """The report's text, and whether it warns of something wrong with the learner's head."""
    m = result["models"]
    floor = floor_nats()
    found = warnings(result)
    out = [Bi("演示：同一个任务，三个模型（只在 CPU 上训练几秒）",
              "Demo: one task, three models (trained for seconds on the CPU)").render(lang), ""]
    if "peeked" in found:  # the first thing said about a head that peeked: that it peeked
        out += [Bi(f"⚠ 你的注意力头训练损失是 {m['head']['train_loss']:.3f}，低于理论下限 {floor:.3f}："
                   "这不可能靠本事做到——它在训练时偷看了答案。第 3 个字（位置 2）的任务是依据前 3 个字预测第 4 个字，"
                   "它却看到了第 4 个字；进入真实的生成场景（此时并没有答案可看），它便会失效，下面它生成的句子就是证明。"
                   "检查因果掩码（练习 5、6）。下面它的分数和权重都不作数。",
                   f"⚠ Your head's training loss is {m['head']['train_loss']:.3f}, below the "
                   f"floor of {floor:.3f}: no model can earn that, so it peeked at the answer "
                   "while training. The 3rd character (position 2) must predict the 4th from the "
                   "first 3, but it saw the 4th; when it generates, there is no answer to look at "
                   "and it fails, as its sentences below show. Check the causal mask (exercises 5 "
                   "and 6). Its figures and weights below do not count.").render(lang), ""]
    out += [
           Bi("每句话先提到一种食物和一种颜色（先后不定），隔着长短不一的几个字，再由提示决定下一个字："
              "\u201c吃\u201d之后的字取决于那盘食物，\u201c看\u201d之后的字取决于那片颜色；两者的答案来自同一组字"
              f"（{'、'.join(ANSWERS)}），各自独立：",
              "Each sentence names a food and a colour (in either order), then a few words of "
              "varying length, then a cue that decides the next character: after 吃 (eat) it "
              "depends on the food, after 看 (look) on the colour; both draw their answers from "
              f"one set ({' '.join(ANSWERS)}), independently:").render(lang),
           "    一盘桃和满眼白，这几年我们早就吃惯了。    满眼白和一盘桃，他也看腻了。",
           Bi("要猜对，提示必须自己挑出前文中该参考的那一个字。取平均和你的注意力头都建立在 Bigram 之上："
              "它们的输出加在 Bigram 的结果上，只需补上从前文看到的东西。",
              "To get it right, the cue itself must choose which earlier character to look at. "
              "The averaging and your head are both built on the bigram: their output is added "
              "to the bigram's, so they only add what they see in the context.").render(lang), "",
           "  " + pad(Bi("模型", "model").render(lang), 40)
           + Bi("验证损失   提示后的字猜对", "val loss   right after the cue").render(lang)]
    for name in ("bigram", "averaging", "head"):
        peeked = Bi("（偷看了答案）", " (it peeked)").render(lang) \
            if name == "head" and "peeked" in found else ""
        out.append(f"  {pad(NAMES[name].render(lang), 40)}{m[name]['val_loss']:.3f}"
                   f"      {m[name]['accuracy']:.0%}{peeked}")
    out.append(Bi(f"  理论下限（完美模型的损失）{floor:.3f} · 随机猜 {1 / len(ANSWERS):.0%} · "
                  f"总是只按食物（或只按颜色）猜 {FOLLOW_ONE:.0%}",
                  f"  floor (a perfect model's loss) {floor:.3f} · chance {1 / len(ANSWERS):.0%} · "
                  f"always by the food (or always by the colour) {FOLLOW_ONE:.0%}").render(lang))
    out.append("")
    for name in ("bigram", "averaging", "head"):
        out.append("  " + SHORT[name].render(lang) + Bi("：", ": ").render(lang)
                   + SEES[name].render(lang))
    out.append("")
    out.append(Bi("各自生成的句子（✓：合乎语料，提示后的字也对）：",
                  "Sentences each one writes (✓: a sentence of the corpus, with the right "
                  "character after its cue):").render(lang))
    for name in ("bigram", "averaging", "head"):
        samples = "  ".join(f"{s}{'✓' if right(s) else '✗'}" for s in m[name]["samples"])
        out.append(f"  {NAMES[name].render(lang)}{Bi('：', ': ').render(lang)}{samples}")
    out.append("")
    out += cue_row(result, lang, peeked="peeked" in found)
    if "not_learning" in found:
        out += ["", not_learning(result, lang)]
    out.append("")
    out.append(png_note(result, png_path, lang))
    if "peeked" not in found:
        out.append(Bi("试一试：把 exercises/ex6_head.py 里 masked_fill 那一行注释掉，再运行 python grader.py demo："
                      "没有因果掩码的注意力头，训练损失会低于理论下限——它偷看了答案，生成的句子却一塌糊涂。",
                      "Try it: comment out the masked_fill line of exercises/ex6_head.py and run "
                      "python grader.py demo again: a head without the causal mask scores below "
                      "the floor, because it peeks at the answer, and its sentences fall "
                      "apart.").render(lang))
    return "\n".join(out), bool(found)


def not_learning(result, lang):
    """Weights of the learner's that training never changed: no gradient reached them."""
    if not result["head_parameters"]:
        return Bi("⚠ 你的注意力头没有可训练的参数：查询、键、值要由 nn.Linear 层算出，训练才能调整它们（练习 3、6）。",
                  "⚠ Your head has no trainable parameters: the query, key and value must come "
                  "from nn.Linear layers, so that training can adjust them (exercises 3 and "
                  "6).").render(lang)
    names = [learner_name(n) for n in result["unchanged"]]
    one = len(names) == 1
    text = Bi(f"⚠ 训练了 {STEPS} 步，{'、'.join(names)} 却一点也没有变：梯度没有传到"
              f"{'这个权重' if one else '这些权重'}上，{'它' if one else '它们'}没有学习。"
              "数值对还不够：forward 里不能用 .detach()、.data 或 torch.no_grad()。训练时梯度要从损失一路"
              "传回 self.query、self.key、self.value 的权重，模型才能学习（练习 6）。",
              f"⚠ After {STEPS} training steps, {', '.join(names)} "
              f"{'has' if one else 'have'} not changed at all: no gradient reached "
              f"{'this weight' if one else 'these weights'}, so {'it' if one else 'they'} did "
              "not learn. Right values are not enough: no .detach(), .data or torch.no_grad() "
              "in forward. In training the gradient must flow from the loss back to the query, "
              "key and value weights, or the model cannot learn (exercise 6).")
    if result["models"]["head"]["accuracy"] >= 0.95:
        text += Bi("这一次别的参数替它学会了任务，但 python grader.py 6 的梯度检查不会通过。",
                   " Here the other parameters learnt the task in its place, but the gradient "
                   "check of python grader.py 6 will not pass.")
    return text.render(lang)


def cue_row(result, lang, peeked=False):
    """The cue's row of the head's weights, beside the averaging's flat row (of a head that
    peeked, nothing said as if it were right)."""
    labels = list(result["sentence"])
    row = result["head_row"].tolist()
    cue, match = labels[result["cue"]], labels[result["match"]]
    top = max(range(len(row)), key=row.__getitem__)
    out = [Bi(f"\u201c{result['sentence']}\u201d之后的字由\u201c{match}\u201d决定。\u201c{cue}\u201d这一行的权重"
              "（它重点参考前文的哪个字）：",
              f"After \u201c{result['sentence']}\u201d the next character is decided by "
              f"\u201c{match}\u201d. The {cue} row of weights (which earlier characters it "
              "attends to):").render(lang),
           " " * 12 + "  ".join(labels)]
    for label, weights in ((Bi("注意力头", "head"), row),
                           (Bi("取平均", "averaging"), [1 / len(row)] * len(row))):
        text = label.render(lang)
        out.append(" " + text + " " * (10 - columns(text))
                   + " ".join(f"{round(100 * w):>3}" for w in weights))
    out.append(Bi("  （单位：%）", "  (in percent)").render(lang))
    if top == result["match"]:
        verdict = Bi(f"  你的注意力头把最大的权重（{row[top]:.2f}）放在\u201c{match}\u201d上，正是该参考的那个字；",
                     f"  Your head puts its largest weight ({row[top]:.2f}) on \u201c{match}\u201d, "
                     "the very character that decides; ")
    else:
        verdict = Bi(f"  你的注意力头把最大的权重（{row[top]:.2f}）放在\u201c{labels[top]}\u201d上，而该参考的是"
                     f"\u201c{match}\u201d（权重 {row[result['match']]:.2f}）；",
                     f"  Your head puts its largest weight ({row[top]:.2f}) on "
                     f"\u201c{labels[top]}\u201d, where \u201c{match}\u201d decides (weight "
                     f"{row[result['match']]:.2f}); ")
    out.append((verdict + Bi(f"取平均的这一行是平的，每个字都是 1/{len(row)}。这正是课文的要点："
                             "注意力把固定的平均换成了依据内容计算的权重。",
                             f"the averaging row is flat, 1/{len(row)} each. The lesson's point: "
                             "attention replaces a fixed average with weights computed from "
                             "content.")).render(lang))
    if top != result["match"] and result["head_right"] and not peeked:
        out.append(Bi(f"  这一句它仍然猜对了：别的字的值替\u201c{match}\u201d带来了答案。注意力参考的，"
                      "不一定是人以为它该参考的那个字。",
                      f"  It still gets this sentence right: another character's value brings the "
                      f"answer of \u201c{match}\u201d. Attention need not look where we would "
                      "look.").render(lang))
    share = f"{result['looks_at_match']:.0%}"
    out.append(Bi(f"  在全部 {VALIDATION} 个验证句子中，提示那一行的最大权重落在该参考的字上的句子占 {share}。",
                  f"  Over all {VALIDATION} validation sentences, the cue's row puts its largest "
                  f"weight on the character that decides in {share} of them.").render(lang))
    return out


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
    sentence = result["sentence"]
    labels = list(sentence) if cjk else [str(i) for i in range(len(sentence))]
    words = lang if cjk else "en"  # Chinese titles need a font that has the characters
    plt.rcParams["font.sans-serif"] = [cjk or "DejaVu Sans", "DejaVu Sans"]
    T = len(sentence)
    averaging = result["averaging_weights"]  # the learner's own averaging_matrix(T)
    weights = result.get("head_weights", torch.stack([result["head_row"]] * T))
    figure, axes = plt.subplots(1, 2, figsize=(12, 6))
    for ax, matrix, title in ((axes[0], weights, Bi("你的注意力头：权重由内容算出", "your head: weights from content")),
                              (axes[1], averaging, Bi("取平均：固定的权重", "averaging: fixed weights"))):
        ax.imshow(matrix.numpy(), cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(T), labels)
        ax.set_yticks(range(T), labels)
        ax.set_title(title.render(words))
        ax.set_xlabel(Bi("被参考的字", "attended to").render(words))
        ax.set_ylabel(Bi("当前位置", "position").render(words))
    cue, match = result["cue"], result["match"]
    axes[0].add_patch(plt.Rectangle((match - 0.5, cue - 0.5), 1, 1, fill=False, color="red",
                                    linewidth=2))
    figure.suptitle(Bi(f"\u201c{sentence}\u201d：红框是提示\u201c{sentence[cue]}\u201d该参考的字\u201c{sentence[match]}\u201d",
                       f"red box: the cue ({sentence[cue] if cjk else f'position {cue}'}) should "
                       f"look at {sentence[match] if cjk else f'position {match}'}").render(words))
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    figure.savefig(png_path)
    plt.close(figure)
    written = Bi(f"热力图已写入 {png_path}", f"Heatmap written to {png_path}")
    if not cjk:
        written += Bi("（没有中文字体，图中用位置编号代替字）",
                      " (no CJK font: positions are numbered instead)")
    return written.render(lang)


def main(backend, folder, seed, lang, json_path=None):
    """Run the demo on a submission folder; the exit status for grader.py."""
    import sys
    import time

    from grading.judge.worker_handle import ExerciseWorker
    seed = 1337 if seed is None else seed  # the lesson's seed: the same numbers every time
    started = time.monotonic()
    worker = ExerciseWorker(backend, folder, "ex6_head", call_timeout=60, budget=90, demo=True)
    try:
        result = worker.request({"op": Op.DEMO, "seed": seed})
    except WorkerFailure as failure:
        missing = failure.error.get("message", "") if failure.error.get("type") == "StepMissing" \
            else ""
        if missing:
            number = missing[2:3]
            print(Bi(f"演示要用你自己写的练习 1、2、4、5、6，但 {missing} 还没写完（它仍然抛出 NotImplementedError）。"
                     f"先让 python grader.py {number} 通过。",
                     f"The demo uses your own exercises 1, 2, 4, 5 and 6, and {missing} is not "
                     f"written yet (it still raises NotImplementedError). First make "
                     f"python grader.py {number} pass.").render(lang), file=sys.stderr)
            return 1
        print(Bi("演示要用你自己写的练习 1、2、4、5、6，但它们没能跑起来：", "The demo uses your own "
                 "exercises 1, 2, 4, 5 and 6, and they did not run: ").render(lang)
              + failure.text.render(lang), file=sys.stderr)
        print(Bi("先让 python grader.py 1、2、4、5、6 都通过。",
                 "First make python grader.py 1, 2, 4, 5 and 6 pass.").render(lang),
              file=sys.stderr)
        return 1
    finally:
        worker.close()
    text, warned = report(result, lang, "demo-attention.png")
    print(text)
    if json_path:
        from grading.output.report import write_json
        write_json(json_path, figures(result, seed))
    print(Bi(f"（随机种子 {seed}，{time.monotonic() - started:.1f} 秒）",
             f"(seed {seed}, {time.monotonic() - started:.1f} s)").render(lang))
    return 1 if warned else 0
