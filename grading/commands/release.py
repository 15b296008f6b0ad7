"""`python grader.py release OUT`: the student copy of the repository.

Everything a learner needs and nothing they must not have: no solutions/, no selftest/ (its
fixtures are solutions with one mistake each), no instructor tooling, no credential that reads
the solutions, and no code that computes an exercise's answer (the diagnoses: WITHHELD). Locally and in its own CI it runs the public checks and says that they are not the
grade: the hidden checks, and so the grades, run only where the solutions are (the course's
private repository, whose grade.yml fetches each student's exercises, or Gradescope). Its workflow,
feedback.yml, uses no secret at all; in CI the grader exits 1 without the solutions, so its check
and job summary never read as a pass.
"""
import shutil
from pathlib import Path

from grading.config import GRADER_FILES, ROOT
from grading.i18n import Bi

SHIPPED = (*GRADER_FILES, "exercises", ".gitignore", ".github/scripts/grade.sh", ".github/scripts/outside-exercises.sh",
           "docs/learner.md")

# What the copy leaves out of tests/: the diagnoses, which search the lesson's steps and so hold
# the answers (`release --with-causes` ships them: the lesson prints those steps in full)
WITHHELD = ("diagnoses_*.py", "lesson_steps.py")

# What a learner's copy ignores, whatever the course's own .gitignore says: a virtual environment
# (python3 -m venv .venv), caches, and what the grader writes.
GITIGNORE = (".venv/", "venv/", "__pycache__/", "*.pyc", ".pytest_cache/", "results.json",
             ".grader-hints.json", ".grader-last.json", "demo-attention.png")

FEEDBACK_WORKFLOW = """# Feedback on the public checks, on every push and pull request: the same report as
# python grader.py, a table in the job summary and notes on your lines. This is NOT the grade:
# this repository has no solutions, so the hidden checks cannot run here, and the grader exits 1
# in CI without them (the check fails by design, and its summary says why). The grade comes from
# the course's own grading, where the solutions are. No secret is used here.
name: feedback

on:
  push:
  pull_request:

permissions:
  contents: read

jobs:
  feedback:
    name: public checks (feedback, not the grade)
    runs-on: ubuntu-24.04
    timeout-minutes: 20
    steps:
      - name: The grading code (for a pull request, from its base branch)
        uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.base.sha || github.sha }}
          path: grader
          persist-credentials: false

      - name: The exercises (the pull request's, or the pushed commit's)
        uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha || github.sha }}
          path: submission
          fetch-depth: 0
          persist-credentials: false

      - name: Changes outside exercises/
        id: changed
        if: github.event_name == 'pull_request'
        working-directory: submission
        env:
          BASE: ${{ github.event.pull_request.base.sha }}
        run: bash ../grader/.github/scripts/outside-exercises.sh "$BASE"

      - name: Lay the exercises over the grading code
        run: |
          rm -f grader/exercises/ex*.py
          find submission/exercises -maxdepth 1 -name 'ex*.py' -type f -exec cp {} grader/exercises/ \\;

      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
          cache: pip
          cache-dependency-path: grader/requirements.txt

      - name: Install (requirements.txt names PyTorch's CPU index)
        run: pip install -r grader/requirements.txt

      - name: Public checks (not the grade; fails without the hidden checks, by design)
        env:
          GRADER_LANG: ${{ vars.GRADER_LANG || 'en' }}
          GRADER_CHANGES_OUTSIDE: ${{ steps.changed.outputs.files }}
        working-directory: grader
        run: bash .github/scripts/grade.sh

      - name: Keep results.json (public checks only)
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: feedback
          path: grader/results.json
          if-no-files-found: warn
"""

