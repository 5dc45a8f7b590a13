"""``fairaudit audit --out-of-core``: which route a run takes (``on`` / ``off`` / ``auto``), the out-of-core route
gives the in-memory JSON's verdict, stop step and trace, and every input it cannot audit is one line, exit 2."""
from __future__ import annotations

import json

import pytest

from fairaudit import data
from fairaudit.cli import main

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05'


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    frame = data.load("compas").frame
    frame.to_csv(folder / "log.csv", index=False)
    frame.to_parquet(folder / "log.parquet", index=False)
    return folder


def run(capsys, *argv):
    code = main(["audit", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("order", ["given", "shuffle"])
def test_out_of_core_json_equals_in_memory(logs, capsys, tmp_path, order):
    base = ["--pred", "priors_count > 2", "--spec", SPEC, "--order", order, "--seed", "4", "--trace-points", "0"]
    outs = {}
    for mode, src in (("off", "log.csv"), ("on", "log.csv"), ("auto", "log.parquet")):
        target = tmp_path / f"{mode}.json"
        code, out, err = run(capsys, "--data", str(logs / src), *base, "--out-of-core", mode, "--json", str(target))
        assert code == 1, err
        outs[mode] = json.loads(target.read_text())
    ref = outs["off"]
    for mode in ("on", "auto"):
        got = outs[mode]
        assert got["verdict"] == ref["verdict"] and got["stop_step"] == ref["stop_step"]
        assert got["trace"] == ref["trace"]
        assert got["info"].get("out_of_core") is True and "out_of_core" not in ref["info"]


def test_auto_keeps_a_small_csv_in_memory(logs, capsys, tmp_path):
    target = tmp_path / "a.json"
    code, _, err = run(capsys, "--data", str(logs / "log.csv"), "--pred", "priors_count > 2", "--spec", SPEC,
                       "--json", str(target))
    assert code == 1, err
    assert "out_of_core" not in json.loads(target.read_text())["info"]


def test_a_parquet_log_is_read_in_memory_where_the_run_needs_every_row(logs, capsys, tmp_path):
    """A Parquet log (or folder) read whole by the same pipeline where out of core cannot run it (another engine,
    --out-of-core off): it was refused ("read out of core only"); in memory it gives the CSV's answer."""
    results = {}
    for name, argv in (("csv", ["--data", str(logs / "log.csv"), "--out-of-core", "off"]),
                       ("parquet", ["--data", str(logs / "log.parquet"), "--out-of-core", "off"]),
                       ("dataset", ["--data", str(logs / "log.parquet"), "--engine", "dataset"])):
        target = tmp_path / f"{name}.json"
        order = [] if name == "dataset" else ["--order", "given"]
        code, _, err = run(capsys, *argv, "--pred", "priors_count > 2", "--spec", SPEC, *order,
                           "--json", str(target))
        assert code in (0, 1, 3), err
        results[name] = json.loads(target.read_text())
    assert (results["parquet"]["verdict"], results["parquet"]["stop_step"], results["parquet"]["trace"]) == \
        (results["csv"]["verdict"], results["csv"]["stop_step"], results["csv"]["trace"])
    assert results["dataset"]["engine"] == "dataset"


@pytest.mark.parametrize("argv,needle", [
    (["--out-of-core", "on", "--data", "compas"], "not one"),
    (["--out-of-core", "on", "--data", "{logs}/log.parquet", "--engine", "dataset"], "monitor engine"),
    (["--data", "{logs}/log.parquet", "--model", "logreg"], "cannot train without a label column"),
    (["--data", "{logs}/log.parquet", "--where", 'sex == "male"'], "never takes the value"),
    (["--data", "{logs}/log.parquet", "--where", "age > 500"], "no audited row"),
])
def test_refusals_are_one_line_exit_2(logs, capsys, argv, needle):
    argv = [a.replace("{logs}", str(logs)) for a in argv]
    pred = [] if "--model" in argv else ["--pred", "priors_count > 2"]
    code, out, err = run(capsys, *argv, *pred, "--spec", SPEC)
    assert code == 2
    assert needle in err and "Traceback" not in err


def test_a_saved_model_runs_out_of_core(logs, capsys, tmp_path):
    from fairaudit import models

    model = models.train(data.load("compas"), "logreg", seed=2)
    path = tmp_path / "m.skops"
    model.save(path)
    outs = {}
    for mode, src in (("off", "log.csv"), ("auto", "log.parquet")):
        target = tmp_path / f"{mode}.json"
        code, out, err = run(capsys, "--data", str(logs / src), "--model", str(path), "--rows", "all", "--spec",
                             SPEC, "--order", "given", "--out-of-core", mode, "--json", str(target))
        assert code in (0, 1, 3), err
        outs[mode] = json.loads(target.read_text())
    assert outs["auto"]["info"].get("out_of_core") is True
    assert outs["auto"]["trace"] == outs["off"]["trace"]
    assert outs["auto"]["verdict"] == outs["off"]["verdict"]


def test_fair_runs_out_of_core_with_its_counterexamples(logs, capsys, tmp_path):
    """``Fair[...]`` with a saved model goes out of core (a Parquet file) and gives the in-memory JSON: verdict,
    trace and counterexamples; the terminal shows them; without a model it is one line, exit 2."""
    from fairaudit import models

    model = models.train(data.load("compas"), "tree", seed=3)
    path = tmp_path / "m.skops"
    model.save(path)
    spec = "Fair[race] > 0.9 and " + SPEC
    outs = {}
    for mode, src in (("off", "log.csv"), ("auto", "log.parquet")):
        target = tmp_path / f"{mode}.json"
        code, out, err = run(capsys, "--data", str(logs / src), "--model", str(path), "--rows", "all", "--spec",
                             spec, "--order", "shuffle", "--seed", "3", "--out-of-core", mode, "--json",
                             str(target))
        assert code in (0, 1, 3), err
        assert "Traceback" not in err
        outs[mode] = (json.loads(target.read_text()), out)
    (got, out), (ref, _) = outs["auto"], outs["off"]
    assert got["info"].get("out_of_core") is True
    assert (got["verdict"], got["stop_step"], got["trace"]) == (ref["verdict"], ref["stop_step"], ref["trace"])
    assert got["counterexamples"] == ref["counterexamples"] and got["counterexamples"]["leaves"][0]["total"] > 0
    assert "Fair[race]" in out
    code, _, err = run(capsys, "--data", str(logs / "log.parquet"), "--pred", "priors_count > 2", "--spec", spec)
    assert code == 2 and "model" in err and "Traceback" not in err
