"""A learner's machine and keyboard as they are (issue 35): a file under another name is named as
it is, a slip of the input method or the editor is explained in the learner's language, a hint in
a read-only copy is shown all the same."""
import pytest

from grading.judge.worker_handle import raised_text, undecodable_frame
from grading.worker.serve import named_otherwise


@pytest.mark.parametrize("there", ["Ex5_causal_mask.py", "ex5_causal_mask (1).py",
                                   "EX5_CAUSAL_MASK.PY", "ex5_causal_mask.py.txt"])
def test_a_file_named_otherwise_is_named(tmp_path, there):
    (tmp_path / there).write_text("")
    (tmp_path / "ex4_scaling.py").write_text("")
    told = named_otherwise(str(tmp_path), "ex5_causal_mask")
    assert told == f" ({there} is there)"
    text = raised_text({"type": "FileNotFoundError",
                        "message": "ex5_causal_mask.py is missing from the submission" + told})
    assert there in text.en and "rename it to ex5_causal_mask.py" in text.en
    assert there in text.zh and "改名为 ex5_causal_mask.py" in text.zh


def test_nothing_like_it_names_nothing(tmp_path):
    (tmp_path / "ex4_scaling.py").write_text("")
    assert named_otherwise(str(tmp_path), "ex5_causal_mask") == ""
    text = raised_text({"type": "FileNotFoundError",
                        "message": "ex5_causal_mask.py is missing from the submission"})
    assert text.en == "ex5_causal_mask.py is missing from the submission"
    assert "不在提交的文件夹里" in text.zh


FILE = "(ex5_causal_mask.py, line 43)"


@pytest.mark.parametrize("char, plain", [("（", "("), ("：", ":"), ("，", ","), ("“", '"'),
                                         ("\u3000", " "), ("；", ";"), ("、", ",")])
def test_a_character_from_an_input_method_is_named_with_its_plain_twin(char, plain):
    """Issue 35: a Chinese learner's commonest slips got Python's English alone, in a zh report."""
    message = (f"invalid non-printable character U+{ord(char):04X} {FILE}" if char == "\u3000"
               else f"invalid character '{char}' (U+{ord(char):04X}) {FILE}")
    text = raised_text({"type": "SyntaxError", "message": message})
    assert "第 43 行" in text.zh and "中文输入法" in text.zh and "line 43" in text.en
    assert (f"'{plain}'" if plain != " " else "plain space") in text.en
    assert message in text.en  # Python's own words stay, after the lesson's


def test_tabs_among_spaces_and_a_file_not_in_utf8_are_explained():
    text = raised_text({"type": "TabError",
                        "message": f"inconsistent use of tabs and spaces in indentation {FILE}"})
    assert "制表符" in text.zh and "spaces alone" in text.en
    source = b"x = 1\n" + "# 注意力\n".encode("gbk")  # Python names line 34: the bad byte is on 2
    text = raised_text({"type": "SyntaxError", "message": "(unicode error) 'utf-8' codec can't "
                        "decode byte 0xd7 in position 2: invalid continuation byte "
                        "(ex5_causal_mask.py, line 34)"}, source)
    assert "line 2 holds the byte 0x" in text.en
    assert "第 2 行" in text.zh and "另存为" in text.zh
    error = {"type": "SyntaxError", "message": "(unicode error) 'utf-8' codec can't decode byte",
             "frames": [["ex5_causal_mask.py", 34, "<module>", '"""']]}
    # the line the report shows is the bad byte's too, not the end of the string Python names
    frame = undecodable_frame(error, "ex5_causal_mask", source)["frames"][0]
    assert frame[:2] == ["ex5_causal_mask.py", 2] and frame[3].startswith("# ")


def test_a_hint_in_a_read_only_copy_is_shown_and_says_it_was_not_remembered(tmp_path, monkeypatch):
    """Issue 35: `hint N --remember` in a read-only checkout printed a raw "[Errno 13] Permission
    denied", in English in a zh run, and no hint."""
    from grading.commands import hints
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    monkeypatch.setattr(hints, "MEMORY", folder / ".grader-hints.json")

    def refuse(*args, **kwargs):  # (root writes through a mode of 0o500: refused as a user is)
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(type(hints.MEMORY), "write_text", refuse)
    for lang, words in (("zh", "没能记住"), ("en", "could not be remembered")):
        text = hints.show("ex3_qkv", None, True, lang)
        assert words in text and ("提示" in text if lang == "zh" else "Hint 1/" in text)
    folder.chmod(0o700)
