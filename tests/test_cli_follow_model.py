"""``fairaudit audit --follow PATH --model FILE``: a saved model decides on a live log (its score too), with the
verdict, stop step and intervals of the file at rest in given order, ``Fair[...]`` and its counterexamples too."""
import io
import json
import threading

import pytest

from fairaudit import api, data, models
from fairaudit.base.errors import FairauditError
from fairaudit.engines.monitor.livelog import prepare
from fairaudit.sources.live import JsonLines
from fairaudit.spec import parse
from tests.test_cli_follow import cli, finals, writer

SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] >= -0.1 and '
        'E[score > 0.5 | sex == "Female"] >= 0.3')


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.skops"
    models.train(data.load("compas"), "logreg", seed=0).save(path)
    return path


def follow_and_rest(spec: str, model_file, tmp_path, timeout: float = 180):
    """``(exit code, stderr, live JSON, at-rest JSON)``: COMPAS appended to a CSV log while ``fairaudit audit
    --follow --watch --model`` audits it, and the file at rest audited in given order."""
    rows = tmp_path / "compas.csv"
    data.load("compas").frame.to_csv(rows, index=False)
    log = tmp_path / "log.csv"
    log.write_bytes(b"")
    stop = threading.Event()
    proc = cli("--follow", str(log), "--watch", "--spec", spec, "--model", str(model_file), "--poll", "0.05",
               "--idle-timeout", "6", "--json", str(tmp_path / "live.json"))
    writer(log, rows.read_bytes(), stop, piece=20000, pause=0.02)
    _, err = proc.communicate(timeout=timeout)
    stop.set()
    live = json.loads((tmp_path / "live.json").read_text()) if (tmp_path / "live.json").exists() else None
    rest = json.loads(api.audit(data.from_csv(rows), spec, model=str(model_file), rows="all", order="given").to_json())
    return proc.returncode, err, live, rest


def test_a_saved_model_decides_on_the_live_log(model_file, tmp_path):
    code, err, live, rest = follow_and_rest(SPEC, model_file, tmp_path, timeout=120)
    assert code == 1, err
    assert (live["stop_step"], live["steps"]) == (rest["stop_step"], rest["steps"])
    assert rest["steps"] == 6172 and rest["stop_step"] is not None
    assert finals(live) == finals(rest)


def test_fair_needs_a_model_on_a_live_log():
    with pytest.raises(FairauditError, match=r"Fair\[race\] re-predicts .* needs a model"):
        prepare(parse("Fair[race] >= 0.9"), JsonLines(io.StringIO("")), pred="decile_score > 4", name="log")


def test_fair_on_a_live_log_with_its_counterexamples(model_file, tmp_path):
    """``Fair[...]`` on a CSV log being appended to: the verdict, stop step, intervals and counterexamples (first
    100 in arrival order, their count, rows numbered in the log) of the file at rest in given order."""
    spec = "Fair[race] >= 0.95 and " + SPEC
    code, err, live, rest = follow_and_rest(spec, model_file, tmp_path)
    assert code in (0, 1, 3), err
    assert (live["verdict"], live["stop_step"], live["steps"]) == (rest["verdict"], rest["stop_step"], rest["steps"])
    assert finals(live) == finals(rest)
    assert live["counterexamples"] == rest["counterexamples"]
    assert live["counterexamples"]["leaves"][0]["total"] > 0
