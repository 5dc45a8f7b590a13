"""Issue 43, the command line's side: one contract on every command and every route.

* A closed stdout (``fairaudit audit ... | head -1``) or a full disk under ``> out.txt`` never changes the exit code
  and never drops ``--json`` (``fairaudit.cli._streams``): checked on real processes whose stdout is a pipe with no
  reader, a pipe whose reader reads one line and goes, and ``/dev/full``.
* Every option is read by one validator per kind of value (``fairaudit.cli._values``) before any work: one line and
  exit 2, never a traceback, exit 4, an endless watch or a model trained first.
* List-valued flags take the same forms on every command (``--protected a b``, ``a,b``, mixes), and ``--protected``
  names protected columns on every route of ``audit`` (checked, and refused, the same way).
* An output never replaces an input, nor any part of a folder or glob given as ``--data``, even with ``--force``.
* A threshold repair whose base model is itself one is refused at the first link of a chain, whatever its length.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairaudit.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
RICCI_VIOLATED = ["audit", "--data", "ricci", "--pred", "combine >= 70", "--engine", "dataset",
                  "--spec", 'E[pred | race == "White"] - E[pred | race == "Black"] < 0.01']  # exit 1
SCAN = ["scan", "--data", "ricci", "--pred", "combine >= 70", "--protected", "race"]


def _process(argv, stdout, **kw):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # block-buffered, as in a pipeline
    return subprocess.run([sys.executable, "-m", "fairaudit", *argv], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, cwd=ROOT, env=env, timeout=180, **kw)


def _closed_pipe_run(argv):
    """``argv`` run with stdout a pipe whose reader is already gone: every write meets EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return _process(argv, write)
    finally:
        os.close(write)


def _run(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as done:  # a value refused when the command line is read
            code = done.code
    return code, err.getvalue()


# ------------------------------------------------------------------------------------------ a closed stdout
@pytest.mark.parametrize("argv,flag,code", [(RICCI_VIOLATED, "--json", 1), (SCAN, "--json", None)])
def test_a_closed_stdout_keeps_the_exit_code_and_the_outputs(tmp_path, argv, flag, code):
    if code is None:  # the scan's own verdict, from a run whose stdout is read whole
        code = _process(argv, subprocess.PIPE).returncode
        assert code in (1, 3)
    out = tmp_path / "out.json"
    done = _closed_pipe_run([*argv, flag, str(out)])
    assert done.returncode == code, done.stderr
    assert done.stderr == ""  # a closed pipe is what `| head` is for: nothing said
    assert json.loads(out.read_text())  # written whole


def test_a_pipeline_into_head_gets_the_verdict_s_code(tmp_path):
    """``fairaudit audit ... --json out.json | head -1``: the reader takes one line and goes."""
    out = tmp_path / "out.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-m", "fairaudit", *RICCI_VIOLATED, "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    first = proc.stdout.readline()
    proc.stdout.close()  # what head does after its line
    assert proc.wait(timeout=180) == 1, proc.stderr.read()
    proc.stderr.close()
    assert first.startswith(b"verdict:") and json.loads(out.read_text())["verdict"] == "false"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_stdout_on_a_full_disk_keeps_the_exit_code(tmp_path):
    out = tmp_path / "out.json"
    with open("/dev/full", "w") as full:
        done = _process([*RICCI_VIOLATED, "--json", str(out)], full)
    assert done.returncode == 1 and out.exists()
    assert done.stderr.count("\n") == 1 and "could not write to standard output" in done.stderr


# ------------------------------------------------------------------------------------------ options, before work
@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """A CSV file and the same rows as a folder of two parts."""
    d = tmp_path_factory.mktemp("log")
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"g": rng.choice(["a", "b"], n), "region": rng.choice(["n", "s", "e"], n),
                          "x": rng.normal(size=n), "decision": rng.integers(0, 2, n), "label": rng.integers(0, 2, n)})
    frame.to_csv(d / "one.csv", index=False)
    (d / "parts").mkdir()
    frame.iloc[:200].to_csv(d / "parts" / "part-1.csv", index=False)
    frame.iloc[200:].to_csv(d / "parts" / "part-2.csv", index=False)
    return d


FOLLOW = ["--pred", "decision == 1", "--protected", "g"]
REPAIR = ["--label", "label", "--model", "gbm", "--spec", 'E[pred | g == "a"] - E[pred | g == "b"] < 0.2']


