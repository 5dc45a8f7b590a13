"""δ allocation: how the total failure probability Δ is split over the distinct leaves of a spec.

``directed`` (the default) lives in ``fairaudit.engines.monitor.directed``: one certificate per verdict
direction, each at Δ, split by Berger's intersection–union principle — sound at Δ, no solver.

``equal`` (VeriFair, "AVOIR-VF")
    every distinct leaf gets Δ / (number of distinct leaves).

``optimized`` (AVOIR eq. (2) and Appendix A.2, "AVOIR-OB"; exploratory: its real level is k·Δ, below)
    minimise Σ δᵢ over the leaves subject to the constraints inferred from the whole spec by the
    rules of ``fairaudit.bounds.rules``, and decide when the minimum is ≤ Δ. The model is built by
    walking the tree for ANY spec: each leaf's interval is a Pyomo expression of its δᵢ (closed form
    for Hoeffding; for the mixture bound the endpoints are variables constrained by the log-wealth
    inequality), each term node's interval follows the interval rule of its operator (products via
    "lo ≤ every endpoint product ≤ hi", division with the "Inverse Constr." sign constraint), and each
    comparison that must be decided contributes its True/False constraint. ``and``/``or``/``not``
    combine as in Fig. 5: to prove ``a and b`` TRUE both children's constraints are needed; to
    prove it FALSE one child FALSE suffices — a disjunction, handled by expanding the target into
    alternatives (disjunctive normal form over comparisons) and keeping the best alternative. The
    problem is solved by SCIP through Pyomo (``scip_direct``), globally (it is non-convex in
    general). Every solution is re-checked with the numeric evaluator before it is used, so solver
    tolerances can never produce an unsound decision.

Which verdict to aim for: the tree is first evaluated with every leaf at δᵢ = Δ (the narrowest
intervals any allocation with Σδ ≤ Δ can give, because intervals shrink as δ grows). If the root
is undecided there, no allocation can decide it and no solver is called. Otherwise that verdict is
the target. Further shortcuts before calling the solver, all exact:

* necessary: for each leaf of an alternative, the smallest δᵢ that still satisfies the alternative
  when every other leaf has δ = Δ (bisection) — their sum must be ≤ Δ;
* sufficient: the equal split among the alternative's leaves, and the split proportional to those
  smallest δᵢ's, are tried with the evaluator; if one decides, the decision is made without a solver
  (the solver is then called once, to report the optimal split).

Leaves that no comparison of the chosen alternative involves need no budget (δ = 0 in the optimum).

What the optimised decision guarantees (``sound_delta``)
    AVOIR's Theorem 1 applies the union bound to the allocation in force; but the optimised δᵢ are
    chosen *after* looking at the data of the check, so that argument does not hold (a reproducer:
    ``tests/monitor/test_soundness_optimized.py``, where a 12-leaf ``or`` is wrongly certified in
    about 32 % of runs at Δ = 0.2). What does hold: every δᵢ the optimiser can give is ≤ Δ, and a
    leaf interval at δᵢ ≤ Δ contains the interval at Δ; a wrong decision needs some leaf interval
    to miss its true value, so it needs some leaf's confidence sequence *at level Δ* to miss — a
    union over k leaves, probability ≤ k·Δ. The equal split is a fixed allocation: ≤ Δ.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from fairaudit.bounds.concentration import Bound, get_bound, hoeffding_radius, mixture_log_threshold
from fairaudit.bounds.rules import BOOL_RULES, CMP, FALSE, TERM_RULES, TRUE, UNKNOWN
from fairaudit.core.evaluate import LeafValue, compile_spec, leaf_key, term_intervals
from fairaudit.spec.ast import LEAF_KINDS, Spec

MAX_ALTERNATIVES = 256
_LN_1_1 = math.log(1.1)


def sound_delta(split: str, total: float, n_leaves: int) -> float:
    """The failure probability that the decision of ``split`` provably stays within (module doc):
    Δ for the equal split (a fixed allocation) and for the directed split (``fairaudit.engines.monitor.directed``),
    min(1, k·Δ) for the optimised split over k leaves."""
    if split == "optimized" and n_leaves > 1:
        return min(1.0, n_leaves * float(total))
    return float(total)


def equal_split(keys, total: float) -> dict[str, float]:
    """VeriFair's split: Δ / k for each of the k distinct leaves."""
    keys = list(keys)
    return {k: total / len(keys) for k in keys} if keys else {}


