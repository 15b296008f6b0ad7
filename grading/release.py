"""`python grader.py release OUT`: the student copy of the repository.

Everything a learner needs and nothing they must not have: no solutions/, no selftest/ (its
fixtures are solutions with one mistake each), no instructor tooling. Locally it runs the public
checks and says that the hidden ones run in the course's CI; there, its grade.yml fetches the
solutions from the private repository the instructor names (variable SOLUTIONS_REPO, secret
SOLUTIONS_TOKEN) and says exactly what is missing when they are not set.
"""
import shutil
from pathlib import Path

from grading.session import ROOT

SHIPPED = ("grader.py", "grading", "tests", "exercises", "requirements.txt", "pytest.ini",
           ".gitignore", ".github/scripts", ".github/workflows/grade.yml")

FETCH_SOLUTIONS = """
      - name: Is the solutions repository configured?
        env:
          SOLUTIONS_REPO: ${{ vars.SOLUTIONS_REPO }}
          HAS_TOKEN: ${{ secrets.SOLUTIONS_TOKEN != '' }}
        run: |
          missing=""
          [ -n "$SOLUTIONS_REPO" ] || missing="the repository variable SOLUTIONS_REPO (owner/name of the private repository that holds solutions/)"
          [ "$HAS_TOKEN" = "true" ] || missing="${missing:+$missing and }the secret SOLUTIONS_TOKEN (a token that can read it)"
          if [ -n "$missing" ]; then
            echo "::error title=Grading is not configured::Missing $missing. Set them under Settings → Secrets and variables → Actions; until then the hidden checks cannot run."
            exit 1
          fi

      - name: The solutions, from the course's private repository
        uses: actions/checkout@v4
        with:
          repository: ${{ vars.SOLUTIONS_REPO }}
          token: ${{ secrets.SOLUTIONS_TOKEN }}
          path: private
          persist-credentials: false

      - name: Lay the solutions into the grading code
        run: |
          cp -r private/solutions grader/solutions
          rm -rf private
"""

README = """# 注意力机制：让模型看见上下文 · 练习

[English below](#self-attention-exercises)

配合《注意力机制：让模型看见上下文》一课：在 `exercises/` 里一步一步写出一个因果自注意力头。

```bash
pip install -r requirements.txt && python grader.py
```

- `python grader.py 3` 只给练习 3 打分；`python grader.py --watch` 每次保存就重新打分；
  `python grader.py hint 3` 给提示（`hint 3 2` 是下一级）；`--lang zh|en` 选择语言。
- 这份副本里没有参考答案，所以本地只运行**公开检查**（课文说过的性质：形状、每行和为 1、因果性……）；
  **隐藏检查**会在你提交 pull request 时，在课程的 CI 里拿你的输出和参考答案比较。
- 只修改 `exercises/` 里的文件：pull request 中别的改动不会被评分，并会让检查失败。

# Self-attention exercises

For the lesson 《注意力机制：让模型看见上下文》: build one causal self-attention head, step by step, in
`exercises/`.

```bash
pip install -r requirements.txt && python grader.py
```

- `python grader.py 3` grades exercise 3 alone; `python grader.py --watch` regrades on every save;
  `python grader.py hint 3` gives a hint (`hint 3 2` the next one); `--lang zh|en` picks the language.
- This copy has no solutions, so locally only the **public checks** run (what the lesson states:
  shapes, rows summing to 1, causality…); the **hidden checks** compare your outputs with the
  solutions in the course's CI when you open a pull request.
- Change only the files in `exercises/`: other changes in a pull request are not graded and fail the
  check.
"""


def release(out):
    """Write the student copy to `out`, which must not exist yet."""
    out = Path(out)
    if out.exists():
        raise ValueError(f"{out} already exists: name a new folder")
    out.mkdir(parents=True)
    for name in SHIPPED:
        source, target = ROOT / name, out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy(source, target)
    workflow = out / ".github" / "workflows" / "grade.yml"
    text = workflow.read_text(encoding="utf-8")
    anchor = "\n      - uses: actions/setup-python@v5"
    if anchor not in text:
        raise ValueError("grade.yml has no setup-python step to put the solutions before")
    workflow.write_text(text.replace(anchor, FETCH_SOLUTIONS + anchor, 1), encoding="utf-8")
    (out / "README.md").write_text(README, encoding="utf-8")
    return out
