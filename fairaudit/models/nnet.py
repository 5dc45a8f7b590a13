"""The ``.nnet`` network format (Julian 2016; used by Reluplex, Marabou and FairQuant).

Layout, one group per line, values separated by commas (a trailing comma is allowed); lines starting
with ``//`` are comments::

    numLayers, inputSize, outputSize, maxLayerSize       # numLayers = weight layers (hidden + output)
    size_0, size_1, ..., size_numLayers                  # size_0 = inputSize
    0                                                    # unused "symmetric" flag
    min_1, ..., min_D                                    # input domain box
    max_1, ..., max_D
    mean_1, ..., mean_D, mean_out                        # normalisation constants (FairQuant ignores them)
    range_1, ..., range_D, range_out
    then for each layer k: size_k lines of size_{k-1} weights (the incoming weights of one neuron),
    then size_k lines of one bias each.

Every value must be a finite number (``nan``, ``inf`` and overflowing literals such as ``1e400`` are
refused), every size a positive integer and every input maximum at least its minimum; each line must
hold exactly the count of numbers the header implies. The header is checked before the body is parsed: at most
:data:`fairaudit.base.limits.NNET_LAYERS` layers of at most :data:`~fairaudit.base.limits.NNET_LAYER_SIZE` neurons and
:data:`~fairaudit.base.limits.NNET_PARAMETERS` weights and biases in all, and no more numbers than the file's length
can hold (a digit and a separator each); the lines are read one at a time after that, so nothing is allocated
beyond what the header allows. The input bounds must span a domain that can be counted: no range wider than a
float holds, an integer grid of at most 10^:data:`~fairaudit.base.limits.NNET_GRID_DIGITS` points. Any problem is a
one-line ``ModelError`` naming the file and line.

Hidden layers use ReLU; the output layer is affine. Like FairQuant, :meth:`NNet.forward` feeds inputs
**raw** (no normalisation with the means and ranges). As a ``Model`` (:class:`NNetModel`) a
single-output network decides *favourable iff output > 0* (FairQuant reads the output's sign) and
reports ``score = sigmoid(output)``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairaudit.base import limits
from fairaudit.base.errors import ModelError
from fairaudit.models.base import Model, sha256, write_atomic
from fairaudit.models.encoding import Encoding
from fairaudit.models.forms import ReluNet



@dataclass
class NNet:
    """A ReLU network as stored in a ``.nnet`` file. ``layers[k] = (W, b)``, ``W`` of shape (out, in)."""

    layers: list[tuple[np.ndarray, np.ndarray]]
    mins: np.ndarray  # (inputSize,)
    maxs: np.ndarray  # (inputSize,)
    means: np.ndarray  # (inputSize + outputSize,)
    ranges: np.ndarray  # (inputSize + outputSize,)

    @property
    def sizes(self) -> list[int]:
        return [self.layers[0][0].shape[1]] + [W.shape[0] for W, _ in self.layers]

    @property
    def input_size(self) -> int:
        return self.sizes[0]

    @property
    def output_size(self) -> int:
        return self.sizes[-1]

    def forward(self, X: np.ndarray) -> np.ndarray:
        """Outputs (n, outputSize) for raw inputs X (n, inputSize)."""
        h = np.atleast_2d(np.asarray(X, dtype=np.float64))
        if h.shape[1] != self.input_size:
            raise ModelError(f"the network takes {self.input_size} inputs, got {h.shape[1]}")
        for k, (W, b) in enumerate(self.layers):
            h = h @ W.T + b
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h


_LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # where str.splitlines breaks
_TOKEN = re.compile(r"[^,]+")


class _Lines:
    """The data lines of a ``.nnet`` file, read one at a time as they are asked for (``take``), so that the header
    is checked before the body is parsed; errors name the line."""

    def __init__(self, text: str, name: str):
        self.name = name
        self.text = text
        self.last_line = 0          # the number of the last line read
        self.line = 0               # the number of the data line last taken
        self._lines = self._data_lines()
        self._peeked = None

    def _data_lines(self):
        start, number = 0, 0
        for match in _LINE_BREAK.finditer(self.text):
            number += 1
            self.last_line = number
            yield number, self.text[start:match.start()]
            start = match.end()
        if start < len(self.text):
            number += 1
            self.last_line = number
            yield number, self.text[start:]

    def _next(self):
        """The next (line number, text) holding data (not blank, not a comment), or None at the end."""
        if self._peeked is not None:
            found, self._peeked = self._peeked, None
            return found
        for number, line in self._lines:
            line = line.strip()
            if line and not line.startswith("//"):
                return number, line
        return None

    def more(self) -> int | None:
        """The number of the next data line, or None when there is none."""
        if self._peeked is None:
            self._peeked = self._next()
        return self._peeked[0] if self._peeked is not None else None

    def fail(self, line: int, message: str):
        raise ModelError(f"malformed .nnet file {self.name}, line {line}: {message}")

    def refuse(self, line: int, message: str):
        """A header beyond a limit of :mod:`fairaudit.base.limits` (the file may be well formed)."""
        raise ModelError(f".nnet file {self.name}, line {line}: {message}; nothing after the header was read")

    def take(self, count: int, what: str) -> np.ndarray:
        """The next data line, which must hold exactly ``count`` numbers (a line holding more is not split past
        ``count + 1`` of them)."""
        found = self._next()
        if found is None:
            self.fail(self.last_line, f"file ends before {what}")
        number, line = found
        self.line = number
        values = []
        for match in _TOKEN.finditer(line):
            token = match.group().strip()
            if not token:
                continue
            if len(values) == count:
                self.fail(number, f"expected {count} number{'s' * (count != 1)} ({what}), found more")
            try:
                value = float(token)
            except ValueError:
                self.fail(number, f"'{token[:20]}' is not a number")
            if not np.isfinite(value):  # nan, inf, or a literal too large for a float (1e400)
                self.fail(number, f"'{token[:20]}' is not a finite number")
            values.append(value)
        if len(values) != count:
            self.fail(number, f"expected {count} number{'s' * (count != 1)} ({what}), found {len(values)}")
        return np.array(values, dtype=np.float64)

    def integers(self, values: np.ndarray, what: str) -> list[int]:
        """The numbers just taken, which must be positive integers."""
        if not np.all(values == np.round(values)) or np.any(values < 1):
            self.fail(self.line, f"{what} must be positive integers")
        return [int(v) for v in values]


def _count(x: int) -> str:
    return f"{x:,}" if x < 10**9 else f"{float(x):.3g}"


def _check_header(lines: _Lines, num_layers: int, sizes: list[int] | None, header: list[int]) -> None:
    """Refuse a header that declares more than :mod:`fairaudit.base.limits` allows, or more numbers than the text can
    hold, before any of the body is parsed."""
    if num_layers > limits.NNET_LAYERS:
        lines.refuse(lines.line, f"the header declares {_count(num_layers)} layers, over the limit of "
                                 f"{limits.NNET_LAYERS:,} (fairaudit reads networks of at most that many layers)")
    widest = max(sizes if sizes is not None else header[1:])
    if widest > limits.NNET_LAYER_SIZE:
        lines.refuse(lines.line, f"the header declares a layer of {_count(widest)} neurons, over the limit of "
                                 f"{limits.NNET_LAYER_SIZE:,} neurons per layer")
    if sizes is None:
        return
    parameters = sum(a * b + b for a, b in zip(sizes, sizes[1:]))
    if parameters > limits.NNET_PARAMETERS:
        lines.refuse(lines.line, f"the header declares {_count(parameters)} weights and biases, over the limit of "
                                 f"{limits.NNET_PARAMETERS:,}")
    n_in, n_out = sizes[0], sizes[-1]
    numbers = 4 + len(sizes) + 1 + 2 * n_in + 2 * (n_in + n_out) + parameters
    room = (len(lines.text) + 1) // 2  # every number takes a digit and a separator (the last one no separator)
    if numbers > room:
        lines.fail(lines.line, f"the header declares {_count(numbers)} numbers in all, but the file's "
                               f"{len(lines.text):,} characters can hold at most {room:,}: it is cut short or its "
                               "header is wrong")


def _check_domain(lines: _Lines, mins: np.ndarray, maxs: np.ndarray) -> None:
    """Refuse input bounds whose domain cannot be counted: a range wider than the largest float (``[-1e308,
    1e308]``), or integer bounds whose grid (the product over inputs of ``max − min + 1``) spans more than
    10^:data:`~fairaudit.base.limits.NNET_GRID_DIGITS` points (inputs in ``[0, 1e300]``)."""
    import math

    with np.errstate(over="ignore"):
        widths = maxs - mins
    wide = ~np.isfinite(widths)
    if np.any(wide):
        i = int(np.argmax(wide))
        lines.refuse(lines.line, f"input {i + 1} ranges over [{mins[i]:g}, {maxs[i]:g}], wider than the largest "
                                 "number a float holds; give it bounds that the audit can measure")
    digits = 0.0
    for lo, hi in zip(mins, maxs):
        if lo == round(lo) and hi == round(hi):  # an integer grid (``fairaudit.engines.fairquant``'s domain)
            digits += math.log10(int(hi) - int(lo) + 1)
    if digits > limits.NNET_GRID_DIGITS:
        lines.refuse(lines.line, f"the input bounds span about 10^{digits:.0f} grid points, over the limit of "
                                 f"10^{limits.NNET_GRID_DIGITS} (FairQuant's domains span about 10^20); narrow the "
                                 "inputs' bounds")


def read_nnet(path) -> NNet:
    """Read a ``.nnet`` file; ModelError (one line, with the line number) when it is malformed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelError(f"no such .nnet file: {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ModelError(f"cannot read .nnet file {path}: {getattr(err, 'strerror', None) or err}") from None
    return parse_nnet(text, name=path.name)


def parse_nnet(text: str, name: str = "<text>") -> NNet:
    """Parse the text of a ``.nnet`` file (see the module docstring for the layout)."""
    lines = _Lines(text, name)
    if lines.more() is None:
        lines.fail(max(lines.last_line, 1), "no header line")
    header = lines.integers(lines.take(4, "numLayers, inputSize, outputSize, maxLayerSize"), "the header values")
    num_layers, n_in, n_out, _ = header
    _check_header(lines, num_layers, None, header)
    sizes = lines.integers(lines.take(num_layers + 1, "the layer sizes"), "layer sizes")
    _check_header(lines, num_layers, sizes, header)
    if sizes[0] != n_in or sizes[-1] != n_out:
        lines.fail(lines.line,
                   f"layer sizes {_short(sizes)} do not start with inputSize {n_in} and end with outputSize {n_out}")
    lines.take(1, "the unused symmetric flag")
    mins = lines.take(n_in, "the input minimums")
    maxs = lines.take(n_in, "the input maximums")
    if np.any(mins > maxs):  # an empty input box would make every property hold vacuously
        i = int(np.argmax(mins > maxs))
        lines.fail(lines.line, f"input {i + 1}: maximum {maxs[i]:g} is below minimum {mins[i]:g}")
    _check_domain(lines, mins, maxs)
    means = lines.take(n_in + n_out, "the means, inputs then output")
    ranges = lines.take(n_in + n_out, "the ranges, inputs then output")
    layers = []
    for k in range(1, num_layers + 1):
        W = np.vstack([lines.take(sizes[k - 1], f"weights of neuron {r + 1} in layer {k}") for r in range(sizes[k])])
        b = np.concatenate([lines.take(1, f"bias of neuron {r + 1} in layer {k}") for r in range(sizes[k])])
        layers.append((W, b))
    if lines.more() is not None:
        lines.fail(lines.more(), "unexpected data after the last layer")
    return NNet(layers, mins, maxs, means, ranges)


def _short(sizes: list[int]) -> str:
    return f"[{', '.join(map(str, sizes[:8]))}{', ...' if len(sizes) > 8 else ''}]"


def _numbers(values) -> str:
    return ",".join(repr(float(v)) for v in values) + ","


def format_nnet(net: NNet) -> str:
    """The ``.nnet`` text of ``net`` (floats written exactly, so reading it back gives the same network)."""
    sizes = net.sizes
    out = ["// Neural Network File Format by Kyle Julian, Stanford 2016 (written by fairaudit)",
           f"{len(net.layers)},{sizes[0]},{sizes[-1]},{max(sizes)},",
           ",".join(str(s) for s in sizes) + ",",
           "0,",
           _numbers(net.mins), _numbers(net.maxs), _numbers(net.means), _numbers(net.ranges)]
    for W, b in net.layers:
        out += [_numbers(row) for row in W]
        out += [_numbers([v]) for v in b]
    return "\n".join(out) + "\n"


def write_nnet(net: NNet, path) -> None:
    """Write ``net`` to ``path`` as ``.nnet`` text (atomically)."""
    write_atomic(path, format_nnet(net).encode("utf-8"))


class NNetModel(Model):
    """A single-output ``.nnet`` network as a Model: favourable iff output > 0, score = sigmoid(output).

    Its inputs are numeric columns named ``feature_names`` (default ``x0 .. x{D-1}``: 0-based, so that the names
    match FairQuant's attribute indices, e.g. compas race = ``x3``), fed raw.
    """

    kind = "nnet"

    def __init__(self, net: NNet, feature_names: list[str] | None = None, source: str = ""):
        if net.output_size != 1:
            raise ModelError(f"a network with {net.output_size} outputs is not a binary classifier; need 1 output")
        names = list(feature_names) if feature_names is not None else [f"x{i}" for i in range(net.input_size)]
        if len(names) != net.input_size:
            raise ModelError(f"the network takes {net.input_size} inputs but {len(names)} feature names were given")
        self.net = net
        self.feature_names = names
        self.encoding = Encoding.numeric(names)
        self.params = {"sizes": net.sizes, "source": source}
        self.metrics = {}

    def output(self, frame: pd.DataFrame) -> np.ndarray:
        return self.net.forward(self.encoding.transform(frame))[:, 0]

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.output(frame)))

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return (self.output(frame) > 0).astype(np.int8)

    def score_and_predict(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        output = self.output(frame)
        return 1.0 / (1.0 + np.exp(-output)), (output > 0).astype(np.int8)

    @property
    def content_hash(self) -> str:
        return sha256(format_nnet(self.net).encode("utf-8"))

    def save(self, path) -> None:
        """Write the network as a ``.nnet`` file (the feature names are not part of the format)."""
        write_nnet(self.net, path)

    def as_relu_net(self) -> ReluNet:
        return ReluNet(layers=tuple((W.copy(), b.copy()) for W, b in self.net.layers), encoding=self.encoding,
                       lower=self.net.mins.copy(), upper=self.net.maxs.copy())