@dataclass
class LeafStats:
    """Sufficient statistics of a Bernoulli leaf: successes and observations (arrays or scalars)."""

    successes: np.ndarray
    n: np.ndarray

    @property
    def estimate(self):
        s, n = np.asarray(self.successes, float), np.asarray(self.n, float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, s / np.where(n > 0, n, 1), np.nan)

    def at(self, index) -> "LeafStats":
        return LeafStats(np.asarray(self.successes)[index], np.asarray(self.n)[index])


def leaf_values(stats: dict[str, LeafStats], deltas: dict[str, object], bound: Bound, cs=None) -> dict[str, LeafValue]:
    """Leaf intervals from statistics and a δ per leaf (a missing key or δ = 0 gives [0, 1]); ``cs`` (the spec's
    ``CompiledSpec``) maps a quantity leaf's to its own units (``CompiledSpec.leaf_value``)."""
    out = {}
    for key, st in stats.items():
        d = deltas.get(key, 0.0)
        lo, hi = bound.interval(st.successes, st.n, d)
        out[key] = LeafValue(st.estimate, lo, hi, d, st.n) if cs is None else cs.leaf_value(key, st.estimate, lo, hi,
                                                                                               d, st.n)
    return out


@dataclass
class Allocation:
    """A δ per distinct leaf that decides the spec; ``total`` = Σ δ."""

    deltas: dict[str, float]
    target: bool
    alternative: tuple = ()
    optimal: bool = False  # found (or certified) by the solver

    @property
    def total(self) -> float:
        return float(sum(self.deltas.values()))


@dataclass
class SolverStats:
    calls: int = 0
    seconds: float = 0.0
    screened: int = 0  # checks that reached the alternative screening
    heuristic: int = 0  # decisions found without the solver


