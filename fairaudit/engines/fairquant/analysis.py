"""FairQuant (ICSE 2025): certified / unfair / undecided rates of individual fairness for a ReLU network.

Individual fairness: changing only the protected attribute never changes the decision. Over a box domain
(the integer grid of a ``.nnet`` file's input bounds, or a dataset's column ranges), the domain is split into
partitions; each partition is analysed for the *k copies* of the network (the protected attribute fixed at each
of its k values) with symbolic interval analysis (ReluVal / Neurify linear relaxation of ReLU, the exact formulas
of the artifact, notes §B2.3), and classified:

* **fair** — every copy's output has the same sign on the whole partition (all > 0, or all < 0);
* **unfair** — every copy's sign is fixed and the signs are not all equal (every individual of the partition has
  a counterpart with another decision);
* **undecided** — otherwise: split on the feature with the largest *smear* (interval gradient × width, the
  artifact's formula: summed over the copies), by integer bisection (``[lb, ⌊m⌋]``, ``[⌊m⌋+1, ub]``) or at the
  real midpoint; below ``sample_depth`` a few random individuals of the partition are tried first (``probes``:
  or the artifact's deterministic probes ``⌊s·(lb+ub)/10⌋``; ``corners``: also the box corners where an output
  bound is extreme), and a partition with a counterexample (an individual whose decision changes with the
  attribute, checked by a concrete forward pass) is not split further; a partition at ``max_depth`` stays
  undecided. ``order``: depth-first (LIFO, the artifact's) or breadth-first; run to the end, the counts do not
  depend on the order or the batch size.

A partition holding a single individual is decided by a concrete forward pass. Rates count individuals of the
integer grid exactly (Python integers; a real feature counts its width, halved at each bisection, so every rate
is an exact fraction): ``certified`` and ``unfair`` are sound lower bounds of the fair and unfair fractions (an
unfair partition counts all its individuals; a counterexample partition only its witness, and only when the
witness lies inside it, so none is counted twice); ``undecided`` is the rest, split into "counterexample found"
and "depth or time limit". Many partitions are analysed at once as batched torch tensors (``[P·k, inputs,
neurons]``).

Arithmetic is float64, not rounded outward operation by operation; instead ``rounding_margins`` derives, once per
network and domain, an a-priori bound on how far any computed output bound (and any concrete output) can be from
its exact-arithmetic value, and a copy's output sign is only trusted when it clears that margin (and, as before,
the relative margin ``MARGIN``). Decisions are the signs of the exact output, with the models' own decision rule
``output > 0`` favourable (``NNetModel.predict``, ``MLPModel.predict``: an output of exactly 0 is unfavourable).
A single individual whose float output lies within the margin of 0 is decided in exact rational arithmetic
(``exact_outputs``: every float64 weight, bias and input as the fraction it is, ReLU exact), so every individual
of a finite grid is decided once the refinement reaches it — an exact tie (output exactly 0) included.

The layer rules (``affine_rule``, ``relu_rule``, ``backward_rule``, ``concretize``) are small separately tested
functions, in the style of ``fairaudit.bounds.rules``.

Issue 33 (``bounds="linear"``, ``refine_counterexamples``, ``device``): the partitions the intervals leave
undecided are bounded again by back-substitution (``linear.back_substitute``, its rounding bound
``linear_margin``) and checked for a protected attribute that cannot reach the output (``_same_output``, exact); a
counterexample partition is set aside, not dropped, and refined in a second round (``first_depth``) down to single
individuals (``max_depth=None``: ``grid_depth``); tensors live on ``device``. ``docs/methods/fairquant.md`` has
the derivations.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np

from fairaudit.engines.fairquant.counting import count_positive, minimum
from fairaudit.engines.fairquant.linear import back_substitute, layer_bounds
from fairaudit.engines.fairquant.where import Where
from fairaudit.engines.fairquant.pending import Pending
from fairaudit.engines.fairquant.work import forward_work, linear_work, tighten_work

try:  # torch is a dependency of the engine, imported lazily by it; the module itself needs it
    import torch
except ImportError:  # pragma: no cover - the engine's availability check reports it
    torch = None

MARGIN = 1e-9  # relative margin a sign must also clear (kept besides the proven one: results never certify more)
UNIT_ROUNDOFF = 2.0 ** -53  # float64
TENSOR_BYTES = {"cpu": 64 * 2 ** 20, "cuda": 1024 * 2 ** 20}  # the largest symbolic tensor of a batch (the batch
# shrinks for wide inputs), per device
BATCH = {"cpu": 1024, "cuda": 65536}  # partitions analysed at once when the caller does not say
DEVICES = ("auto", "cpu", "cuda")
# the lower ReLU slopes the linear pass tries (the best bound kept): the chord's slope as well decided no more
# partitions on AC-4 (40,000 partitions: 12.14 % certified with both, 12.14 % adaptive alone, 7.08 % chord alone)
SLOPES = ("adaptive",)
BOUNDS = ("intervals", "linear")  # the first pass alone (the paper's), or then back-substitution on what it leaves
INACTIVE, UNSTABLE, ACTIVE = 0, 1, 2
ORDERS = ("depth-first", "breadth-first")  # LIFO as in the artifact, or FIFO (shallowest partitions first)
# ``tighten="auto"``: every TRIAL_EVERY batches (and on the second), the batch is analysed both with and without
# tightening the hidden layers' bounds, and whichever proved more individuals per multiply-add (``work``) is used
# until the next trial (tightening paid on a network of five hidden layers of 10 neurons, AC-11, and cost more than it
# proved on wider ones: AC-4, AC-5, AC-7)
TRIAL_EVERY = 64


# ============================================================================================ the domain
@dataclass(frozen=True)
class Feature:
    """One attribute of the domain. ``kind``: ``int`` (an integer grid ``lo..hi``), ``real`` (the interval
    ``[lo, hi]``) or ``cat`` (a one-hot group: codes ``0..len(values)-1`` over the encoded columns ``start ..
    start+len(values)-1``). ``start`` is the encoded column (of a numeric feature) or the first of the group."""

    name: str
    kind: str
    lo: float
    hi: float
    start: int
    values: tuple = ()

    @property
    def width(self) -> int:
        return len(self.values) if self.kind == "cat" else 1


@dataclass(frozen=True)
class Domain:
    """The box the rates are about: one ``Feature`` per attribute, over ``n_inputs`` encoded network inputs."""

    features: tuple[Feature, ...]
    n_inputs: int

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.features]

    def index(self, name: str) -> int:
        return self.names.index(name)

    @property
    def lower(self) -> np.ndarray:
        return np.array([f.lo for f in self.features], dtype=np.float64)

    @property
    def upper(self) -> np.ndarray:
        return np.array([f.hi for f in self.features], dtype=np.float64)

    @property
    def has_real(self) -> bool:
        return any(f.kind == "real" for f in self.features)

    def values_of(self, j: int, which: str = "all") -> list[float]:
        """The values the protected attribute ``j`` takes in the copies: every grid value / category
        (``all``), or only the lowest and the highest (``extremes``, the FairQuant artifact's choice)."""
        f = self.features[j]
        if f.kind == "real":
            raise ValueError(f"the protected attribute {f.name!r} is real-valued: it has no finite set of values")
        grid = [float(v) for v in range(int(f.lo), int(f.hi) + 1)]
        if which == "extremes" and len(grid) > 2:
            return [grid[0], grid[-1]]
        return grid

    def encode(self, points: np.ndarray) -> np.ndarray:
        """Encoded network inputs ``[N, n_inputs]`` of raw points ``[N, features]`` (codes for a group)."""
        points = np.asarray(points, dtype=np.float64)
        out = np.zeros((len(points), self.n_inputs))
        for j, f in enumerate(self.features):
            if f.kind == "cat":
                codes = points[:, j].astype(np.int64)
                out[np.arange(len(points)), f.start + codes] = 1.0
            else:
                out[:, f.start] = points[:, j]
        return out

    def decode(self, point: Sequence[float]) -> dict:
        """A raw point as ``{name: value}`` (a category's value for a group; an int for an integer feature)."""
        out = {}
        for f, v in zip(self.features, point):
            if f.kind == "cat":
                out[f.name] = f.values[int(v)]
            elif f.kind == "int":
                out[f.name] = int(v)
            else:
                out[f.name] = float(v)
        return out


def nnet_domain(names: Sequence[str], lower, upper) -> Domain:
    """The integer grid between a ``.nnet`` file's input bounds (the FairQuant evaluation's domain); an input whose
    bounds are not both whole numbers is real-valued (its interval)."""
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    feats = tuple(Feature(str(n), "int" if lo == round(lo) and hi == round(hi) else "real", float(lo), float(hi), i)
                  for i, (n, lo, hi) in enumerate(zip(names, lower, upper)))
    return Domain(feats, len(feats))


# ============================================================================================ models
def network_of(model):
    """``(layers, encoding, lower, upper)`` of a model with a ReLU-network form, or ValueError saying why not."""
    from fairaudit.base.errors import ModelError

    try:
        net = model.as_relu_net()
    except (ModelError, NotImplementedError, AttributeError) as err:  # a model with no ReLU form
        raise ValueError(str(err).split("\n")[0]) from None
    if net.layers[-1][0].shape[0] != 1:
        raise ValueError("the network has more than one output; fairquant needs a single logit (favourable iff > 0)")
    return net


def model_domain(model, dataset=None):
    """The ``fairaudit.engines.fairquant.analysis.Domain`` a model is audited over: a ``.nnet`` network's own input bounds
    (the integer grid between them), else the dataset's column ranges in the model's encoding. ValueError when
    there is none."""
    net = network_of(model)
    if net.lower is not None and net.upper is not None:
        return nnet_domain(net.encoding.raw_names, net.lower, net.upper)
    if dataset is None:
        raise ValueError("the model defines no input domain (only a .nnet file does): give the dataset it was "
                         "trained on, whose column ranges are the domain")
    frame = dataset.frame
    feats, start = [], 0
    for col in net.encoding.columns:
        if col.kind == "categorical":
            feats.append(Feature(col.name, "cat", 0.0, float(len(col.values) - 1), start, tuple(col.values)))
            start += len(col.values)
            continue
        import pandas as pd

        x = pd.to_numeric(frame[col.name], errors="coerce").to_numpy(dtype=float) if col.name in frame else []
        x = np.asarray(x)[np.isfinite(x)] if len(x) else np.array([])
        if not len(x):
            raise ValueError(f"column {col.name!r} has no numeric value in the dataset: its range is unknown")
        lo, hi = float(x.min()), float(x.max())
        if np.all(x == np.round(x)):
            feats.append(Feature(col.name, "int", lo, hi, start))
        else:
            feats.append(Feature(col.name, "real", lo, hi, start))
        start += 1
    return Domain(tuple(feats), start)


# ============================================================================================ rounding
def rounding_margins(layers, magnitudes) -> tuple[float, float]:
    """``(symbolic, concrete)``: absolute bounds on the rounding error of the float64 computation of the output's
    symbolic bounds (``forward_bounds``, concretized over any box of the domain) and of a concrete forward pass
    (``concrete_outputs``), for inputs with ``|x_i| ≤ magnitudes[i]`` (1 for a one-hot input).

    Derivation (u = 2⁻⁵³, γ = n·u/(1 − n·u) with n the longest dot product + 8; every float dot product, in any
    summation order, is within γ·Σ|aᵢbᵢ| of the exact one). Let ``A_l`` bound the absolute-value magnitude
    Σ|cᵢ|·|xᵢ| + |d| of layer l's symbolic bounds and ``e_l`` their pointwise error (``L̂ − e ≤ z ≤ Û + e``).
    The ReLU rule keeps the lower bound within ``e`` (λ·L̂ ≤ λ(z + e) ≤ relu(z) + e for any λ ∈ [0, 1]) and the
    upper within ``2e + 2γA`` (the chord / the inactive and active cases are decided on concretized bounds that
    are themselves off by ``e + 2γA``), and at most doubles the magnitude (the chord's constant ``s·t`` is at
    most ``up``). The affine rule maps ``e`` to ``|W|·e`` and adds ``γ·(4|W|A + |b|)``. Hence
    ``M_l = 2|W_l|M_{l−1} + |b_l|``, ``E_l = 2|W_l|E_{l−1} + 4γ·M_l`` (``M_0`` = the magnitudes, ``E_0`` = 0),
    and the output's concretized bounds are within ``E_L + 2γ·M_L``. A concrete pass (ReLU is 1-Lipschitz):
    ``m_l = |W_l|m_{l−1} + |b_l|``, ``P_l = |W_l|P_{l−1} + γ·m_l``. Both are maxima over the domain, so one
    pair of numbers serves every partition; each is doubled for slack."""
    layers, gamma, M, E, m, P = _error_recursion(layers, magnitudes)
    return float(2 * (E[-1].max() + 2 * gamma * M[-1].max())), float(2 * P.max())


def _error_recursion(layers, magnitudes):
    """``(|layers|, γ, M, E, m, P)`` of ``rounding_margins``' derivation: ``M[l]``, ``E[l]`` (per neuron) after
    every layer ``l`` of the symbolic pass, ``m``, ``P`` of the output of a concrete pass."""
    layers = [(np.abs(np.asarray(W, dtype=np.float64)), np.abs(np.asarray(b, dtype=np.float64))) for W, b in layers]
    longest = max([len(magnitudes)] + [A.shape[1] for A, _ in layers]) + 8
    gamma = longest * UNIT_ROUNDOFF / (1 - longest * UNIT_ROUNDOFF)
    M_l = m = np.asarray(magnitudes, dtype=np.float64)
    E_l = P = np.zeros_like(M_l)
    M, E = [], []
    for A, b in layers:
        M_l = 2 * (A @ M_l) + b
        E_l = 2 * (A @ E_l) + 4 * gamma * M_l
        M.append(M_l)
        E.append(E_l)
        m = A @ m + b
        P = A @ P + gamma * m
    return layers, gamma, M, E, m, P


def pre_activation_margins(layers, magnitudes) -> list[float]:
    """Per hidden layer, an absolute bound on the rounding error of the first pass's concretized pre-activation
    bounds (``ε_l = E_l + 2γM_l`` of ``rounding_margins``' derivation, its maximum, doubled for slack)."""
    _, gamma, M, E, _, _ = _error_recursion(layers, magnitudes)
    return [float(2 * (E[i] + 2 * gamma * M[i]).max()) for i in range(len(layers) - 1)]


def linear_margin(layers, magnitudes) -> float:
    """An absolute bound on the rounding error of the output bounds of the back-substituted pass
    (``linear.back_substitute`` on the first pass's pre-activation bounds, concretized over any box of the
    domain), for inputs with ``|x_i| ≤ magnitudes[i]``; in the notation of ``rounding_margins``.

    Derivation. Hidden layer l's computed pre-activation bounds are within ``ε_l = E_l + 2γM_l`` of exact bounds
    of the first pass, and ``|bound| ≤ R_l = M_l + ε_l``. Each relaxation the backward pass uses is then valid up
    to an additive ``ε_l``: a neuron judged inactive (active) on a computed bound is within ``ε_l`` of 0 (of
    ``z``); ``relu(z) ≥ α·z`` holds for any ``α ∈ [0, 1]`` (a float ratio ``up/(up − low) ∈ [0, 1]`` stays
    there); the chord through the computed ``(low, 0)``, ``(up, up)`` is below ``relu`` on the true range by at
    most ``ε_l`` (``relu`` minus a line is convex: worst at the ends), and its float slope moves it by at most
    ``γ·2R_l``. A backward coefficient of layer l is at most ``G_l = |W_L|·…·|W_{l+1}|`` in absolute value (every
    slope is in [0, 1]), so the relaxations cost at most ``Σ_l G_l·(ε_l + 2γR_l)``. The float products of the
    backward pass (L of them in a row) and the concretization perturb the coefficients by at most ``(L+2)γ·G_0``
    and the constant by ``(L+2)γ·Σ_l G_l·(|b_l| + R_l)`` (intercepts ``s·|low| ≤ R_l``), which over the box is at
    most ``(L+2)γ·(G_0·magnitudes + Σ_l G_l·(|b_l| + R_l))``. Doubled for slack."""
    layers, gamma, M, E, _, _ = _error_recursion(layers, magnitudes)
    L = len(layers)
    G = np.ones(1)  # the output's own coefficient
    relax, const = 0.0, float(layers[-1][1].sum())
    for i in range(L - 2, -1, -1):
        G = G @ layers[i + 1][0]  # [m_i]: bound on |coefficient| of hidden layer i's neurons
        eps = E[i] + 2 * gamma * M[i]
        R = M[i] + eps
        relax += float(G @ (eps + 2 * gamma * R))
        const += float(G @ (layers[i][1] + R))
    G0 = G @ layers[0][0]
    arithmetic = (L + 2) * gamma * (float(G0 @ np.asarray(magnitudes, dtype=np.float64)) + const)
    return float(2 * (relax + arithmetic))


def layer_margins(layers, magnitudes) -> list[float]:
    """Per hidden layer ``i ≥ 1`` (index ``i``; 0 for the first), an absolute bound on the rounding error of its
    back-substituted pre-activation bounds (``linear.layer_bounds`` on the first pass's bounds, or on bounds
    already tightened this way and widened by these margins, concretized over any box of the domain): each neuron
    is the output of the network cut after layer ``i``, so ``linear_margin``'s derivation applies to it; the
    largest over the layer's neurons."""
    layers = [(np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)) for W, b in layers]
    out = [0.0]
    for i in range(1, len(layers) - 1):
        W, b = layers[i]
        out.append(max(linear_margin(layers[:i] + [(W[n:n + 1], b[n:n + 1])], magnitudes)
                       for n in range(W.shape[0])))
    return out