@pytest.mark.parametrize("argv,said", [
    (["scan", "--follow", "ONE", *FOLLOW, "--idle-timeout", "nan"], "argument --idle-timeout: idle_timeout must be"),
    (["scan", "--follow", "ONE", *FOLLOW, "--poll", "0"], "argument --poll: poll must be a number in (0, 3600)"),
    (["scan", "--follow", "ONE", *FOLLOW, "--poll", "1e308"], "argument --poll: poll must be a number in (0, 3600)"),
    (["audit", "--follow", "ONE", "--pred", "decision == 1", "--spec", "E[pred] > 0.1", "--poll", "1e308"],
     "argument --poll: poll must be a number in (0, 3600)"),
    (["audit", "--follow", "ONE", "--pred", "decision == 1", "--spec", "E[pred] > 0.1", "--poll", "0"],
     "argument --poll: poll must be a number in (0, 3600)"),
    (["scan", "--data", "ONE", *FOLLOW, "--poll", "1"], "--poll watches a live log: give --follow PATH"),
    (["scan", "--data", "ONE", *FOLLOW, "--burn-in", "0"],
     "argument --burn-in: burn_in must be a whole number from 1 to"),
    (["audit", "--data", "ONE", "--pred", "decision == 1", "--spec", "E[pred] > 0.1", "--trace-every",
      str(2 ** 70)], "argument --trace-every: trace_every must be a whole number from 1 to"),
    (["audit", "--data", "ONE", "--model", "tree", "--label", "label", "--spec", "E[pred] > 0.1", "--confirm", "n9"],
     "--confirm n9: unknown node 'n9'; the specification's nodes are n0, n1"),
    (["audit", "--data", "ONE", "--pred", "x > 0", "--spec", "E[pred] > 0.1", "--confirm-share", "0.3"],
     "--confirm-share is the share of the rows that --confirm chooses on: give --confirm NODE too"),
    (["audit", "--follow", "ONE", "--pred", "x > 0", "--spec", "E[pred] > 0.1", "--confirm", "n0"],
     "--confirm splits a dataset's audited rows in memory: a live log is audited once"),
    (["audit", "--data", "ONE", "--pred", "x > 0", "--spec", "E[pred] > 0.1", "--confirm", "n0", "--out-of-core",
      "on"], "--confirm splits the audited rows at random, in memory"),
    (["audit", "--follow", "ONE", "--pred", "x > 0", "--spec", "E[pred] > 0.1", "--missing", "drop"],
     "--missing drop does not apply"),
    (["report", ""], "no result file"),
    (["report", "r.json", "--pdf", ""], "argument --pdf: an empty path names no file"),
    (["audit", "--data", "ONE", "--pred", "x > 0", "--spec", "E[pred] > 0.1", "--json", ""],
     "argument --json: an empty path names no file"),
    (["scan", "--data", "ONE", *FOLLOW, "--csv", ""], "argument --csv: an empty path names no file"),
    (["train", "--data", "ONE", "--label", "label", "--kind", "logreg", "--out", "."], "empty path"),
    (["train", "--data", "ONE", "--label", "label", "--kind", "logreg", "--out", "/dev/null"],
     "it is not a regular file"),
    (["train", "--data", "ONE", "--label", "label", "--kind", "logreg", "--out", "DIR/"], "names a folder"),
    (["train", "--data", "ONE", "--label", "label", "--kind", "logreg", "--seed", "-1", "--out", "DIR/m"],
     "argument --seed: seed must be"),
    (["compare", "--data", "ONE", "--spec", "E[pred] > 0.1", "--pred", "x > 0", "--pred", "x > 1", "--seed",
      str(2 ** 64)], "argument --seed: seed must be"),
    (["repair", "--data", "ONE", *REPAIR, "--split", "2"], "argument --split: split must be a number in (0, 1)"),
    (["repair", "--data", "ONE", *REPAIR, "--delta", "nan"], "argument --delta: delta must be a number in (0, 1)"),
    (["repair", "--data", "ONE", *REPAIR, "--group-by", "nope"], "unknown group column 'nope'"),
    (["repair", "--data", "ONE", *REPAIR[2:]], "the accuracy objective needs labels"),
])
def test_every_option_is_refused_in_one_line_before_any_work(log, tmp_path, monkeypatch, argv, said):
    import fairaudit.models.cache as cache

    def no_training(*a, **k):
        raise AssertionError("a model was trained before the options were checked")

    monkeypatch.setattr(cache, "cached_train", no_training)
    argv = [str(log / "one.csv") if a == "ONE" else a.replace("DIR", str(tmp_path)) for a in argv]
    code, err = _run(argv)
    assert code == 2, err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not Path("/dev/null.skops").exists()


# ------------------------------------------------------------------------------------------ one set of flags
FORMS = [["g", "region"], ["g,region"], ["g,", "region"], ["g", "region,"], ["g"] + ["--protected", "region"]]