class Allocator:
    """The δ-allocation problem of one spec, one bound and one Δ (see the module doc)."""

    def __init__(self, spec: Spec, total: float, bound="hoeffding", solver_time_limit: float = 5.0):
        if not 0 < total < 1:
            from fairaudit.base.errors import FairauditError

            raise FairauditError(f"delta must be in (0, 1), got {total}")
        self.spec = spec
        self.total = float(total)
        self.bound = get_bound(bound)
        self.cs = compile_spec(spec)
        self.keys = self.cs.leaf_keys
        self.solver_time_limit = solver_time_limit
        self.stats = SolverStats()
        self._alts = {True: self._alternatives(self.cs.root, True), False: self._alternatives(self.cs.root, False)}
        cmp_leaves = {}
        for alt in self._alts[True] + self._alts[False]:
            cmp_leaves[alt] = sorted(set().union(*(self.cs.leaves_below[c] for c, _ in alt)),
                                     key=self.keys.index)
        self._alt_leaves = cmp_leaves

    # -------------------------------------------------------------- alternatives (DNF over comparisons)
    def _alternatives(self, node_id: str, want: bool) -> list[tuple]:
        tn = self.cs.nodes[node_id]
        if tn.kind == "cmp":
            return [((node_id, want),)]
        rule = BOOL_RULES[tn.kind]
        out: list[tuple] = []
        for option in rule.needs(want):
            parts = [self._alternatives(tn.children[i], w) for i, w in option]
            for combo in itertools.product(*parts):
                items = tuple(sorted(set(itertools.chain.from_iterable(combo))))
                if _consistent(items) and items not in out:
                    out.append(items)
                if len(out) > MAX_ALTERNATIVES:
                    return out
        return out

    def alternatives(self, target: bool) -> list[tuple]:
        return self._alts[bool(target)]

    def leaves_of(self, alternative) -> list[str]:
        return self._alt_leaves[alternative]

    # -------------------------------------------------------------- numeric checks (vectorised)
    def verdicts(self, stats: dict[str, LeafStats], deltas: dict[str, object]) -> dict:
        """Term intervals and verdicts of every node for the given δ's."""
        return term_intervals(self.spec, leaf_values(stats, deltas, self.bound, self.cs))

    def root_verdict(self, stats, deltas) -> np.ndarray:
        return self.verdicts(stats, deltas)[self.cs.root]

    def satisfied(self, alternative, stats, deltas) -> np.ndarray:
        """True where every comparison of the alternative has its wanted verdict."""
        return self._satisfied_values(alternative, leaf_values(stats, deltas, self.bound, self.cs))

    def _satisfied_values(self, alternative, values) -> np.ndarray:
        v = term_intervals(self.spec, values)
        ok = True
        for cid, want in alternative:
            ok = ok & (v[cid] == (TRUE if want else FALSE))
        return np.asarray(ok)

    def smallest_deltas(self, alternative, stats, iterations: int = 30) -> dict[str, np.ndarray]:
        """For each leaf of the alternative: the smallest δᵢ satisfying it with every other leaf at
        δ = Δ (bisection on log δ; ``inf`` where even δᵢ = Δ does not satisfy it)."""
        leaves = self.leaves_of(alternative)
        shape = np.shape(next(iter(stats.values())).n)
        at_total = leaf_values(stats, {k: self.total for k in self.keys}, self.bound, self.cs)
        out = {}
        lo_log = math.log(self.total) - 40.0
        for key in leaves:
            values = dict(at_total)
            one = {key: stats[key]}

            def ok_at(log_delta):
                values[key] = leaf_values(one, {key: np.exp(log_delta)}, self.bound, self.cs)[key]
                return self._satisfied_values(alternative, values)

            a = np.full(shape, lo_log)
            b = np.full(shape, math.log(self.total))
            feasible = ok_at(b)
            trivially = ok_at(a)
            for _ in range(iterations):
                mid = 0.5 * (a + b)
                ok = ok_at(mid)
                b = np.where(ok, mid, b)
                a = np.where(ok, a, mid)
            res = np.where(feasible, np.exp(b), np.inf)
            out[key] = np.where(trivially, 0.0, res)
        return out

    # -------------------------------------------------------------- decisions
    def equal(self) -> dict[str, float]:
        return equal_split(self.keys, self.total)

    def try_decide(self, stats_at: dict[str, LeafStats], target: bool, optimize: bool = True) -> Allocation | None:
        """At one check (scalar statistics): an allocation with Σδ ≤ Δ that decides the root as
        ``target``, or None. With ``optimize`` the returned allocation is the solver's optimum."""
        candidates = []
        for alt in self.alternatives(target):
            if not bool(self.satisfied(alt, stats_at, {k: self.total for k in self.keys})):
                continue
            mins = self.smallest_deltas(alt, stats_at)
            need = sum(float(v) for v in mins.values())
            if not need <= self.total:
                continue
            candidates.append((need, alt, mins))
        if not candidates:
            return None
        self.stats.screened += 1
        candidates.sort(key=lambda c: c[0])
        heuristic = None
        for need, alt, mins in candidates:
            leaves = self.leaves_of(alt)
            minimal = {k: float(mins[k]) for k in leaves}
            if bool(self.satisfied(alt, stats_at, minimal)):
                # every δᵢ is at its lower bound: this is the optimum of this alternative
                candidate = Allocation(minimal, target, alt, optimal=True)
                if heuristic is None or candidate.total < heuristic.total:
                    heuristic = candidate
                continue
            trials = [{k: self.total / len(leaves) for k in leaves}]
            if need > 0:
                trials.append({k: float(mins[k]) * self.total / need for k in leaves})
            for deltas in trials:
                if bool(self.satisfied(alt, stats_at, deltas)):
                    if heuristic is None:
                        heuristic = Allocation(deltas, target, alt)
                    break
        if heuristic is not None and heuristic.optimal and len(candidates) == 1:
            return heuristic
        if heuristic is not None and not optimize:
            self.stats.heuristic += 1
            return heuristic
        best = heuristic if heuristic is not None and heuristic.optimal else None
        for need, alt, mins in candidates:
            if best is not None and need >= best.total:
                continue  # this alternative cannot beat the best found (its minima already sum higher)
            found = self.solve(alt, stats_at, target, first_feasible=not optimize)
            if found is not None and not optimize:
                return found
            if found is not None and (best is None or found.total < best.total):
                best = found
        if best is None and heuristic is not None:
            self.stats.heuristic += 1
            return heuristic
        return best

    # -------------------------------------------------------------- the Pyomo / SCIP model
    def solve(self, alternative, stats_at: dict[str, LeafStats], target: bool,
              first_feasible: bool = False) -> Allocation | None:
        """min Σδᵢ s.t. the alternative's constraints and Σδᵢ ≤ Δ (SCIP); verified numerically."""
        import time

        leaves = self.leaves_of(alternative)
        variant_lists = []
        for cid, want in alternative:
            op = self.cs.nodes[cid].node.op
            variant_lists.append(range(len(CMP.needs(op, want, (0.0, 0.0), (0.0, 0.0)))))
        best = None
        for variants in itertools.product(*variant_lists):
            t0 = time.perf_counter()
            deltas = _solve_model(self, alternative, variants, leaves, stats_at, first_feasible)
            self.stats.calls += 1
            self.stats.seconds += time.perf_counter() - t0
            if deltas is None:
                continue
            deltas = self._verified(alternative, stats_at, deltas)
            if deltas is not None and (best is None or sum(deltas.values()) < sum(best.values())):
                best = deltas
        return None if best is None else Allocation(best, target, alternative, optimal=not first_feasible)

    def _verified(self, alternative, stats_at, deltas):
        deltas = {k: max(float(v), 0.0) for k, v in deltas.items()}
        for _ in range(8):
            s = sum(deltas.values())
            if s > self.total:
                deltas = {k: v * self.total / s for k, v in deltas.items()}
            if sum(deltas.values()) <= self.total and bool(self.satisfied(alternative, stats_at, deltas)):
                return deltas
            room = self.total / max(sum(deltas.values()), 1e-300)
            deltas = {k: v * min(1.0 + 1e-4, room) for k, v in deltas.items()}
        return None


