"""`fairaudit train` end to end, and the shared --model/--pred options."""
from __future__ import annotations

import argparse
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from fairaudit import models
from fairaudit.cli._model_args import add_model_arguments, model_from_args
from fairaudit.base.errors import ModelError
from tests.console import run_main
from tests.test_models import synthetic


def fairaudit(*args: str) -> subprocess.CompletedProcess:
    """The ``fairaudit`` process: for what only a process shows (a hash read in another process, stderr that is not
    a terminal, the exit code the interpreter ends with)."""
    return subprocess.run([sys.executable, "-m", "fairaudit", *args], capture_output=True, text=True, timeout=120)


def refused(capsys, *args: str) -> tuple[int, str]:
    """``(exit code, stderr)`` of ``fairaudit ARGS`` in this process: a refusal needs no process of its own, and no
    second import of torch."""
    done = run_main(capsys, *args)
    return done.returncode, done.stderr


@pytest.fixture(scope="module")
def credit_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "credit.csv"
    synthetic().frame.to_csv(path, index=False)
    return path


def test_train_saves_and_prints_the_accuracy_table(tmp_path, credit_csv):
    out = tmp_path / "m.joblib"
    done = fairaudit("train", "--data", str(credit_csv), "--label", "outcome", "--favourable", "good",
                     "--protected", "sex", "--kind", "tree", "--out", str(out), "--seed", "3")
    assert done.returncode == 0, done.stderr
    model = models.load(out)
    assert model.kind == "tree" and model.params["seed"] == 3
    assert f"sha256 {model.content_hash}" in done.stdout  # same hash in the file, in another process
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("group"))
    table = lines[header:header + 4]
    assert [line.split()[0] for line in table] == ["group", "all", "sex=F", "sex=M"]
    assert len({len(line) for line in table}) == 1  # aligned
    assert float(table[1].split()[-1]) == pytest.approx(model.metrics["accuracy"], abs=5e-4)


@pytest.mark.slow
def test_train_logreg_on_adult(tmp_path):
    out = tmp_path / "adult.joblib"
    done = fairaudit("train", "--data", "adult", "--kind", "logreg", "--out", str(out))
    assert done.returncode == 0, done.stderr
    accuracy = float(next(line for line in done.stdout.splitlines() if line.startswith("all")).split()[-1])
    assert 0.83 <= accuracy <= 0.87
    assert "sex=Female" in done.stdout and "race=Black" in done.stdout
    assert models.load(out).as_linear().weights.shape[0] > 90


