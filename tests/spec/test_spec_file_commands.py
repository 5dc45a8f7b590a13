"""The ``fairaudit audit`` commands quoted in the comments of ``specs/*.spec`` run, and give the figures
those comments state (so the documentation of the case studies cannot drift from the code)."""
from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from fairaudit.cli import main

ROOT = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"^#\s+(fairaudit audit .*)$")

# file -> (verdict, stop step) for the first command quoted in it, as its comment says
EXPECTED = {
    "avoir_adult": ("unknown", None),
    "avoir_adult_refined": ("true", 960),
    "avoir_compas_fpr": ("false", 3305),
    "avoir_compas_fpr_reciprocal": ("false", 3350),
    "compas_propublica": ("false", 3305),
    "compas_northpointe": ("unknown", None),
}


def _commands():
    for path in sorted((ROOT / "specs").glob("*.spec")):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = COMMAND.match(line)
            if m:
                yield path.stem, m.group(1)
                break


def test_every_case_study_quotes_its_command():
    assert {name for name, _ in _commands()} == set(EXPECTED)


@pytest.mark.parametrize("name,command", list(_commands()), ids=[n for n, _ in _commands()])
def test_quoted_command_gives_the_stated_figures(name, command, capsys, tmp_path):
    argv = shlex.split(command)[1:]
    out_json = tmp_path / "r.json"
    cwd = os.getcwd()
    os.chdir(ROOT)  # the commands name specs/… relative to the checkout
    try:
        code = main(argv + ["--json", str(out_json)])
    finally:
        os.chdir(cwd)
    verdict, stop = EXPECTED[name]
    assert code == {"true": 0, "false": 1, "unknown": 3}[verdict], capsys.readouterr()
    import json

    result = json.loads(out_json.read_text())
    assert result["verdict"] == verdict and result["stop_step"] == stop