def _consistent(items) -> bool:
    wants = {}
    for cid, want in items:
        if wants.setdefault(cid, want) != want:
            return False
    return True


class _Builder:
    def __init__(self, model):
        import pyomo.environ as pe

        self.pe, self.m, self.count = pe, model, 0

    def var(self, bounds=(None, None)):
        self.count += 1
        v = self.pe.Var(bounds=bounds)
        self.m.add_component(f"v{self.count}", v)
        return v

    def binary(self):
        self.count += 1
        v = self.pe.Var(domain=self.pe.Binary)
        self.m.add_component(f"v{self.count}", v)
        return v

    def require(self, expr):
        self.count += 1
        if expr is True:
            return
        if expr is False:
            raise _Infeasible()
        self.m.add_component(f"c{self.count}", self.pe.Constraint(expr=expr))


class _Infeasible(Exception):
    pass


def _leaf_model(build, allocator: Allocator, key: str, st: LeafStats):
    """``(lo, hi, δ)`` of one leaf as Pyomo expressions.

    Hoeffding: the variable is the radius ε (interval ``p ± ε``) and ``δ = 24·exp(−(9/5)(nε² − a(n)))``
    (``hoeffding_delta``), so interval constraints stay linear in the variables. Mixture: the
    variable is δ and the endpoints are variables with ``S ln lo + F ln(1 − lo) ≤ L + ln δ`` (and the
    same for ``hi``), which holds exactly when they lie outside the confidence interval. The model
    does not clip the Hoeffding interval to [0, 1] (the evaluator does): it can only be more
    conservative; the exact screens in ``try_decide`` use the clipped intervals.
    """
    lo, hi, delta = _unit_leaf_model(build, allocator, key, st)
    if key not in allocator.cs.leaf_range:
        return lo, hi, delta
    # a mean of an amount: its statistics are on [0, 1]; its ends in the amount's units, widened by the fixed point's
    # rounding as ``CompiledSpec.leaf_value`` does (the solution is checked by that evaluator before it is used)
    from fairaudit.core.counting import QUANTUM

    low, high = allocator.cs.leaf_range[key]
    return low + (high - low) * (lo - QUANTUM / 2), low + (high - low) * (hi + QUANTUM / 2), delta


