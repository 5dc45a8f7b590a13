"""The ``fairsquare`` engine: sound bounds on every ``E[...]`` of a spec over a population program.

After FairSquare (Albarghouthi et al., OOPSLA 2017), without its global quantifier elimination:

1. **Paths** (``fairaudit.engines.fairsquare.paths``): the program (population, then decision) is executed symbolically;
   every path is a set of constraints over independent draws, tagged with the truth of the program's
   annotations (``sensitive``, ``qualified``, ``target`` = the spec's ``pred``) and of every comparison the
   spec makes on the program's variables. Infeasible paths are dropped with z3.
2. **Volumes** (``fairaudit.engines.fairsquare.polytope``): each path's probability gets a lower and an upper bound —
   closed forms where the constraints allow (a linear combination of independent Gaussians is Gaussian), a
   cell decomposition with one dimension integrated exactly elsewhere — refined round by round, never loosening.
3. **Leaves**: ``E[A | B] = P[A ∧ B] / (P[A ∧ B] + P[¬A ∧ B])`` is increasing in the first sum and decreasing
   in the second, so the two sums' bounds bound it; the shared evaluator does the rest of the spec.

Each round refines the paths whose gap weighs most on the leaves (a path's gap divided by the smallest lower
bound of the conditions of the leaves it feeds). The run ends when every leaf is exact to ``precision``, when
nothing is left to refine, at the decision (``stop``, on by default: the bounds are sound, so refining further
cannot change the verdict) or at the time budget (default 120 s): an unfinished run is undecided with its
current, still sound, bounds.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterator

import numpy as np

from fairaudit.core.engine import Context, Engine, LeafBatch
from fairaudit.engines.fairsquare.options import OPTIONS, TITLE
from fairaudit.core.evaluate import LeafValue, compile_spec
from fairaudit.core.guarantee import Guarantee

RESERVED_TAGS = {"sensitive": "sensitive", "qualified": "qualified", "pred": "target"}
SPLITS_PER_STEP = 1024        # cells split on one path before the next path is chosen
STEPS_PER_ROUND = 4
EXPAND_PATHS = 512            # paths enumerated (finished or left open) per expansion of an open part



class FairSquare(Engine):
    name = "fairsquare"
    title = TITLE
    summary = ("lower and upper bounds that hold with certainty on every E[...] over a population program "
               "(.fr): program paths, closed forms and exact box decomposition, refined until decided")
    unit = "refinement rounds"
    leaf_kinds = frozenset({"expect"})
    requires = ("population",)
    options = OPTIONS
    evidence_hint = ("the bounds of a sound engine never contradict each other: this is a bug in fairaudit, "
                     "please report it")

    # ------------------------------------------------------------------------------------------ checks
    def check(self, spec, inputs) -> list[str]:
        reasons = super().check(spec, inputs)
        if spec is None or inputs is None or inputs.population is None:
            return reasons
        names = set(inputs.population.variables)
        for tn in spec.leaves:
            if tn.kind != "expect":
                continue
            for event in (tn.node.event, tn.node.given):
                if event is not None:
                    reasons += [r for r in _event_reasons(event, names) if r not in reasons]
        return reasons

    def derive_inputs(self, dataset, model, options, **how):
        """Given a dataset and a model instead of a population program: the program generated from them
        (``fairaudit.engines.fairsquare.generate.generated_inputs``; the ``population_model`` option says how)."""
        from fairaudit.engines.fairsquare.generate import generated_inputs

        return generated_inputs(dataset, model=model, structure=options.get("population_model") or "independent",
                                **how)

    def scope(self, options, inputs) -> str:
        # a program generated from the rows is a modelled distribution; a program the user wrote is what they named
        return "modelled" if getattr(inputs, "generated", None) else "program"

    def guarantee(self, options, inputs) -> Guarantee:
        name = ((inputs.provenance or {}).get("population") or {}).get("name", "the program") if inputs else \
            "the program"
        return Guarantee("sound", scope=f"for the population program {name}",
                         assumes=f"individuals are distributed as the population program {name} describes (the "
                                 "bounds are about the program, not about any dataset)")

    # ------------------------------------------------------------------------------------------ run
    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        from fairaudit.engines.fairsquare.paths import Explorer

        atoms = _Atoms(inputs.population)
        cs = compile_spec(spec)
        leaves = {}
        for key in cs.leaf_keys:
            node = cs.leaf_node[key].node
            leaves[key] = (atoms.compile(node.event), atoms.compile(node.given) if node.given is not None else None)
        state = _State(Explorer(inputs.population, atoms.conditions), leaves, ctx.remaining, ctx.expired)
        state.expand(None)  # the first paths now: a malformed program raises when the run starts
        return self._rounds(state, options, ctx)

    def _rounds(self, state: "_State", options, ctx: Context) -> Iterator[LeafBatch]:
        """Round 0 (the first paths' bounds), then refinement rounds. What a round does depends only on the rounds
        before it, never on the clock: a round the deadline cuts (its work stopped part way) is dropped — the run
        ends with the bounds of its last complete round, recorded as ``info["rounds"]``, so ``rounds=N`` reproduces
        them exactly. Round 0 cut by the deadline is shown (sound, but not reproducible: no rounds recorded)."""
        precision = float(options["precision"])
        limit = options.get("rounds")
        step = 0
        whole = not state.cut()  # round 0 ran to its end
        while True:
            values, weights = state.leaf_bounds()
            widest = max((hi - lo for lo, hi, _ in values.values()), default=0.0)
            gaps = state.gaps(weights)
            settled = not len(gaps) or not gaps.max() > 0
            done = settled or widest <= precision or step == limit
            cells = state.cells
            warnings = (state.empty_conditions() + state.undefined_reads()) if done or step == 0 else ()
            yield LeafBatch(np.array([step]), {k: _leaf(*bounds) for k, bounds in values.items()},
                            done=step, total=step if done else None, warnings=warnings,
                            info={**state.info(), "cells": cells, "rounds": step if whole else None})
            if done or not whole or ctx.expired():
                return
            for _ in range(STEPS_PER_ROUND):
                if ctx.expired():
                    break
                i = int(np.argmax(gaps))
                if gaps[i] <= 0:
                    break
                if state.is_open(i):   # an unexplored part of the program: enumerate more of its paths
                    state.expand(i)
                    break             # the items were renumbered
                state.refine(i, SPLITS_PER_STEP)
                gaps[i] = state.gap(i) * weights[i]
            if state.cut():  # the deadline stopped this round part way: its bounds would depend on the clock
                return
            step += 1

    def methods(self, options) -> list[tuple[str, list[str]]]:
        return [("The guarantee: sound bounds over the population program", [
            "The fairsquare engine follows FairSquare (Albarghouthi et al., OOPSLA 2017). The population program "
            "and the decision program are executed symbolically: every path is a set of constraints over "
            "independent random draws (Gaussian or piecewise-uniform), tagged with whether the individual is in "
            "the sensitive group, qualified, and receives the favourable decision. Paths z3 proves infeasible "
            "are dropped.",
            "Each path's probability is bounded from below and above: a linear combination of independent "
            "Gaussians is Gaussian (an exact tail); otherwise the space is cut into boxes, one Gaussian "
            "dimension is integrated exactly on each box, and every other constraint is proved to hold on the "
            "whole box, on none of it, or left open. Every floating-point operation is rounded outward. "
            "E[A | B] is bounded by the sums over the paths in A ∧ B and in ¬A ∧ B.",
            "The bounds hold with certainty — there is no probability of error — but only for the population "
            "the program describes. They are refined until the specification is decided, the requested "
            f"precision is reached or the time budget runs out (then the verdict is unknown with its current "
            f"bounds). This run: precision {options.get('precision')}, time budget "
            f"{options.get('time_budget')} s.",
        ])]


# ------------------------------------------------------------------------------------------ paths and leaves
class _State:
    """The paths found so far, each with its ``PathVolume``, and the *open* parts of the program not yet
    enumerated (partial paths, each bounded by the probability of its constraints so far). A finished path
    counts for a leaf ``E[A | B]`` in the sum over A ∧ B or over ¬A ∧ B (or neither); an open part may become
    either, so it counts as anywhere in [0, its upper bound] in both."""

    def __init__(self, explorer, leaves: dict, remaining=None, expired=None):
        self.explorer, self.leaves, self.remaining, self.expired = explorer, leaves, remaining, expired
        self.volumes: list = []      # finished paths first, then the open parts
        self.roles: list = []        # per finished path: {leaf key: "yes" | "no" | None}
        self.pending: list = []      # per open part: its Pending (None for a finished path)

    def expand(self, index: int | None) -> None:
        """Enumerate paths from open part ``index`` (None: the program's start), up to ``EXPAND_PATHS``."""
        if index is None:
            start = self.explorer.root
        else:
            start = self.pending[index]
            del self.volumes[index], self.roles[index], self.pending[index]
        done, still_open = self.explorer.expand(start, EXPAND_PATHS, self.remaining)
        for p in done:
            self.volumes.append(self._volume(p))
            self.roles.append({key: _role(p.tags, event, given) for key, (event, given) in self.leaves.items()})
            self.pending.append(None)
        for item in still_open:
            self.volumes.append(self._volume(item.path))
            self.roles.append(None)
            self.pending.append(item)

    def _volume(self, path):
        """The path's ``PathVolume``, or, once the time budget has run out, an ``_Unbuilt`` stand-in (bounds [0, 1],
        sound) built when the path is first refined: building the volumes of hundreds of paths took tens of seconds
        past ``--timeout``."""
        if self.expired is not None and self.expired():
            return _Unbuilt(path)
        return _volume(path)

    def refine(self, i: int, splits: int) -> None:
        """Refine item ``i``'s bounds: build its volume if it has none yet, else split up to ``splits`` cells (the
        splitting stops at the deadline)."""
        v = self.volumes[i]
        if isinstance(v, _Unbuilt):
            self.volumes[i] = _volume(v.path)
        else:
            v.refine(splits, self.expired)

    def cut(self) -> bool:
        """Was work stopped part way by the deadline (a volume not built, cells not split, paths or a solver call
        cut short)? The clock has passed the deadline then, or a solver call was given less than its own timeout."""
        return bool(self.expired is not None and self.expired()) or self.explorer.cut

    def is_open(self, i: int) -> bool:
        return self.pending[i] is not None

    def leaf_bounds(self) -> tuple[dict, np.ndarray]:
        """Every leaf's (lo, hi) and each item's weight (Σ over the leaves it feeds of 1 / P[condition]); a leaf
        whose exact rational bounds coincide is ``(lo, hi, value)`` with its exact value (a ``Fraction``)."""
        values, weights = {}, np.zeros(len(self.volumes))
        bounds = [(Fraction(lo), Fraction(hi)) for lo, hi in (v.bounds for v in self.volumes)]
        for key in self.leaves:
            a_lo = a_hi = b_lo = b_hi = Fraction(0)
            feeds = []
            for i, ((lo, hi), role) in enumerate(zip(bounds, self.roles)):
                if role is None:                 # open: anywhere in [0, hi] on either side
                    a_hi += hi
                    b_hi += hi
                elif role[key] == "yes":
                    a_lo, a_hi = a_lo + lo, a_hi + hi
                elif role[key] == "no":
                    b_lo, b_hi = b_lo + lo, b_hi + hi
                else:
                    continue
                feeds.append(i)
            values[key] = (_ratio(a_lo, b_hi), _ratio_hi(a_hi, b_lo), _exact_ratio(a_lo, b_hi, a_hi, b_lo))
            weights[feeds] += 1.0 / max(float(a_lo + b_lo), 1e-9)
        return values, weights

    def gap(self, i: int) -> float:
        """How much item ``i`` leaves open: a path's gap; an open part's whole upper bound."""
        v = self.volumes[i]
        if self.pending[i] is not None:
            return v.bounds[1]
        return 0.0 if v.settled else v.gap

    def gaps(self, weights: np.ndarray) -> np.ndarray:
        return np.array([self.gap(i) for i in range(len(self.volumes))]) * weights

    @property
    def cells(self) -> int:
        return sum(v.cells for v in self.volumes)

    def info(self) -> dict:
        return {"paths": sum(p is None for p in self.pending), "open_parts": sum(p is not None for p in self.pending),
                "solver_calls": self.explorer.solver_calls, "pruned_paths": self.explorer.pruned}

    def undefined_reads(self) -> tuple[str, ...]:
        """The spec's variables that some paths never assign (there, every comparison with one is false)."""
        return tuple(f"the specification reads '{name}', which some of the program's paths never assign: there "
                     f"every comparison with it is false (so '{name} <= 0' and 'not ({name} > 0)' differ)"
                     for name in sorted(self.explorer.undefined_reads))

    def empty_conditions(self) -> tuple[str, ...]:
        """Leaves whose condition no path satisfies (once every path is known)."""
        if any(p is not None for p in self.pending):
            return ()
        return tuple(f"{key}: no individual of the program satisfies its condition (probability 0), so it has no "
                     "value (shown as [0, 1]; comparisons that need it stay undecided)"
                     for key in self.leaves if not any(role[key] for role in self.roles))


class _Unbuilt:
    """The volume of a path not computed yet (the time budget ran out first): its probability is anywhere in
    [0, 1], which is sound; ``_State.refine`` builds the real one."""
    bounds = (0.0, 1.0)
    gap = 1.0
    settled = False
    cells = 0

    def __init__(self, path):
        self.path = path


def _volume(path):
    from fairaudit.engines.fairsquare.polytope import PathVolume
    from fairaudit.base.errors import FairauditError

    try:
        return PathVolume(path.dists, path.box, path.constraints)
    except OverflowError:
        raise FairauditError("the program computes a number beyond the floating-point range (above 1e308 after "
                             "its arithmetic): rescale its variables") from None


def _role(tags, event, given) -> str | None:
    if given is not None and not given(tags):
        return None
    return "yes" if event(tags) else "no"


def _ratio(a: Fraction, b: Fraction) -> float:
    """Lower bound of a/(a+b) rounded down (0 when undefined)."""
    from fairaudit.engines.fairsquare.volume import down

    return max(0.0, down(a / (a + b))) if a + b > 0 else 0.0


def _ratio_hi(a: Fraction, b: Fraction) -> float:
    from fairaudit.engines.fairsquare.volume import up

    return min(1.0, up(a / (a + b))) if a + b > 0 else 1.0


def _exact_ratio(a_lo: Fraction, b_hi: Fraction, a_hi: Fraction, b_lo: Fraction) -> Fraction | None:
    """The leaf's value a/(a+b) when its exact rational lower and upper bounds coincide, else None."""
    if a_lo + b_hi <= 0 or a_hi + b_lo <= 0:
        return None
    lo, hi = a_lo / (a_lo + b_hi), a_hi / (a_hi + b_lo)
    return lo if lo == hi else None


def _leaf(lo: float, hi: float, exact: Fraction | None = None) -> LeafValue:
    """A leaf's bounds; no count (a probability here is not estimated from a number of anything). ``exact``: its
    value as a fraction when the bounds have collapsed onto it — the evaluator then decides comparisons with it
    exactly (``fairaudit.core.evaluate``: a ratio or difference exactly at its threshold is a tie, decided), which the
    outward-rounded float arithmetic of the rules cannot."""
    return LeafValue(np.array([(lo + hi) / 2]), np.array([lo]), np.array([hi]), 0.0, np.array([np.nan]),
                     exact=[exact])


# ------------------------------------------------------------------------------------------ spec events
def _event_reasons(event, names) -> list[str]:
    """Why a spec event cannot be read on a population program's paths."""
    from fairaudit.spec import ast

    out = []
    for n in ast.event_names(event):
        if n.reserved and n.name in ("label", "score"):
            out.append(f"'{n.name}' does not exist in a population program (use pred, sensitive, qualified or "
                       "the program's variables)")
        elif n.name in ("sensitive", "qualified") and names is not None and n.name in names:
            out.append(f"the program has a variable named '{n.name}', which a specification cannot tell from its "
                       f"{n.name} annotation: rename the variable")
        elif not n.reserved and n.name not in RESERVED_TAGS and names is not None and n.name not in names:
            out.append(f"the population program has no variable '{n.name}'")
    for node in _walk(event):
        if isinstance(node, ast.Name) and not node.reserved and node.name not in RESERVED_TAGS:
            out.append(f"'{node.name}' holds numbers: as a condition write a comparison such as {node.name} > 0.5 "
                       "(E[...] is a probability, not a mean)")
        values = [node.left, node.right] if isinstance(node, ast.Compare) else list(getattr(node, "values", ()))
        if any(isinstance(v, ast.Value) and isinstance(v.value, str) for v in values):
            out.append("a population program's variables are numbers: compare them with numbers, not text")
            break
    return out


def _walk(event):
    from fairaudit.spec import ast

    yield event
    if isinstance(event, (ast.EvAnd, ast.EvOr)):
        yield from _walk(event.left)
        yield from _walk(event.right)
    elif isinstance(event, ast.EvNot):
        yield from _walk(event.operand)


class _Atoms:
    """Spec events as functions of a path's tags; every comparison on program variables becomes a named
    condition the path enumeration forks on (``conditions``)."""

    def __init__(self, program):
        self.program = program
        self.conditions: dict = {}

    def _atom(self, cond) -> str:
        for name, c in self.conditions.items():
            if c == cond:
                return name
        name = f"atom{len(self.conditions)}"
        self.conditions[name] = cond
        return name

    def _operand(self, side):
        from fairaudit.programs import ir
        from fairaudit.spec import ast

        if isinstance(side, ast.Value):
            return ("const", float(side.value))
        if side.name in RESERVED_TAGS and (side.reserved or side.name != "pred"):
            return ("tag", RESERVED_TAGS[side.name])
        return ("var", ir.Var(side.name))

    def compile(self, event):
        """A function ``tags -> bool`` for ``event``."""
        from fairaudit.programs import ir
        from fairaudit.spec import ast

        if isinstance(event, ast.Name):
            kind, ref = self._operand(event)
            if kind == "tag":
                return lambda tags, ref=ref: bool(tags[ref])
            name = self._atom(ir.Compare("!=", ref, ir.Num(0.0)))
            return lambda tags, name=name: bool(tags[name])
        if isinstance(event, ast.EvNot):
            inner = self.compile(event.operand)
            return lambda tags: not inner(tags)
        if isinstance(event, (ast.EvAnd, ast.EvOr)):
            left, right = self.compile(event.left), self.compile(event.right)
            if isinstance(event, ast.EvAnd):
                return lambda tags: left(tags) and right(tags)
            return lambda tags: left(tags) or right(tags)
        if isinstance(event, ast.In):
            parts = [self.compile(ast.Compare("==", event.operand, v)) for v in event.values]
            hit = (lambda tags: any(p(tags) for p in parts))
            return (lambda tags: not hit(tags)) if event.negated else hit
        left, right = self._operand(event.left), self._operand(event.right)
        if left[0] != "var" and right[0] != "var":
            def side(x, tags):
                return float(tags[x[1]]) if x[0] == "tag" else x[1]
            return lambda tags: _compare(side(left, tags), event.op, side(right, tags))
        if left[0] == "tag" or right[0] == "tag":
            # a tag (0/1) against a variable: split on the tag's two values
            tag_side, var_side, flipped = (left, right, False) if left[0] == "tag" else (right, left, True)
            conds = {}
            for v in (0.0, 1.0):
                l, r = (ir.Num(v), var_side[1]) if not flipped else (var_side[1], ir.Num(v))
                conds[v] = self._atom(ir.Compare(event.op, l, r))
            return lambda tags: bool(tags[conds[float(tags[tag_side[1]])]])
        to_ir = (lambda x: x[1] if x[0] == "var" else ir.Num(x[1]))  # noqa: E731
        name = self._atom(ir.Compare(event.op, to_ir(left), to_ir(right)))
        return lambda tags: bool(tags[name])


def _compare(a: float, op: str, b: float) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]


# ------------------------------------------------------------------------------------------ conformance
_T1 = """
def popModel():
    s = step([(0,1,0.3), (1,2,0.7)])
    x = gaussian(0, 1)
    if s < 1:
        x = x - 1
    sensitiveAttribute(s < 1)

def F():
    fairnessTarget(x > 0)
"""
_T3 = """
def popModel():
    s = step([(0,1,0.5), (1,2,0.5)])
    u = step([(0,1,1.0)])
    if s < 1:
        u = 0.5 * u
    sensitiveAttribute(s < 1)

def F():
    fairnessTarget(u > 0.4)
"""
_FIG1 = """
def popModel():
    ethnicity = gaussian(0, 100)
    colRank = gaussian(25, 100)
    yExp = gaussian(10, 25)
    if ethnicity > 10:
        colRank = colRank + 5
    sensitiveAttribute(ethnicity > 10)

def F():
    expRank = yExp - colRank
    if colRank <= 5:
        hire = 1
    elif expRank > -5:
        hire = 1
    else:
        hire = 0
    fairnessTarget(hire > 0.5)
"""


def _population_inputs(text: str, name: str):
    from fairaudit.core.inputs import Inputs
    from fairaudit.programs.parse import parse_program
    from fairaudit.programs.population import Population

    import hashlib

    return Inputs.build_population(Population(parse_program(text, filename=name), name,
                                              hashlib.sha256(text.encode()).hexdigest()), samples=None)


def conformance_cases():
    """Toy programs with exact answers (notes §A8, §A11): T1 (a shifted Gaussian: 1 − Φ(1) and 1/2), T3 (boxes:
    1/5 and 3/5 exactly) and FairSquare's Fig. 1 (P[hire | min] = 0.08990737, P[hire | ¬min] = 0.18571423 by
    1-D quadrature), refined without stopping at the decision for the cancel and deadline checks."""
    from statistics import NormalDist

    from fairaudit.core.cases import Case

    t1 = 1 - NormalDist().cdf(1.0)
    return (
        Case("t1_unfair", "E[pred | sensitive] / E[pred | not sensitive] > 0.85",
             lambda: _population_inputs(_T1, "t1.fr"),
             {"E[pred | sensitive]": t1, "E[pred | not sensitive]": 0.5}),
        Case("t3_exact", "E[pred | sensitive] < 0.25 and E[pred | not sensitive] > 0.55 and E[u < 0.2] > 0.29",
             lambda: _population_inputs(_T3, "t3.fr"),
             {"E[pred | sensitive]": 0.2, "E[pred | not sensitive]": 0.6, "E[u < 0.2]": 0.3}),
        Case("fig1_long", "E[pred | sensitive] / E[pred | not sensitive] > 0.4841",
             lambda: _population_inputs(_FIG1, "fig1.fr"),
             {"E[pred | sensitive]": 0.08990737, "E[pred | not sensitive]": 0.18571423},
             options={"stop": False, "precision": 1e-4}, long=True),
    )


FairSquare.conformance_cases = staticmethod(conformance_cases)
