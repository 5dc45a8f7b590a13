"""Vectorised Monte-Carlo sampling of a parsed ``.fr`` program (population then decision), n individuals at once.

Every statement runs on all ``n`` rows under a Boolean mask of the rows whose control flow reaches it: an
assignment or a draw changes only the masked rows (``np.where``), an ``if`` splits the mask. Each draw takes
exactly ``n`` numbers from the generator whatever the mask, so the same seed gives the same sample. A ``step``
distribution is a mixture of uniforms: pick a piece by its probability, then a uniform point inside it.
The annotations are evaluated where they stand. ``estimate`` turns the masks into the two conditional
probabilities P[target | min ∧ qual] and P[target | ¬min ∧ qual] (rejection sampling = masks).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairaudit.programs import ir

_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}
_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
        "!=": np.not_equal}


@dataclass
class Sample:
    """Per-individual Boolean arrays (length ``n``); ``values`` holds every variable's final values when kept
    (NaN on the rows whose path never assigned it, e.g. a coin drawn only inside a branch)."""
    sensitive: np.ndarray
    qualified: np.ndarray
    target: np.ndarray
    values: dict[str, np.ndarray] | None = None

    @property
    def n(self) -> int:
        return int(self.target.shape[0])


@dataclass(frozen=True)
class Estimate:
    """Counts and conditional frequencies of the group-fairness ratio's two terms."""
    n: int
    n_min: int        # individuals with min ∧ qual
    n_maj: int        # individuals with ¬min ∧ qual
    hits_min: int     # ... of which target holds
    hits_maj: int

    @property
    def p_min(self) -> float:
        """P̂[target | min ∧ qual] (nan when no individual qualifies)."""
        return self.hits_min / self.n_min if self.n_min else float("nan")

    @property
    def p_maj(self) -> float:
        """P̂[target | ¬min ∧ qual]."""
        return self.hits_maj / self.n_maj if self.n_maj else float("nan")

    @property
    def ratio(self) -> float:
        return self.p_min / self.p_maj if self.n_min and self.hits_maj else float("nan")


class _Run:
    def __init__(self, n: int, rng: np.random.Generator, deadline=None):
        self.n = n
        self.rng = rng
        self.deadline = deadline  # a fairaudit.base.limits.Deadline, asked before every statement (None: no limit)
        self.env: dict[str, np.ndarray] = {}
        self.events: dict[str, np.ndarray] = {}

    def arith(self, e: ir.Arith) -> np.ndarray | float:
        if isinstance(e, ir.Num):
            return e.value
        if isinstance(e, ir.Var):
            return self.env[e.name]
        if isinstance(e, ir.Neg):
            return np.negative(self.arith(e.operand))
        return _ARITH[e.op](self.arith(e.left), self.arith(e.right))

    def cond(self, c: ir.Cond) -> np.ndarray:
        if isinstance(c, ir.Compare):
            out = _CMP[c.op](self.arith(c.left), self.arith(c.right))
            return np.broadcast_to(out, (self.n,))
        if isinstance(c, ir.Not):
            return ~self.cond(c.operand)
        parts = [self.cond(v) for v in c.values]
        reduce = np.logical_and if c.op == "and" else np.logical_or
        out = parts[0]
        for part in parts[1:]:
            out = reduce(out, part)
        return out

    def draw(self, dist: ir.Dist) -> np.ndarray:
        if isinstance(dist, ir.Gaussian):
            return self.rng.normal(dist.mean, np.sqrt(dist.variance), self.n)
        lo, hi, p = (np.array(col, dtype=float) for col in zip(*dist.pieces))
        cumulative = np.cumsum(p / p.sum())
        cumulative[-1] = 1.0
        piece = np.searchsorted(cumulative, self.rng.random(self.n), side="right")
        piece = np.minimum(piece, len(p) - 1)  # guards the u == 1.0 - ε rounding edge
        return lo[piece] + (hi[piece] - lo[piece]) * self.rng.random(self.n)

    def set(self, name: str, value, mask: np.ndarray) -> None:
        value = np.broadcast_to(np.asarray(value, dtype=float), (self.n,))
        old = self.env.get(name)
        if old is None:
            old = np.full(self.n, np.nan)
        self.env[name] = np.where(mask, value, old)

    def block(self, stmts: tuple[ir.Stmt, ...], mask: np.ndarray) -> None:
        for s in stmts:
            if self.deadline is not None:
                self.deadline.check()
            if isinstance(s, ir.Assign):
                self.set(s.name, self.arith(s.value), mask)
            elif isinstance(s, ir.Draw):
                self.set(s.name, self.draw(s.dist), mask)
            elif isinstance(s, ir.If):
                c = self.cond(s.cond)
                self.block(s.body, mask & c)
                self.block(s.orelse, mask & ~c)
            elif isinstance(s, ir.Event):
                self.events[s.kind] = mask & self.cond(s.cond)


def sample(program: ir.Program, n: int, seed: int | None = 0, *, keep_values: bool = False,
           rng: np.random.Generator | None = None, deadline=None) -> Sample:
    """Draw ``n`` individuals from ``program`` with ``np.random.default_rng(seed)`` (or the given ``rng``).
    ``deadline`` (a ``fairaudit.base.limits.Deadline``) is asked between statements and raises ``OutOfTime`` once the
    run's time budget is spent: one chunk of a long program's individuals can take seconds."""
    if n < 0:
        raise ValueError("n must be non-negative")
    run = _Run(int(n), rng if rng is not None else np.random.default_rng(seed), deadline)
    everyone = np.ones(run.n, dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):
        run.block(program.population, everyone)
        run.block(program.decision, everyone)
    qualified = run.events.get("qualified", everyone)
    return Sample(sensitive=np.array(run.events["sensitive"]), qualified=np.array(qualified),
                  target=np.array(run.events["target"]), values=run.env if keep_values else None)


def estimate(program: ir.Program, n: int, seed: int | None = 0, *, batch: int = 250_000) -> Estimate:
    """Counts for P[target | min ∧ qual] and P[target | ¬min ∧ qual] over ``n`` individuals, drawn in batches
    of ``batch`` (bounded memory) from one generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    n_min = n_maj = hits_min = hits_maj = 0
    done = 0
    while done < n:
        size = min(batch, n - done)
        s = sample(program, size, rng=rng)
        in_min = s.sensitive & s.qualified
        in_maj = ~s.sensitive & s.qualified
        n_min += int(in_min.sum())
        n_maj += int(in_maj.sum())
        hits_min += int((in_min & s.target).sum())
        hits_maj += int((in_maj & s.target).sum())
        done += size
    return Estimate(n, n_min, n_maj, hits_min, hits_maj)
