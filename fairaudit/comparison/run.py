"""``compare``: the same rows, in the same order, through every model; each model's intervals and, for every pair,
an interval on the difference of every node, all holding at once (docs/methods/compare.md).

The monitor's comparison (the default) reads the audited rows once, shuffled with the seed, and looks at a grid of
row counts. Per look it has, for every model, the monitor's KT-mixture interval of every leaf (``fairaudit.bounds.
concentration``) and, for every pair of models, the paired interval of every leaf's difference (``fairaudit.bounds.
paired``); node intervals follow by interval arithmetic (``fairaudit.core.evaluate``) and node differences by
``fairaudit.comparison.difference``. Each interval is a confidence sequence, intersected over the looks.

How Δ is spent (a union bound over estimators, each valid at every look): half to the models' leaf intervals
(``Δ/2`` shared equally by each model's leaves that read the decision and, once for all models, the leaves that do
not), half to the paired leaf differences (equally over pairs × pairable leaves); all of Δ to the models' leaves when
nothing can be paired. On the event that all of them hold — probability ≥ 1 − Δ under rows drawn i.i.d. in random
order — every interval shown holds at every look, so every difference verdict ("a_lower", "b_lower") is right.

The exact engine (``dataset``) compares the models' exact values on the same rows (scope: these rows). The verifier
engines compare their sound bounds by interval subtraction (no pairing: each model's bound is computed on its own).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import combinations

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.bounds.concentration import mixture_interval
from fairaudit.bounds.paired import difference_interval, running
from fairaudit.bounds.rules import Interval
from fairaudit.comparison.difference import SUB, differences, slack_differences, slacks, verdicts
from fairaudit.comparison.options import DEFAULTS, ENGINES, ORDERS, STOPS
from fairaudit.core.counting import QUANTUM, unit_values
from fairaudit.core.evaluate import LeafValue, compile_spec, evaluate, term_intervals

FIRST_LOOKS = 64      # every row up to here is a look, then a geometric grid
LOOK_GROWTH = 1.02    # ... 2 % more rows per look (the decision row is known to within 2 %)
NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass
class Side:
    """One model (or decision expression) compared: its ``name`` in the tables and its resolved ``inputs``."""

    name: str
    inputs: object
    given: tuple  # ("model", what was given) or ("pred", the expression)

    @property
    def describe(self) -> str:
        inputs = self.inputs
        if inputs.pred is not None:
            return f"decisions `{inputs.pred}`"
        return inputs.model.describe() if inputs.model is not None else str(self.given[1])


def _sides_list(models, preds, sides) -> list[tuple[str, object]]:
    out = list(sides or [])
    out += [("model", m) for m in (models or [])]
    out += [("pred", p) for p in (preds or [])]
    for kind, _ in out:
        if kind not in ("model", "pred"):
            raise FairauditError(f"a compared side is a model or a decision expression (pred), not {kind!r}")
    if len(out) < 2:
        raise FairauditError("compare needs at least two models or decision expressions (--model/--pred, given "
                             f"{len(out)})")
    if len(out) > len(NAMES):
        raise FairauditError(f"compare at most {len(NAMES)} models at once")
    return out


def _check_names(names, count: int) -> list[str]:
    if names is None:
        return list(NAMES[:count])
    names = [str(n).strip() for n in names]
    if len(names) != count:
        raise FairauditError(f"{len(names)} name(s) for {count} compared models: give one --name per model, in order")
    if any(not n for n in names) or len(set(names)) != len(names):
        raise FairauditError("every compared model needs a distinct, non-empty name")
    return names


def _check_reads(name: str, model, dataset) -> None:
    """A model must be able to read the rows: every column it reads is in the data (else it is another data's model)."""
    wanted = list(getattr(model, "feature_names", None) or [])
    missing = [c for c in wanted if c not in dataset.frame.columns]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise FairauditError(f"model {name} reads column '{missing[0]}'{more}, which {dataset.name} does not have: "
                             "every compared model must read the same rows (give models trained on these columns)")


def resolve_sides(engine: str, data, spec, sides, names, *, where=None, rows=None, seed=0, ranges=None,
                  trust_pickle=False,
                  trusted_types=(), include_protected=False, options=None):
    """``(spec, dataset, [Side])``: each side's inputs through the audit's road (``fairaudit.resolve``), validated
    before any model is trained or scored (one ``FairauditError`` line on bad input)."""
    from fairaudit.core.inputs import resolve_model
    from fairaudit.resolve import load_dataset, parse_spec, resolve

    dataset = load_dataset(data) if data is not None else None
    spec = parse_spec(spec, ranges) if spec is not None else None
    if spec is None:
        raise FairauditError("no specification: give spec=... (--spec)")
    plans = []
    for (kind, value), name in zip(sides, names):
        plan = resolve(engine, dataset, spec, model=value if kind == "model" else None,
                       pred=value if kind == "pred" else None, where=where, rows=rows, seed=seed,
                       trust_pickle=trust_pickle, trusted_types=trusted_types, include_protected=include_protected,
                       **(options or {}))
        plans.append((plan, plan.preflight(), kind, value, name))  # every side validated before any is trained
    out = []
    for plan, found, kind, value, name in plans:
        if kind == "model" and plan.kind == "rows":
            model = resolve_model(value, dataset, seed, trust_pickle=trust_pickle, trusted_types=trusted_types,
                                  include_protected=include_protected)
            _check_reads(name, model, dataset)
            plan = replace(plan, model=model)
        out.append((plan, Side(name, plan.inputs(found), (kind, value))))
    return spec, dataset, out


def common_rows(sides: list[Side], total: int) -> tuple[np.ndarray, str]:
    """The rows every side audits (a model fairaudit trained is audited on rows it did not train on), and a
    sentence saying which they are."""
    rows = np.arange(total)
    for side in sides:
        if side.inputs.positions is not None:
            rows = np.intersect1d(rows, side.inputs.positions)
    if not len(rows):
        raise FairauditError("no row is audited by every compared model (each trained model is audited on the rows it "
                             "did not train on): train them with the same split, or compare on rows='all'")
    texts = {s.inputs.rows.get("text") for s in sides}
    text = (next(iter(texts)) if len(texts) == 1 else
            f"{len(rows):,} rows audited by every compared model (each model's own: "
            + "; ".join(f"{s.name}: {s.inputs.rows.get('text')}" for s in sides) + ")")
    return rows, text


def look_ends(n: int) -> np.ndarray:
    """The looks: every row up to ``FIRST_LOOKS``, then ``LOOK_GROWTH`` times more rows per look, and the last row
    (as 0-based end positions)."""
    counts = list(range(1, min(n, FIRST_LOOKS) + 1))
    c = float(FIRST_LOOKS)
    while c < n:
        c *= LOOK_GROWTH
        counts.append(min(n, int(round(c))))
    counts.append(n)
    return np.unique(np.asarray(counts, dtype=np.int64)) - 1


def _reads_decision(node, part: str = "both") -> bool:
    from fairaudit.spec.ast import event_names

    if node.kind == "fair":
        return part != "given"
    events = {"both": (node.event, node.given), "given": (node.given,)}[part]
    return any(ev is not None and any(n.name in ("pred", "score") for n in event_names(ev)) for ev in events)


def leaf_roles(cs) -> dict[str, str]:
    """Per leaf key: "same" (does not read the decision: equal for every model), "paired" (reads it; its condition
    does not, so both models are observed on the same individuals) or "unpaired" (its condition reads the decision)."""
    out = {}
    for key in cs.leaf_keys:
        node = cs.leaf_node[key].node
        out[key] = ("same" if not _reads_decision(node) else
                    "unpaired" if _reads_decision(node, "given") else "paired")
    return out


def _leaf_value(s, n, delta) -> LeafValue:
    lo, hi = mixture_interval(s, n, delta)
    lo, hi = running(np.asarray(lo, float), np.asarray(hi, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(n > 0, s / np.where(n > 0, n, 1), np.nan)
    return LeafValue(estimate, lo, hi, delta, n=n)


def _fixed_point(cs, key: str, values, mask) -> np.ndarray:
    """A mean's values (in its units) on [0, 1] by its range, in the counting kernel's fixed point
    (``fairaudit.core.counting.unit_values``: multiples of ``QUANTUM``, 0 off ``mask``), as int64: sums of them are
    exact, and each is within ``QUANTUM / 2`` of its value."""
    return unit_values(values, mask, cs.leaf_range[key]).astype(np.int64)


def _paired_mean(cs, key: str, values_a, values_b, mask, ends, delta) -> Interval:
    """The paired difference of a mean (``E[score | g]`` of two models on the same individuals) at each look: the
    per-row differences ``a − b`` lie in ``[−w, w]`` (``w`` the mean's range width), so ``(a − b + w) / 2w`` lies in
    [0, 1] and the monitor's mixture confidence sequence (sound for bounded values: ``fairaudit.core.counting``) holds
    for its mean; each value's fixed point is within ``QUANTUM / 2`` of it, so the difference of two is within
    ``QUANTUM`` (``QUANTUM / 2`` once halved), which widens the interval before it is mapped back, outward."""
    low, high = cs.leaf_range[key]
    width = high - low
    mask = np.asarray(mask, bool)
    doubled = _fixed_point(cs, key, values_a, mask) - _fixed_point(cs, key, values_b, mask) + round(1 / QUANTUM)
    n = np.cumsum(mask, dtype=np.int64)[ends].astype(float)
    s = np.cumsum(np.where(mask, doubled, 0), dtype=np.int64)[ends].astype(float) * (QUANTUM / 2)
    lo, hi = mixture_interval(s, n, delta)
    lo, hi = running(np.asarray(lo, float), np.asarray(hi, float))
    lo, hi = np.maximum(lo - QUANTUM / 2, 0.0), np.minimum(hi + QUANTUM / 2, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(n > 0, (2 * s / np.where(n > 0, n, 1) - 1) * width, np.nan)
        out_lo = np.maximum(np.nextafter((2 * lo - 1) * width, -np.inf), -width)
        out_hi = np.minimum(np.nextafter((2 * hi - 1) * width, np.inf), width)
    return Interval(est, out_lo, out_hi)


def _counts(values, mask, ends):
    v = np.asarray(values).astype(bool) & np.asarray(mask).astype(bool)
    return np.cumsum(v, dtype=np.int64)[ends].astype(float)


def compare(data, spec, models=None, preds=None, *, sides=None, names=None, engine: str = DEFAULTS["engine"],
            delta: float = DEFAULTS["delta"], seed: int = DEFAULTS["seed"], stop: str = DEFAULTS["stop"],
            order: str = DEFAULTS["order"], where: str | None = None, rows: str | None = None,
            trust_pickle: bool = False, trusted_types=(), include_protected: bool = False, options=None,
            paired: bool = True, among=None, among_text: str | None = None, said=None, ranges=None):
    """Compare models (``models``: Models, saved-model paths or training kinds) and/or logged decisions (``preds``:
    decision expressions such as ``"dec_b == 1"``) on ``data`` against ``spec``; ``sides`` lists them in order as
    ``("model", m)`` / ``("pred", text)`` pairs instead (a mix in the order given). Returns a ``CompareResult``.

    ``engine``: ``monitor`` (default; paired, anytime-valid, about the population), ``dataset`` (exact, these rows),
    or a verifier engine (its sound bounds, subtracted). ``delta``: every interval shown holds at once with probability
    ≥ 1 − Δ (monitor). ``stop``: ``all`` rows or stop when every difference is ``decided``. ``order``: ``shuffle``
    (seeded) or ``given``. ``where``/``rows``: as in ``fairaudit.audit`` (the same for every model). ``paired=False``
    treats every leaf as unpaired (each model's own intervals, subtracted; all of Δ to them): what two separate
    monitors would conclude, for measuring what pairing gains (``bench/compare_power.py``). ``said``: how the
    sentences name each model ("the current model (logreg)"), one phrase per model in order (default: its name).
    ``ranges``: the declared range of each column the spec averages, as in ``fairaudit.audit`` (a mean's paired
    difference is bounded on the range of the differences: ``_paired_mean``)."""
    listed = _sides_list(models, preds, sides)
    names = _check_names(names, len(listed))
    phrases = _check_said(said, names)
    result = _compare(data, spec, listed, names, engine=engine, delta=delta, seed=seed, stop=stop, order=order,
                      where=where, rows=rows, trust_pickle=trust_pickle, trusted_types=trusted_types,
                      include_protected=include_protected, options=options, paired=paired, among=among,
                      among_text=among_text, ranges=ranges)
    result.said = phrases
    return result


def _check_said(said, names: list[str]) -> dict[str, str]:
    if said is None:
        return {}
    said = [" ".join(str(p).split()) for p in said]
    if len(said) != len(names) or not all(said):
        raise FairauditError(f"{len(said)} phrase(s) for {len(names)} compared models: give one non-empty phrase per "
                             "model, in order")
    return dict(zip(names, said))


def _compare(data, spec, listed, names, *, engine, delta, seed, stop, order, where, rows, trust_pickle, trusted_types,
             include_protected, options, paired, among, among_text, ranges=None):
    if not (isinstance(delta, (int, float)) and 0 < float(delta) < 1):
        raise FairauditError(f"delta must be a probability strictly between 0 and 1, not {delta!r}")
    if stop not in STOPS:
        raise FairauditError(f"unknown stop {stop!r}; choose one of: {', '.join(STOPS)}")
    if order not in ORDERS:
        raise FairauditError(f"unknown order {order!r}; choose one of: {', '.join(ORDERS)}")
    if options and engine in ENGINES:
        raise FairauditError(f"engine options ({', '.join(options)}) apply to a verifier engine's runs, not to the "
                             f"{engine} engine's comparison")
    if engine not in ENGINES:
        return _compare_bounds(data, spec, listed, names, engine=engine, delta=delta, seed=seed, where=where,
                               rows=rows, trust_pickle=trust_pickle, trusted_types=trusted_types,
                               include_protected=include_protected, options=options, ranges=ranges)
    if data is None:
        raise FairauditError(f"the {engine} engine compares the models on rows: give the data (--data NAME|CSV)")
    spec, dataset, resolved = resolve_sides("monitor", data, spec, listed, names, where=where, rows=rows, seed=seed,
                                            ranges=ranges, trust_pickle=trust_pickle, trusted_types=trusted_types,
                                            include_protected=include_protected)
    sides_ = [side for _, side in resolved]
    positions, rows_text = common_rows(sides_, len(dataset))
    if among is not None:
        positions = np.intersect1d(positions, np.asarray(among, dtype=np.int64))
        if not len(positions):
            raise FairauditError("none of the rows asked for (among) is audited by every compared model")
        rows_text = among_text or f"{len(positions):,} of the {rows_text}"
    if engine == "dataset":
        return _compare_exact(spec, dataset, resolved, positions, rows_text)
    return _compare_monitor(spec, dataset, sides_, positions, rows_text, delta=float(delta), seed=int(seed),
                            stop=stop, order=order, paired=paired)


def _compare_monitor(spec, dataset, sides, positions, rows_text, *, delta, seed, stop, order, paired=True):
    from fairaudit.comparison.result import CompareResult, NodeSeries
    from fairaudit.core.observations import observe_inputs

    cs = compile_spec(spec)
    from fairaudit.base.order import order_rng

    stream = order_rng(seed).permutation(positions) if order == "shuffle" else positions
    observations = [observe_inputs(spec, side.inputs, positions=stream) for side in sides]
    warnings = []
    for side in sides:
        warnings += [w for w in side.inputs.warnings if w not in warnings]
    for obs in observations:
        warnings += [w for w in obs.missing_warnings() if w not in warnings]
    roles = leaf_roles(cs)
    for key, role in roles.items():  # a pairable leaf whose rows differ between models (missing values) is not paired
        if role == "paired" and not paired:
            roles[key] = "unpaired"
        elif role == "paired" and any(not np.array_equal(o.masks[key], observations[0].masks[key])
                                    for o in observations[1:]):
            roles[key] = "unpaired"
    ends = look_ends(len(stream))
    looks = ends + 1
    pairs = list(combinations(range(len(sides)), 2))
    paired_keys = [k for k in cs.leaf_keys if roles[k] == "paired"]
    model_estimators = len(sides) * sum(roles[k] != "same" for k in cs.leaf_keys) + sum(
        roles[k] == "same" for k in cs.leaf_keys)
    pair_estimators = len(pairs) * len(paired_keys)
    model_share = delta / 2 if pair_estimators else delta
    delta_model = model_share / max(model_estimators, 1)
    delta_pair = (delta - model_share) / pair_estimators if pair_estimators else 0.0

    leaves_by_side = []
    for obs in observations:
        leaves = {}
        for key in cs.leaf_keys:
            source = observations[0] if roles[key] == "same" else obs
            n = _counts(np.ones(source.length, bool), source.masks[key], ends)
            if key in cs.leaf_range:  # a mean: its values in [0, 1] by the range, in fixed point (exact sums)
                units = _fixed_point(cs, key, source.values[key], source.masks[key])
                s = np.cumsum(units, dtype=np.int64)[ends].astype(float) * QUANTUM
                value = _leaf_value(s, n, delta_model)
                leaves[key] = cs.leaf_value(key, value.estimate, value.lo, value.hi, delta_model, n)
            else:
                leaves[key] = _leaf_value(_counts(source.values[key], source.masks[key], ends), n, delta_model)
        leaves_by_side.append(leaves)
    terms = [term_intervals(spec, leaves) for leaves in leaves_by_side]
    values = [evaluate(spec, leaves) for leaves in leaves_by_side]
    side_slacks = [slacks(cs, {nid: SUB.interval(*(t[c] for c in cs.nodes[nid].children))
                               for nid in cs.nodes if cs.nodes[nid].kind == "cmp"}) for t in terms]

    diff_series = {}
    for i, j in pairs:
        leaf_diffs = {}
        for key in cs.leaf_keys:
            if roles[key] == "same":
                leaf_diffs[key] = 0
            elif roles[key] == "unpaired":
                leaf_diffs[key] = None
            elif key in cs.leaf_range:
                a, b = observations[i], observations[j]
                leaf_diffs[key] = _paired_mean(cs, key, a.values[key], b.values[key], a.masks[key], ends,
                                               delta_pair)
            else:
                a, b = observations[i], observations[j]
                mask = a.masks[key]
                va, vb = np.asarray(a.values[key], bool), np.asarray(b.values[key], bool)
                n10 = _counts(va & ~vb, mask, ends)
                n01 = _counts(~va & vb, mask, ends)
                n = _counts(np.ones(a.length, bool), mask, ends)
                lo, hi = difference_interval(n10, n01, n - n10 - n01, delta_pair)
                lo, hi = running(np.asarray(lo, float), np.asarray(hi, float))
                with np.errstate(invalid="ignore", divide="ignore"):
                    est = np.where(n > 0, (n10 - n01) / np.where(n > 0, n, 1), np.nan)
                leaf_diffs[key] = Interval(est, lo, hi)
        series = differences(cs, terms[i], terms[j], leaf_diffs)
        series.update(slack_differences(cs, side_slacks[i], side_slacks[j], series))
        diff_series[(sides[i].name, sides[j].name)] = series

    node_roles = _node_roles(cs, roles)
    stop_index = len(looks) - 1
    if stop == "decided":
        decided = np.ones(len(looks), dtype=bool)
        for series in diff_series.values():
            for nid, iv in series.items():
                if node_roles[nid] != "same":
                    decided &= verdicts(iv) != 0
        hit = np.flatnonzero(decided)
        if len(hit):
            stop_index = int(hit[0])
    model_series = {side.name: {nid: NodeSeries.of(values[k][nid], side_slacks[k].get(nid)) for nid in cs.nodes}
                    for k, side in enumerate(sides)}
    return CompareResult.build(
        spec=spec, engine="monitor", scope="population", delta=delta, seed=seed, order=order, stop=stop,
        sides=sides, looks=looks, stop_index=stop_index, model_series=model_series, diff_series=diff_series,
        node_roles=node_roles, rows={"audited": int(len(positions)), "text": rows_text, "order": order, "seed": seed},
        warnings=warnings, levels={"model_leaf": delta_model, "paired_leaf": delta_pair,
                                   "model_estimators": model_estimators, "paired_estimators": pair_estimators},
        dataset=dataset)


def _node_roles(cs, roles) -> dict[str, str]:
    """Per node: "same" when no leaf below reads the decision, "paired" when every such leaf is paired, else
    "unpaired" (its difference comes partly from subtracting the two models' intervals)."""
    out = {}
    for nid in cs.nodes:
        below = [roles[k] for k in cs.leaves_below_ordered[nid] if roles[k] != "same"]
        out[nid] = "same" if not below else "paired" if all(r == "paired" for r in below) else "unpaired"
    return out


def _compare_exact(spec, dataset, resolved, positions, rows_text):
    """The dataset engine on the common rows for every model: exact values, exact differences (scope: these rows)."""
    from fairaudit.core.driver import last, start
    from fairaudit.resolve import resolve

    results = []
    for plan, side in resolved:
        exact_plan = resolve("dataset", dataset, spec, model=side.inputs.model if side.inputs.pred is None else None,
                             pred=side.inputs.pred, rows=None)
        inputs = replace(side.inputs, positions=positions,
                         rows={**side.inputs.rows, "audited": int(len(positions)), "text": rows_text})
        results.append(last(start(exact_plan.engine, spec, inputs, exact_plan.options, **exact_plan.run_args())))
    return _from_results(spec, [side for _, side in resolved], results, engine="dataset", scope="rows",
                         rows={"audited": int(len(positions)), "text": rows_text, "order": "given", "seed": None},
                         dataset=dataset)


def _compare_bounds(data, spec, listed, names, *, engine, delta, seed, where, rows, trust_pickle, trusted_types,
                    include_protected, options, ranges=None):
    """A verifier engine per model; differences by subtracting its sound bounds (no pairing)."""
    opts = dict(options or {})
    if engine == "monitor":
        opts.setdefault("delta", delta)
    spec, dataset, resolved = resolve_sides(engine, data, spec, listed, names, where=where, rows=rows, seed=seed,
                                            ranges=ranges, trust_pickle=trust_pickle, trusted_types=trusted_types,
                                            include_protected=include_protected, options=opts)
    results = []
    for plan, side in resolved:
        from fairaudit.core.driver import last, start

        results.append(last(start(plan.engine, plan.audited_spec(side.inputs), side.inputs, plan.options,
                                  **plan.run_args())))
    scope = results[0].scope or "domain"
    return _from_results(spec, [side for _, side in resolved], results, engine=engine, scope=scope,
                         rows={"audited": None, "text": results[0].rows_text if results[0].rows else None,
                               "order": None, "seed": seed}, dataset=dataset)


def _from_results(spec, sides, results, *, engine, scope, rows, dataset):
    from fairaudit.comparison.result import CompareResult, NodeSeries

    cs = compile_spec(spec)
    side_slacks = []
    for res in results:
        margins = {}
        for nid, tn in cs.nodes.items():
            if tn.kind == "cmp":
                v = res.final_values(nid)
                margins[nid] = Interval(*(np.array([float(v[k])]) for k in ("estimate", "lo", "hi")))
        side_slacks.append(slacks(cs, margins))
    model_series = {side.name: {nid: NodeSeries.final(res.final_values(nid), side_slacks[k].get(nid)) for nid in cs.nodes}
                    for k, (side, res) in enumerate(zip(sides, results))}
    roles = leaf_roles(cs)
    node_roles = _node_roles(cs, roles)
    diff_series = {}
    for i, j in combinations(range(len(sides)), 2):
        out = {}
        for nid, tn in cs.nodes.items():
            if tn.kind in ("and", "or", "not"):
                continue
            if node_roles[nid] == "same":  # no leaf below reads the decision: the same value for every model
                out[nid] = Interval.exact(0.0, (1,))
                continue
            a, b = results[i].final_values(nid), results[j].final_values(nid)
            ea, eb = results[i].exact.get(nid), results[j].exact.get(nid)
            if ea is not None and eb is not None:
                d = Fraction(ea) - Fraction(eb)
                from fairaudit.core.evaluate import enclose

                lo, hi = enclose(d)
                out[nid] = Interval(np.array([float(d)]), np.array([lo]), np.array([hi]))
            else:
                lo = np.nextafter(float(a["lo"]) - float(b["hi"]), -np.inf)
                hi = np.nextafter(float(a["hi"]) - float(b["lo"]), np.inf)
                out[nid] = Interval(np.array([float(a["estimate"]) - float(b["estimate"])]), np.array([lo]),
                                    np.array([hi]))
        out.update(slack_differences(cs, side_slacks[i], side_slacks[j], out))
        diff_series[(sides[i].name, sides[j].name)] = out
    warnings = []
    for res in results:
        warnings += [w for w in res.warnings if w not in warnings]
    exact = all(r.guarantee is not None and r.guarantee.kind == "exact" for r in results)
    return CompareResult.build(
        spec=spec, engine=engine, scope=scope, delta=0.0 if exact else min(1.0, sum(
            float(r.guarantee.delta or 0.0) for r in results if r.guarantee is not None)),
        seed=rows.get("seed"), order=rows.get("order"), stop="all", sides=sides, looks=np.array([rows.get("audited")
                                                                                              or 1]),
        stop_index=0, model_series=model_series, diff_series=diff_series, node_roles=node_roles,
        rows=rows, warnings=warnings, levels={}, dataset=dataset, exact=exact, results=results)
