"""Issue 12: inputs that crashed, misled or destroyed files. Each test here failed on the code before the fix."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairaudit.cli import main
from fairaudit.spec import parse, parse_event, to_text
from fairaudit.spec.errors import SpecError


def _run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as done:  # a flag's value refused when the command line is read (argparse): exit 2
        code = done.code
    out = capsys.readouterr()
    return code, out.out, out.err


# ---- 7: numbers are ASCII; messages do not echo long user text

@pytest.mark.parametrize("text", ["E[pred] > 0.৪", "E[pred] > ٣", "E[pred | age > ４0] > 0.1"])
def test_non_ascii_digits_are_not_numbers(text):
    with pytest.raises(SpecError, match="unexpected character"):
        parse(text)


def test_error_messages_clip_a_long_token():
    long = "x" * 5000
    with pytest.raises(SpecError) as err:
        parse(f'E[pred | sex == "{long}" "{long}"] > 0.1')
    assert len(str(err.value)) < 300


def test_validation_messages_clip_a_long_value(capsys):
    code, _, err = _run(capsys, ["check", f'E[pred | sex == "{"y" * 3000}"] > 0.1', "--data", "ricci"])
    assert code == 2 and len(err.splitlines()[0]) < 400


# ---- 9: columns called pred / label / score

@pytest.fixture()
def reserved_csv(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"pred": rng.integers(0, 2, 400), "score": rng.random(400),
                          "sex": rng.choice(["a", "b"], 400), "y": rng.integers(0, 2, 400)})
    path = tmp_path / "reserved.csv"
    frame.to_csv(path, index=False)
    return ["--data", str(path), "--label", "y", "--protected", "sex"], frame


def test_back_quoted_reserved_words_name_the_columns(capsys, reserved_csv):
    args, frame = reserved_csv
    assert to_text(parse_event("`pred` == 1 and `score` > 0.5")) == "`pred` == 1 and `score` > 0.5"
    assert parse_event("`pred` == 1") != parse_event("pred == 1")
    code, out, _ = _run(capsys, ["audit", *args, "--pred", "`pred` == 1", "--order", "given", "--batch", "400",
                                 "--spec", 'E[pred | sex == "a"] > 0.99'])
    assert code in (1, 3)
    code, out, _ = _run(capsys, ["audit", *args, "--model", "logreg", "--rows", "all", "--spec",
                                 'E[`score` > 0.5 | sex == "a"] > 0.01'])
    assert code in (0, 3)


def test_the_unquoted_word_says_how_to_reach_the_column(capsys, reserved_csv):
    args, _ = reserved_csv
    code, _, err = _run(capsys, ["audit", *args, "--pred", "pred == 1", "--spec", 'E[pred | sex == "a"] > 0.1'])
    assert code == 2 and "written `pred` in back-quotes" in err


# ---- 8: outputs never overwrite inputs or lose a run

@pytest.fixture()
def small_csv(tmp_path):
    path = tmp_path / "d.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"x": rng.integers(0, 2, 200), "g": rng.choice(["a", "b"], 200),
                  "y": rng.integers(0, 2, 200)}).to_csv(path, index=False)
    return path


def _audit(small_csv, *extra):
    return ["audit", "--data", str(small_csv), "--label", "y", "--protected", "g", "--pred", "x == 1",
            "--spec", 'E[pred | g == "a"] > 0.1', *extra]


def test_an_output_is_never_an_input(capsys, small_csv, tmp_path):
    before = small_csv.read_bytes()
    for option in ("--json", "--pdf"):
        code, out, err = _run(capsys, _audit(small_csv, option, str(small_csv)))
        assert code == 2 and "it is an input of this run" in err and out == ""
        code, _, err = _run(capsys, _audit(small_csv, option, str(small_csv), "--force"))
        assert code == 2 and "input" in err
    assert small_csv.read_bytes() == before
    result = tmp_path / "r.json"
    assert _run(capsys, _audit(small_csv, "--json", str(result)))[0] in (0, 1, 3)
    saved = result.read_bytes()
    code, _, err = _run(capsys, ["report", str(result), "--pdf", str(result)])
    assert code == 2 and result.read_bytes() == saved


def test_a_directory_fails_before_the_audit(capsys, small_csv, tmp_path, monkeypatch):
    import fairaudit.api

    monkeypatch.setattr(fairaudit.api, "audit", lambda *a, **k: pytest.fail("audited before checking --json"))
    code, _, err = _run(capsys, _audit(small_csv, "--json", str(tmp_path)))
    assert code == 2 and "is a directory" in err


def test_another_kind_of_file_needs_force(capsys, small_csv, tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("my notes")
    code, _, err = _run(capsys, _audit(small_csv, "--pdf", str(other)))
    assert code == 2 and "refusing to overwrite" in err and other.read_text() == "my notes"
    code, _, _ = _run(capsys, _audit(small_csv, "--pdf", str(other), "--force"))
    assert code in (0, 1, 3) and other.read_bytes().startswith(b"%PDF-")
    # the same kind is replaced without --force (re-running an audit)
    code, _, _ = _run(capsys, _audit(small_csv, "--pdf", str(other)))
    assert code in (0, 1, 3)


def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    import os

    from fairaudit.base.errors import FairauditError
    from fairaudit.core.outputs import write_atomically

    target = tmp_path / "r.json"
    target.write_text("old")

    def fail(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(FairauditError, match="No space left"):
        write_atomically(target, b"new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


# ---- 4: a spec file's dataset header cannot reach arbitrary files

@pytest.mark.parametrize("header, message", [
    ("/etc/passwd", "not an absolute path"),
    ("../../../../etc/passwd.csv", "climbs out"),
    ("~/secret.csv", "not an absolute path"),
    ("passwd", "neither a built-in dataset nor a .csv"),
])
def test_dataset_header_is_a_builtin_or_a_file_beside_the_spec(capsys, tmp_path, header, message):
    spec = tmp_path / "s.spec"
    spec.write_text(f"# dataset: {header}\nE[pred] > 0.1\n")
    for argv in (["audit", "--pred", "x == 1", "--spec", f"@{spec}"], ["check", f"@{spec}"]):
        code, _, err = _run(capsys, argv)
        assert code == 2 and message in err and f"{spec}:1:12:" in err


def test_dataset_header_beside_the_spec_works(capsys, tmp_path, small_csv):
    spec = small_csv.parent / "s.spec"
    spec.write_text("# dataset: d.csv\n# decision: x == 1\nE[pred] > 0.01\n")
    code, out, err = _run(capsys, ["check", f"@{spec}"])
    assert code == 0, err


# ---- 5: options that crashed

@pytest.mark.parametrize("extra", [["--seed", "-1"], ["--order", "shuffle", "--seed", "-1"], ["--seed", str(2**70)]])
def test_seed_out_of_range(capsys, small_csv, extra):
    code, _, err = _run(capsys, _audit(small_csv, *extra))
    assert code == 2 and "seed must be" in err


# ---- 11: a protected attribute with one group, or with missing values, is pointed out

@pytest.fixture()
def missing_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"g": rng.choice(["a", "b", None], n), "one": "z", "x": rng.integers(0, 2, n),
                          "y": rng.integers(0, 2, n)})
    path = tmp_path / "miss.csv"
    frame.to_csv(path, index=False)
    return path, int(frame["g"].isna().sum())


def test_missing_and_single_group_protected_attributes_warn(capsys, missing_csv, tmp_path):
    path, missing = missing_csv
    base = ["--data", str(path), "--label", "y", "--pred", "x == 1", "--spec", 'E[pred | g == "a"] > 0.1']
    out_json = tmp_path / "r.json"
    code, out, _ = _run(capsys, ["audit", *base, "--protected", "g,one", "--json", str(out_json)])
    assert f"protected attribute 'g' is missing in {missing:,} of 300 rows" in out
    assert "protected attribute 'one' has a single group ('z')" in out
    import json

    assert len([w for w in json.loads(out_json.read_text())["warnings"] if "protected attribute" in w]) == 2
    code, out, _ = _run(capsys, ["audit", *base, "--protected", "g", "--missing", "drop"])
    assert "missing" not in out and f"all {300 - missing:,} rows" in out


# ---- review: an infinite number, or a model that scores NaN, must never become a verdict

def test_an_infinite_number_in_a_csv_is_refused(capsys, tmp_path):
    path = tmp_path / "inf.csv"
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.random(100), "g": rng.choice(["a", "b"], 100), "y": rng.integers(0, 2, 100)})
    frame.loc[41, "x"] = -np.inf
    frame.to_csv(path, index=False)
    code, _, err = _run(capsys, ["audit", "--data", str(path), "--label", "y", "--protected", "g", "--model", "mlp",
                                 "--spec", 'E[pred | g == "a"] - E[pred | g == "b"] < 0.5'])
    assert code == 2 and "data row 42: column 'x' holds an infinite value (-inf)" in err


def test_a_model_whose_scores_are_not_numbers_is_refused(small_csv):
    import fairaudit
    from fairaudit import data
    from fairaudit.base.errors import FairauditError

    class NanModel:
        kind, params, feature_names, metrics = "custom", {}, ["x"], {}

        def score(self, frame):
            return np.full(len(frame), np.nan)

        def predict(self, frame):
            return np.zeros(len(frame), dtype=np.int8)

        def describe(self):
            return "custom"

    dataset = data.from_csv(small_csv, label="y", protected="g")
    with pytest.raises(FairauditError, match="score is not a number for 200 row"):
        fairaudit.audit(dataset, 'E[pred | g == "a"] - E[pred | g == "b"] < 0.5', model=NanModel())


def test_force_never_overwrites_the_dataset_a_header_names(capsys, tmp_path, small_csv):
    """Review finding: the header's path was compared unresolved (relative to the current folder, not the spec's)."""
    folder = small_csv.parent
    spec = folder / "a.spec"
    spec.write_text("# dataset: d.csv\n# decision: x == 1\nE[pred] > 0.01\n")
    before = small_csv.read_bytes()
    for option in ("--json", "--pdf"):
        code, _, err = _run(capsys, ["audit", "--spec", f"@{spec}", option, str(small_csv), "--force"])
        assert code == 2 and "it is an input of this run" in err
    assert small_csv.read_bytes() == before


def test_atomic_writes_keep_the_file_mode(tmp_path):
    import os
    import stat

    from fairaudit.core.outputs import write_atomically

    old = tmp_path / "shared.json"
    old.write_text("x")
    os.chmod(old, 0o644)
    write_atomically(old, b"y")
    assert stat.S_IMODE(old.stat().st_mode) == 0o644
    umask = os.umask(0o022)
    try:
        new = write_atomically(tmp_path / "new.json", b"z")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644  # not mkstemp's 0600


@pytest.mark.parametrize("field, value", [("info", [1]), ("options", [1]), ("verdict", "maybe"), ("spec", 5),
                                          ("steps", "x"), ("info.unit", 5), ("info.warnings", "abc")])
def test_a_damaged_result_file_is_one_line_and_exit_2(capsys, small_csv, tmp_path, field, value):
    """Review finding: a result JSON with a field of the wrong type ended in an internal error (exit 4)."""
    import json

    result = tmp_path / "r.json"
    assert _run(capsys, _audit(small_csv, "--json", str(result)))[0] in (0, 1, 3)
    data = json.loads(result.read_text())
    if "." in field:
        outer, inner = field.split(".")
        data[outer][inner] = value
    else:
        data[field] = value
    result.write_text(json.dumps(data))
    code, _, err = _run(capsys, ["report", str(result), "--pdf", str(tmp_path / "r.pdf"), "--no-data"])
    assert code == 2 and err.count("\n") == 1 and "not a valid audit result" in err


@pytest.mark.parametrize("argv, hint", [
    (["audit", "--data", "ricci", "--pred", "combine > 70", "--spec", "E[pred] > 0.1", "--oder", "given"],
     "(did you mean --order?)"),
    (["audit", "--data", "ricci", "--pred", "combine > 70", "--spec", "E[pred] > 0.1", "--bund=hoeffding",
      "--delat", "0.1"], "(did you mean --bound for --bund, --delta for --delat?)"),
    (["parse", "E[pred] > 0.1", "--zzz"], "unrecognized arguments: --zzz\n"),
])
def test_a_mistyped_option_names_the_closest_one(capsys, argv, hint):
    """A mistyped option was only "unrecognized"; the closest option of the same command is now named."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith(f"fairaudit {argv[0]}: error: unrecognized arguments:")
    assert err.endswith(hint if hint.endswith("\n") else hint + "\n")


def test_a_mistyped_choice_names_the_closest_one(capsys):
    code, _, err = _run(capsys, ["audit", "--data", "ricci", "--pred", "combine >= 70", "--spec", "E[pred] > 0.1",
                                 "--order", "givn"])
    assert code == 2 and err.strip().endswith("got 'givn'; did you mean 'given'?")