def input_magnitudes(domain: "Domain") -> np.ndarray:
    """``max |x_i|`` of every encoded input over the domain (1 for the inputs of a one-hot group)."""
    out = np.ones(domain.n_inputs)
    for f in domain.features:
        if f.kind != "cat":
            out[f.start] = max(abs(f.lo), abs(f.hi))
    return out


def grid_depth(domain: "Domain", protected: int, real_depth: int = 20) -> int:
    """The bisections that reach single individuals of the grid from its whole box (each attribute but the
    protected one halved ``⌈log₂ size⌉`` times); ``real_depth`` when an attribute is real-valued (never a point)."""
    if domain.has_real:
        return real_depth
    return sum(math.ceil(math.log2(int(f.hi - f.lo) + 1)) for j, f in enumerate(domain.features)
               if j != protected and f.hi > f.lo)


def resolve_device(device: str = "cpu") -> "torch.device":
    """The torch device of ``auto`` (CUDA when available, else the CPU), ``cpu`` or ``cuda``; ValueError when
    ``cuda`` is asked for and there is none."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    available = torch.cuda.is_available()
    if device == "cuda" and not available:
        raise ValueError("device cuda was asked for, but torch sees no CUDA GPU here (use auto or cpu)")
    return torch.device("cuda" if device == "cuda" or (device == "auto" and available) else "cpu")


# ============================================================================================ layer rules
@dataclass
class Symbolic:
    """Linear lower/upper bounds of a layer's ``m`` neurons as functions of the ``n`` encoded inputs, for a batch
    of ``B`` boxes: ``L(x) = x·lc + ld ≤ z(x) ≤ x·uc + ud = U(x)``; ``lc, uc: [B, n, m]``, ``ld, ud: [B, m]``."""

    lc: "torch.Tensor"
    ld: "torch.Tensor"
    uc: "torch.Tensor"
    ud: "torch.Tensor"


@dataclass
class Box:
    """The encoded input box of ``B`` partitions: ``lo, hi: [B, n]`` for numeric inputs (0 on group columns) and,
    per one-hot group, ``(start, size, allowed [B, size] bool)``: the codes the group may take."""

    lo: "torch.Tensor"
    hi: "torch.Tensor"
    groups: list = field(default_factory=list)

    def __post_init__(self):
        self.mid = (self.lo + self.hi) * 0.5
        self.rad = (self.hi - self.lo) * 0.5

    def rows(self, index) -> "Box":
        """The boxes ``index`` (a tensor of row numbers) of this batch."""
        return Box(self.lo[index], self.hi[index], [(s, z, a[index]) for s, z, a in self.groups])


def concretize(c, d, box: Box):
    """``(min, max)`` over the box of ``x·c + d`` (``c: [B, n, m]``, ``d: [B, m]``): ``d + Σ c⁺·lo + c⁻·hi`` and
    ``d + Σ c⁺·hi + c⁻·lo`` over numeric inputs, plus, per one-hot group, the smallest (largest) coefficient
    among the codes the group may take (exactly one indicator is 1)."""
    # c⁺·lo + c⁻·hi = c·mid − |c|·rad (mid, rad: the box's centre and radius): two products for both bounds
    centre = torch.bmm(box.mid[:, None, :], c)[:, 0, :]
    spread = torch.bmm(box.rad[:, None, :], c.abs())[:, 0, :]
    low = d + centre - spread
    high = d + centre + spread
    for start, size, allowed in box.groups:
        part = c[:, start:start + size, :]
        mask = allowed[:, :, None]
        low = low + torch.where(mask, part, torch.inf).amin(dim=1)
        high = high + torch.where(mask, part, -torch.inf).amax(dim=1)
    return low, high


def affine_rule(sym: Symbolic, W, b) -> Symbolic:
    """``z' = W z + b`` (``W: [m', m]``): ``L' = W⁺L + W⁻U + b``, ``U' = W⁺U + W⁻L + b``, computed as
    ``C·W ∓ R·|W|`` with ``C = (L + U)/2``, ``R = (U − L)/2`` (the same bounds, two products instead of four)."""
    Wt, At = W.T, W.abs().T
    c = (sym.lc + sym.uc) * 0.5 @ Wt
    r = (sym.uc - sym.lc) * 0.5 @ At
    dc = (sym.ld + sym.ud) * 0.5 @ Wt + b
    dr = (sym.ud - sym.ld) * 0.5 @ At
    return Symbolic(c - r, dc - dr, c + r, dc + dr)


def input_rule(W, b, batch: int) -> Symbolic:
    """The first affine layer applied to the inputs themselves (``L = U = x``): ``L' = U' = x·Wᵀ + b``."""
    c = W.T.expand(batch, *W.T.shape)
    d = b.expand(batch, *b.shape)
    return Symbolic(c, d, c, d)


def relu_scales(low, lows_up, ups_low, up):
    """The ReLU relaxation's numbers per neuron: ``(l_scale, u_scale, u_shift, mask)`` with ``L' = l_scale·L`` and
    ``U' = u_scale·(U − u_shift)`` (see ``relu_rule``)."""
    inactive = up <= 0
    active = ~inactive & (low >= 0)
    unstable = ~inactive & ~active
    mask = phase(low, up)
    # upper bound: the chord over [upsLow, up] where upsLow < 0
    chord = unstable & (ups_low < 0)
    u_scale = torch.where(chord, up / torch.where(chord, up - ups_low, 1.0), 1.0)
    u_shift = torch.where(chord, ups_low, 0.0)
    # lower bound: λ·L with λ = lowsUp/(lowsUp − low), or 0 when lowsUp < 0
    zero_l = unstable & (lows_up < 0)
    lam = unstable & ~zero_l
    l_scale = torch.where(lam, lows_up / torch.where(lam, lows_up - low, 1.0), 1.0)
    l_scale = torch.where(zero_l | inactive, 0.0, l_scale)
    u_scale = torch.where(inactive, 0.0, u_scale)
    return l_scale, u_scale, u_shift, mask


