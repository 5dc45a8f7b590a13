"""The .nnet format: reading, writing, the paper's running example, the FairQuant benchmark files."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairaudit import models
from fairaudit.base.errors import ModelError
from fairaudit.models.nnet import NNet, NNetModel, format_nnet, parse_nnet, read_nnet, write_nnet

EXAMPLE = Path(__file__).parent / "fixtures" / "example.nnet"
REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = next((p for p in (Path("/work/shared"), REPO.parent / "shared")
                   if (p / "benchmarks/fairquant/models").is_dir()), None)


def relu(x):
    return np.maximum(x, 0.0)


def example_formula(x1, x2, x3):
    """FairQuant's running example: h1 = ReLU(2x1 + 0.5x2 + 1.2x3), h2 = ReLU(-0.2x1 + 0.7x2 + 0.4x3)."""
    return 0.2 * relu(2 * x1 + 0.5 * x2 + 1.2 * x3) - 1.0 * relu(-0.2 * x1 + 0.7 * x2 + 0.4 * x3)


def test_read_example_header_and_domain():
    net = read_nnet(EXAMPLE)
    assert net.sizes == [3, 2, 1] and net.input_size == 3 and net.output_size == 1
    assert net.mins.tolist() == [1, 0, 0] and net.maxs.tolist() == [5, 1, 5]
    assert net.means.tolist() == [3, 0.5, 2.5, 0.5] and net.ranges.tolist() == [4, 1, 5, 1]
    W1, b1 = net.layers[0]
    assert W1.tolist() == [[2.0, 0.5, 1.2], [-0.2, 0.7, 0.4]] and b1.tolist() == [0, 0]
    assert net.layers[1][0].tolist() == [[0.2, -1.0]] and net.layers[1][1].tolist() == [0]


def test_example_forward_matches_the_formula():
    net = read_nnet(EXAMPLE)
    grid = np.array([[x1, x2, x3] for x1 in (1, 3, 5) for x2 in (0, 1) for x3 in (0, 2.5, 5)], dtype=float)
    expected = example_formula(grid[:, 0], grid[:, 1], grid[:, 2])
    assert np.allclose(net.forward(grid)[:, 0], expected)
    # a point where h2 is clipped by the ReLU, worked by hand: h1 = 2, h2 = ReLU(-0.2) = 0, o = 0.4
    assert net.forward([[1, 0, 0]])[0, 0] == pytest.approx(0.4)


def test_round_trip_is_exact(tmp_path):
    net = read_nnet(EXAMPLE)
    write_nnet(net, tmp_path / "copy.nnet")
    back = read_nnet(tmp_path / "copy.nnet")
    assert back.sizes == net.sizes
    for (W, b), (W2, b2) in zip(net.layers, back.layers):
        assert np.array_equal(W, W2) and np.array_equal(b, b2)
    for field in ("mins", "maxs", "means", "ranges"):
        assert np.array_equal(getattr(net, field), getattr(back, field))
    assert format_nnet(back) == format_nnet(net)


def test_random_network_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    sizes = [5, 7, 4, 1]
    layers = [(rng.normal(size=(b, a)), rng.normal(size=b)) for a, b in zip(sizes, sizes[1:])]
    net = NNet(layers, np.zeros(5), np.full(5, 9.0), np.zeros(6), np.ones(6))
    write_nnet(net, tmp_path / "r.nnet")
    back = read_nnet(tmp_path / "r.nnet")
    X = rng.normal(size=(50, 5))
    assert np.array_equal(back.forward(X), net.forward(X))


def test_nnet_as_a_model(tmp_path):
    model = models.load(EXAMPLE)
    assert isinstance(model, NNetModel) and model.kind == "nnet"
    assert model.feature_names == ["x0", "x1", "x2"]  # 0-based, like FairQuant's attribute indices
    rows = pd.DataFrame({"x0": [1, 5, 1], "x1": [0, 1, 1], "x2": [0, 0, 5]})
    out = example_formula(rows["x0"], rows["x1"], rows["x2"]).to_numpy()
    assert np.array_equal(model.predict(rows), (out > 0).astype(np.int8))  # favourable iff output > 0
    assert np.allclose(model.score(rows), 1 / (1 + np.exp(-out)))
    net = model.as_relu_net()
    assert net.sizes == [3, 2, 1] and net.lower.tolist() == [1, 0, 0] and net.upper.tolist() == [5, 1, 5]
    assert np.allclose(net.margin(rows.to_numpy(float)), out)
    named = NNetModel(read_nnet(EXAMPLE), feature_names=["age", "sex", "hours"])
    assert named.predict(rows.set_axis(["age", "sex", "hours"], axis=1)).tolist() == model.predict(rows).tolist()
    model.save(tmp_path / "again.nnet")
    assert models.load(tmp_path / "again.nnet").content_hash == model.content_hash
    with pytest.raises(ModelError, match="no linear form"):
        model.as_linear()
    with pytest.raises(ModelError, match="3 inputs but 2 feature names"):
        NNetModel(read_nnet(EXAMPLE), feature_names=["a", "b"])


GOOD = EXAMPLE.read_text()


