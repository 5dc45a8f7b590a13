"""`fairaudit check` and `fairaudit parse` as a user runs them: the first test as a process of its own, the rest
through ``main`` in this process (the console script's exit code, stdout and stderr, without starting Python again
for each command)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.console import run_main

ROOT = Path(__file__).resolve().parents[2]


def process(*args):
    out = subprocess.run([sys.executable, "-m", "fairaudit", *args], capture_output=True, text=True, cwd=ROOT)
    assert "Traceback" not in out.stderr + out.stdout
    return out


@pytest.fixture
def run(capsys):
    """``fairaudit ARGS`` through ``main`` in this process, from the repository root (``tests.console``)."""
    def run(*args):
        out = run_main(capsys, *args, cwd=ROOT)
        assert "Traceback" not in out.stderr + out.stdout
        return out
    return run


def test_check_ok():
    out = process("check", 'E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8')
    assert out.returncode == 0 and out.stdout.startswith("ok")


def test_check_syntax_error_is_one_line_plus_caret(run):
    out = run("check", 'E[pred | sex == "Male"')
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert lines[0] == "1:2: unclosed '['"
    assert lines[1].strip() == 'E[pred | sex == "Male"' and lines[2].strip() == "^"
    assert len(lines) == 3


def test_check_file_errors_name_the_file(tmp_path, run):
    path = tmp_path / "bad.spec"
    path.write_text("# dataset: adult\n\nE[pred | sex == 'Male'] - E[pred] <\n")
    out = run("check", f"@{path}")
    assert out.returncode == 2
    assert out.stderr.splitlines()[0].startswith(f"{path}:3:36: unexpected end")


def test_check_against_data(run):
    pytest.importorskip("fairaudit.data")
    out = run("check", 'E[pred | sex == "Femal"] > 0.5', "--data", "adult")
    assert out.returncode == 2
    assert out.stderr.splitlines()[0].startswith("1:17: 'sex' never takes the value \"Femal\"; did you mean \"Female\"?")
    out = run("check", "E[pred | age > 200] > 0.5", "--data", "adult")
    assert out.returncode == 0 and "warning: no row of the dataset" in out.stdout
    out = run("check", "E[pred] > 0.5", "--data", "no_such_dataset")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_check_file_uses_its_dataset_header_and_decision(tmp_path, run):
    pytest.importorskip("fairaudit.data")
    out = run("check", "@specs/avoir_compas_fpr.spec")
    assert out.returncode == 0 and "validated against compas" in out.stdout
    path = tmp_path / "decision.spec"
    path.write_text('# dataset: adult\n# decision: incme == ">50K"\nE[pred | sex == "Male"] > 0.1\n')
    out = run("check", f"@{path}")
    assert out.returncode == 2
    assert out.stderr.splitlines()[0] == f"{path}:2:13: in the decision: unknown column 'incme'; did you mean 'income'?"


def test_parse_json(run):
    out = run("parse", "--json", "a: E[pred | sex == \"F\"] - E[pred] < 0.1\nb: Fair[sex] > 0.9")
    assert out.returncode == 0
    nodes = json.loads(out.stdout)["nodes"]
    assert [(n["id"], n["parent"], n["kind"]) for n in nodes] == [
        ("n0", None, "and"), ("n1", "n0", "cmp"), ("n2", "n1", "sub"), ("n3", "n2", "expect"),
        ("n4", "n2", "expect"), ("n5", "n1", "const"), ("n6", "n0", "cmp"), ("n7", "n6", "fair"),
        ("n8", "n6", "const")]
    assert nodes[1]["name"] == "a" and nodes[3]["text"] == 'E[pred | sex == "F"]'


def test_parse_tree_and_errors(run):
    out = run("parse", "E[pred] > 0.5")
    assert out.returncode == 0
    assert out.stdout.splitlines() == ["n0 cmp: E[pred] > 0.5", "  n1 expect: E[pred]", "  n2 const: 0.5"]
    out = run("parse", "E[pred] >")
    assert out.returncode == 2 and out.stderr.startswith("1:10: ")


HEADERED = ('# dataset: adult\n# decision: income == ">50K"\n# where: {where}\n# delta: {delta}\n'
            'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.55\n')


def test_check_reports_a_bad_where_or_delta_header_at_its_position(tmp_path, run):
    path = tmp_path / "h.spec"
    path.write_text(HEADERED.format(where='workclas == "Federal-gov"', delta="0.15"))
    out = run("check", f"@{path}")
    assert out.returncode == 2
    assert out.stderr.splitlines()[0] == (f"{path}:3:10: in the row filter: unknown column 'workclas'; "
                                          "did you mean 'workclass'?")
    path.write_text(HEADERED.format(where='workclass == "Federal-gov"', delta="1.5"))
    out = run("check", f"@{path}")
    assert out.returncode == 2
    assert out.stderr.splitlines()[0] == f"{path}:4:10: '# delta:' must be a number in (0, 1), e.g. 0.05; got '1.5'"
    path.write_text(HEADERED.format(where='workclass == "Federal-gov"', delta="0.15"))
    assert run("check", f"@{path}").returncode == 0


def test_audit_takes_where_and_delta_from_the_headers_and_options_win(tmp_path, run):
    path = tmp_path / "h.spec"
    path.write_text(HEADERED.format(where='workclass == "Federal-gov"', delta="0.15"))
    out = run("audit", "--spec", f"@{path}", "--json", str(tmp_path / "a.json"))
    result = json.loads((tmp_path / "a.json").read_text())
    assert out.returncode == 0, out.stderr
    assert result["options"]["delta"] == 0.15 and result["options"]["where"] == 'workclass == "Federal-gov"'
    assert result["steps"] == 960  # the federal-government view
    assert "options:   --where 'workclass == \"Federal-gov\"' --delta 0.15 (from the spec file's headers)" in out.stdout
    out = run("audit", "--spec", f"@{path}", "--delta", "0.05", "--where", 'sex == "Male"',
              "--json", str(tmp_path / "b.json"))
    result = json.loads((tmp_path / "b.json").read_text())
    assert result["options"]["delta"] == 0.05 and result["options"]["where"] == 'sex == "Male"'
    assert "from the spec file" not in out.stdout