@pytest.mark.parametrize("command,flag,dest", [
    ("audit", "--protected", "protected"), ("scan", "--protected", "protected"),
    ("compare", "--protected", "protected"), ("repair", "--protected", "protected"),
    ("train", "--protected", "protected"), ("report", "--protected", "protected"),
    ("check", "--protected", "protected"), ("repair", "--group-by", "group_by"), ("train", "--features", "features"),
    ("train", "--exclude", "exclude"), ("audit", "--na-values", "na_values"), ("scan", "--na-values", "na_values"),
])
@pytest.mark.parametrize("form", FORMS)
def test_list_valued_flags_take_the_same_forms_on_every_command(command, flag, dest, form):
    form = [flag if word == "--protected" else word for word in form]
    head = {"check": ["check", "E[pred] > 0.1"], "report": ["report", "r.json"], "scan": ["scan", "--pred", "x"],
            "compare": ["compare", "--spec", "E[pred] > 0.1"], "train": ["train", "--kind", "tree", "--out", "m"],
            "repair": ["repair", "--spec", "E[pred] > 0.1", "--model", "tree"]}.get(command, [command])
    argv = [*head, "--data", "d.csv", flag, *form]
    args, extra = build_parser(argv).parse_known_args(argv)
    assert getattr(args, dest) == ["g", "region"] and not extra


def test_an_empty_list_names_none():
    argv = ["audit", "--data", "adult", "--protected", ""]
    assert build_parser(argv).parse_known_args(argv)[0].protected == []


SPEC = 'E[pred | g == "a"] > 0.1'


@pytest.mark.parametrize("route", [["--data", "PARTS", "--out-of-core", "off"], ["--data", "PARTS"],
                                   ["--follow", "ONE", "--idle-timeout", "0.2", "--poll", "0.01"],
                                   ["--data", "PARTS", "--dask"]])
def test_protected_means_the_same_on_every_route(log, route):
    """``--protected`` names protected columns on every route of ``fairaudit audit``: an unknown one is refused with
    the same line (before a Dask cluster starts), a known one is accepted (Dask's acceptance: tests/test_cli_dask)."""
    route = [str(log / "parts") if a == "PARTS" else str(log / "one.csv") if a == "ONE" else a for a in route]
    code, err = _run(["audit", *route, "--pred", "decision == 1", "--spec", SPEC, "--protected", "nope", "g"])
    assert code == 2 and err == ("fairaudit audit: error: unknown protected column 'nope' (columns: g, region, x, "
                                 "decision, label)\n"), err
    if "--dask" not in route:
        code, err = _run(["audit", *route, "--pred", "decision == 1", "--spec", SPEC, "--protected", "region,g"])
        assert code in (0, 1, 3), err


# ------------------------------------------------------------------------------------------ outputs and inputs
@pytest.mark.parametrize("command", [
    ["audit", "--pred", "decision == 1", "--spec", SPEC, "--json"],
    ["audit", "--pred", "decision == 1", "--spec", SPEC, "--full-trace"],
    ["scan", "--pred", "decision == 1", "--protected", "g", "--csv"],
    ["train", "--label", "label", "--kind", "logreg", "--out"],
])
@pytest.mark.parametrize("data", ["parts", "parts/*.csv"])
def test_an_output_never_replaces_a_part_of_the_input(log, command, data):
    part = log / "parts" / "part-2.csv"
    before = part.read_bytes()
    code, err = _run([command[0], "--data", str(log / data), *command[1:], str(part), "--force"])
    assert code == 2 and err.count("\n") == 1, err
    assert "it is an input of this run" in err and part.read_bytes() == before


# ------------------------------------------------------------------------------------------ threshold repairs
def test_a_chain_of_threshold_repairs_is_refused_at_its_first_link(log, tmp_path):
    """600 threshold files, each naming the next as its base: one line, exit 2 (it was a RecursionError)."""
    import hashlib

    from fairaudit.models.thresholds import FORMAT, KIND

    previous = tmp_path / "base.bin"
    previous.write_bytes(b"not a model")
    for i in range(600):
        path = tmp_path / f"t{i}.json"
        path.write_text(json.dumps({"format": FORMAT, "kind": KIND, "group_by": [], "groups": [], "default": 0.5,
                                    "base": {"path": previous.name, "model": "m",
                                             "sha256": hashlib.sha256(previous.read_bytes()).hexdigest()}}))
        previous = path
    code, err = _run(["scan", "--data", str(log / "one.csv"), "--model", str(previous), "--protected", "g"])
    assert code == 2 and err.count("\n") == 1
    assert "t599.json: its base model t598.json is itself a threshold repair" in err