@pytest.mark.parametrize("extra, message", [
    (["--kind", "lgreg"], "unknown model kind 'lgreg' (did you mean 'logreg'?)"),
    (["--kind", "logreg", "--label", "job"], "binary"),
    (["--kind", "logreg", "--out-dir-missing"], None),  # argparse: unknown option
    (["--kind", "tree", "--param", "depth=3"], "unknown parameter 'depth' for kind tree"),
    (["--kind", "tree", "--exclude", "sexx"], "did you mean 'sex'?"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, credit_csv, extra, message, capsys):
    code, err = refused(capsys, "train", "--data", str(credit_csv), "--label", "outcome", "--favourable", "good",
                        "--out", str(tmp_path / "m"), *extra)
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    if message:
        assert message in err


def test_train_without_a_label_exits_2(tmp_path, capsys):
    csv = tmp_path / "nolabel.csv"
    pd.DataFrame({"a": [1, 2, 3, 4], "b": ["x", "y", "x", "y"]}).to_csv(csv, index=False)
    code, err = refused(capsys, "train", "--data", str(csv), "--kind", "logreg", "--out", str(tmp_path / "m"))
    assert code == 2 and "Traceback" not in err
    assert err.strip().endswith("cannot train without a label column")


def test_unwritable_out_path_fails_before_training(tmp_path, credit_csv, capsys):
    code, err = refused(capsys, "train", "--data", str(credit_csv), "--label", "outcome", "--favourable", "good",
                        "--kind", "logreg", "--out", str(tmp_path / "missing-dir" / "m.joblib"))
    assert code == 2 and "Traceback" not in err
    assert "does not exist" in err and len(err.strip().splitlines()) == 1


# ---- --model / --pred ------------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    return parser.parse_args(argv)


def test_model_kind_trains_on_the_data_with_the_seed():
    data = synthetic()
    model = model_from_args(parse("--model", "logreg", "--seed", "2"), data)
    assert model.kind == "logreg" and model.params["seed"] == 2
    from fairaudit.models.features import default_features

    # the default features, as everywhere a model is trained here
    assert model.content_hash == models.train(data, "logreg", seed=2, features=default_features(data)).content_hash


def test_model_path_loads_and_is_checked_against_the_data(tmp_path):
    data = synthetic()
    trained = models.train(data, "tree")
    trained.save(tmp_path / "t.joblib")
    loaded = model_from_args(parse("--model", str(tmp_path / "t.joblib")), data)
    assert loaded.content_hash == trained.content_hash
    other = data.frame.rename(columns={"income": "salary"})
    from fairaudit.data.dataset import Column, Dataset, Schema

    renamed = Dataset("renamed", other, Schema(tuple(Column("salary" if c.name == "income" else c.name, c.kind,
                                                            c.values) for c in data.schema.columns),
                                               label="outcome", favourable="good"))
    with pytest.raises(ModelError, match="reads column.*income.*renamed does not have"):
        model_from_args(parse("--model", str(tmp_path / "t.joblib")), renamed)


def test_model_argument_errors():
    data = synthetic()
    with pytest.raises(ModelError, match="did you mean 'tree'.*or a model file path"):
        model_from_args(parse("--model", "tre"), data)
    with pytest.raises(ModelError, match="no such model file"):
        model_from_args(parse("--model", "models/none.joblib"), data)
    with pytest.raises(SystemExit):  # --model and --pred are mutually exclusive
        parse("--model", "logreg", "--pred", "income > 3")


def test_seed_option_is_shared_with_a_command_that_has_one():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    add_model_arguments(parser)
    assert parser.parse_args(["--model", "tree"]).seed == 7


def test_pred_option_builds_an_expression_model():
    spec = pytest.importorskip("fairaudit.spec")
    if not (hasattr(spec, "parse_event") and hasattr(spec, "evaluate_event")):
        pytest.skip("fairaudit.spec.evaluate_event is not there yet")
    data = synthetic()
    model = model_from_args(parse("--pred", "income > 50"), data)
    assert np.array_equal(model.predict(data.frame), (data.frame["income"] > 50).to_numpy().astype(np.int8))


# ---- issue 12: safe model files, default extension, size limit ---------------------------------


def test_train_out_defaults_to_a_safe_extension(tmp_path, credit_csv):
    common = ["--data", str(credit_csv), "--label", "outcome", "--favourable", "good", "--protected", "sex"]
    done = fairaudit("train", *common, "--kind", "gbm", "--out", str(tmp_path / "m"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.skops").is_file() and not (tmp_path / "m").exists()
    assert done.stderr == ""  # no progress line when stderr is not a terminal
    assert f"saved to {tmp_path / 'm.skops'}" in done.stdout
    done = fairaudit("train", *common, "--kind", "mlp", "--out", str(tmp_path / "n"))
    assert done.returncode == 0 and (tmp_path / "n.pt").is_file() and done.stderr == "", done.stderr
    usage = fairaudit("train", "--help").stdout
    assert "--out PATH" in usage and ".skops" in usage


def test_train_out_joblib_still_writes_skops_with_a_note(tmp_path, credit_csv):
    import zipfile

    out = tmp_path / "m.joblib"
    done = fairaudit("train", "--data", str(credit_csv), "--label", "outcome", "--favourable", "good",
                     "--kind", "logreg", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "m.joblib holds the skops format" in done.stderr and "not a pickle" in done.stderr
    with zipfile.ZipFile(out) as archive:
        assert "schema.json" in archive.namelist()
    assert models.load(out).kind == "logreg"  # no trust_pickle needed


@pytest.mark.parametrize("param", ["hidden=[100000,100000]", "hidden=[1500,1500]", "hidden=1e400", "epochs=1e400",
                                   "lr=Infinity"])
def test_train_oversized_or_overflowing_mlp_is_exit_2_one_line(tmp_path, credit_csv, param, capsys):
    code, err = refused(capsys, "train", "--data", str(credit_csv), "--label", "outcome", "--favourable", "good",
                        "--kind", "mlp", "--param", param, "--out", str(tmp_path / "m.pt"))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "m.pt").exists()


def test_mlp_size_limit_is_checked_against_the_inputs(tmp_path):
    from fairaudit.models.mlp import MAX_PARAMETERS, parameter_count

    data = synthetic(200)
    # one layer of 250,000 units: under the limit on one input, over it on the 7 encoded inputs (age, sex x2,
    # job x3, income): checked once the encoding is known, before the network is allocated
    assert parameter_count(1, [250_000]) < MAX_PARAMETERS < parameter_count(7, [250_000])
    with pytest.raises(ModelError, match="on 7 inputs has 2,250,001 weights and biases; the limit is 2,000,000"):
        models.train(data, "mlp", hidden=[250_000], epochs=1)


# ---- issue 13: progress on a terminal ----------------------------------------------------------


class Terminal:
    """A stderr that says it is a terminal and keeps what is written to it."""

    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass

    def isatty(self):
        return True


def test_train_shows_one_updating_progress_line_on_a_terminal(tmp_path, credit_csv, monkeypatch, capsys):
    from fairaudit.cli import main

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code = main(["train", "--data", str(credit_csv), "--label", "outcome", "--favourable", "good",
                 "--kind", "gbm", "--param", "max_iter=30", "--out", str(tmp_path / "m.skops")])
    assert code == 0
    updates = terminal.text.split("\r")
    assert "Training gbm: 100%" in terminal.text and "\n" not in terminal.text  # one line, rewritten in place
    assert updates[-1] == "" and updates[-2].strip() == ""  # erased at the end: stdout follows on a clean line
    assert "trained gbm" in capsys.readouterr().out


def test_progress_line_is_throttled_and_cut_to_the_terminal_width(monkeypatch):
    import os
    import shutil

    from fairaudit.base.progress import TerminalLine as ProgressLine
    from fairaudit.base.progress import Progress

    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((60, 24)))
    terminal = Terminal()
    line = ProgressLine(terminal, every=3600)
    progress = Progress("Training " + "x" * 100, 10, "epochs", line)
    for done in range(1, 11):
        progress(done)
    shown = terminal.text.split("\r")[1:]
    assert len(shown) == 2  # the first report, then (throttled) only the last one, at 100 %
    assert all(len(part) == 59 for part in shown)  # cut to the terminal's width (less one column)
    line.close()
    assert terminal.text.endswith("\r" + " " * 59 + "\r")
