"""Symbolic execution of a ``.fr`` program: its feasible paths, each a set of constraints over independent draws.

Every ``Draw`` a path executes is a fresh *dimension* with its own distribution (a Gaussian or a step). A
variable's value on a path is an affine form over the dimensions (``Affine``: exact rational coefficients), or a
``Nonlinear`` expression when the program multiplies or divides two non-constant values. A branch on a
comparison whose two sides differ by a constant is decided on the spot; otherwise the path forks into the
comparison and its negation, both kept as constraints. ``and``/``or``/``not`` fork one comparison at a time, so
the paths are disjoint and together cover every individual (up to sets of probability zero: an equality between
non-constant values has probability 0 because every distribution here is atomless).

Annotations (``sensitiveAttribute``, ``qualified``, ``fairnessTarget``) fork too and are recorded as the path's
*tags* (true/false); so are the extra conditions a caller adds over the final values (``atoms``). An event a path
never reaches is false on it (as in the sampler).

Pruning: a constraint on a single dimension narrows that dimension's interval (an empty interval, or one with
zero mass under a step distribution, ends the path); a constraint over several dimensions is checked with z3
(linear real arithmetic over the path's constraints and intervals). An unsatisfiable path has probability 0 and
is dropped; z3 answering ``unknown`` (or a non-linear constraint) keeps the path — dropping is the only thing
that relies on z3, and keeping a path is always sound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterator, Union

from fairaudit.base.errors import FairauditError
from fairaudit.programs import ir

INF = math.inf
MAX_PATHS = 100_000
NEGATE = {">": "<=", ">=": "<", "<": ">=", "<=": ">", "==": "!=", "!=": "=="}
FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "==": "==", "!=": "!="}


# ---------------------------------------------------------------------------------------------------------
# Symbolic values
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Affine:
    """``const + Σ coef[d]·x_d`` with exact rational coefficients (no zero coefficients stored)."""
    coef: tuple[tuple[int, Fraction], ...]
    const: Fraction

    @staticmethod
    def constant(value) -> "Affine":
        return Affine((), Fraction(value))

    @staticmethod
    def dim(d: int) -> "Affine":
        return Affine(((d, Fraction(1)),), Fraction(0))

    @property
    def is_constant(self) -> bool:
        return not self.coef

    @property
    def dims(self) -> frozenset[int]:
        return frozenset(d for d, _ in self.coef)

    def scale(self, k: Fraction) -> "Affine":
        if k == 0:
            return Affine.constant(0)
        return Affine(tuple((d, c * k) for d, c in self.coef), self.const * k)

    def plus(self, other: "Affine", sign: int = 1) -> "Affine":
        acc = dict(self.coef)
        for d, c in other.coef:
            acc[d] = acc.get(d, Fraction(0)) + sign * c
        return Affine(tuple(sorted((d, c) for d, c in acc.items() if c != 0)), self.const + sign * other.const)


@dataclass(frozen=True)
class Nonlinear:
    """``left op right`` with op ``*`` or ``/`` where neither side is a constant (or the divisor is not)."""
    op: str
    left: "Value"
    right: "Value"

    @property
    def dims(self) -> frozenset[int]:
        return self.left.dims | self.right.dims


class _Undefined:
    """A variable read on a path that never assigned it (the sampler's NaN): every comparison with it is false
    (``!=`` true), arithmetic with it stays undefined."""
    dims = frozenset()

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()
Value = Union[Affine, Nonlinear, _Undefined]


def _arith(op: str, a: Value, b: Value, node) -> Value:
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    if op in "+-" and isinstance(a, Affine) and isinstance(b, Affine):
        return a.plus(b, 1 if op == "+" else -1)
    if op == "*" and isinstance(a, Affine) and isinstance(b, Affine) and (a.is_constant or b.is_constant):
        return b.scale(a.const) if a.is_constant else a.scale(b.const)
    if op == "*" and any(isinstance(v, Affine) and v.is_constant and v.const == 0 for v in (a, b)):
        return Affine.constant(0)   # anything times 0
    if op == "/" and isinstance(b, Affine) and b.is_constant:
        if b.const == 0:
            raise FairauditError(f"division by zero at line {node.line}, column {node.column} of the program")
        if isinstance(a, Affine):
            return a.scale(1 / b.const)
    if op in "+-":  # a non-linear side: keep the sum as a tree (a - b = a + (-1)·b)
        return Nonlinear("+", a, b if op == "+" else Nonlinear("*", Affine.constant(-1), b))
    return Nonlinear(op, a, b)


# ---------------------------------------------------------------------------------------------------------
# Constraints and paths
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Constraint:
    """``value op 0`` with op one of ``> >= < <=``."""
    value: Value
    op: str

    @property
    def dims(self) -> frozenset[int]:
        return self.value.dims

    @property
    def linear(self) -> bool:
        return isinstance(self.value, Affine)


@dataclass
class Path:
    """One feasible path: its dimensions' distributions (``ir.Gaussian``/``ir.Step``), the interval every
    constrained dimension is confined to (``box``; open intervals, faces have probability 0), the constraints
    over several dimensions, and the truth of every tag."""
    dists: list = field(default_factory=list)
    box: dict = field(default_factory=dict)
    constraints: list = field(default_factory=list)
    tags: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    # what the solver is told, in the order the path learnt it (shared with the paths it forked from, so the
    # incremental solver keeps the common prefix of consecutive checks)
    facts: tuple = ()

    def copy(self) -> "Path":
        return Path(self.dists[:], dict(self.box), self.constraints[:], dict(self.tags), dict(self.env), self.facts)


def literal(x: float) -> Fraction:
    """A number of the program, exactly: the binary float Python reads for the literal (``0.1`` is
    0.1000000000000000055511151231257827…), as the sampler does — so the two engines read a program alike
    (with decimals, ``0.1 + 0.2 <= 0.3`` would be true here and false for the sampler). The arithmetic on
    these exact values is exact."""
    return Fraction(float(x))


def support(dist) -> tuple:
    if isinstance(dist, ir.Gaussian):
        return -INF, INF
    pieces = [(lo, hi) for lo, hi, p in dist.pieces if p > 0]
    return literal(min(lo for lo, _ in pieces)), literal(max(hi for _, hi in pieces))


def step_mass(dist: ir.Step, lo, hi) -> Fraction:
    """Exact P[lo < X < hi] for a step distribution."""
    total = Fraction(0)
    for plo, phi, p in dist.pieces:
        plo, phi, p = literal(plo), literal(phi), literal(p)
        left = plo if lo == -INF else max(plo, lo)
        right = phi if hi == INF else min(phi, hi)
        if right > left and p > 0:
            total += p * (right - left) / (phi - plo)
    return total


class _Executor:
    def __init__(self, atoms: dict[str, ir.Cond], solver_timeout_ms: int = 2000):
        self.atoms = atoms
        self.timeout_ms = solver_timeout_ms
        self.solver_calls = 0
        self.cut = False  # a feasibility check was given less than ``timeout_ms`` (the deadline) and gave up
        self.pruned = 0
        self.solver = None
        self.told: list = []
        self.undefined_reads: set[str] = set()  # variables read where a path never assigned them
        self.deadline = None  # a callable giving the seconds left (None: no deadline)

    # -- values ---------------------------------------------------------------------------------------------
    def value(self, e: ir.Arith, path: Path) -> Value:
        if isinstance(e, ir.Num):
            return Affine.constant(literal(e.value))
        if isinstance(e, ir.Var):
            if e.name not in path.env:
                self.undefined_reads.add(e.name)
                return UNDEFINED
            return path.env[e.name]
        if isinstance(e, ir.Neg):
            v = self.value(e.operand, path)
            return v.scale(Fraction(-1)) if isinstance(v, Affine) else _arith("*", Affine.constant(-1), v, e)
        return _arith(e.op, self.value(e.left, path), self.value(e.right, path), e)

    # -- branching ------------------------------------------------------------------------------------------
    def branch(self, cond: ir.Cond, path: Path) -> Iterator[tuple[Path, bool]]:
        """The sub-paths on which ``cond`` is true or false (disjoint, covering ``path``)."""
        if isinstance(cond, ir.Not):
            for p, truth in self.branch(cond.operand, path):
                yield p, not truth
            return
        if isinstance(cond, ir.BoolOp):
            yield from self._boolop(cond.op, cond.values, path)
            return
        yield from self._compare(cond, path)

    def _boolop(self, op: str, values, path: Path) -> Iterator[tuple[Path, bool]]:
        short = op == "or"  # the truth value that decides the whole operation
        for p, truth in self.branch(values[0], path):
            if truth == short or len(values) == 1:
                yield p, truth
            else:
                yield from self._boolop(op, values[1:], p)

    def _compare(self, cond: ir.Compare, path: Path) -> Iterator[tuple[Path, bool]]:
        left, right = self.value(cond.left, path), self.value(cond.right, path)
        if left is UNDEFINED or right is UNDEFINED:
            yield path, cond.op == "!="
            return
        diff = _arith("-", left, right, cond)
        if isinstance(diff, Affine) and diff.is_constant:
            yield path, _holds(diff.const, cond.op)
            return
        if cond.op in ("==", "!=") and isinstance(diff, Affine):
            # a non-constant linear value equals a constant with probability 0 (every draw is atomless)
            yield path, cond.op == "!="
            return
        if cond.op in ("==", "!="):
            # a non-linear difference may be 0 on a set of positive probability (x*y - y*x): three sub-paths,
            # diff < 0, diff > 0 (unequal) and diff >= 0 and diff <= 0 (equal, bounded but never assumed empty)
            equal = cond.op == "=="
            for op in ("<", ">"):
                p = self.constrain(path.copy(), Constraint(diff, op))
                if p is not None:
                    yield p, not equal
            p = self.constrain(path.copy(), Constraint(diff, ">="))
            p = self.constrain(p, Constraint(diff, "<=")) if p is not None else None
            if p is not None:
                yield p, equal
            return
        for op, truth in ((cond.op, True), (NEGATE[cond.op], False)):
            p = self.constrain(path.copy(), Constraint(diff, op))
            if p is not None:
                yield p, truth

    def constrain(self, path: Path, c: Constraint) -> Path | None:
        """``path`` with ``c`` added, or None when that leaves probability 0."""
        v = c.value
        if isinstance(v, Affine) and len(v.coef) == 1:
            (d, a), = v.coef
            bound = -v.const / a
            op = c.op if a > 0 else FLIP[c.op]
            lo, hi = path.box.get(d, support(path.dists[d]))
            if op in (">", ">="):
                lo = max(lo, bound)
            else:
                hi = min(hi, bound)
            if not lo < hi:
                self.pruned += 1
                return None
            dist = path.dists[d]
            if isinstance(dist, ir.Step) and step_mass(dist, lo, hi) == 0:
                self.pruned += 1
                return None
            path.box[d] = (lo, hi)
            path.facts += (("bound", d, lo, hi),)
            if any(d in g.dims for g in path.constraints) and not self.feasible(path):
                self.pruned += 1
                return None
            return path
        path.constraints.append(c)
        path.facts += (c,)
        decided = _on_box(c, path)
        if decided is False or (decided is None and not self.feasible(path)):
            self.pruned += 1
            return None
        return path

    def feasible(self, path: Path) -> bool:
        """False only when z3 proves the closure of the path's region empty (linear facts only; non-linear
        constraints are not told, which can only keep a path). One incremental solver: the facts of the previous
        check that this path shares stay asserted (depth-first enumeration shares long prefixes)."""
        import z3

        if self.solver is None:
            self.solver = z3.Solver()
        shared = 0
        for mine, told in zip(path.facts, self.told):
            if mine is not told:
                break
            shared += 1
        while len(self.told) > shared:
            self.solver.pop()
            self.told.pop()
        for fact in path.facts[shared:]:
            self.solver.push()
            for assertion in _assertions(fact):
                self.solver.add(assertion)
            self.told.append(fact)
        left = self.deadline() if self.deadline is not None else None
        timeout = self.timeout_ms if left is None else max(1, min(self.timeout_ms, int(1000 * left)))
        self.solver.set("timeout", timeout)
        self.solver_calls += 1
        answer = self.solver.check()
        if answer == z3.unknown and timeout < self.timeout_ms:
            self.cut = True  # kept as feasible (sound), but only because the deadline was near
        return answer != z3.unsat

    # -- statements: a worklist of partial paths, each with the statements left to run --------------------
    def advance(self, item: "Pending") -> tuple[Path | None, list["Pending"]]:
        """Run ``item`` up to its next fork: ``(the finished path, [])`` when it ran to the end, else
        ``(None, [the feasible branches])`` (possibly none)."""
        path, stack = item.path, list(item.stack)
        while stack:
            stmts, i = stack[-1]
            if i == len(stmts):
                stack.pop()
                continue
            s = stmts[i]
            stack[-1] = (stmts, i + 1)
            if isinstance(s, ir.Assign):
                path.env[s.name] = self.value(s.value, path)
            elif isinstance(s, ir.Draw):
                path.dists.append(s.dist)
                path.env[s.name] = Affine.dim(len(path.dists) - 1)
                if isinstance(s.dist, ir.Step):
                    path.facts += (("bound", len(path.dists) - 1, *support(s.dist)),)
            elif isinstance(s, ir.Event):
                out = []
                for p, truth in self.branch(s.cond, path):
                    p.tags[s.kind] = truth
                    out.append(Pending(p, tuple(stack)))
                return None, out
            else:
                out = []
                for p, truth in self.branch(s.cond, path):
                    body = s.body if truth else s.orelse
                    out.append(Pending(p, tuple(stack) + ((body, 0),)))
                return None, out
        return path, []

    def finish(self, path: Path, program: ir.Program) -> Path:
        for kind in ("sensitive", "qualified", "target"):
            path.tags.setdefault(kind, kind == "qualified" and program.qualified is None)
        path.env = {}
        return path


@dataclass
class Pending:
    """A partial path and the statements it has left (frames ``(statements, next index)``, innermost last).
    Its constraints so far bound the probability of every path it can still become."""
    path: Path
    stack: tuple


class Explorer:
    """Lazy path enumeration: ``expand(pending, limit)`` runs a partial path depth-first until ``limit``
    paths are finished or left open; ``open`` partial paths can be expanded later (the fairsquare engine expands
    the heaviest first and counts an open one as anywhere in [0, its probability] meanwhile)."""

    def __init__(self, program: ir.Program, atoms: dict[str, ir.Cond] | None = None):
        self.program = program
        self.executor = _Executor(dict(atoms or {}))
        checks = tuple(ir.Event(name, cond) for name, cond in self.executor.atoms.items())
        self.root = Pending(Path(), ((program.population + program.decision + checks, 0),))

    @property
    def solver_calls(self) -> int:
        return self.executor.solver_calls

    @property
    def pruned(self) -> int:
        return self.executor.pruned

    @property
    def undefined_reads(self) -> set[str]:
        return self.executor.undefined_reads

    @property
    def cut(self) -> bool:
        """Did the deadline cut a solver call short (``_Executor.cut``)?"""
        return self.executor.cut

    def expand(self, pending: Pending, limit: int | None = None, remaining=None) -> tuple[list[Path], list[Pending]]:
        """``(finished paths, open partial paths)`` reachable from ``pending``: depth first, until the two
        together number ``limit`` (None: no limit — every path) or ``remaining()`` (seconds left, or None)
        reaches 0."""
        done: list[Path] = []
        stack = [pending]
        self.executor.deadline = remaining
        while stack and (limit is None or len(done) + len(stack) < limit):
            left = remaining() if remaining is not None else None
            if left is not None and left <= 0 and len(done) + len(stack) > 1:
                break
            path, branches = self.executor.advance(stack.pop())
            if path is not None:
                done.append(self.executor.finish(path, self.program))
            stack.extend(reversed(branches))
            if limit is None and len(done) + len(stack) > MAX_PATHS:
                raise FairauditError(f"the program has more than {MAX_PATHS:,} paths: too many to enumerate")
        return done, stack


def _on_box(c: Constraint, path: Path) -> bool | None:
    """Whether linear ``c`` holds everywhere (True) or nowhere (False) on the path's intervals, or None (then the
    solver decides). True needs no check: the path was feasible before ``c``."""
    if not c.linear:
        return None
    lo = hi = c.value.const
    for d, a in c.value.coef:
        l, h = path.box.get(d, support(path.dists[d]))
        lo_x, hi_x = (l, h) if a > 0 else (h, l)
        lo = -INF if lo == -INF or lo_x in (INF, -INF) else lo + a * lo_x
        hi = INF if hi == INF or hi_x in (INF, -INF) else hi + a * hi_x
    if c.op in (">", ">="):
        return True if lo >= 0 else False if hi <= 0 else None
    return True if hi <= 0 else False if lo >= 0 else None


def _assertions(fact) -> list:
    """z3 assertions for a fact: a dimension's interval, or a linear constraint's closure."""
    import z3

    if isinstance(fact, tuple):
        _, d, lo, hi = fact
        x = z3.Real(f"x{d}")
        out = []
        if lo != -INF:
            out.append(x >= z3.RealVal(str(Fraction(lo))))
        if hi != INF:
            out.append(x <= z3.RealVal(str(Fraction(hi))))
        return out
    if not fact.linear:
        return []
    expr = z3.RealVal(str(fact.value.const)) + z3.Sum([z3.RealVal(str(a)) * z3.Real(f"x{d}")
                                                      for d, a in fact.value.coef])
    return [expr >= 0 if fact.op in (">", ">=") else expr <= 0]  # the closure: faces have probability 0


def _holds(x: Fraction, op: str) -> bool:
    return {">": x > 0, ">=": x >= 0, "<": x < 0, "<=": x <= 0, "==": x == 0, "!=": x != 0}[op]


@dataclass
class Enumeration:
    paths: list[Path]
    solver_calls: int
    pruned: int


def enumerate_paths(program: ir.Program, atoms: dict[str, ir.Cond] | None = None) -> Enumeration:
    """Every feasible path of ``program`` (population then decision), with its tags (``sensitive``,
    ``qualified`` — true everywhere when the program has none —, ``target``, and each of ``atoms``: extra
    conditions over the final values, by name)."""
    explorer = Explorer(program, atoms)
    paths, _ = explorer.expand(explorer.root)
    return Enumeration(paths, explorer.solver_calls, explorer.pruned)
