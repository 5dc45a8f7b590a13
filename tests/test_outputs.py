"""Issue 27 (part 5): outputs and state. Each test here failed on the code before the fix, except where it says so."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from fairaudit.cli import main
from fairaudit.outputs import file_kind
from tests.test_hardening import _run

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ["audit", "--data", "ricci", "--pred", "combine > 70", "--spec", "E[pred] > 0.1"]
TRAIN = ["train", "--data", "ricci", "--kind", "logreg"]


def _zip(path: Path, members: dict) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


# ---- 5: bad input that crashed (exit 4) is one line and exit 2

@pytest.mark.parametrize("samples", ["1", "3"])
def test_a_few_samples_of_a_population_is_undecided_not_a_crash(capsys, samples):
    program = ROOT / "fairaudit" / "programs" / "examples" / "toy_t1.fr"
    code, out, err = _run(capsys, ["audit", "--population", str(program), "--samples", samples])
    assert code == 3 and err == "" and "verdict:   unknown" in out


LONG = "a" * 400


@pytest.mark.parametrize("argv", [
    [*AUDIT, "--json", f"{LONG}.json"], [*AUDIT, "--pdf", f"{LONG}.pdf"], [*AUDIT, "--full-trace", f"{LONG}.pq"],
    [*TRAIN, "--out", LONG], ["report", f"{LONG}.json"],
    ["audit", "--data", f"{LONG}.csv", "--pred", "x == 1", "--spec", "E[pred] > 0.1"],
    ["check", "E[pred] > 0.1", "--data", f"{LONG}.csv"], ["audit", "--population", f"{LONG}.fr"],
    ["audit", "--data", "ricci", "--model", f"{LONG}.skops", "--spec", "E[pred] > 0.1"],
])
def test_a_name_too_long_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, argv)
    assert code == 2 and "internal error" not in err, err
    assert len(err.splitlines()) == 1 and len(err) < 250 and "too long" in err


def test_an_os_error_on_a_user_path_is_bad_input(capsys, monkeypatch):
    import errno

    from fairaudit import data

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", "secret.csv")
    monkeypatch.setattr(data, "resolve", refuse)
    code, _, err = _run(capsys, ["check", "E[pred] > 0.1", "--data", "secret.csv"])
    assert code == 2 and err.strip() == ("fairaudit check: error: cannot use secret.csv: Permission denied (choose "
                                         "a path you may use, or change its permissions)")