README = """# 注意力机制：让模型看见上下文 · 练习

[English below](#self-attention-exercises)

配合《注意力机制：让模型看见上下文》一课：在 `exercises/` 里一步一步写出一个因果自注意力头。

## 安装：先建一个虚拟环境

在 Debian 12、Ubuntu 24.04 等较新的 Linux 上，`pip install` 会拒绝往系统的 Python 里装包
（报错 “externally-managed-environment”），而且往往没有 `python` 这个命令，只有 `python3`。
所以先在仓库里建一个虚拟环境（`.venv/` 已经写在 `.gitignore` 里，不会被提交）：

```bash
python3 -m venv .venv            # Debian/Ubuntu 上缺 venv 时：sudo apt install python3-venv
. .venv/bin/activate             # Windows：.venv\\Scripts\\activate（PowerShell 或 cmd）
pip install -r requirements.txt && python grader.py
```

激活之后，`python` 和 `pip` 就是这个环境里的；以后每开一个新终端，先再激活一次。

## 做练习

- `python grader.py 3` 只给练习 3 打分；`python grader.py --watch` 每次保存就重新打分；
  `python grader.py hint 3` 给提示（`hint 3 2` 是下一级）；`--lang zh|en` 选择语言。
- 这份副本里没有参考答案，所以这里只运行**公开检查**（课文说过的性质：形状、每行和为 1、因果性……），
  报告写的是“公开检查 x/y（不是成绩）”。**隐藏检查**拿你的输出和参考答案比较，只在课程评分的地方运行
  （课程自己的私有仓库，或 Gradescope）；**成绩只来自那里**。
- 这个仓库的 CI（`.github/workflows/feedback.yml`）同样只运行公开检查，给你反馈，不是成绩：没有参考答案，
  它在 CI 里总是以失败结束，摘要里写明原因。
- 只修改 `exercises/` 里的文件：别的改动不会被评分；在 pull request 里它们会让反馈检查失败。
- 命令、报告的细节、提示和演示：见 [docs/learner.md](docs/learner.md)。

# Self-attention exercises

For the lesson 《注意力机制：让模型看见上下文》: build one causal self-attention head, step by step, in
`exercises/`.

## Install: make a virtual environment first

On recent Linux systems such as Debian 12 and Ubuntu 24.04, `pip install` refuses to install into
the system's Python ("externally-managed-environment"), and there is often no `python` command,
only `python3`. So make a virtual environment in the repository first (`.venv/` is already in
`.gitignore`, so it is never committed):

```bash
python3 -m venv .venv            # on Debian/Ubuntu without venv: sudo apt install python3-venv
. .venv/bin/activate             # Windows: .venv\\Scripts\\activate (PowerShell or cmd)
pip install -r requirements.txt && python grader.py
```

Once it is active, `python` and `pip` are the environment's; activate it again in each new
terminal.

## Working through the exercises

- `python grader.py 3` grades exercise 3 alone; `python grader.py --watch` regrades on every save;
  `python grader.py hint 3` gives a hint (`hint 3 2` the next one); `--lang zh|en` picks the language.
- This copy has no solutions, so only the **public checks** run here (what the lesson states:
  shapes, rows summing to 1, causality…), and the report says "Public checks x/y (not the grade)".
  The **hidden checks** compare your outputs with the solutions and run only where the course
  grades (its own private repository, or Gradescope): **grades come only from there**.
- This repository's CI (`.github/workflows/feedback.yml`) also runs the public checks alone, as
  feedback, not as the grade: without the solutions it always ends as failed, and its summary says
  why.
- Change only the files in `exercises/`: other changes are not graded, and in a pull request they
  fail the feedback check.
- Every command, the report in detail, hints and the demo: [docs/learner.md](docs/learner.md).
"""


def release(out, with_causes=False):
    """Write the student copy to `out`, which must not exist yet; `with_causes`: with the
    exercises' diagnoses (see WITHHELD)."""
    out = Path(out)
    if out.exists():
        raise ValueError(Bi(f"{out} 已经存在：请换一个新的文件夹名", f"{out} already exists: name a new folder"))
    out.mkdir(parents=True)
    for name in SHIPPED:
        source, target = ROOT / name, out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            left_out = ("__pycache__", *(WITHHELD if name == "tests" and not with_causes else ()))
            shutil.copytree(source, target, ignore=shutil.ignore_patterns(*left_out))
        elif source.exists():
            shutil.copy(source, target)
    ignore = out / ".gitignore"
    lines = ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []
    ignore.write_text("\n".join(lines + [line for line in GITIGNORE if line not in lines]) + "\n",
                      encoding="utf-8")
    workflows = out / ".github" / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    (workflows / "feedback.yml").write_text(FEEDBACK_WORKFLOW, encoding="utf-8")
    (out / "README.md").write_text(README, encoding="utf-8")
    return out