def _pre_activation(sym: Symbolic, box: Box, pre: list | None = None):
    low, lows_up = concretize(sym.lc, sym.ld, box)
    if sym.uc is sym.lc:  # shared coefficients (after ``first_layers``): only the constants differ
        shift = sym.ud - sym.ld
        ups_low, up = low + shift, lows_up + shift
    else:
        ups_low, up = concretize(sym.uc, sym.ud, box)
    if pre is not None:
        pre.append((low, up))
    return low, lows_up, ups_low, up


def relu_rule(sym: Symbolic, box: Box, pre: list | None = None) -> tuple[Symbolic, "torch.Tensor"]:
    """ReLU on every neuron (the artifact's ``forward_prop_fair``, notes §B2.3), and the gradient mask
    (0 inactive, 1 unstable, 2 active). With ``low = min L``, ``lowsUp = max L``, ``upsLow = min U``,
    ``up = max U``: ``up ≤ 0`` gives 0; ``low ≥ 0`` keeps both bounds; otherwise ``U := up/(up − upsLow)·(U −
    upsLow)`` when ``upsLow < 0`` (the chord) and ``L := 0`` when ``lowsUp < 0``, else ``L := lowsUp/(lowsUp −
    low)·L``. ``pre``: a list, the pre-activation bounds ``(low, up)`` are appended to it."""
    l_scale, u_scale, u_shift, mask = relu_scales(*_pre_activation(sym, box, pre))
    out = Symbolic(sym.lc * l_scale[:, None, :], sym.ld * l_scale,
                   sym.uc * u_scale[:, None, :], (sym.ud - u_shift) * u_scale)
    return out, mask


def relu_affine_shared(sym: Symbolic, box: Box, W, b, pre: list | None = None) -> tuple[Symbolic, "torch.Tensor"]:
    """``relu_rule`` then ``affine_rule`` when L and U share their coefficients ``c`` (``sym.lc is sym.uc``): the
    scaled bounds ``c·diag(s_L)``, ``c·diag(s_U)`` never need to be formed — ``lc' = c·(diag((s_L+s_U)/2)·Wᵀ −
    diag((s_U−s_L)/2)·|W|ᵀ)`` and ``uc'`` likewise are one batched product over ``[B, m, 2m']``."""
    l_scale, u_scale, u_shift, mask = relu_scales(*_pre_activation(sym, box, pre))
    Wt, At = W.T, W.abs().T
    B, n, k = sym.lc.shape
    m = W.shape[0]
    half_sum = (l_scale + u_scale) * 0.5
    half_diff = (u_scale - l_scale) * 0.5
    if n <= m:  # scale the coefficients, then plain products
        centre = ((sym.lc * half_sum[:, None, :]).reshape(-1, k) @ Wt).reshape(B, n, m)
        radius = ((sym.lc * half_diff[:, None, :]).reshape(-1, k) @ At).reshape(B, n, m)
    else:  # scale the weights per box: one batched product over [B, k, 2m]
        both = torch.matmul(sym.lc, torch.cat([half_sum[:, :, None] * Wt, half_diff[:, :, None] * At], dim=2))
        centre, radius = both[:, :, :m], both[:, :, m:]
    ld, ud = sym.ld * l_scale, (sym.ud - u_shift) * u_scale
    dc = (ld + ud) * 0.5 @ Wt + b
    dr = (ud - ld) * 0.5 @ At
    return Symbolic(centre - radius, dc - dr, centre + radius, dc + dr), mask


def first_layers(layers, box: Box) -> tuple[Symbolic | None, "torch.Tensor", "torch.Tensor", list]:
    """The first affine layer, its ReLU and the second affine layer at once, exploiting ``L = U = x·W₁ᵀ + b₁``
    (shared by every box): the ReLU rule then scales both bounds by the same ``s = up/(up − low)`` (``L = s·z``,
    ``U = s·(z − low)`` on an unstable neuron), so the second layer's lower and upper bounds share their
    coefficients ``c₀·diag(s)·W₂ᵀ`` and differ only in their constants. The same bounds as ``input_rule``,
    ``relu_rule``, ``affine_rule`` one after the other, with a third of the work. Returns ``(symbolic after the
    second layer or None for a network without hidden layer, low, high of the first layer, [mask])``."""
    W1, b1 = layers[0]
    c0 = W1.T
    centre = box.mid @ c0 + b1
    spread = box.rad @ c0.abs()
    low, up = centre - spread, centre + spread
    for start, size, allowed in box.groups:
        part = c0[start:start + size, :][None, :, :]
        mask = allowed[:, :, None]
        low = low + torch.where(mask, part, torch.inf).amin(dim=1)
        up = up + torch.where(mask, part, -torch.inf).amax(dim=1)
    if len(layers) == 1:
        return None, low, up, []
    inactive = up <= 0
    active = ~inactive & (low >= 0)
    unstable = ~inactive & ~active
    mask = phase(low, up)
    scale = torch.where(unstable, up / torch.where(unstable, up - low, 1.0), 1.0)
    scale = torch.where(inactive, 0.0, scale)
    shift = torch.where(unstable, low, 0.0) * scale  # s·low, what U subtracts
    W2, b2 = layers[1]
    n, m1 = c0.shape
    if n <= W2.shape[0]:  # scale the (narrower) input coefficients, then one plain product
        coef = ((c0[None, :, :] * scale[:, None, :]).reshape(-1, m1) @ W2.T).reshape(-1, n, W2.shape[0])
    else:  # scale the weights per box
        coef = torch.matmul(c0, scale[:, :, None] * W2.T)  # [B, n, m2], shared by L and U
    common = (scale * b1) @ W2.T + b2
    ld = common - shift @ W2.clamp(max=0).T
    ud = common - shift @ W2.clamp(min=0).T
    return Symbolic(coef, ld, coef, ud), low, up, [mask]


