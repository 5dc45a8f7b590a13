"""Issue 27 (part 4): a ``.nnet`` header is judged before its body is parsed.

The header's layer count, layer sizes and total of weights and biases are bounded (``fairaudit.base.limits``) and must
fit the file's length; a file that breaks one is refused at the header's line in one sentence, without reading the
body (a 36 MB file claiming 3,000,000 layers took 66 s and 3.3 GB before its refusal).
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fairaudit import models
from fairaudit.base import limits
from fairaudit.base.errors import ModelError
from fairaudit.models import nnet
from fairaudit.models.nnet import NNet, format_nnet, parse_nnet

EXAMPLE = Path(__file__).resolve().parent / "fixtures" / "example.nnet"


def _numbers_parsed(monkeypatch) -> list:
    """The tokens the .nnet parser converts to numbers from now on (a module global shadows the builtin)."""
    calls = []

    def counting_float(token):
        calls.append(token)
        return float(token)

    monkeypatch.setattr(nnet, "float", counting_float, raising=False)
    return calls


def test_a_header_claiming_millions_of_layers_is_refused_before_the_body(monkeypatch):
    n = 3_000_000
    text = f"{n},3,1,3,\n" + "3," * (n + 1) + "\n" + "0,\n" * 500_000  # 7.5 MB; the was 36 MB
    calls = _numbers_parsed(monkeypatch)
    started = time.perf_counter()
    with pytest.raises(ModelError) as err:
        parse_nnet(text, name="huge.nnet")
    assert time.perf_counter() - started < 1.0
    assert len(calls) == 4  # the four header values, nothing else
    message = str(err.value)
    assert message == (".nnet file huge.nnet, line 1: the header declares 3,000,000 layers, over the limit of 1,000 "
                       "(fairaudit reads networks of at most that many layers); nothing after the header was read")


@pytest.mark.parametrize("sizes, widest, line, expect", [
    ([3, 200_000, 1], 200_000, 1, "the header declares a layer of 200,000 neurons, over the limit of 100,000 neurons "
                                  "per layer"),
    ([3, 200_000, 1], 3, 2, "the header declares a layer of 200,000 neurons, over the limit of 100,000"),
    ([3, 2000, 2000, 1], 2000, 2, "the header declares 4,012,001 weights and biases, over the limit of 1,000,000"),
    ([3, 500, 1], 500, 2, "the header declares 2,523 numbers in all, but the file's 23 characters can hold at most 12: "
                          "it is cut short or its header is wrong"),  # within the limits, not within the file
])
def test_layer_sizes_and_parameters_are_bounded_and_must_fit_the_file(monkeypatch, sizes, widest, line, expect):
    text = f"{len(sizes) - 1},{sizes[0]},{sizes[-1]},{widest},\n" + ",".join(map(str, sizes)) + ",\n0,\n"
    calls = _numbers_parsed(monkeypatch)
    with pytest.raises(ModelError) as err:
        parse_nnet(text, name="big.nnet")
    assert f"big.nnet, line {line}: " + expect in str(err.value) and "\n" not in str(err.value)
    assert len(calls) <= 4 + len(sizes)  # the header only


def test_the_limits_are_read_from_fairaudit_limits(monkeypatch):
    text = EXAMPLE.read_text()
    parse_nnet(text)
    monkeypatch.setattr(limits, "NNET_PARAMETERS", 10)
    with pytest.raises(ModelError, match="declares 11 weights and biases, over the limit of 10"):
        parse_nnet(text)
    monkeypatch.setattr(limits, "NNET_LAYERS", 1)
    with pytest.raises(ModelError, match="declares 2 layers, over the limit of 1 "):
        parse_nnet(text)


def test_a_network_near_the_limits_still_reads():
    rng = np.random.default_rng(0)
    sizes = [40, 600, 600, 1]  # 385,801 weights and biases
    layers = [(rng.normal(size=(b, a)), rng.normal(size=b)) for a, b in zip(sizes, sizes[1:])]
    net = NNet(layers, np.zeros(40), np.ones(40), np.zeros(41), np.ones(41))
    started = time.perf_counter()
    back = parse_nnet(format_nnet(net))
    assert time.perf_counter() - started < 20
    x = rng.random((3, 40))
    assert np.array_equal(back.forward(x), net.forward(x))


def test_cli_and_upload_refuse_the_header_in_one_line(tmp_path):
    path = tmp_path / "huge.nnet"
    n = 3_000_000
    path.write_text(f"{n},3,1,3,\n" + "3," * 10 + "\n")
    with pytest.raises(ModelError, match="declares 3,000,000 layers"):
        models.load_bytes(path.read_bytes(), "huge.nnet")
    done = subprocess.run([sys.executable, "-m", "fairaudit", "audit", "--data", "german", "--model", str(path),
                           "--spec", "E[pred] > 0.5"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "huge.nnet, line 1: the header declares 3,000,000 layers, over the limit of 1,000" in done.stderr
