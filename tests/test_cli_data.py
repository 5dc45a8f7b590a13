"""`fairaudit datasets` and the shared data options (--data/--label/--protected/--favourable)."""
from __future__ import annotations

import argparse

import pytest

from fairaudit.cli._data_args import add_data_arguments, dataset_from_args, protected_names
from fairaudit.base.errors import DataError
from tests.console import run_main

ROWS = {"adult": "32,561", "adult_test": "16,281", "compas": "6,172", "german": "1,000", "ricci": "118",
        "bank": "4,119"}


@pytest.fixture
def fairaudit(capsys):
    """``fairaudit ARGS`` through ``main`` in this process (``tests.console``)."""
    return lambda *args: run_main(capsys, *args)


def test_datasets_lists_every_dataset(fairaudit):
    out = fairaudit("datasets")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:2] == ["name", "rows"]
    body = {line.split()[0]: line.split() for line in lines[1:]}
    assert list(body) == list(ROWS)
    for name, rows in ROWS.items():
        assert body[name][1] == rows
    assert body["adult"][2:5] == ["income", "(>50K)", "sex,race"]
    assert body["compas"][2:5] == ["two_year_recid", "(0)", "race,sex"]
    assert body["german"][2:5] == ["credit", "(good)", "sex,age"]
    # aligned: the label column starts at the same offset on every line
    assert len({line.index(line.split()[2]) for line in lines}) == 1


def test_datasets_shows_columns_of_one_dataset(tmp_path, fairaudit):
    out = fairaudit("datasets", "compas")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("compas: 6,172 rows, 19 columns (built-in)")
    roles = {line.split()[0]: line for line in out.stdout.splitlines()[3:]}
    assert "label (favourable 0)" in roles["two_year_recid"]
    assert "protected" in roles["race"] and "not a feature" in roles["score_text"]
    path = tmp_path / "mine.csv"
    path.write_text("x,ok\n1,yes\n2,no\n")
    out = fairaudit("datasets", str(path), "--label", "ok")
    assert out.returncode == 0, out.stderr
    assert "label (favourable yes)" in out.stdout


def _bad_inputs(tmp_path) -> dict[str, list[str]]:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    header = tmp_path / "header.csv"
    header.write_text("a,b\n")
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(bytes(range(256)) * 4)
    grades = tmp_path / "grades.csv"
    grades.write_text("grade,sex\nA,F\nB,M\nC,F\n")
    dup = tmp_path / "dup.csv"
    dup.write_text("a,a\n1,2\n")
    return {
        "unknown name": ["datasets", "adlt"],
        "missing file": ["datasets", str(tmp_path / "missing.csv")],
        "empty file": ["datasets", str(empty)],
        "header only": ["datasets", str(header)],
        "binary file": ["datasets", str(garbage)],
        "non-binary label": ["datasets", str(grades), "--label", "grade"],
        "unknown column": ["datasets", str(grades), "--protected", "gender"],
        "duplicate columns": ["datasets", str(dup)],
        "builtin bad favourable": ["datasets", "adult", "--favourable", "rich"],
    }


EXPECTED = {
    "unknown name": "did you mean 'adult'",
    "missing file": "file not found",
    "empty file": "is empty",
    "header only": "no data rows",
    "binary file": "binary data",
    "non-binary label": "label column 'grade' has 3 values",
    "unknown column": "unknown protected column 'gender'",
    "duplicate columns": "column name 'a' appears twice",
    "builtin bad favourable": "favourable value 'rich' is not a value of label column 'income'",
}


@pytest.mark.parametrize("case", list(EXPECTED))
def test_bad_input_exits_2_with_one_line(tmp_path, case, fairaudit):
    out = fairaudit(*_bad_inputs(tmp_path)[case])
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("fairaudit datasets: error: ")
    assert EXPECTED[case] in lines[0]
    assert "Traceback" not in out.stderr


# ------------------------------------------------------------------------------------------ _data_args


def _parse(argv: list[str], required: bool = True) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_data_arguments(parser, required=required)
    return parser.parse_args(argv)


def test_protected_names():
    assert protected_names(None) is None
    assert protected_names("") == []
    assert protected_names(" sex , race,") == ["sex", "race"]


def test_dataset_from_args_builtin_and_csv(tmp_path):
    ds = dataset_from_args(_parse(["--data", "adult"]))
    assert (ds.name, ds.schema.protected) == ("adult", ("sex", "race"))
    assert dataset_from_args(_parse(["--data", "adult", "--protected", "sex"])).schema.protected == ("sex",)
    assert dataset_from_args(_parse(["--data", "adult", "--protected", ""])).schema.protected == ()
    path = tmp_path / "loans.csv"
    path.write_text("income,sex,approved\n10,F,1\n20,M,0\n")
    ds = dataset_from_args(_parse(["--data", str(path), "--label", "approved", "--protected", "sex"]))
    assert (ds.name, ds.schema.label, ds.schema.favourable, ds.schema.protected) == ("loans", "approved", 1, ("sex",))
    ds = dataset_from_args(_parse(["--data", str(path), "--label", "sex", "--favourable", "F"]))
    assert ds.labels.tolist() == [1, 0]
    with pytest.raises(DataError, match="did you mean 'approved'"):
        dataset_from_args(_parse(["--data", str(path), "--label", "aproved"]))


def test_data_option_required_or_optional():
    with pytest.raises(SystemExit):
        _parse([])
    assert dataset_from_args(_parse([], required=False)) is None
