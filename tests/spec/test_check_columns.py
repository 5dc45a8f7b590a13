"""Issue 30: ``fairaudit check`` reads only the columns of a built-in dataset that its checks read
(``fairaudit.core.preflight.columns_read``). It must say exactly what it says with every column read: the same
lines on stdout and stderr, the same exit code, for well-formed specs, typos and warnings alike."""
from __future__ import annotations

from pathlib import Path

import pytest

from fairaudit import data
from fairaudit.cli import main
from fairaudit.core import preflight

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.spec"))

# (spec text, data options): typos of every kind, warnings from the rows, decisions and row filters
CASES = [
    ('E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1', ["--data", "adult"]),
    ('E[pred | sex == "female"] > 0.1', ["--data", "adult"]),  # a value typo
    ('E[pred | sexx == "Female"] > 0.1', ["--data", "adult"]),  # a column typo
    ('E[pred | native_country == "Holand-Netherlands"] > 0.1', ["--data", "adult"]),  # 1 row: a warning
    ('E[pred | age > 200] > 0.1', ["--data", "adult"]),  # no row
    ('E[pred | capital_gain] > 0.1', ["--data", "adult"]),  # a numeric column as a condition
    ('E[label | race == "Black" and sex == "Female"] > 0.1', ["--data", "adult"]),
    ('Fair[sex] > 0.9', ["--data", "adult"]),
    ('Fair[sexx] > 0.9', ["--data", "adult"]),
    ('E[pred | score > 0.5] > 0.1', ["--data", "adult"]),
    ('E[pred | race == "Black"] > 0.1', ["--data", "compas"]),
    ('E[pred | race == "black"] > 0.1', ["--data", "compas", "--label", "is_recid"]),  # other roles: every column
    ('E[pred | sex == "Male"] > 0.1', ["--data", "compas", "--protected", ""]),
    ('E[pred | sex == "Male"] > 0.1', ["--data", "german", "--missing", "drop"]),
    ('E[pred | age >= 25] > 0.5', ["--data", "german"]),
]

HEADED = [
    '# dataset: compas\n# decision: decile_score <= 4\n\nE[pred | race == "African-American"] > 0.4\n',
    '# dataset: compas\n# decision: decile_scor <= 4\n\nE[pred | race == "African-American"] > 0.4\n',
    '# dataset: compas\n# decision: decile_score <= \n\nE[pred] > 0.4\n',  # the decision does not parse
    '# dataset: compas\n# decision: is_recid\n# where: priors_count > 2\n\nE[pred | sex == "Male"] > 0.4\n',
    '# dataset: compas\n# decision: is_recid\n# where: prior_count > 2\n\nE[pred | sex == "Male"] > 0.4\n',
    '# dataset: adult\n# decision: model\n# delta: 0.1\n\nE[pred | sex == "Male"] > 0.4\n',
    '# dataset: adult\n# delt: 0.1\n\nE[pred | sex == "Male"] > 0.4\n',
    '# dataset: adult\n# order: sideways\n\nE[pred | sex == "Male"] > 0.4\n',
    '# dataset: adlt\n\nE[pred] > 0.4\n',
]


def _outputs(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _both(capsys, monkeypatch, argv):
    """``fairaudit check`` as it runs, and with every column read."""
    fast = _outputs(capsys, argv)
    with monkeypatch.context() as m:
        m.setattr(preflight, "columns_read", lambda *a, **k: None)
        full = _outputs(capsys, argv)
    return fast, full


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_a_spec_file_is_checked_as_with_every_column(capsys, monkeypatch, path):
    fast, full = _both(capsys, monkeypatch, ["check", f"@{path}"])
    assert fast == full


@pytest.mark.parametrize("text,options", CASES)
def test_a_spec_is_checked_as_with_every_column(capsys, monkeypatch, text, options):
    fast, full = _both(capsys, monkeypatch, ["check", text, *options])
    assert fast == full


@pytest.mark.parametrize("text", HEADED)
def test_a_spec_file_with_headers_is_checked_as_with_every_column(capsys, monkeypatch, tmp_path, text):
    spec = tmp_path / "s.spec"
    spec.write_text(text, encoding="utf-8")
    fast, full = _both(capsys, monkeypatch, ["check", f"@{spec}"])
    assert fast == full


def test_a_built_in_dataset_read_in_part_keeps_its_roles_and_schema():
    whole = data.load("adult")
    part = data.load("adult", columns=["age", "no such column"])
    assert part.schema == whole.schema
    assert list(part.frame.columns) == ["age", "race", "sex", "income"]  # file order; label and protected kept
    assert part.frame.equals(whole.frame[list(part.frame.columns)])


def test_a_csv_file_reads_the_columns_asked_for_and_new_roles_read_every_one(tmp_path):
    """A file is typed and read only in the columns asked for, with its label (issue 43: a log of 100,000 columns
    audited on two); a built-in dataset given new roles is read whole."""
    path = tmp_path / "d.csv"
    data.load("ricci").frame.to_csv(path, index=False)
    assert list(data.resolve(str(path), label="promoted", columns=["race"]).frame.columns) == ["race", "promoted"]
    assert list(data.resolve("ricci", protected=["race"], columns=["oral"]).frame.columns) == \
        list(data.load("ricci").frame.columns)
