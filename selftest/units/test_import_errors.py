"""A learner's file under another name (issue 35): the report names the file that is there, in the
learner's language; "ex5_causal_mask.py is missing" alone sent them looking for a file they had."""
import pytest

from grading.judge.worker_handle import raised_text
from grading.worker.main import _named_otherwise


@pytest.mark.parametrize("there", ["Ex5_causal_mask.py", "ex5_causal_mask (1).py",
                                   "EX5_CAUSAL_MASK.PY", "ex5_causal_mask.py.txt"])
def test_a_file_named_otherwise_is_named(tmp_path, there):
    (tmp_path / there).write_text("")
    (tmp_path / "ex4_scaling.py").write_text("")
    told = _named_otherwise(str(tmp_path), "ex5_causal_mask")
    assert told == f" ({there} is there)"
    text = raised_text({"type": "FileNotFoundError",
                        "message": "ex5_causal_mask.py is missing from the submission" + told})
    assert there in text.en and "rename it to ex5_causal_mask.py" in text.en
    assert there in text.zh and "改名为 ex5_causal_mask.py" in text.zh


def test_nothing_like_it_names_nothing(tmp_path):
    (tmp_path / "ex4_scaling.py").write_text("")
    assert _named_otherwise(str(tmp_path), "ex5_causal_mask") == ""
    text = raised_text({"type": "FileNotFoundError",
                        "message": "ex5_causal_mask.py is missing from the submission"})
    assert text.en == "ex5_causal_mask.py is missing from the submission"
    assert "不在提交的文件夹里" in text.zh