def forward_bounds(layers, box: Box, symbolic: list | None = None,
                   pre: list | None = None) -> tuple["torch.Tensor", "torch.Tensor", list]:
    """The output's concrete bounds ``[B, outputs]`` (low, high) over each box, and the hidden layers' masks
    (``symbolic``, a list: the output's ``Symbolic`` bounds are appended to it; ``pre``, a list: every hidden
    layer's pre-activation bounds ``(low, up)`` are appended to it, for ``linear.back_substitute``)."""
    sym, low, high, masks = first_layers(layers, box)
    if pre is not None and sym is not None:
        pre.append((low, high))
    if sym is None:  # an affine network: the first layer is the output
        if symbolic is not None:
            c = layers[0][0].T.expand(box.lo.shape[0], *layers[0][0].T.shape)
            d = layers[0][1].expand(box.lo.shape[0], *layers[0][1].shape)
            symbolic.append(Symbolic(c, d, c, d))
        return low, high, masks
    for W, b in layers[2:]:
        if sym.lc is sym.uc:
            sym, mask = relu_affine_shared(sym, box, W, b, pre)
        else:
            sym, mask = relu_rule(sym, box, pre)
            sym = affine_rule(sym, W, b)
        masks.append(mask)
    low, _ = concretize(sym.lc, sym.ld, box)
    _, high = concretize(sym.uc, sym.ud, box)
    if symbolic is not None:
        symbolic.append(sym)
    return low, high, masks


def forward_bounds_stepwise(layers, box: Box) -> tuple["torch.Tensor", "torch.Tensor", list]:
    """``forward_bounds`` rule by rule (``input_rule``, then ``relu_rule`` and ``affine_rule`` per layer): the
    reference the fused ``first_layers`` is tested against."""
    batch = box.lo.shape[0]
    W, b = layers[0]
    sym = input_rule(W, b, batch)
    masks = []
    for W, b in layers[1:]:
        sym, mask = relu_rule(sym, box)
        masks.append(mask)
        sym = affine_rule(sym, W, b)
    low, _ = concretize(sym.lc, sym.ld, box)
    _, high = concretize(sym.uc, sym.ud, box)
    return low, high, masks


def backward_rule(layers, masks, batch: int | None = None) -> tuple["torch.Tensor", "torch.Tensor"]:
    """Interval gradient of the (single) output with respect to the inputs (the artifact's ``backward_prop``):
    ``[W_out, W_out]`` on the last hidden layer; at each hidden layer an inactive neuron gives ``[0, 0]``, an
    unstable one ``[min(gl, 0), max(gu, 0)]``; then ``gu' = gu·W⁺ + gl·W⁻``, ``gl' = gl·W⁺ + gu·W⁻``."""
    if batch is None:
        batch = masks[0].shape[0] if masks else 1
    W_out = layers[-1][0][0]
    gl = W_out.expand(batch, -1).clone()
    gu = gl.clone()
    for k in range(len(layers) - 2, -1, -1):
        mask = masks[k]
        gl = torch.where(mask == INACTIVE, 0.0, torch.where(mask == UNSTABLE, gl.clamp(max=0), gl))
        gu = torch.where(mask == INACTIVE, 0.0, torch.where(mask == UNSTABLE, gu.clamp(min=0), gu))
        W = layers[k][0]
        Wp, Wn = W.clamp(min=0), W.clamp(max=0)
        gl, gu = gl @ Wp + gu @ Wn, gu @ Wp + gl @ Wn
    if not masks:  # a purely affine network (e.g. a logistic regression)
        gl = gu = W_out.expand(batch, -1)
    return gl, gu


def phase(low, up):
    """The ReLU phase mask of neurons with pre-activation bounds ``low, up``: ``INACTIVE`` where ``up ≤ 0``, else
    ``ACTIVE`` where ``low ≥ 0``, else ``UNSTABLE`` (what ``backward_rule`` reads)."""
    return torch.where(up <= 0, INACTIVE, torch.where(low >= 0, ACTIVE, UNSTABLE))


def favourable(output) -> bool:
    """The decision rule of every single-output network here (``NNetModel.predict``, ``MLPModel.predict``): an
    output strictly above 0 is favourable, an output of exactly 0 is not."""
    return output > 0


def exact_outputs(layers_np, X: np.ndarray) -> list[Fraction]:
    """The network's output on encoded inputs ``[N, n]`` in exact rational arithmetic: each float64 weight, bias
    and input taken as the fraction it is (``Fraction(float)``, no rounding anywhere), ReLU as ``max(0, z)``. Slow
    (Python fractions): for the few individuals whose float output is too close to 0 to trust its sign."""
    h = np.array([[Fraction(float(v)) for v in row] for row in np.asarray(X, dtype=np.float64)], dtype=object)
    zero = Fraction(0)
    for k, (W, b) in enumerate(layers_np):
        Wf = np.array([[Fraction(float(w)) for w in row] for row in np.asarray(W)], dtype=object)
        bf = np.array([Fraction(float(c)) for c in np.asarray(b)], dtype=object)
        h = h.dot(Wf.T) + bf
        if k < len(layers_np) - 1:
            h = np.array([[v if v > 0 else zero for v in row] for row in h], dtype=object).reshape(h.shape)
    return [row[0] for row in h]


def concrete_outputs(layers_np, X: np.ndarray) -> np.ndarray:
    """The network's output ``[N]`` on encoded inputs (float64 numpy, the ``ReluNet.margin`` computation)."""
    h = np.asarray(X, dtype=np.float64)
    for k, (W, b) in enumerate(layers_np):
        h = h @ W.T + b
        if k < len(layers_np) - 1:
            h = np.maximum(h, 0.0)
    return h[:, 0]


# ============================================================================================ the analysis
def _output_value(o) -> float:
    """An output as kept with a counterexample: the float, or for an exact one a float of the same decision (a
    tiny positive exact output must not round to 0, which would read as unfavourable)."""
    f = float(o)
    if favourable(o) != favourable(f):
        f = math.nextafter(0.0, 1.0) if favourable(o) else 0.0
    return f


@dataclass
class Counterexample:
    """An individual (raw point, with the protected attribute at ``values[0]``) whose decision changes with the
    protected attribute: ``outputs[i]`` is the network's output with the attribute at ``values[i]``."""

    point: tuple
    values: tuple
    outputs: tuple

    @property
    def decisions(self) -> tuple:
        return tuple(int(favourable(o)) for o in self.outputs)


@dataclass
class Counts:
    """Exact counts in units of ``total`` (the domain's individuals; ``2^H`` units per individual with real
    features): certified, falsified (unfair partitions), counterexample partitions (count and their mass)."""

    total: int
    unit: int  # the mass of one individual (0 with real features: a point has no volume)
    certified: int = 0
    falsified: int = 0
    cex_partitions: int = 0
    cex_mass: int = 0
    cex_witnesses: int = 0  # counterexample partitions whose witness lies inside them (each counts as unfair)
    singles: int = 0  # partitions decided by a concrete forward pass
    exact: int = 0  # of those, decided in exact arithmetic (a float output within the rounding margin of 0)
    unfair_partitions: int = 0  # partitions decided unfair (single individuals and proven boxes)
    # individuals of undecided partitions proven fair one by one (``counting``): on the partitions still to be
    # refined (``credited``, replaced by what their children prove when they are split) and on those no longer
    # refined (``credit_kept``; ``credit_cex`` of it in counterexample partitions)
    credited: int = 0
    credit_kept: int = 0
    credit_cex: int = 0
    credited_whole: int = 0  # halves certified whole by their parent's counting functions (never analysed): a count
    # of partitions, their individuals are in ``certified``
    best: int = 0  # the most individuals proven fair at any step so far (each a sound lower bound)

    @property
    def fair_proven(self) -> int:
        """Individuals proven fair: whole certified partitions, the counted ones, or the most at any step."""
        return max(self.best, self.certified + self.credited + self.credit_kept)

    @property
    def unfair(self) -> int:
        return self.falsified + self.cex_witnesses * self.unit

    @property
    def open(self) -> int:
        """Mass neither decided nor in a counterexample partition (left by the depth or time limit, or not yet
        analysed)."""
        return self.total - self.certified - self.falsified - self.cex_mass

    def rates(self) -> dict:
        t = self.total
        fair = self.fair_proven
        undecided = t - fair - self.unfair
        cex_und = min(self.cex_mass - self.cex_witnesses * self.unit - self.credit_cex, undecided)
        return {"certified": Fraction(fair, t), "unfair": Fraction(self.unfair, t),
                "undecided": Fraction(undecided, t),
                "undecided_cex": Fraction(cex_und, t), "undecided_open": Fraction(undecided - cex_und, t)}