def _replace_line(text: str, number: int, new: str) -> str:
    lines = text.splitlines()
    lines[number - 1] = new
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, line, message", [
    (_replace_line(GOOD, 21, "2.0,zero,1.2,"), 21, "'zero' is not a number"),
    (_replace_line(GOOD, 22, "-0.2,0.7,"), 22, "expected 3 numbers (weights of neuron 2 in layer 1), found 2"),
    (_replace_line(GOOD, 15, "4,2,1,"), 15, "do not start with inputSize 3"),
    (_replace_line(GOOD, 14, "2,3,1.5,3,"), 14, "must be positive integers"),
    (_replace_line(GOOD, 17, "1,0,"), 17, "the input minimums"),
    ("\n".join(GOOD.splitlines()[:-2]) + "\n", 24, "file ends before weights of neuron 1 in layer 2"),
    (GOOD.rstrip("\n") + "\n1,2,3,\n", 27, "unexpected data after the last layer"),
    ("// only a comment\n", 1, "no header line"),
])
def test_malformed_nnet_names_the_line(tmp_path, text, line, message):
    path = tmp_path / "bad.nnet"
    path.write_text(text)
    with pytest.raises(ModelError) as err:
        read_nnet(path)
    assert f"bad.nnet, line {line}: " in str(err.value) and message in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_nnet_file():
    with pytest.raises(ModelError, match="no such"):
        read_nnet("/nonexistent/net.nnet")
    with pytest.raises(ModelError, match="no such model file"):
        models.load("/nonexistent/net.nnet")


def test_parse_accepts_spaces_and_no_trailing_comma():
    text = "2, 3, 1, 3\n3, 2, 1\n0\n1, 0, 0\n5, 1, 5\n3, 0.5, 2.5, 0.5\n4, 1, 5, 1\n" \
           "2.0, 0.5, 1.2\n-0.2, 0.7, 0.4\n0\n0\n0.2, -1.0\n0\n"
    assert np.allclose(parse_nnet(text).forward([[2, 1, 3]]), example_formula(2, 1, 3))


@pytest.mark.skipif(BENCHMARKS is None, reason="the shared FairQuant benchmark folder is not here")
def test_every_fairquant_benchmark_network_reads_and_round_trips():
    files = sorted((BENCHMARKS / "benchmarks/fairquant/models").rglob("*.nnet"))
    assert len(files) >= 25
    inputs = {"adult": 13, "bank": 16, "compas": 6, "german": 20}
    for path in files:
        net = read_nnet(path)
        assert net.output_size == 1
        if path.parent.name in inputs:
            assert net.input_size == inputs[path.parent.name], path.name
        assert np.all(net.mins <= net.maxs), path.name
        corners = np.vstack([net.mins, net.maxs, (net.mins + net.maxs) / 2])
        out = net.forward(corners)
        assert np.all(np.isfinite(out)), path.name
        again = parse_nnet(format_nnet(net))
        assert np.array_equal(again.forward(corners), out), path.name


# ---- issue 12: non-finite values, absurd headers ----------------------------------------------


@pytest.mark.parametrize("line, new, bad", [
    (14, "inf,3,1,3,", "'inf'"),                       # header: was OverflowError in int()
    (14, "2,3,1,1e400,", "'1e400'"),                   # overflows to inf
    (15, "3,2,nan,", "'nan'"),                         # layer sizes
    (17, "0,0,-inf,", "'-inf'"),                       # input minimums
    (19, "0.0,nan,0.0,0.0,", "'nan'"),                 # means
    (20, "1.0,1.0,inf,1.0,", "'inf'"),                 # ranges
    (21, "nan,0.5,1.2,", "'nan'"),                     # a weight: was accepted, every decision unfavourable
    (23, "inf,", "'inf'"),                             # a bias
    (25, "0.2,-Infinity,", "'-Infinity'"),             # an output-layer weight
])
def test_non_finite_values_are_refused_with_the_line(tmp_path, line, new, bad):
    path = tmp_path / "bad.nnet"
    path.write_text(_replace_line(GOOD, line, new))
    for read in (lambda: read_nnet(path), lambda: models.load(path),
                 lambda: models.load_bytes(path.read_bytes(), "bad.nnet")):
        with pytest.raises(ModelError) as err:
            read()
        message = str(err.value)
        assert f"bad.nnet, line {line}: {bad} is not a finite number" in message and "\n" not in message


@pytest.mark.parametrize("line, new, message", [
    (14, "2,3,1,-3,", "must be positive integers"),
    (14, "-2,3,1,3,", "must be positive integers"),
    (15, "3,0,1,", "must be positive integers"),
    # the header is judged before the body is read (fairaudit.base.limits): sizes the file cannot hold, beyond the limits
    (15, "3,100000,1,", "line 15: the header declares 500,023 numbers in all, but the file's 362 characters can "
                        "hold at most 181"),
    (15, "3,100000000000000,1,", "line 15: the header declares a layer of 1e+14 neurons, over the limit of 100,000"),
    (14, "2,3,1e300,3,", "line 14: the header declares a layer of 1e+300 neurons, over the limit of 100,000"),
    (14, "999999,3,1,3,", "line 14: the header declares 999,999 layers, over the limit of 1,000"),
    (18, "-1,0,0,", "input 1: maximum -1 is below minimum 1"),
])
def test_absurd_or_inconsistent_headers_are_one_line_errors(tmp_path, line, new, message):
    path = tmp_path / "bad.nnet"
    path.write_text(_replace_line(GOOD, line, new))
    with pytest.raises(ModelError) as err:
        models.load(path)
    assert "bad.nnet, line " in str(err.value) and message in str(err.value) and "\n" not in str(err.value)


def test_cli_audit_of_a_non_finite_nnet_is_exit_2_one_line(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "bad.nnet"
    path.write_text(_replace_line(GOOD, 14, "2,3,1,1e400,"))
    csv = tmp_path / "x.csv"
    pd.DataFrame({"x1": [0.0, 1.0], "x2": [1.0, 0.0], "x3": [2.0, 1.0], "g": [0, 1]}).to_csv(csv, index=False)
    done = subprocess.run([sys.executable, "-m", "fairaudit", "audit", "--data", str(csv), "--protected", "g",
                           "--model", str(path), "--spec", "E[pred | g == 1] - E[pred | g == 0] < 0.5"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "bad.nnet, line 14: '1e400' is not a finite number" in done.stderr
