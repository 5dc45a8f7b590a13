"""The ``fairquant`` engine: certified / unfair / undecided rates of individual fairness for a ReLU network.

After FairQuant (Kim, Wang et al., ICSE 2025; the algorithm in ``fairaudit.engines.fairquant.analysis``). ``Fair[col]`` is
the fraction of the individuals of the model's **input domain** whose decision does not change when only ``col``
changes (to each of its other values). The domain is a box: for a ``.nnet`` network the integer grid between the
file's per-input minimum and maximum (the paper's evaluation), for a network trained in the app the dataset's
column ranges (an integer column as its integer grid, a real one as its interval, a categorical one as its
categories); every individual of the box counts once, whether or not anyone like it exists.

The domain is split into partitions, each analysed for every value of ``col`` at once (symbolic interval
analysis): a partition is certified fair, proven unfair, or split further on the feature with the largest
interval gradient × width. ``Fair[col]`` gets the interval ``[certified, 1 − unfair]`` — certified and unfair are
sound lower bounds of the fair and unfair fractions, counted exactly — after every batch of partitions, with the
three rates. Counterexamples (individuals whose decision changes with ``col``, each checked by the model's own
prediction of both individuals) are kept, a bounded sample with the total count, in the result's
``counterexamples`` (``fairaudit.core.counterexamples``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterator

import numpy as np

from fairaudit.core.counterexamples import DOMAIN, KEEP, Counterexample, Counterexamples, LeafCounterexamples
from fairaudit.core.engine import Context, Engine, LeafBatch
from fairaudit.engines.fairquant.options import FIRST_DEPTH, OPTIONS, TITLE
from fairaudit.base.errors import FairauditError
from fairaudit.core.evaluate import LeafValue, compile_spec, enclose
from fairaudit.core.guarantee import Guarantee

MAX_VALUES = 20        # protected values (copies of the network) at most



def domain_inputs(model, dataset=None, warnings=(), *, trust_pickle: bool = False, trusted_types=()):
    """``Inputs`` for auditing ``model`` (a ``Model`` or a saved-model path: ``fairaudit.core.inputs.resolve_model``)
    over its input domain instead of rows: the box of ``fairaudit.engines.fairquant.analysis.model_domain`` (a
    ``.nnet`` file's input bounds, else ``dataset``'s column ranges), held by
    ``fairaudit.core.inputs.Inputs.over_domain``."""
    from fairaudit.core.inputs import Inputs, resolve_model
    from fairaudit.engines.fairquant.analysis import model_domain

    model_obj = resolve_model(model, dataset, trust_pickle=trust_pickle, trusted_types=trusted_types)
    try:
        domain = model_domain(model_obj, dataset)
    except ValueError as err:
        raise FairauditError(f"cannot audit the model over its input domain: {err}") from None
    return Inputs.over_domain(model_obj, domain, dataset, warnings=warnings)


class FairQuantEngine(Engine):
    name = "fairquant"
    title = TITLE
    summary = ("the fraction of all individuals of a ReLU network's input domain proven fair, proven unfair and "
               "undecided when only the protected attribute changes (symbolic intervals, refined partition by "
               "partition), with counterexamples")
    unit = "partitions"
    leaf_kinds = frozenset({"fair"})
    requires = ("model",)
    packages = ("torch",)
    count_meaning = "the number of partitions of the input domain analysed for it"
    options = OPTIONS
    evidence_hint = ("the bounds of a sound engine never contradict each other: this is a bug in fairaudit, "
                     "please report it")

    # ------------------------------------------------------------------------------------------ checks
    def derive_inputs(self, dataset, model, options, *, trust_pickle: bool = False, trusted_types=(), warnings=(),
                      **_):
        """Given a model (and perhaps a dataset) instead of rows: the model's input domain (``domain_inputs``; a
        training kind is trained as it always was here, with seed 0 on the default features)."""
        return domain_inputs(model, dataset, warnings, trust_pickle=trust_pickle, trusted_types=trusted_types)

    def check(self, spec, inputs) -> list[str]:
        reasons = super().check(spec, inputs)
        if spec is None or inputs is None or inputs.model is None or reasons:
            return reasons
        if inputs.pred is not None:
            return reasons + ["it analyses a model's network, not a decision expression"]
        from fairaudit.engines.fairquant.analysis import model_domain

        try:
            domain = inputs.domain if inputs.domain is not None else model_domain(inputs.model, inputs.dataset)
        except (ValueError, KeyError) as err:
            return reasons + [str(err)]
        for tn in spec.leaves:
            column = tn.node.column
            if column not in domain.names and _dataset_column(inputs, column):
                continue  # a column the model does not read: its decision cannot depend on it (Fair = 1)
            if column not in domain.names:
                shown = ", ".join(domain.names[:8]) + (", ..." if len(domain.names) > 8 else "")
                reasons.append(f"{tn.text}: the model has no input {column!r} (its inputs: {shown})")
                continue
            f = domain.features[domain.index(column)]
            if f.kind == "real":
                reasons.append(f"{tn.text}: {column!r} is real-valued, so it has no finite set of values to flip")
            elif f.lo == f.hi:
                reasons.append(f"{tn.text}: {column!r} takes a single value in the domain")
            elif f.hi - f.lo + 1 > MAX_VALUES:
                reasons.append(f"{tn.text}: {column!r} takes {int(f.hi - f.lo + 1)} values; at most {MAX_VALUES} "
                               "copies of the network are compared")
        return reasons

    def scope(self, options, inputs) -> str:
        return "domain"

    def guarantee(self, options, inputs) -> Guarantee:
        domain = getattr(inputs, "domain", None)
        real = domain is not None and domain.has_real
        what = "of the integer grid" if not real else "of the box (grid points × interval widths)"
        return Guarantee("sound", scope=f"over every individual {what} of the model's input domain",
                         assumes="individuals are spread uniformly over the input domain (a rate counts individuals "
                                 "of the box, not people)")

    # ------------------------------------------------------------------------------------------ run
    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        from fairaudit.engines.fairquant.analysis import FairQuant, model_domain, network_of

        domain = inputs.domain if inputs.domain is not None else model_domain(inputs.model, inputs.dataset)
        net = network_of(inputs.model)
        cs = compile_spec(spec)
        analyses, unread, notes = {}, [], []
        device = options["device"]
        if device == "cuda" and not _cuda_available():
            device = "cpu"
            notes.append("device cuda was asked for, but torch sees no CUDA GPU here: computed on the CPU (the "
                         "same rates)")
        for i, key in enumerate(cs.leaf_keys):
            column = cs.leaf_node[key].node.column
            if column not in domain.names:  # not an input of the model (``check`` allowed it: a dataset column)
                unread.append(key)
                continue
            try:
                analyses[key] = FairQuant(net.layers, domain, column, values=options["protected_values"],
                                          max_depth=options["max_depth"] or None,
                                          sample_depth=options["sample_depth"], samples=options["cex_samples"],
                                          batch=options["batch_partitions"] or None, tolerance=options["tolerance"],
                                          seed=int(options.get("seed") or 0) + i, keep=KEEP,
                                          order=options["refine_order"], corners=options["cex_corners"],
                                          probes=options["cex_probes"], bounds=options["bounds"],
                                          refine_counterexamples=options["refine_counterexamples"],
                                          first_depth=FIRST_DEPTH, device=device,
                                          count_inside=options["count_inside"],
                                          tighten={"linear": True, "intervals": False}.get(options["hidden_bounds"], "auto"))
            except ValueError as err:
                raise FairauditError(f"fairquant: {err}") from None
        return self._batches(analyses, unread, inputs.model, domain, ctx, options.get("rounds"), notes)

    def _batches(self, analyses: dict, unread: list, model, domain, ctx: Context, limit=None,
                 notes=()) -> Iterator[LeafBatch]:
        """One round: every analysis not done analyses one batch of partitions (a fixed number: what a round does
        never depends on the clock); the deadline is asked between rounds, so a run cut by it reports its last
        complete round (``info["rounds"]``) and ``rounds=N`` reproduces it."""
        from fairaudit.core.undecided_view import INFO_KEY

        verified: dict = {key: 0 for key in analyses}
        kept: dict = {key: [] for key in analyses}
        warnings: list[str] = list(notes)
        rounds = 0
        where: dict = {}
        where_clock = _WhereClock()
        while True:
            for a in analyses.values():
                if not a.done:
                    a.step()
            rounds += 1
            finished = all(a.done for a in analyses.values()) or (limit is not None and rounds >= limit)
            last = finished or ctx.expired()
            if last or where_clock.due():  # where the undecided are: on the last round, else now and then
                with where_clock:
                    where = {key: a.undecided_where() for key, a in analyses.items()}
            for key, a in analyses.items():  # check new counterexamples with the model's own prediction
                fresh = a.counterexamples[verified[key]:]
                verified[key] = len(a.counterexamples)
                for cex in fresh:
                    row = _counterexample(model, domain, a, cex)
                    if row is None:
                        warnings.append(f"{key}: an individual whose network output is within float rounding of "
                                        "0 is unfair in exact arithmetic, but the model's float prediction rounds "
                                        "it the other way; it is counted as unfair, not shown")
                    else:
                        kept[key].append(row)
            pops = max(1, sum(a.pops for a in analyses.values()))
            info = {"fairquant": {key: {**a.summary(where=False), "protected_values": _values(domain, a)}
                                  for key, a in analyses.items()}, "rounds": rounds, INFO_KEY: where}
            found = Counterexamples(tuple(_leaf_counterexamples(key, a, domain, kept[key])
                                          for key, a in analyses.items()))
            leaves = {key: _leaf(a) for key, a in analyses.items()}
            for key in unread:
                leaves[key] = _unread_leaf()
                warnings.append(f"{key}: the model does not read this column, so no decision depends on it "
                                "(exactly 1)")
            yield LeafBatch(np.array([pops]), leaves, done=pops,
                            total=pops if finished else None, warnings=tuple(dict.fromkeys(warnings)), info=info,
                            counterexamples=found)
            if last or ctx.expired():
                return

    def methods(self, options) -> list[tuple[str, list[str]]]:
        return [("The guarantee: sound rates of individual fairness over the input domain", [
            "The fairquant engine follows FairQuant (ICSE 2025). Fair[c] is the fraction of the individuals of the "
            "model's input domain whose decision stays the same when only c changes, to each of its other values. "
            "The domain is a box: a .nnet network's integer grid between its input bounds, or a dataset's column "
            "ranges (integer columns as integer grids, categorical columns as their categories); each individual "
            "of the box counts once, whether or not anyone like it exists.",
            "The domain is split into partitions. On each, the network is run symbolically for every value of c "
            "at once: every neuron carries a linear lower and upper bound in the inputs, ReLU neurons that may be "
            "either active or inactive are relaxed by their chord and a scaled lower line (ReluVal / Neurify). A "
            "partition is certified when every copy's output has the same sign on all of it, unfair when every "
            "copy's sign is fixed and they differ, otherwise it is bisected on the feature with the largest "
            "interval gradient × width. A partition of one individual is decided by running the network on it.",
        ] + ([
            "Where the symbolic intervals leave a partition undecided, it is bounded again by linear bounds "
            "back-substituted through the network (CROWN-style: each unstable ReLU relaxed by its chord above and a "
            "tangent below, the affine layers folded in down to one linear function of the inputs, concretized "
            "over the partition), which never decides less, and it is certified fair outright when the protected "
            "attribute cannot reach the output (every path from it passes through a neuron inactive in every copy "
            "on the whole partition); such partitions are then split on the input with the largest "
            "|coefficient| × width."] if options.get("bounds", "linear") == "linear" else []) + ([
            "A partition where a counterexample was found is not dropped: the refinement runs in two rounds, "
            "FairQuant's first (at most 20 bisections deep, a counterexample partition set aside), then everything "
            "the first round left, the largest first, down to single individuals, each decided exactly; a "
            "counterexample counts as one unfair individual only when its partition stops."]
            if options.get("refine_counterexamples", True) else []) + ([
            "Inside a partition the bounds leave undecided, the individuals its linear bounds prove fair one by one (every "
            "copy's lower bound above 0 at that individual, or every upper bound below 0) are counted: the two "
            "copies' bounds are reduced to one linear function per side (a base copy's, lowered by the largest "
            "amount another copy's can fall below it on the partition), and the grid points where that function "
            "is positive are counted with each feature's term rounded down onto a grid of 255 steps, so no "
            "individual is counted that the bounds do not prove fair; those counts are replaced by the children's "
            "when the partition is split, and the certified rate shown is the most proven at any step."]
            if options.get("count_inside", True) and options.get("bounds", "linear") == "linear" else []) + [
            "From depth "
            f"{options.get('sample_depth')} an undecided partition is first searched for a counterexample "
            + (f"({options.get('cex_samples')} random individuals of it"
               if options.get("cex_probes", "random") == "random" else
               "(the FairQuant artifact's probes ⌊s·(lb+ub)/10⌋, which may lie outside it")
            + (", and the corners where an output bound is extreme" if options.get("cex_corners") else "")
            + "); one found stops that partition's refinement"
            + (" (in the first round)" if options.get("refine_counterexamples", True) else "")
            + " and, when it lies inside the partition, counts as "
            "one unfair individual (the counterexamples shown are confirmed by the model's own prediction of both "
            "individuals). "
            + (f"A partition {options.get('max_depth')} bisections deep is not split further; the "
               if options.get("max_depth") else "Partitions are split down to single individuals (20 bisections "
               "deep at most when an input is real-valued); the ")
            + 
            f"refinement order is {options.get('refine_order', 'depth-first')}.",
            "Certified and unfair are counted exactly (whole numbers of individuals) and are sound lower bounds, "
            "so the interval [certified, 1 − unfair] contains the true fair fraction at every step; the "
            "undecided rest is split into partitions with a counterexample and partitions left by the depth or "
            "time limit. Arithmetic is float64; an output's sign is trusted only when it clears a proven bound on "
            "the rounding error of the whole computation (derived once per network from its weights and the "
            "domain's magnitudes) and a relative margin of 1e-9; an individual whose float output lies within that "
            "bound of 0 is decided in exact rational arithmetic on the network's float weights (an output of "
            "exactly 0 is unfavourable, as the model decides: favourable iff output > 0), so every individual of "
            "an integer grid is decided once the refinement reaches it.",
        ])]


class _WhereClock:
    """When to recompute where the undecided individuals are between the last rounds: at most ``SHARE`` of the
    time (it walks every pending partition), so a run cut short (cancelled) still shows a recent one."""

    SHARE = 0.1

    def __init__(self):
        import time

        self._now = time.perf_counter
        self.cost = 0.0
        self.at = None

    def due(self) -> bool:
        return self.at is None or self._now() - self.at >= self.cost / self.SHARE

    def __enter__(self):
        self._start = self._now()
        return self

    def __exit__(self, *exc):
        self.at = self._now()
        self.cost = self.at - self._start
        return False


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _leaf(a) -> LeafValue:
    """``[certified, 1 − unfair]``; once nothing is undecided the fair fraction is known exactly (``exact``: the
    evaluator then decides a comparison with it exactly, a tie with the threshold included)."""
    r = a.rates()
    lo, _ = enclose(r["certified"])
    _, hi = enclose(1 - r["unfair"])
    return LeafValue(np.array([(lo + hi) / 2]), np.array([lo]), np.array([hi]), 0.0, np.array([float(a.pops)]),
                     certified=np.array([lo]), unfair=np.array([1.0 - hi]),
                     undecided=np.array([float(r["undecided"])]),
                     exact=[r["certified"] if r["undecided"] == 0 else None])


def _unread_leaf() -> LeafValue:
    one = np.array([1.0])
    return LeafValue(one, one.copy(), one.copy(), 0.0, np.array([0.0]), certified=one.copy(),
                     unfair=np.array([0.0]), undecided=np.array([0.0]), exact=[Fraction(1)])


def _dataset_column(inputs, column: str) -> bool:
    dataset = getattr(inputs, "dataset", None)
    return dataset is not None and column in getattr(dataset.schema, "names", ())


def _show(domain, j: int, value) -> object:
    f = domain.features[j]
    return f.values[int(value)] if f.kind == "cat" else (int(value) if f.kind == "int" else float(value))


def _values(domain, analysis) -> list:
    return [_show(domain, analysis.j, v) for v in analysis.values]


def _leaf_counterexamples(key: str, analysis, domain, kept: list) -> LeafCounterexamples:
    """The leaf's counterexamples: the first ones found and confirmed, and the total — on an integer grid every
    individual proven unfair (the unfair rate's count), else the partitions one was found in."""
    c = analysis.counts
    checked = "each shown one confirmed by the model's own prediction"
    if c.unit:
        total = c.unfair // c.unit
        about = ("individuals of the input domain whose decision changes with the attribute alone, found by the "
                 f"refinement (an unfair partition's lowest corner, or a search of an undecided one), {checked}; "
                 "the total counts every individual proven unfair")
    else:
        total = c.unfair_partitions + c.cex_partitions
        about = ("individuals of the input domain whose decision changes with the attribute alone, one per "
                 "partition proven unfair or holding one the search found, " + checked + "; the total counts those "
                 "partitions (with real-valued features each holds infinitely many individuals)")
    return LeafCounterexamples(key, domain.features[analysis.j].name, tuple(_values(domain, analysis)),
                               tuple(kept[:KEEP]), int(max(total, len(kept))), DOMAIN, about)


def _counterexample(model, domain, analysis, cex) -> Counterexample | None:
    """A counterexample as the analyst reads it — the individual's features decoded, and for each protected value
    the model's decision and score — once the model's own prediction confirms the decisions differ."""
    import pandas as pd

    from fairaudit.base.errors import ModelError

    j = analysis.j
    rows = []
    for v in analysis.values:
        point = list(cex.point)
        point[j] = v
        rows.append(domain.decode(point))
    frame = pd.DataFrame(rows)
    try:
        decisions = np.asarray(model.predict(frame)).astype(int)
        scores = [float(s) for s in np.asarray(model.score(frame), dtype=float)]
    except (ModelError, ValueError, KeyError, TypeError):  # a model that cannot read its own domain's rows:
        decisions = np.array(cex.decisions)                # the network's own outputs decide
        scores = None
    if len(set(decisions.tolist())) < 2:
        return None
    name = domain.features[j].name
    return Counterexample(tuple((k, v) for k, v in rows[0].items() if k != name),
                          tuple(int(d) for d in decisions), None if scores is None else tuple(scores))


# ------------------------------------------------------------------------------------------ conformance
def _toy_nnet(text: str, name: str):
    from fairaudit.models.nnet import NNetModel, parse_nnet

    return domain_inputs(NNetModel(parse_nnet(text, name=name), source=name))


def _net_text(sizes, mins, maxs, layers) -> str:
    from fairaudit.models.nnet import NNet, format_nnet

    n = sizes[0]
    return format_nnet(NNet([(np.array(W, float), np.array(b, float)) for W, b in layers], np.array(mins, float),
                            np.array(maxs, float), np.zeros(n + 1), np.ones(n + 1)))


def _example() -> str:
    """The notes' §B6.1 running example (exactly on its float64 weights: 25 of 30 individuals fair). Built when the
    cases are, not at import: it imports fairaudit.models (every command imports the engine modules)."""
    return _net_text([3, 2, 1], [1, 0, 0], [5, 1, 5], [([[2.0, 0.5, 1.2], [-0.2, 0.7, 0.4]], [0, 0]),
                                                      ([[0.2, -1.0]], [0])])


def _linear() -> str:
    """The notes' §B6.2 linear network (600 of 1000 individuals fair)."""
    return _net_text([3, 1, 1], [0, 0, 0], [99, 1, 9], [([[1.0, -40.0, 0.0]], [100.0]), ([[1.0]], [-130.5])])


def _long_net() -> str:
    rng = np.random.default_rng(5)
    sizes = [4, 8, 6, 1]
    layers = [(rng.normal(size=(b, a)).round(3), (rng.normal(size=b) * 0.5).round(3))
              for a, b in zip(sizes, sizes[1:])]
    return _net_text(sizes, [0, 0, 0, 0], [7, 1, 7, 7], layers)


def _truth(text: str, column: int) -> float:
    """The fair fraction by enumerating every individual of the grid with the model's own prediction (oracle)."""
    import itertools

    import pandas as pd

    from fairaudit.models.nnet import NNetModel, parse_nnet

    model = NNetModel(parse_nnet(text))
    net = model.net
    ranges = [range(int(lo), int(hi) + 1) for lo, hi in zip(net.mins, net.maxs)]
    ranges[column] = [int(net.mins[column])]
    pts = pd.DataFrame(list(itertools.product(*ranges)), columns=model.feature_names)
    decisions = []
    for v in range(int(net.mins[column]), int(net.maxs[column]) + 1):
        decisions.append(model.predict(pts.assign(**{f"x{column}": v})))
    decisions = np.array(decisions)
    return float((decisions == decisions[:1]).all(axis=0).mean())


def conformance_cases():
    """The notes' exact examples (the running example: 25/30 fair on its float64 weights; the linear network: 60% fair) and a
    random 4-8-6-1 network on a 4·2·8·8 grid refined a few partitions at a time (the long case), each against the
    fair fraction enumerated with the model's own prediction."""
    from fairaudit.core.cases import Case

    example, linear, long_net = _example(), _linear(), _long_net()
    return (
        Case("example_b61", "Fair[x1] >= 0.8", lambda: _toy_nnet(example, "example.nnet"),
             {"Fair[x1]": _truth(example, 1)}),
        Case("linear_b62", "Fair[x1] >= 0.65", lambda: _toy_nnet(linear, "linear.nnet"),
             {"Fair[x1]": 0.6}),
        Case("random_long", "Fair[x1] >= 0.5", lambda: _toy_nnet(long_net, "random.nnet"),
             {"Fair[x1]": _truth(long_net, 1)}, options={"batch_partitions": 2}, long=True),
    )


FairQuantEngine.conformance_cases = staticmethod(conformance_cases)