class FairQuant:
    """The refinement of one protected attribute's rates over ``domain`` for the network ``layers``
    (``[(W, b), ...]`` over the domain's encoded inputs, ``W: [out, in]``; hidden layers ReLU, one output,
    favourable iff output > 0). ``step(limit)`` analyses up to ``batch`` partitions at once; ``done`` says
    whether anything is left. Deterministic for a given ``seed``."""

    def __init__(self, layers, domain: Domain, protected: str | int, *, values: str | Sequence[float] = "all",
                 max_depth: int | None = 20, sample_depth: int = 15, samples: int = 10, batch: int | None = 1024,
                 tolerance: float = 1e-5, seed: int = 0, keep: int = 100, log: list | None = None,
                 order: str = "depth-first", corners: bool = False, probes: str = "random",
                 bounds: str = "intervals", refine_counterexamples: bool = False, device: str = "cpu",
                 first_depth: int | None = None, count_inside: bool = False, tighten: bool | str = False):
        if torch is None:
            raise ImportError("torch")
        if np.asarray(layers[-1][0]).shape[0] != 1:
            raise ValueError("the network must have a single output (a logit: favourable iff > 0)")
        self.domain = domain
        self.j = protected if isinstance(protected, int) else domain.index(protected)
        pa = domain.features[self.j]
        self.values = list(values) if not isinstance(values, str) else domain.values_of(self.j, values)
        if len(self.values) < 2:
            raise ValueError(f"the protected attribute {pa.name!r} takes a single value in the domain")
        self.k = len(self.values)
        self.layers_np = [(np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)) for W, b in layers]
        self.device = resolve_device(device)
        self.layers = [(torch.from_numpy(W.copy()).to(self.device), torch.from_numpy(b.copy()).to(self.device))
                       for W, b in self.layers_np]
        if bounds not in BOUNDS:
            raise ValueError(f"bounds must be one of {', '.join(BOUNDS)}, got {bounds!r}")
        self.linear = bounds == "linear"  # a second pass (back-substitution) on what the intervals leave undecided
        # a counterexample proves one individual unfair, not its partition: refine it further (down to single
        # individuals, decided exactly) instead of stopping there; only the depth limit stops it
        self.refine_cex = bool(refine_counterexamples)
        if max_depth is None:  # as deep as single individuals need (20 with real-valued inputs)
            max_depth = grid_depth(domain, self.j)
        self.max_depth, self.sample_depth, self.samples = int(max_depth), int(sample_depth), int(samples)
        # two rounds (with ``first_depth``): FairQuant's refinement as the paper runs it (a counterexample stops a
        # partition, depth ≤ first_depth), then what it left, breadth-first, down to ``max_depth``
        self.first_round = first_depth is not None and self.refine_cex
        self.first_depth = min(int(first_depth), self.max_depth) if self.first_round else None
        self.deferred: list = []
        # individuals of undecided partitions counted one by one (``counting``): only over a grid, with the
        # linear pass's functions
        self.count_inside = bool(count_inside) and self.linear and not domain.has_real
        self._forms = None
        self._since_sort = 0  # partitions popped since the queue was last ordered (``_sort_queue``)
        # a batch's symbolic tensors are [P·k, inputs, neurons] float64: at most TENSOR_BYTES each
        widest = max(W.shape[0] for W, _ in self.layers_np)
        per_partition = self.k * domain.n_inputs * widest * 8
        # the default batch is sized to the device; a batch asked for is kept on every device (up to the largest
        # tensor any device allows), so the same batch analyses the same partitions on the CPU and on a GPU
        if batch is None:
            self.batch = max(1, min(BATCH[self.device.type], TENSOR_BYTES[self.device.type] // per_partition))
        else:
            self.batch = max(1, min(int(batch), max(TENSOR_BYTES.values()) // per_partition))
        self.tolerance = float(tolerance)
        # proven bounds on float64 rounding: an output bound / a concrete output is trusted beyond these
        self.symbolic_margin, self.point_margin = rounding_margins(self.layers_np, input_magnitudes(domain))
        self.symbolic_margin = max(self.symbolic_margin, self.point_margin)
        self.linear_margin = max(linear_margin(self.layers_np, input_magnitudes(domain)), self.point_margin)
        self.pre_margins = pre_activation_margins(self.layers_np, input_magnitudes(domain))
        # deeper networks: the hidden layers' bounds are tightened by back-substitution before the output's
        # (``"auto"``: chosen by trials on the batches themselves, ``_analyse``)
        if tighten not in (True, False, "auto"):
            raise ValueError(f"tighten must be True, False or 'auto', got {tighten!r}")
        can = self.linear and len(self.layers_np) > 2
        self.adaptive = tighten == "auto" and can
        self.tighten = tighten is True and can
        self.layer_margins = layer_margins(self.layers_np, input_magnitudes(domain)) if can and tighten else []
        self.batches = 0  # batches analysed (the trials' schedule)
        self.trials: list = []  # with ``tighten="auto"``: (pops, proven per multiply-add without, with tightening)
        self.shapes = [tuple(W.shape) for W, _ in self.layers_np]  # the cost of the passes (``work``)
        self._linear_rows = 0  # rows the last ``classify`` bounded by back-substitution
        self.reaches = self._attribute_inputs(pa)  # first-layer neurons the protected attribute's value feeds
        self.rng = np.random.default_rng(seed)
        self.keep = int(keep)
        if order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
        self.corners = bool(corners)  # also try the corners where the output bounds are extreme (fewer partitions,
        # found sooner, but a mixed partition stops being refined earlier, so fewer are certified)
        if probes not in ("random", "artifact"):
            raise ValueError(f"probes must be random or artifact, got {probes!r}")
        # artifact: the FairQuant artifact's deterministic probes ⌊s·(lb+ub)/10⌋, s = 0..9 (C division), which
        # may lie outside the partition — only to reproduce its Table II; random: uniform inside the partition
        self.artifact_probes = probes == "artifact"
        self.fifo = order == "breadth-first"  # the largest (shallowest) partitions first: a better anytime curve
        self.log = log  # a list: every popped partition is appended as (lb, ub, depth, status, split feature)
        feats = domain.features
        self.kinds = np.array([f.kind for f in feats])
        self.real = self.kinds == "real"
        self.counted = np.array([j != self.j and f.kind != "real" for j, f in enumerate(feats)])
        self.candidates = np.array([j != self.j and f.lo < f.hi for j, f in enumerate(feats)])
        self.H = self.max_depth if self.real.any() else 0
        grid = math.prod(int(f.hi - f.lo) + 1 for j, f in enumerate(feats) if self.counted[j])
        self.counts = Counts(total=grid << self.H, unit=0 if self.real.any() else 1)
        self.small = self.counts.total < 2 ** 62  # masses fit int64
        self.count_inside = self.count_inside and self.small
        # where the undecided mass is (with counting: each partition's individuals not yet proven fair)
        self.where = Where(domain, self.j, self.counted, self.H, self.counts.total, weighted=self.count_inside)
        lo, hi = domain.lower, domain.upper
        # the partitions still to analyse (a stack, or a queue breadth-first): bounds [N, F], depth, halvings of
        # real features, individuals already proven fair in each (``credit``)
        self.pending = Pending(lo[None, :].copy(), hi[None, :].copy(), np.zeros(1, dtype=np.int64),
                               np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
        self.pops = 0
        self.max_seen_depth = 0
        self.stopped: str | None = None  # why the refinement ended: complete / tolerance
        self.counterexamples: list[Counterexample] = []
        self.splits = np.zeros(len(feats), dtype=np.int64)
        self._groups = [(j, f) for j, f in enumerate(feats) if f.kind == "cat"]
        self._numeric = [(j, f) for j, f in enumerate(feats) if f.kind != "cat"]

    # ---------------------------------------------------------------------------------------- accounting
    def _grid_values(self, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
        """``[N, counted features]`` int64: the grid values of each counted feature in each partition."""
        return np.rint(ub[:, self.counted] - lb[:, self.counted]).astype(np.int64) + 1

    def individuals(self, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
        """``[N]`` int64: the individuals of each partition (grid points; with ``small``, so they fit)."""
        return np.prod(self._grid_values(lb, ub), axis=1)

    def mass(self, lb: np.ndarray, ub: np.ndarray, halvings: np.ndarray) -> int:
        """Total exact mass of the partitions ``lb, ub`` (rows)."""
        if not len(lb):
            return 0
        shift = self.H - halvings
        if self.small:
            return int((self.individuals(lb, ub) << shift).sum())
        return sum(math.prod(int(s) for s in row) << int(h) for row, h in zip(self._grid_values(lb, ub), shift))

    @property
    def done(self) -> bool:
        return self.stopped is not None

    def rates(self) -> dict:
        return self.counts.rates()

    # ---------------------------------------------------------------------------------------- boxes
    def _box(self, lb: np.ndarray, ub: np.ndarray) -> Box:
        """The encoded box of every copy: rows ``[P·k]`` (partition-major), the attribute pinned per copy."""
        P = len(lb)
        lbk = np.repeat(lb, self.k, axis=0)
        ubk = np.repeat(ub, self.k, axis=0)
        vals = np.tile(np.asarray(self.values, dtype=np.float64), P)
        lbk[:, self.j] = vals
        ubk[:, self.j] = vals
        lo = np.zeros((P * self.k, self.domain.n_inputs))
        hi = np.zeros_like(lo)
        for j, f in self._numeric:
            lo[:, f.start] = lbk[:, j]
            hi[:, f.start] = ubk[:, j]
        groups = []
        for j, f in self._groups:
            codes = np.arange(f.width)[None, :]
            allowed = (codes >= lbk[:, j:j + 1]) & (codes <= ubk[:, j:j + 1])
            groups.append((f.start, f.width, torch.from_numpy(allowed).to(self.device)))
        return Box(torch.from_numpy(lo).to(self.device), torch.from_numpy(hi).to(self.device), groups)

    def _copies(self, points: np.ndarray) -> np.ndarray:
        """Encoded inputs ``[N·k, n]`` of raw points ``[N, F]`` with the attribute at each value."""
        rep = np.repeat(points, self.k, axis=0)
        rep[:, self.j] = np.tile(np.asarray(self.values, dtype=np.float64), len(points))
        return self.domain.encode(rep)

    def _outputs(self, points: np.ndarray) -> np.ndarray:
        """Concrete float64 outputs ``[N, k]`` of raw points ``[N, F]`` with the attribute at each value."""
        return concrete_outputs(self.layers_np, self._copies(points)).reshape(len(points), self.k)

    def _exact(self, points: np.ndarray) -> np.ndarray:
        """Exact outputs ``[N, k]`` (fractions, ``exact_outputs``) of raw points with the attribute at each value."""
        out = np.empty((len(points), self.k), dtype=object)
        out.reshape(-1)[:] = exact_outputs(self.layers_np, self._copies(points))
        return out

    # ---------------------------------------------------------------------------------------- one batch
    def step(self) -> int:
        """Pop up to ``batch`` partitions, analyse them all at once, account for them, push the children of the
        undecided ones. Returns the number popped."""
        if self.done:
            return 0
        n = len(self.pending)
        if self.fifo and self.count_inside and self._since_sort >= n // 4 and n > self.batch:
            self._sort_queue()
        take = min(self.batch, n)
        self._since_sort += take
        lb, ub, depth, halv, credit = self.pending.pop(take, first=self.fifo)
        self.pops += take
        self.max_seen_depth = max(self.max_seen_depth, int(depth.max()))
        c = self.counts
        c.credited -= int(credit.sum())  # what these partitions prove is counted afresh below

        widths = ub - lb
        single = ~(widths[:, self.candidates] > 0).any(axis=1)  # a real feature never shrinks to a point
        fair = np.zeros(take, dtype=bool)
        unfair = np.zeros(take, dtype=bool)
        # single individuals: a concrete forward pass, exact where the float's sign cannot be trusted
        if single.any():
            points = lb[single]
            out = self._outputs(points).astype(object)
            close = ~((out > self.point_margin) | (out < -self.point_margin)).all(axis=1)
            if close.any():
                out[close] = self._exact(points[close])
            decision = np.vectorize(favourable, otypes=[bool])(out)
            flips = decision.any(axis=1) & ~decision.all(axis=1)
            fair[single] = ~flips
            unfair[single] = flips
            c.singles += int(single.sum())
            c.exact += int(close.sum())
            self._keep(points[flips], out[flips])
        rest = np.flatnonzero(~single)
        split_feature = np.full(take, -1, dtype=np.int64)
        hints: dict = {}  # undecided partition -> the corners where a copy's output bound is extreme
        forms = None  # per undecided partition, the linear functions its children's individuals are counted by
        if len(rest):
            fair[rest], unfair[rest], split_feature[rest], corners = self._analyse(lb[rest], ub[rest], halv[rest])
            if self._forms is not None:
                forms = (rest[self._forms[0]],) + self._forms[1:]
            if corners is not None:
                und = ~fair[rest] & ~unfair[rest]
                for i, p in enumerate(rest):
                    if und[i]:
                        hints[p] = corners[i]
        proven = unfair & ~single  # a symbolically unfair partition: its lowest corner is a counterexample
        if proven.any() and len(self.counterexamples) < self.keep:
            corner = lb[proven][: self.keep - len(self.counterexamples)]
            self._keep(corner, self._outputs(corner))
        c.certified += self.mass(lb[fair], ub[fair], halv[fair])
        c.falsified += self.mass(lb[unfair], ub[unfair], halv[unfair])
        c.unfair_partitions += int(unfair.sum())
        undecided = np.flatnonzero(~fair & ~unfair)
        # counterexample sampling below sample_depth (before the depth limit, as the artifact does)
        sampled = undecided[depth[undecided] >= self.sample_depth] if self.samples > 0 else undecided[:0]
        if self.refine_cex and not self.first_round and len(self.counterexamples) >= self.keep:
            # the second round: a counterexample stops only a partition at the depth limit; elsewhere the search
            # could only add to the counterexamples kept, and those are full
            sampled = sampled[depth[sampled] >= self.max_depth]
        hit = np.zeros(take, dtype=bool)  # a counterexample was found: the refinement stops here
        defer = np.zeros(take, dtype=bool)  # kept for the second round (``first_depth``)
        if len(sampled):
            extra = np.stack([hints[p] for p in sampled]) if hints and all(p in hints for p in sampled) else None
            found, inside, witness = self._sample(lb[sampled], ub[sampled], extra)
            if self.refine_cex:  # only the depth limit stops it; its witness counts once the partition stops
                stop = depth[sampled] >= self.max_depth
                defer[sampled] = found & ~stop & self.first_round
                found, inside = found & stop, inside & stop
            hit[sampled] = found
            c.cex_partitions += int(hit.sum())
            c.cex_witnesses += int(inside.sum())
            c.cex_mass += self.mass(lb[hit], ub[hit], halv[hit])
            c.credit_cex += int(credit[hit].sum())
            if hit.any():
                self.where.add(cex=(lb[hit], ub[hit], halv[hit], credit[hit]), witnesses=witness[inside],
                               unit=c.unit)
        limit = self.first_depth if self.first_round else self.max_depth
        if self.first_round:  # left by the first round's depth limit: refined in the second
            defer[undecided] |= (depth[undecided] >= limit) & (depth[undecided] < self.max_depth)
        grow = undecided[~hit[undecided] & ~defer[undecided] & (depth[undecided] < limit)]
        dropped = np.zeros(take, dtype=bool)  # undecided and no longer refined: what they proved stays counted
        dropped[undecided] = True
        dropped[grow] = False
        dropped &= ~defer
        c.credit_kept += int(credit[dropped].sum())
        at_limit = np.flatnonzero(dropped & ~hit)  # the depth limit
        if len(at_limit):
            self.where.add(limit=(lb[at_limit], ub[at_limit], halv[at_limit], credit[at_limit]))
        if self.log is not None:
            status = np.where(fair, "fair", np.where(unfair, "unfair", np.where(hit, "counterexample", "undecided")))
            splitting = np.zeros(take, dtype=bool)
            splitting[grow] = True
            for i in range(take - 1, -1, -1):  # the order a one-at-a-time LIFO would pop them
                self.log.append((lb[i].copy(), ub[i].copy(), int(depth[i]), str(status[i]),
                                 int(split_feature[i]) if splitting[i] else None))
        if len(grow):
            if (split_feature[grow] < 0).any():  # pragma: no cover - a bug: refining it would never end
                raise AssertionError("an undecided partition has no split feature")
            self._push(lb[grow], ub[grow], depth[grow], halv[grow], split_feature[grow],
                       self._forms_of(forms, grow, credit))
        if defer.any():
            self.deferred.append((lb[defer], ub[defer], depth[defer], halv[defer], credit[defer]))
            c.credited += int(credit[defer].sum())
        if not len(self.pending) and self.first_round:  # the second round: what the first left, largest first
            self.first_round = False
            self.fifo = True
            if self.deferred:
                parts = [np.concatenate(x) for x in zip(*self.deferred)]
                order = np.argsort(parts[2], kind="stable")  # by depth: the largest first
                self.pending.push(*(x[order] for x in parts))
            self.deferred = []
        c.best = c.fair_proven
        if not len(self.pending):
            self.stopped = "complete"
        elif self.tolerance > 0 and c.open < self.tolerance * c.total:
            self.stopped = "tolerance"  # the artifact's "quasi-complete termination"
        return take

    def classify(self, lb: np.ndarray, ub: np.ndarray):
        """``(fair, unfair, split feature, corners)`` of partitions ``lb, ub`` (none a single individual): the
        symbolic intervals first; with ``bounds="linear"`` the partitions they leave undecided are bounded again
        by back-substitution (``linear.back_substitute``, the best of its slopes) and a copy's sign is decided
        when either pass proves it — so this never decides less than the intervals alone. The split feature of
        an undecided partition (−1 for a decided one): the largest smear (``_choose``) of the interval gradient
        (``backward_rule``) over the last pass's pre-activation bounds. ``corners`` (``[P, 2k, F]``, with
        ``corners=True``): where a copy's bound is extreme."""
        P, k = len(lb), self.k
        self._forms = None
        box = self._box(lb, ub)
        out_sym: list = []
        pre: list = []
        with torch.no_grad():
            low, high, masks = forward_bounds(self.layers, box, out_sym, pre if self.linear else None)
        low, high = low[:, 0].cpu().numpy(), high[:, 0].cpu().numpy()
        pos, neg = self._signs(low, high, self.symbolic_margin)
        split = np.full(P, -1, dtype=np.int64)
        und = ~(pos | neg).all(axis=1)
        corners = None
        if und.any() and self.corners:
            corners = self._corners(out_sym[0], lb, ub)
        self._linear_rows = 0
        if und.any() and self.linear and pre:
            rows = np.flatnonzero(np.repeat(und, k))
            self._linear_rows = len(rows)
            index = torch.from_numpy(rows).to(self.device)
            sub = box.rows(index)
            sub_pre = [(l[index], u[index]) for l, u in pre]
            if self.tighten:
                sub_pre = self._tighten(sub, sub_pre)
            with torch.no_grad():
                low2, high2, lin = self._linear_pass(sub, sub_pre)
            pos2, neg2 = self._signs(low2, high2, self.linear_margin)
            pos[und] |= pos2
            neg[und] |= neg2
            same = np.zeros(P, dtype=bool)
            same[und] = self._same_output(sub_pre)
            und2 = ~(pos[und] | neg[und]).all(axis=1) & ~same[und]
            keep = np.repeat(und2, k)  # the rows of the partitions still undecided: split them
            if und2.any():
                left = torch.from_numpy(np.flatnonzero(keep)).to(self.device)
                with torch.no_grad():
                    gl, gu = backward_rule(self.layers, [phase(l[left], u[left]) for l, u in sub_pre],
                                           batch=len(left))
                split[np.flatnonzero(und)[und2]] = self._choose(gl.cpu().numpy(), gu.cpu().numpy(),
                                                                lb[und][und2], ub[und][und2])
            if self.count_inside and und2.any():
                self._forms = (np.flatnonzero(und)[und2],) + self._counting_forms(
                    lb[und][und2], ub[und][und2], *(x[keep] for x in lin), low2[keep], high2[keep])
        elif und.any():
            with torch.no_grad():
                gl, gu = backward_rule(self.layers, masks, batch=P * k)
            split[und] = self._choose(gl.cpu().numpy(), gu.cpu().numpy(), lb, ub)[und]
        decided = (pos | neg).all(axis=1)
        is_fair = pos.all(axis=1) | neg.all(axis=1)
        if self.linear and pre and und.any():
            is_fair |= same
        return is_fair, decided & ~is_fair, split, corners

    def _analyse(self, lb: np.ndarray, ub: np.ndarray, halv: np.ndarray):
        """``classify``; with ``tighten="auto"``, on a trial batch (the second, then every ``TRIAL_EVERY``th) both
        without and with tightening the hidden layers' bounds, and whichever proved more individuals (whole
        partitions decided, plus those the counting functions prove inside the others) per multiply-add of its
        passes (``work``: counted from the layers' shapes, never timed, so the run does not depend on the clock)
        is used until the next trial. The trial batch keeps the result that proved more. Both are sound, so the
        choice only changes how fast the rates move, not what they claim."""
        self.batches += 1
        if not self.adaptive or (self.batches != 2 and self.batches % TRIAL_EVERY):
            return self.classify(lb, ub)
        tried = []
        for tighten in (False, True):
            self.tighten = tighten
            out = self.classify(lb, ub)
            tried.append((self._proven(lb, ub, halv, out, self._forms), out, self._forms))
        rows = self._linear_rows  # the same for both: the first pass does not depend on the choice
        plain_work = forward_work(self.shapes, len(lb) * self.k) + linear_work(self.shapes, rows)
        tight_work = plain_work + tighten_work(self.shapes, rows)
        (plain, *_), (tight, *_) = tried
        self.tighten = tight * plain_work > plain * tight_work
        self.trials.append((self.pops, plain / plain_work, tight / tight_work))
        _, out, self._forms = tried[tight > plain]
        return out

    def _proven(self, lb, ub, halv, classified, forms) -> int:
        """The individuals ``classify``'s result (and its counting functions ``forms``) proves: the whole mass of the
        partitions decided, plus what the functions prove inside the others."""
        fair, unfair = classified[0], classified[1]
        decided = fair | unfair
        proven = self.mass(lb[decided], ub[decided], halv[decided])
        if forms is not None:
            proven += int(self._count(lb[forms[0]], ub[forms[0]], forms[1:]).sum())
        return proven

    def _tighten(self, box: Box, pre: list) -> list:
        """The hidden layers' pre-activation bounds, layer by layer from the second: the tighter of the first
        pass's and the back-substituted ones (``linear.layer_bounds`` on the bounds tightened so far, concretized
        over the box and widened by their proven rounding bound ``layer_margins``)."""
        out = list(pre[:1])
        for i in range(1, len(pre)):
            (lc, ld), (uc, ud) = layer_bounds(self.layers, out, i)
            low, _ = concretize(lc.transpose(1, 2), ld, box)
            _, up = concretize(uc.transpose(1, 2), ud, box)
            m = self.layer_margins[i]
            out.append((torch.maximum(pre[i][0], low - m), torch.minimum(pre[i][1], up + m)))
        return out

    def _attribute_inputs(self, pa: Feature) -> np.ndarray:
        """``[m_1]`` bool: the first-layer neurons whose pre-activation differs between the copies (a weight of the
        protected input that is not 0; for a one-hot group, weights that differ among the compared codes)."""
        W = self.layers_np[0][0]
        if pa.kind == "cat":
            cols = W[:, [pa.start + int(v) for v in self.values]]
            return (cols != cols[:, :1]).any(axis=1)
        return W[:, pa.start] != 0

    def _same_output(self, pre: list) -> np.ndarray:
        """``[P]`` bool: partitions (rows ``pre``: the k copies of each) on which every copy's output is exactly the
        same function of the other inputs, so the decision cannot change: every path from the protected input to
        the output goes through a neuron that is inactive in every copy on the whole partition (its pre-activation
        bound below ``−margin``, the first pass's rounding bound: exactly inactive). Exact, no bound on the output."""
        if not pre:
            return np.zeros(0, dtype=bool)
        differ = torch.from_numpy(self.reaches).to(self.device)[None, :]
        for i, (_, up) in enumerate(pre):
            dead = (up < -self.pre_margins[i]).reshape(-1, self.k, up.shape[1]).all(dim=1)  # [P, m_i]
            differ = differ & ~dead
            W = self.layers[i + 1][0]
            differ = (differ.to(W.dtype) @ (W != 0).to(W.dtype).T) > 0
        return ~differ[:, 0].cpu().numpy()

    def _signs(self, low: np.ndarray, high: np.ndarray, margin: float):
        """``(positive, negative)`` ``[P, k]``: the copies whose output's sign the bounds prove, beyond ``margin``
        (the pass's proven rounding bound) and the relative ``MARGIN``."""
        margin = np.maximum(MARGIN * (1.0 + np.maximum(np.abs(low), np.abs(high))), margin)
        return (low > margin).reshape(-1, self.k), (high < -margin).reshape(-1, self.k)

    def _linear_pass(self, box: Box, pre: list):
        """Back-substituted bounds ``(low, high)`` of every row of ``box`` (the best of ``SLOPES``) and the adaptive
        slopes' linear functions ``(lc, ld, uc, ud)`` (numpy), for the counting."""
        best_low = best_high = forms = None
        for alpha in SLOPES:
            lc, ld = back_substitute(self.layers, pre, lower=True, alpha=alpha)
            uc, ud = back_substitute(self.layers, pre, lower=False, alpha=alpha)
            low, _ = concretize(lc[:, :, None], ld[:, None], box)
            _, high = concretize(uc[:, :, None], ud[:, None], box)
            best_low = low if best_low is None else torch.maximum(best_low, low)
            best_high = high if best_high is None else torch.minimum(best_high, high)
            if forms is None:
                forms = tuple(x.cpu().numpy() for x in (lc, ld, uc, ud))
        return best_low[:, 0].cpu().numpy(), best_high[:, 0].cpu().numpy(), forms

    def _counting_forms(self, lb, ub, lc, ld, uc, ud, low, high) -> tuple:
        """Per partition (``lb, ub [Q, F]``; the copies' back-substituted functions ``lc, ld, uc, ud`` and their
        bounds ``low, high`` over it, rows ``[Q·k]``), two linear functions of the raw features, ``(coef [Q, F],
        const [Q], {group feature: values [Q, width]})``, each positive only where every copy is provably
        favourable (the first) or provably unfavourable (the second): ``L_c − m_c > 0`` for every ``c`` (``m_c``
        the margin a sign must clear, as in ``_signs``), by way of ``min_c (L_c − m_c) ≥ (L_b − m_b) + min(0,
        min over the box of min_c ((L_c − m_c) − (L_b − m_b)))``, with the base copy ``b`` whose shift is least
        negative;
        likewise ``−U_c − m_c``. Each function is valid on every sub-box of the partition."""
        Q, k, F = len(lb), self.k, len(self.domain.features)
        pa = self.domain.features[self.j]
        margin = np.maximum(MARGIN * (1.0 + np.maximum(np.abs(low), np.abs(high))), self.linear_margin)
        lo, hi = lb.copy(), ub.copy()
        lo[:, self.j] = hi[:, self.j] = 0.0
        magnitude_x = np.maximum(np.abs(lo), np.abs(hi))
        sides = []
        for coef, const in ((lc, ld - margin), (-uc, -ud - margin)):
            coef = coef.reshape(Q, k, -1).copy()
            const = const.reshape(Q, k).copy()
            for c, v in enumerate(self.values):  # the protected attribute's value of each copy, into the constant
                if pa.kind == "cat":
                    const[:, c] += coef[:, c, pa.start + int(v)]
                else:
                    const[:, c] += coef[:, c, pa.start] * v
            raw = np.zeros((Q, k, F))
            groups = {}
            for j, f in self._numeric:
                if j != self.j:
                    raw[:, :, j] = coef[:, :, f.start]
            for j, f in self._groups:
                if j != self.j:
                    groups[j] = coef[:, :, f.start:f.start + f.width]
            best, base = np.full(Q, -np.inf), np.zeros(Q, dtype=np.int64)
            for b in range(k):
                shift = np.zeros(Q)
                for c in range(k):
                    if c != b:
                        d = minimum(lo, hi, raw[:, c] - raw[:, b], const[:, c] - const[:, b],
                                    {j: g[:, c] - g[:, b] for j, g in groups.items()})
                        shift = np.minimum(shift, d)
                better = shift > best
                best[better], base[better] = shift[better], b
            rows = np.arange(Q)
            out_coef, out_const = raw[rows, base], const[rows, base]
            magnitude = (np.abs(const).max(axis=1) + (np.abs(raw).max(axis=1) * magnitude_x).sum(axis=1)
                         + sum(np.abs(g).max(axis=(1, 2)) for g in groups.values()))
            shift = best - 1e-12 * (1.0 + 2.0 * magnitude)  # the float rounding of the shift
            sides.append((out_coef, out_const + shift, {j: g[rows, base] for j, g in groups.items()}))
        return tuple(sides)

    def _choose(self, gl: np.ndarray, gu: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
        """Per partition, the split feature: the largest smear ``Σ_copies max(gu, −gl)·width`` (strict: ties keep
        the lowest index) among the non-protected features of non-zero width; the widest when every smear is 0."""
        P = len(lb)
        g = np.maximum(gu, -gl).reshape(P, self.k, -1)  # [P, k, n_inputs]
        widths = ub - lb
        smear = np.zeros((P, len(self.domain.features)))
        for j, f in enumerate(self.domain.features):
            if not self.candidates[j]:
                continue
            if f.kind == "cat":
                gj = g[:, :, f.start:f.start + f.width].max(axis=2).sum(axis=1)
            else:
                gj = g[:, :, f.start].sum(axis=1)
            smear[:, j] = gj * widths[:, j]
        open_ = (widths > 0) & self.candidates[None, :]
        smear = np.where(open_, smear, -np.inf)
        best = np.argmax(smear, axis=1)
        fallback = ~(smear[np.arange(P), best] > 0)
        if fallback.any():
            scaled = np.where(open_, widths / np.maximum(self.domain.upper - self.domain.lower, 1e-300), -np.inf)
            best[fallback] = np.argmax(scaled[fallback], axis=1)
        return best

    def _sort_queue(self) -> None:
        """Breadth-first with counting: order the queue by the individuals not yet proven fair in each partition,
        most first (each time a quarter of it has been popped), so the time goes where the most is undecided."""
        q = self.pending
        left = self.individuals(q.lb, q.ub) - q.credit
        q.reorder(np.argsort(-left, kind="stable"))
        self._since_sort = 0

    def _forms_of(self, forms, grow: np.ndarray, credit: np.ndarray):
        """The counting functions (``_counting_forms``) of the partitions ``grow`` (indices of the batch), or None
        when none has them."""
        if forms is None or not len(grow):
            return None
        index, sides = forms[0], forms[1:]
        where = np.searchsorted(index, grow)
        where = np.minimum(where, len(index) - 1)
        has = index[where] == grow
        if not has.any():
            return None
        picked = []
        for coef, const, groups in sides:
            coef = np.where(has[:, None], coef[where], 0.0)
            const = np.where(has, const[where], -np.inf)  # no function: nothing is counted
            picked.append((coef, const, {j: v[where] for j, v in groups.items()}))
        return picked

    def _count_children(self, lb, ub, feature, mid, sides) -> np.ndarray:
        """``[2G]`` int64, in ``_push``'s order (each partition's lower half, then its upper half): the individuals of
        each half proven fair by its parent's counting functions (the two sides — every copy favourable, every
        copy unfavourable — are disjoint, so their counts add up)."""
        return self._count(lb, ub, sides, (feature, mid)).reshape(-1)

    def _count(self, lb, ub, sides, split=None) -> np.ndarray:
        """``[P]`` (``[P, 2]`` with ``split = (feature, mid)``: the two halves) int64: the individuals of each
        partition that the counting functions ``sides`` prove fair, summed over the sides; a row whose constant
        is −inf has no function there."""
        lo, hi = lb.copy(), ub.copy()
        lo[:, self.j] = hi[:, self.j] = 0.0  # the protected attribute is folded into the functions' constants
        total = np.zeros((len(lb), 2) if split is not None else len(lb), dtype=np.int64)
        for coef, const, groups in sides:
            rows = np.flatnonzero(np.isfinite(const))
            if len(rows):
                total[rows] += count_positive(lo[rows], hi[rows], coef[rows], const[rows],
                                              {j: v[rows] for j, v in groups.items()},
                                              split=None if split is None else (split[0][rows], split[1][rows]))
        return total

    def _push(self, lb, ub, depth, halv, feature, forms=None) -> None:
        """Bisect each partition on its feature and push the lower then the upper half (the upper is popped
        first, as in the artifact). ``forms``: the partitions' counting functions, by which the children's
        individuals proven fair are counted (``count_inside``)."""
        rows = np.arange(len(lb))
        lo, hi = lb[rows, feature], ub[rows, feature]
        real = self.real[feature]
        mid = np.where(real, (lo + hi) / 2, np.floor((lo + hi) / 2))
        low_ub, up_lb = ub.copy(), lb.copy()
        low_ub[rows, feature] = mid
        up_lb[rows, feature] = np.where(real, mid, mid + 1)
        new_lb = np.empty((2 * len(lb), lb.shape[1]))
        new_ub = np.empty_like(new_lb)
        new_lb[0::2], new_ub[0::2] = lb, low_ub
        new_lb[1::2], new_ub[1::2] = up_lb, ub
        np.add.at(self.splits, feature, 1)
        credit = np.zeros(len(new_lb), dtype=np.int64)
        depth, halv = np.repeat(depth + 1, 2), np.repeat(halv + real.astype(np.int64), 2)
        if forms is not None:
            credit = self._count_children(lb, ub, feature, mid, forms)
            # a half whose every individual its parent's functions prove fair is certified whole: not analysed
            sizes = self.individuals(new_lb, new_ub)
            whole = credit >= sizes
            if whole.any():
                self.counts.certified += int(sizes[whole].sum())
                self.counts.credited_whole += int(whole.sum())
                part = ~whole
                new_lb, new_ub, depth, halv, credit = new_lb[part], new_ub[part], depth[part], halv[part], credit[part]
            self.counts.credited += int(credit.sum())
        self.pending.push(new_lb, new_ub, depth, halv, credit)

    def _corners(self, sym: Symbolic, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
        """Per partition ``[P, 2k, F]``: for each copy, the corner of the box minimising its output's lower linear
        bound and the corner maximising its upper one — where a flip is likeliest (a group takes its lowest code)."""
        P = len(lb)
        lc = sym.lc[:, :, 0].cpu().numpy().reshape(P, self.k, -1)
        uc = sym.uc[:, :, 0].cpu().numpy().reshape(P, self.k, -1)
        out = np.repeat(lb[:, None, :], 2 * self.k, axis=1)
        for j, f in self._numeric:
            low = np.where(lc[:, :, f.start] >= 0, lb[:, None, j], ub[:, None, j])
            high = np.where(uc[:, :, f.start] >= 0, ub[:, None, j], lb[:, None, j])
            out[:, :, j] = np.concatenate([low, high], axis=1)
        return out

    def _sample(self, lb: np.ndarray, ub: np.ndarray, extra: np.ndarray | None = None):
        """Up to ``samples`` uniform individuals of each partition (after the ``extra`` candidates ``[P, C, F]``,
        the corners where the bounds are extreme): ``(hit, inside, witness)``, ``hit`` True where one's decision
        changes with the protected attribute (that individual is kept as a counterexample), ``inside`` where such
        an individual lies inside the partition, ``witness`` ``[P, F]`` the individual kept."""
        P, S = len(lb), self.samples
        if self.artifact_probes:
            total = (lb + ub)[:, None, :] * np.arange(S)[None, :, None]
            pts = np.trunc(total / 10)  # C integer division truncates toward zero
        else:
            u = self.rng.random((P, S, lb.shape[1]))
            span = np.where(self.real, ub - lb, ub - lb + 1)[:, None, :]
            pts = lb[:, None, :] + u * span
            pts = np.where(self.real, pts, np.minimum(np.floor(pts), ub[:, None, :]))
        if extra is not None:
            pts = np.concatenate([extra, pts], axis=1)
            S = pts.shape[1]
        flat = pts.reshape(P * S, -1)
        out = self._outputs(flat).reshape(P, S, self.k)
        flips = (out > self.point_margin).any(axis=2) & (out < -self.point_margin).any(axis=2)  # [P, S]
        hit = flips.any(axis=1)
        # a witness counts as an unfair individual only inside its partition (partitions are disjoint, so none is
        # counted twice); an artifact probe may lie outside it and then only stops the refinement
        within = ((pts >= lb[:, None, :]) & (pts <= ub[:, None, :]))[:, :, self.candidates].all(axis=2)
        inside = (flips & within).any(axis=1)
        first = np.argmax(flips & within, axis=1)
        first = np.where(inside, first, np.argmax(flips, axis=1))
        rows = np.flatnonzero(hit)
        self._keep(pts[rows, first[rows]], out[rows, first[rows]])
        return hit, inside, pts[np.arange(P), first]

    def _keep(self, points: np.ndarray, outputs: np.ndarray) -> None:
        """Keep counterexamples (raw points, their outputs ``[N, k]``) up to ``keep``."""
        for point, out in zip(points, outputs):
            if len(self.counterexamples) >= self.keep:
                return
            point = np.array(point, dtype=np.float64)
            point[self.j] = self.values[0]
            self.counterexamples.append(Counterexample(tuple(float(v) for v in point), tuple(self.values),
                                                       tuple(_output_value(o) for o in out)))

    # ---------------------------------------------------------------------------------------- driving
    def run(self, time_limit: float | None = None, on_step=None) -> dict:
        """Refine until done or ``time_limit`` seconds; ``on_step(self)`` after every batch. The final rates."""
        start = time.perf_counter()
        while not self.done:
            self.step()
            if on_step is not None:
                on_step(self)
            if time_limit is not None and time.perf_counter() - start >= time_limit and not self.done:
                break
        return self.rates()

    def summary(self, where: bool = True) -> dict:
        """The facts of the run so far (JSON-able): counts, rates, partitions, depth, counterexamples, and (``where``)
        where the undecided individuals are (``undecided_where``)."""
        c, r = self.counts, self.rates()
        return {"partitions": self.pops, "max_depth_reached": self.max_seen_depth, "stack": len(self.pending),
                "total": c.total, "certified_count": c.fair_proven, "unfair_count": c.unfair,
                "certified_whole_partitions": c.certified, "halves_certified_by_parent": c.credited_whole,
                "certified_counted_inside": c.fair_proven - c.certified,
                "cex_partitions": c.cex_partitions, "cex_witnesses_inside": c.cex_witnesses,
                "single_individuals": c.singles, "decided_exactly": c.exact,
                "rounding_margins": {"symbolic": self.symbolic_margin, "concrete": self.point_margin},
                "undecided_counterexample": float(r["undecided_cex"]), "undecided_limit": float(r["undecided_open"]),
                "stopped": self.stopped or "not finished",
                "splits": {self.domain.features[j].name: int(s) for j, s in enumerate(self.splits) if s},
                **({"undecided_where": self.undecided_where()} if where else {})}

    def _pending(self) -> list:
        """The partitions still to analyse: the stack and the second round's queue, as ``(lb, ub, halvings)``."""
        q = self.pending
        return [(q.lb, q.ub, q.halvings, q.credit)] + [
            (lb, ub, halv, credit) for lb, ub, _, halv, credit in self.deferred]

    def undecided_where(self) -> dict:
        """Where the undecided individuals are (``fairaudit.engines.fairquant.where``), JSON-able: per feature of the
        domain (not the protected one), the undecided fraction of the domain in each bin of its range, split into
        "counterexample found" and "depth or time limit", the features ranked by how unevenly it is spread."""
        return self.where.summary(self._pending(), self.counts.total, self._undecided_count())

    def _undecided_count(self) -> int:
        c = self.counts
        return c.total - c.fair_proven - c.unfair

    def undecided_bins(self) -> dict:
        """Per feature index, ``(counterexample, limit)`` lists of Fractions of the domain per bin (exact; with
        ``count_inside`` the split by bin spreads each partition's undecided individuals evenly over it)."""
        got = self.where.exact(self._pending(), self._undecided_count())
        out = {}
        for k, (cex, limit) in got.items():
            d = self.counts.total * self.where.scale[k]
            out[k] = ([Fraction(int(x), d) for x in cex], [Fraction(int(x), d) for x in limit])
        return out