def _unit_leaf_model(build, allocator: Allocator, key: str, st: LeafStats):
    """``(lo, hi, δ)`` of one leaf on [0, 1] (``_leaf_model``)."""
    pe = build.pe
    s, n = float(st.successes), float(st.n)
    total = allocator.total
    if n < 1:
        return 0.0, 1.0, 0.0
    p = s / n
    if allocator.bound.name == "hoeffding":
        a = 0.6 * math.log(math.log(n) / _LN_1_1 + 1.0)
        eps_min = float(hoeffding_radius(total, n))  # δ ≤ Δ
        eps = build.var((eps_min, max(eps_min, 3.0)))
        delta = 24.0 * pe.exp(-(9.0 / 5.0) * (n * eps * eps - a))
        return p - eps, p + eps, delta
    if allocator.bound.name == "mixture":
        dvar = build.var((total * 1e-15, total))
        f = n - s
        base = float(mixture_log_threshold(s, n, 1.0))  # L (the threshold at δ = 1)
        tiny = 1e-12
        if s > 0:
            lo = build.var((tiny, p))
            build.require(s * pe.log(lo) + (f * pe.log(1 - lo) if f > 0 else 0.0) <= base + pe.log(dvar))
        else:
            lo = 0.0
        if f > 0:
            hi = build.var((p, 1 - tiny))
            build.require((s * pe.log(hi) if s > 0 else 0.0) + f * pe.log(1 - hi) <= base + pe.log(dvar))
        else:
            hi = 1.0
        return lo, hi, dvar
    raise NotImplementedError(f"no optimisation model for bound {allocator.bound.name!r}")


def _term_model(build, allocator: Allocator, node_id: str, leaf_exprs, stats_at, cache):
    if node_id in cache:
        return cache[node_id]
    tn = allocator.cs.nodes[node_id]
    if tn.kind in LEAF_KINDS:
        out = leaf_exprs[leaf_key(tn)]
    elif tn.kind == "const":
        out = (float(tn.node.value), float(tn.node.value))
    else:
        kids = [_term_model(build, allocator, c, leaf_exprs, stats_at, cache) for c in tn.children]
        if tn.kind == "div":
            # sign of the denominator from its estimate (Inverse Constr.)
            est = _estimate(allocator, tn.children[1], stats_at)
            out = TERM_RULES["div"].symbolic(build, *kids, sign=1 if not est < 0 else -1)
        else:
            out = TERM_RULES[tn.kind].symbolic(build, *kids)
    cache[node_id] = out
    return out


def _estimate(allocator, node_id, stats_at):
    values = term_intervals(allocator.spec, leaf_values(stats_at, {}, allocator.bound, allocator.cs))
    return float(values[node_id].estimate)


def _solve_model(allocator: Allocator, alternative, variants, leaves, stats_at, first_feasible: bool = False):
    import pyomo.environ as pe
    from pyomo.contrib.solver.common.factory import SolverFactory

    m = pe.ConcreteModel()
    build = _Builder(m)
    total = allocator.total
    try:
        parts = {k: _leaf_model(build, allocator, k, stats_at[k]) for k in leaves}
        leaf_exprs = {k: (lo, hi) for k, (lo, hi, _) in parts.items()}
        deltas = {k: d for k, (_, _, d) in parts.items()}
        cache: dict = {}
        for (cid, want), variant in zip(alternative, variants):
            tn = allocator.cs.nodes[cid]
            l, r = (_term_model(build, allocator, c, leaf_exprs, stats_at, cache) for c in tn.children)
            for expr in CMP.needs(tn.node.op, want, l, r)[variant]:
                build.require(expr)
    except _Infeasible:
        return None
    objective = sum(deltas.values())
    build.require(objective <= total)
    m.objective = pe.Objective(expr=objective, sense=pe.minimize)
    solver = SolverFactory("scip_direct")
    options = {"limits/solutions": 1} if first_feasible else {}
    try:
        res = solver.solve(m, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                           time_limit=allocator.solver_time_limit, rel_gap=1e-4, solver_options=options)
    except Exception:  # noqa: BLE001 - a solver failure means "no allocation found" (sound)
        return None
    if res.incumbent_objective is None:
        return None
    try:
        res.solution_loader.load_vars()
    except Exception:  # noqa: BLE001
        return None
    return {k: float(pe.value(d)) for k, d in deltas.items()}
