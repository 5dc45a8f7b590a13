"""The ``justicia`` engine: group selection rates of a decision tree or a linear model over a modelled feature
distribution (after Justicia, Ghosh, Basu and Meel, AAAI 2021; the computation is ``fairaudit.engines.justicia.rates``).

The modelled population: the audited rows are split into *cells* — the value combinations of ALL the dataset's
categorical protected attributes (Justicia's compound groups; a numeric protected attribute such as German's age is a
feature like any other), and, for the leaves that read ``label``, of the label too (which gives equalized odds its
``Pr[X | A = a, Y = y]``). A condition on another column is not a cell: each cell is divided by that column's values
at their probability within the cell, every other feature keeping the cell's distribution
(``ProductDistribution.split``), so a leaf's value never depends on the rest of the specification:
``E[pred | sex == "F"]`` is the same alone, beside ``E[pred | x == "hi"]`` or as ``E[pred | sex == "F" and x in
{every value}]``.
Inside a cell every model feature is drawn **independently** from its empirical distribution in that cell
(``correlation`` on, the default: the paper's enumeration with group-conditional probabilities), or from its pooled
distribution over all audited rows (``correlation`` off: the paper's plain encoding and its learning mode, which
ignore how the features depend on the groups). A cell's share is its share of the audited rows. Every
``E[event | given]`` whose events read only those columns and ``pred`` is then a function of the cells' rates
Pr[pred | cell]:

* a tree: exact fractions (the sum over its favourable paths), guarantee "exact";
* a linear model: exact fractions when the score's distribution has few distinct partial sums (the exact dynamic
  program fits under ``EXACT_WORK``); otherwise sound bounds — every weight rounded down (a lower bound) and up (an
  upper bound) to a grid that halves every round (bounds nest), until every cell's bounds are within ``precision``
  or the time budget ends — guarantee "sound" (set per run by the batches).

Numeric features keep their observed values (no discretisation); missing values are encoded the way the model
encodes them. The findings list every compound group's rate with an estimation-error interval
(``bounds.justicia.estimation_radius``), DI, SP and the equalized-odds gaps; ``search=learn`` lists only the most
and least favoured group, found by branch and bound.
"""
from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Iterator

import numpy as np

from fairaudit.core.engine import Context, Engine, LeafBatch
from fairaudit.engines.justicia.options import OPTIONS, TITLE
from fairaudit.core.evaluate import LeafValue, compile_spec, enclose
from fairaudit.core.guarantee import Guarantee
from fairaudit.base.limits import Deadline, OutOfTime

_LABEL = "\x00label"  # the label's column in the cell frame (not a name a dataset can have)


class _Missing:
    """A missing categorical value: equal only to itself, so it encodes as all-zero indicators."""

    def __repr__(self):
        return "<missing>"

    def __lt__(self, other):
        return False


MISSING = _Missing()


def _spec_columns(spec) -> tuple[list[str], bool, list[str]]:
    """(data columns the leaves read, whether they read ``label``, reserved names they read other than pred)."""
    from fairaudit.spec.events import event_columns

    from fairaudit.spec.quantities import quantity_leaves

    averaged = {tn.id for tn in quantity_leaves(spec)}  # refused as such (``Engine.check``), not as conditions
    cols, label, other = [], False, []
    for tn in spec.leaves:
        if tn.kind != "expect" or tn.id in averaged:
            continue
        for ev in (tn.node.event, tn.node.given):
            if ev is None:
                continue
            for name in event_columns(ev, reserved=True):
                if name == "label":
                    label = True
                elif name == "score":
                    other.append(name)
                elif name != "pred" and name not in cols:
                    cols.append(name)
    return cols, label, other


def _binned(x, bins: int):
    """Equal-frequency bins over the distinct values (cut at their quantiles), each value replaced by its bin's
    mean (a float: the mean of the values in the bin, computed exactly then rounded once)."""
    import pandas as pd

    values = np.sort(x.unique())
    edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1], method="lower"))
    index = np.searchsorted(edges, x.to_numpy(), side="left")
    means = pd.Series(x.to_numpy()).groupby(index).mean()
    return pd.Series(means.reindex(index).to_numpy(), index=x.index)


CUT_SHORT = ("the time budget ran out before the rate of every cell was computed: those cells count as anywhere in "
             "[0, 1], so the intervals contain the exact rates")
EXACT_WORK = 10_000  # (partial score, value) pairs one cell's exact linear DP may combine before the grid takes over
MAX_ROUNDS = 40
MAX_GRID = 2 ** 22  # grid points of the score range a refinement round may use


def _protected(inputs) -> list[str]:
    """The categorical protected attributes of the dataset: Justicia's compound groups are their value combinations
    (a numeric protected attribute, e.g. German's age, is a feature like any other)."""
    schema = inputs.dataset.schema
    out = []
    for name in schema.protected:
        try:
            if schema.column(name).kind == "categorical":
                out.append(name)
        except Exception:  # noqa: BLE001 - a protected name that is not a column: nothing to group by
            continue
    return out


def _show(v) -> str:
    return "missing" if v is MISSING else str(v)


def _down(x: float) -> Fraction:
    return Fraction(x)


def _up(x: float) -> Fraction:
    return Fraction(x)


class _Job:
    """One modelled population: the cells (value combinations of ``columns``), the model over the variables, the
    feature distribution in every cell, and the current bounds on every cell's favourable rate."""

    def __init__(self, columns, form, dist, names, correlation=True, cells=None):
        self.columns, self.form, self.dist, self.names = columns, form, dist, names
        self.correlation = correlation
        dist_cells = dist.groups if cells is None else cells
        self.bounds = {a: (Fraction(0), Fraction(1)) for a in dist_cells}
        self.arrays = {}
        self.exact = set()

    def probs_of(self, a):
        return lambda name: self.dist.probs(a, name)

    def width(self) -> Fraction:
        return max((hi - lo for lo, hi in self.bounds.values()), default=Fraction(0))

    def marginal(self, columns, label_value=None):
        """``{value combination of columns: (lo, hi, share, [(cell, weight within)])}`` (a mixture over the cells
        that agree on ``columns``; with ``label_value``, only cells whose label is that value)."""
        idx = [self.columns.index(c) for c in columns]
        li = self.columns.index(_LABEL) if label_value is not None else None
        parts: dict = {}
        for a, w in self.dist.weight.items():
            if li is not None and a[li] != label_value:
                continue
            parts.setdefault(tuple(a[i] for i in idx), []).append((a, w))
        out = {}
        for g, cells in parts.items():
            total = sum((w for _, w in cells), Fraction(0))
            if not total:
                continue
            lo = sum((w * self.bounds[a][0] for a, w in cells), Fraction(0)) / total
            hi = sum((w * self.bounds[a][1] for a, w in cells), Fraction(0)) / total
            out[g] = (lo, hi, total, [(a, w / total) for a, w in cells])
        return out


class Justicia(Engine):
    name = "justicia"
    title = TITLE
    summary = ("the probability of the favourable decision in every compound group of the protected attributes for a "
               "decision tree (exact) or a linear model (exact, or sound bounds refined until they are close), with "
               "the features independent within each group (Justicia's enumeration)")
    unit = "rounds"
    leaf_kinds = frozenset({"expect"})
    requires = ("dataset", "model")
    options = OPTIONS
    evidence_hint = "one exact step cannot contradict itself: this is a bug in fairaudit, please report it"

    def check(self, spec, inputs) -> list[str]:
        reasons = super().check(spec, inputs)
        if spec is not None:
            _, _, other = _spec_columns(spec)
            if other:
                reasons.append("it computes the probability of the decision (pred), not of the model's score")
        model = getattr(inputs, "model", None)
        if model is not None and getattr(inputs, "pred", None) is None:
            kind = getattr(model, "kind", None)
            if kind not in ("tree", "logreg"):
                reasons.append("it needs a decision tree or a logistic regression model")
        if spec is not None and getattr(inputs, "dataset", None) is not None:
            schema = inputs.dataset.schema
            for col in _spec_columns(spec)[0]:
                try:
                    spec_col = schema.column(col)
                except Exception:  # noqa: BLE001 - an unknown column: the spec check says so
                    continue
                if spec_col.kind != "categorical":
                    reasons.append(f"the specification conditions on the numeric column {col!r}; this engine "
                                   "groups by categorical columns only")
        return reasons

    def scope(self, options, inputs) -> str:
        return "modelled"  # independent features per cell, fitted to the audited rows

    def guarantee(self, options, inputs, exact: bool | None = None) -> Guarantee:
        model = getattr(inputs, "model", None)
        if exact is None:
            exact = getattr(model, "kind", None) == "tree"
        dataset = getattr(inputs, "dataset", None)
        prot = _protected(inputs) if dataset is not None else []
        groups = f"the protected attributes ({', '.join(prot)})" if prot else "the protected attributes (none)"
        how = "as on the audited rows of that cell" if options.get("correlation", True) else \
            "as on all audited rows (the same in every cell)"
        assumes = (f"the audited rows are split into cells, the value combinations of {groups} (and of the label, "
                   f"for a leaf that reads it); within a cell the model's features are independent, each distributed "
                   f"{how} (the rates are about that distribution, not the rows themselves)")
        linear = getattr(model, "kind", None) not in (None, "tree")
        scope = "for the modelled feature distribution"
        if linear and int(options.get("multiplier", 0) or 0):
            scope += f" and the model with its weights rounded to integers (largest {int(options['multiplier'])})"
            assumes += "; the rates are those of the rounded model, not of the model itself"
        if linear and int(options.get("bins", 0) or 0):
            scope += f" with numeric features in {int(options['bins'])} bins"
            assumes += "; each numeric feature takes its bin's mean, not its own value"
        if exact:
            return Guarantee("exact", scope=scope, assumes=assumes)
        if not linear:  # a tree whose cells were not all computed: the time budget ran out first
            return Guarantee("sound", scope=scope, assumes=assumes, note=CUT_SHORT)
        return Guarantee("sound", scope=scope, assumes=assumes,
                         note="the linear model's exact score distribution is too large, so its weights are rounded "
                              "down and up to a grid: the intervals contain the exact rates")

    # ------------------------------------------------------------------------------------------ run
    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        correlation, bins, multiplier = bool(options["correlation"]), int(options["bins"]), int(options["multiplier"])
        precision = Fraction(float(options.get("precision", 5e-3)))
        learn = options.get("search", "enumerate") == "learn"
        prot = _protected(inputs)
        cols, uses_label, _ = _spec_columns(spec)
        schema = inputs.dataset.schema
        named_label = None  # the label column read by its name (``outcome == "yes"``): the label, not a feature
        if getattr(inputs, "labels", None) is not None and schema.label in cols:
            cols = [c for c in cols if c != schema.label]
            uses_label = True
            other = [v for v in inputs.dataset.frame[schema.label].dropna().unique() if v != schema.favourable]
            named_label = (schema.label, schema.favourable, other[0] if other else None)
        # the cells are the protected attributes' combinations (with the label, for the leaves that read it); a
        # column the spec conditions on is NOT a cell: each cell is split by its values at their probability in
        # the cell, the other features keeping the cell's distribution — so a leaf's value never depends on what
        # else the specification says
        extra = [c for c in cols if c not in prot]
        deadline = Deadline(ctx.expired)  # reading a deep tree's paths takes seconds
        has_labels = getattr(inputs, "labels", None) is not None
        try:
            jobs = {"spec": self._job(inputs, prot, correlation, bins, multiplier, split=extra, deadline=deadline)}
            if uses_label:
                jobs["spec_label"] = self._job(inputs, prot + [_LABEL], correlation, bins, multiplier, split=extra,
                                               deadline=deadline)
            if has_labels and not learn and not (uses_label and not extra):
                jobs["eo"] = self._job(inputs, prot + [_LABEL], correlation, bins, multiplier, deadline=deadline)
            if extra and prot:
                jobs["prot"] = self._job(inputs, prot, correlation, bins, multiplier, deadline=deadline)
        except OutOfTime:  # nothing computed: every leaf anywhere in [0, 1], and the driver ends the run
            yield self._nothing_yet(spec, options, inputs)
            return
        search = None
        if learn and prot:
            search = self._learn(prot, correlation, jobs)
        exact_guarantee = None
        limit = options.get("rounds")
        if limit == 0:  # no round: every leaf anywhere in [0, 1] (what a run cut in its first round reports)
            yield self._nothing_yet(spec, options, inputs, note="no refinement round was run (rounds 0): every "
                                    "cell counts as anywhere in [0, 1]")
            return
        rounds = self._refine(jobs, ctx, precision, limit)
        try:
            first = next(rounds)
        except OutOfTime:  # the first round was cut: nothing of it is shown (it would depend on the clock)
            yield self._nothing_yet(spec, options, inputs)
            return
        for step, final in itertools.chain([first], rounds):
            # a last round before the time budget ends the run is final (its findings are shown) but not finished
            batch = self._batch(spec, jobs["spec"], step, final and not ctx.timed_out(), jobs.get("spec_label"),
                                named_label)
            exact = all(len(j.exact) == len(j.bounds) for j in jobs.values())
            g = self.guarantee(options, inputs, exact=exact)
            if g != exact_guarantee:
                batch.guarantee, exact_guarantee = g, g
            if final and not ctx.expired():  # (at the time budget the run ends without its findings table)
                findings = self._findings(jobs, prot, search, has_labels)
                findings, said = self._compared_with_rows(findings, inputs, prot, correlation)
                batch.findings = findings
                batch.warnings = tuple(batch.warnings) + tuple(said)
                batch.info.update(self._info(jobs, search))
            yield batch

    def _compared_with_rows(self, findings, inputs, prot, correlation=True):
        """The findings with each group's rate on the audited rows beside the modelled one (notes, and warnings
        when they disagree: ``fairaudit.core.findings.modelling_gap``), and a note for every numeric protected
        attribute, which is a feature here, not a group."""
        from dataclasses import replace

        from fairaudit.core.findings import modelling_gap, observed_rates

        notes = list(findings.notes)
        numeric = [p for p in inputs.dataset.schema.protected if p not in prot]
        read = {c.name for c in inputs.model.encoding.columns} if hasattr(inputs.model, "encoding") else set()
        for name in numeric:
            role = "a feature of the model here" if name in read else "not read by the model"
            notes.append(f"{name}: a numeric protected attribute, {role}, not a group (the groups are the "
                         f"categorical protected attributes)")
        if not findings.groups:
            return replace(findings, notes=tuple(notes)), []
        frame, _ = self._frame(inputs)
        try:
            pred = inputs.model.predict(frame)
        except Exception:  # noqa: BLE001 — the comparison is a diagnostic, not part of the rates
            return replace(findings, notes=tuple(notes)), []
        why = ("the features are not independent within the groups as the model of the population assumes" if
               correlation else "the features are drawn from their distribution over all the rows "
               "(correlation off), not from the group's own")
        groups, gap_notes, warnings = modelling_gap(
            findings.groups, observed_rates(prot, frame, pred), "the modelled distribution",
            f"{why} (the dataset engine gives the rates on the rows themselves)")
        return replace(findings, groups=groups, notes=tuple(notes + gap_notes)), warnings

    @staticmethod
    def _frame(inputs):
        dataset = inputs.dataset
        positions = np.arange(len(dataset)) if inputs.positions is None else inputs.positions
        return dataset.frame.iloc[positions].reset_index(drop=True), positions

    def _nothing_yet(self, spec, options, inputs, note=CUT_SHORT) -> LeafBatch:
        """The batch of a run whose time budget ran out before any rate was computed: every leaf in [0, 1]."""
        leaves = {key: LeafValue(np.array([0.5]), np.array([0.0]), np.array([1.0]), 0.0, np.array([np.nan]))
                  for key in compile_spec(spec).leaf_keys}
        g = self.guarantee(options, inputs)
        return LeafBatch(np.array([1]), leaves, done=0, guarantee=Guarantee("sound", scope=g.scope, assumes=g.assumes,
                                                                            note=note), info={"rounds": 0})

    def _job(self, inputs, cell_cols, correlation, bins, multiplier, split=(), deadline=None) -> _Job:
        """The modelled population over the cells of ``cell_cols``; ``split``: columns whose values further divide
        every cell, at their probability within the cell (``ProductDistribution.split``). ``deadline``: asked while
        a tree's paths are read (``OutOfTime``)."""
        from fairaudit.engines.justicia import rates as J

        frame, positions = self._frame(inputs)
        model = inputs.model
        cell_cols = list(cell_cols)
        encoding = (model.as_tree() if model.kind == "tree" else model.as_linear()).encoding
        split = [c for c in split if c not in cell_cols]
        needed = {c.name for c in encoding.columns} | {c for c in cell_cols if c != _LABEL} | set(split)
        work = frame[[c for c in frame.columns if c in needed]].copy()
        if _LABEL in cell_cols:
            work[_LABEL] = np.asarray(inputs.labels)[positions]
        variables = []
        for c in encoding.columns:
            if c.kind == "numeric":
                x = work[c.name].astype(float)
                x = x.where(x.notna(), c.fill)
                if model.kind != "tree" and bins and x.nunique() > bins:
                    x = _binned(x, bins)
                work[c.name] = x
            else:
                work[c.name] = work[c.name].astype(object).where(work[c.name].notna(), MISSING)
        names = [c.name for c in encoding.columns]
        for name in list(cell_cols) + split:
            if name not in names and name != _LABEL:
                work[name] = work[name].astype(object).where(work[name].notna(), MISSING)
        for c in encoding.columns:
            values = tuple(sorted(work[c.name].unique(), key=lambda u: (u is MISSING, str(u) if c.kind !=
                                                                        "numeric" else float(u))))
            variables.append(J.Variable(c.name, values, c.name in cell_cols))
        for name in cell_cols:
            if name not in names:
                variables.append(J.Variable(name, tuple(work[name].unique()), True))
        for name in split:  # a column the model does not read: a variable too, to be split on
            if name not in names:
                variables.append(J.Variable(name, tuple(work[name].unique()), False))
        if not cell_cols:  # one cell: the whole population
            work["\x00all"] = 0
            cell_cols = ["\x00all"]
            variables.append(J.Variable("\x00all", (0,), True))
        dist = J.estimate(work, variables, cell_cols)
        if not correlation:
            dist = dist.pooled()
        if split:
            dist = dist.split(split)
            cell_cols = list(cell_cols) + split
            variables = list(dist.variables)
        form = J.tree_paths(model.as_tree(), variables, deadline=deadline) if model.kind == "tree" else \
            J.linear_score(model.as_linear(), variables)
        if multiplier and isinstance(form, J.LinearScore):
            form = form.quantised(multiplier)
        return _Job(cell_cols, form, dist, [v.name for v in variables if v.name in names], correlation)

    @staticmethod
    def _refine(jobs, ctx, precision, limit=None) -> Iterator[tuple[int, bool]]:
        """Exact rates where they fit (round 1), then rounds of sound grid bounds (the grid halves each round) until
        every cell's bounds are within ``precision``, ``limit`` rounds are done, the time is up or the grid is fine
        enough. Yields (round, final). What a round computes never depends on the clock: a round the deadline cuts is
        dropped (the first one raises ``OutOfTime``), one that would not end before it is not started
        (``Context.give_up``), so ``rounds=N`` reproduces the bounds of a run cut after N rounds."""
        from fairaudit.engines.justicia import rates as J

        linear = []
        fits = True
        deadline = Deadline(ctx.expired)
        for job in jobs.values():
            for a in job.bounds:
                if isinstance(job.form, J.Paths):
                    # a deep tree's exact rate takes a second a cell: ``OutOfTime`` at the deadline
                    r = J.paths_rate(job.form, job.probs_of(a), deadline=deadline)
                elif fits:
                    try:
                        r = J.linear_rate(job.form, job.probs_of(a), job.names, max_work=EXACT_WORK)
                    except J.TooManyStates:
                        fits = False  # the other cells have the same weights: do not try them either
                        linear.append((job, a))
                        continue
                else:
                    linear.append((job, a))
                    continue
                job.bounds[a] = (r, r)
                job.exact.add(a)
        if not linear:
            yield 1, True
            return
        import time

        forms = [j.form for j in {id(j): j for j, _ in linear}.values()]
        step = min(J.first_step(f) for f in forms)
        span = max(sum((max(ws) - min(ws) for ws in f.weights.values() if ws), Fraction(0)) for f in forms)
        for rnd in range(1, MAX_ROUNDS + 1):
            started = time.perf_counter()
            for job, a in linear:
                lo, hi = job.bounds[a]
                if ctx.expired():  # the round is cut: dropped (its bounds would depend on the clock)
                    if rnd == 1:
                        raise OutOfTime()
                    return
                if hi - lo <= precision:
                    continue
                if a not in job.arrays:
                    job.arrays[a] = J.score_arrays(job.form, job.probs_of(a), job.names)
                new_lo, new_hi = J.linear_bounds(job.form, job.probs_of(a), job.names, step, job.arrays[a])
                job.bounds[a] = (max(lo, _down(new_lo)), min(hi, _up(new_hi)))
            done = all(job.bounds[a][1] - job.bounds[a][0] <= precision for job, a in linear)
            left = ctx.remaining()
            # a round costs about four times the last one (the arrays and the kernels both double): do not start
            # one that cannot end before the time budget (the run is then cut by it, after this round)
            if left is not None and 4 * (time.perf_counter() - started) > left:
                ctx.give_up()
            # the next grid's score arrays would hold more than MAX_GRID points: stop refining (memory)
            huge = span / (step / 2) > MAX_GRID
            final = done or huge or ctx.timed_out() or rnd == MAX_ROUNDS or (limit is not None and rnd >= limit)
            yield rnd, final
            if final:
                return
            step /= 2

    # ------------------------------------------------------------------------------------------ leaves
    @staticmethod
    def _batch(spec, job: _Job, step: int, final: bool, label_job: _Job | None = None,
               named_label: tuple | None = None) -> LeafBatch:
        """Every leaf's value from the cells of ``job`` (``label_job``, whose cells include the label, for the
        leaves that read ``label`` — or the label column by its name: ``named_label`` = (column, favourable value,
        the other value))."""
        import pandas as pd

        from fairaudit.spec import evaluate_event
        from fairaudit.spec.events import event_columns

        def cell_frame(j):
            columns = j.columns
            keys = list(j.bounds)
            # two rows per cell: the decision favourable (mass share × rate) and not (share × (1 − rate))
            records = [dict(zip(columns, a)) for a in keys for _ in (1, 0)]
            frame = pd.DataFrame(records, columns=columns) if records else pd.DataFrame()
            pred = np.array([p for _ in keys for p in (1, 0)], dtype=np.int8)
            label = frame[_LABEL].to_numpy() if _LABEL in columns else None
            cols = [c for c in columns if c != _LABEL]
            view = frame[cols] if cols else frame
            if label is not None and named_label is not None:
                name, yes, no = named_label
                view = view.assign(**{name: np.where(label == 1, yes, no)})
            return keys, view, pred, label

        views = {False: cell_frame(job)}
        if label_job is not None:
            views[True] = cell_frame(label_job)
        cs = compile_spec(spec)
        leaves, warnings = {}, []
        for key in cs.leaf_keys:
            node = cs.leaf_node[key].node
            reads_label = any(bool({"label", named_label[0] if named_label else "label"} &
                                   set(event_columns(e, reserved=True))) for e in (node.event, node.given)
                              if e is not None)
            keys, view, pred, label = views[reads_label and label_job is not None]
            ev = np.asarray(evaluate_event(node.event, view, pred=pred, label=label), dtype=bool)
            given = np.ones(len(pred), dtype=bool) if node.given is None else np.asarray(
                evaluate_event(node.given, view, pred=pred, label=label), dtype=bool)
            value = _ratio_bounds(keys, label_job if reads_label and label_job is not None else job, ev, given)
            if value is None:
                warnings.append(f"{key}: its condition has probability 0 under the modelled distribution, so it "
                                "has no value (shown as [0, 1]; comparisons that need it stay undecided)")
                leaves[key] = LeafValue(np.array([np.nan]), np.array([0.0]), np.array([1.0]), 0.0,
                                        np.array([0.0]), exact=[None])
                continue
            lo, hi = value
            if lo == hi:
                low, high = enclose(lo)
                leaves[key] = LeafValue(np.array([float(lo)]), np.array([low]), np.array([high]), 0.0,
                                        np.array([np.nan]), exact=[lo])
            else:
                low, high = enclose(lo)[0], enclose(hi)[1]
                leaves[key] = LeafValue(np.array([(low + high) / 2]), np.array([low]), np.array([high]), 0.0,
                                        np.array([np.nan]))
        info = {"groups": {" & ".join(map(_show, a)): float(sum(job.bounds[a]) / 2) for a in job.bounds},
                "rounds": step}
        return LeafBatch(np.array([step]), leaves, done=step, total=step if final else None,
                         warnings=tuple(warnings), info=info)

    # ------------------------------------------------------------------------------------------ findings
    def _learn(self, prot, correlation, jobs) -> dict:
        """Learning mode: the most and least favoured compound group. A tree: Justicia's branch and bound over the
        protected attributes (exact; ``correlation`` off = the ER-SSAT semantics, every group with the pooled
        feature distribution). A linear model: with pooled features the rate only grows with the protected part
        of the score, so the extremes are the groups maximising / minimising it; with group-conditional features
        every group is a candidate. The candidates' rates are refined with the other cells."""
        from fairaudit.engines.justicia import rates as J

        key = "prot" if "prot" in jobs else "spec"
        base = jobs[key]
        dist, form = base.dist, base.form
        if isinstance(form, J.Paths):
            most = J.most_favoured(form, dist, shared=not correlation)
            least = J.most_favoured(form, dist, least=True, shared=not correlation)
            return {"most": most.group, "least": least.group, "explored": most.explored + least.explored,
                    "job": key, "groups": len(dist.groups)}
        groups = sorted(dist.groups, key=lambda a: tuple(map(str, a)))
        if not correlation:
            def part(a):
                return sum((form.weights[n][dist.variable(n).values.index(a[i])]
                            for i, n in enumerate(dist.protected) if n in form.weights), Fraction(0))
            candidates = list(dict.fromkeys([max(groups, key=part), min(groups, key=part)]))
        else:  # every group is a candidate: the enumeration's own cells
            return {"most": None, "least": None, "explored": len(groups), "job": "learn", "groups": len(groups),
                    "cells": key}
        jobs["learn"] = _Job(prot, form, dist, base.names, correlation, cells=candidates)
        return {"most": None, "least": None, "explored": len(candidates), "job": "learn", "groups": len(groups)}

    @staticmethod
    def _sizes(job: _Job) -> list[int]:
        """Per feature the classifier reads, how many classes of values it tells apart (a tree: the values no
        test separates form one class; a linear model: the values of equal weight) — the K of the error bound:
        the rate depends on a feature's distribution only through those classes."""
        from fairaudit.engines.justicia import rates as J

        prot = set(job.dist.protected)
        if isinstance(job.form, J.Paths):
            sets: dict = {}
            for conds, _ in job.form.paths:
                for name, allowed in conds.items():
                    sets.setdefault(name, set()).add(allowed)
            sizes = []
            for name, family in sets.items():
                if name in prot:
                    continue
                n = len(job.dist.variable(name).values)
                sizes.append(len({tuple(i in s for s in family) for i in range(n)}))
            return sizes
        return [len(set(ws)) for name, ws in job.form.weights.items() if name not in prot]

    def _findings(self, jobs, prot, search, has_labels):
        from fairaudit.engines.justicia import rates as J
        from fairaudit.core.findings import Findings, GroupRate, Metric, disparities

        delta = 0.05
        spec = jobs.get("prot", jobs["spec"])  # the protected attributes' cells, not split by the spec's columns
        sizes = self._sizes(spec)
        total_rows = sum(spec.dist.counts.values())

        def radius(cells) -> float:
            # every cell's ε at δ / (its group's cells), union bound; the group's rate is the share-weighted mixture
            # of its cells', so it moves by at most Σ share · ε (the shares taken as known)
            d = delta / max(1, len(cells))
            return sum(float(w) * J.estimation_radius(
                sizes, spec.dist.counts.get(a, 0) if spec.correlation else total_rows, d) for a, w in cells)

        def group_rate(g, lo, hi, share, cells):
            eps = radius(cells)
            low, high = (float(lo), float(lo)) if lo == hi else (enclose(lo)[0], enclose(hi)[1])
            return GroupRate(tuple((c, _show(v)) for c, v in zip(prot, g)), low, high, float(share),
                             max(0.0, low - eps), min(1.0, high + eps))

        how = "each distributed as on the audited rows of the cell" if spec.correlation else \
            "each distributed as on all the audited rows, the same in every cell"
        what = ("Pr[pred = 1 | compound group] under the modelled distribution (the model's features independent "
                f"within each cell, {how})")
        if all(len(j.exact) == len(j.bounds) for j in jobs.values()):
            what += ", computed exactly"
        else:
            what += ", as sound bounds (the weights rounded down and up to a grid)"
        ci_about = (f"where each group's rate may lie, with probability ≥ {1 - delta:g} per group, once the error "
                    f"of estimating the feature distributions from the audited rows is counted (a small group's "
                    f"interval is wide: few rows say little); it does not count the error of the independence "
                    f"model itself, which the column 'on the audited rows' shows")
        ci_method = (f"each group's interval is its modelled rate ± ε, ε = Σ over the features v of the group's cells "
                     f"of the total-variation bound of v at δ/m (δ = {delta:g}, m cells): the smaller of Hoeffding "
                     f"over the K classes of values the model tells apart and Weissman's L1 inequality, "
                     f"sqrt(ln((2^K − 2)·m/δ) / (2k)), with k the cell's rows. The second interval of disparate "
                     f"impact and statistical parity is computed from the groups' (they hold together with "
                     f"probability ≥ 1 − {delta:g} × the number of groups)")
        notes = []
        if not prot:
            return Findings(notes=("the dataset declares no categorical protected attribute: no compound groups",))
        marg = spec.marginal(prot)
        if search is not None:
            if search["job"] == "learn":
                job = jobs[search.get("cells", "learn")]
                mid = {a: sum(job.bounds[a]) / 2 for a in job.bounds}
                search["most"] = max(mid, key=lambda a: mid[a])
                search["least"] = min(mid, key=lambda a: mid[a])
                rates = {a: job.bounds[a] for a in job.bounds}
            else:
                rates = dict(jobs[search["job"]].bounds)
            chosen = list(dict.fromkeys([search["most"], search["least"]]))
            groups = tuple(group_rate(g, *rates[g], spec.dist.weight[g], [(g, Fraction(1))]) for g in chosen)
            notes.append(f"learning mode: {search['explored']} partial assignments of the protected attributes "
                         f"expanded to find the most and least favoured of {search['groups']} compound groups")
            metrics = disparities(groups, "between the most and the least favoured compound group")
            return Findings(groups=groups, groups_about=what, ci_about=ci_about, ci_method=ci_method, metrics=metrics,
                            complete_groups=False, notes=tuple(notes))
        groups = tuple(group_rate(g, lo, hi, share, cells) for g, (lo, hi, share, cells) in
                       sorted(marg.items(), key=lambda t: tuple(map(_show, t[0]))))
        about = "over the compound groups of the protected attributes"
        metrics = list(disparities(groups, about))
        ci_groups = [GroupRate(g.group, g.ci_lo, g.ci_hi) for g in groups]
        metrics = [Metric(m.name, m.lo, m.hi, m.about, c.lo, c.hi)
                   for m, c in zip(metrics, disparities(ci_groups, about))]
        eo = jobs.get("eo") or jobs.get("spec_label") or (spec if _LABEL in spec.columns else None)
        if has_labels and eo is not None:
            for y, name, what_y in ((1, "equalized odds: true positive rate gap", "label = 1"),
                                    (0, "equalized odds: false positive rate gap", "label = 0")):
                m = eo.marginal(prot, label_value=y)
                if len(m) < 2:
                    continue
                gr = [GroupRate((), float(lo), float(hi)) for lo, hi, _, _ in m.values()]
                sp = disparities(gr)[1]
                metrics.append(Metric(name, sp.lo, sp.hi, f"highest minus lowest Pr[pred = 1 | group, {what_y}] "
                                      f"{about} (cells of the protected attributes and the label)"))
        return Findings(groups=groups, groups_about=what, ci_about=ci_about, ci_method=ci_method, metrics=tuple(metrics),
                        complete_groups=True, notes=tuple(notes))

    @staticmethod
    def _info(jobs, search) -> dict:
        gap = max(j.width() for j in jobs.values())
        exact = all(len(j.exact) == len(j.bounds) for j in jobs.values())
        info = {"computation": "exact" if exact else "sound bounds", "largest gap": float(gap),
                "cells": len(jobs["spec"].bounds)}
        if search is not None:
            info["nodes expanded"] = search["explored"]
        return info

    def methods(self, options) -> list[tuple[str, list[str]]]:
        return [("The guarantee: over the modelled feature distribution", [
            "The justicia engine follows Justicia (Ghosh, Basu and Meel, AAAI 2021). The audited rows are split into "
            "cells: the value combinations of the dataset's protected attributes (its compound groups), and of the "
            "label for a leaf that reads it; a condition on another column reads the part of each cell where it "
            "holds, at its probability there, so a leaf's value does not depend on the rest of the specification. "
            "Within a cell each "
            "feature of the model is drawn on its own from its distribution " +
            ("in that cell" if options.get("correlation", True) else "over all audited rows") + ". The probability "
            "of the favourable decision in each cell is then computed: for a decision tree, exactly, as the sum "
            "over its favourable root-to-leaf paths of the product of each feature's probability of satisfying the "
            "path's tests; for a linear model, from the distribution of its score, built feature by feature — "
            "exactly when the distinct partial scores stay few, otherwise with every weight rounded down (a lower "
            "bound) and up (an upper bound) to a grid that halves every round until the bounds are within "
            f"{options.get('precision', 5e-3):g}.",
            "Exact values are single points (δ = 0); bounds are sound. The values describe the modelled "
            "distribution, in which features are independent within a cell: where the features depend on each "
            "other, they differ from the rates on the rows themselves.",
        ])]


def _ratio_bounds(keys, job: _Job, ev, given):
    """``[min, max]`` of ``Σ N_a(r_a) / Σ D_a(r_a)`` over every cell rate ``r_a`` in its bounds (N, D linear in
    ``r_a``: the cell's favourable row has mass share·r, the other share·(1 − r)); None when the condition has
    probability 0. The ratio of two separable linear functions over a box: Dinkelbach's iteration (choose each
    ``r_a`` at the end minimising ``N_a − t·D_a``, recompute ``t``) reaches the exact minimum at a vertex."""
    terms = []
    for i, a in enumerate(keys):
        w = job.dist.weight[a]
        e1, e0 = bool(ev[2 * i] and given[2 * i]), bool(ev[2 * i + 1] and given[2 * i + 1])
        g1, g0 = bool(given[2 * i]), bool(given[2 * i + 1])
        terms.append((w, e1, e0, g1, g0, job.bounds[a]))

    def nd(choice):
        n = d = Fraction(0)
        for (w, e1, e0, g1, g0, _), r in zip(terms, choice):
            n += w * (e1 * r + e0 * (1 - r))
            d += w * (g1 * r + g0 * (1 - r))
        return n, d

    if all(lo == hi for *_, (lo, hi) in terms):
        n, d = nd([lo for *_, (lo, _) in terms])
        return None if not d else (n / d, n / d)
    d_min = sum((min(w * (g1 * r + g0 * (1 - r)) for r in bd) for w, _, _, g1, g0, bd in terms), Fraction(0))
    if d_min <= 0:
        d_max = sum((max(w * (g1 * r + g0 * (1 - r)) for r in bd) for w, _, _, g1, g0, bd in terms), Fraction(0))
        return None if not d_max else (Fraction(0), Fraction(1))

    def extreme(sign):
        choice = [bd[0] for *_, bd in terms]
        n, d = nd(choice)
        t = n / d
        while True:
            choice = [min(bd, key=lambda r: sign * (w * (e1 * r + e0 * (1 - r)) - t * w * (g1 * r + g0 * (1 - r))))
                      for w, e1, e0, g1, g0, bd in terms]
            n, d = nd(choice)
            t2 = n / d
            if sign * t2 >= sign * t:
                return t
            t = t2

    return extreme(1), extreme(-1)


# ------------------------------------------------------------------------------------------ conformance

def product_oracle(inputs, given_col: str | None = None, value=None, correlation: bool = True, *,
                   given: dict | None = None) -> float:
    """An independent oracle for the rate of ONE cell: every combination of the model's feature values (the full
    product space), weighted by the product of their empirical frequencies on the audited rows matching ``given``
    (``{column: value}``; or ``given_col == value``) — over all audited rows with ``correlation`` off, the given
    columns then fixed to their values — decided by the model's own ``predict``: no paths, no dynamic program."""
    import itertools

    import pandas as pd

    given = dict(given or {})
    if given_col is not None:
        given[given_col] = value
    frame, _ = Justicia._frame(inputs)
    model = inputs.model
    mask = np.ones(len(frame), dtype=bool)
    for col, v in given.items():
        mask &= (frame[col] == v).to_numpy()
    sub = frame[mask]
    names = [c.name for c in (model.as_tree() if model.kind == "tree" else model.as_linear()).encoding.columns]
    source = {}
    for n in names:
        if n in given:
            source[n] = pd.Series([1.0], index=[given[n]])
        else:
            source[n] = (sub if correlation else frame)[n].value_counts(normalize=True)
    combos = list(itertools.product(*(list(source[n].items()) for n in names)))
    grid = pd.DataFrame([[u for u, _ in c] for c in combos], columns=names)
    weights = np.array([np.prod([p for _, p in c]) for c in combos])
    return float((weights * model.predict(grid)).sum() / weights.sum())


def cell_oracle(inputs, condition: dict, correlation: bool = True) -> float:
    """``E[pred | condition]`` in the modelled population: the cells are the value combinations of the protected
    attributes and the condition's columns; the matching cells' :func:`product_oracle` rates weighted by their
    shares of the audited rows."""
    frame, _ = Justicia._frame(inputs)
    cols = list(dict.fromkeys(_protected(inputs) + list(condition)))
    mask = np.ones(len(frame), dtype=bool)
    for col, v in condition.items():
        mask &= (frame[col] == v).to_numpy()
    shares = frame[mask].groupby(cols, sort=False).size()
    total = shares.sum()
    out = 0.0
    for key, n in shares.items():
        key = key if isinstance(key, tuple) else (key,)
        out += n / total * product_oracle(inputs, correlation=correlation, given=dict(zip(cols, key)))
    return out


def _mixture(inputs, col: str) -> float:
    """``E[pred]``: the mixture of every cell's oracle."""
    return cell_oracle(inputs, {})


def _model_inputs(kind: str, rows: int = 2000, where: str | None = None):
    from fairaudit.core.inputs import Inputs
    from fairaudit.core.cases import toy_dataset

    return Inputs.build(toy_dataset(rows), model=kind, where=where)


def conformance_cases():
    """The toy dataset of ``fairaudit.testing`` with a fitted tree and a fitted logistic regression; the oracle is
    :func:`cell_oracle` (a brute force over the whole feature space of every cell, with the model's own
    predictions)."""
    from fairaudit.core.cases import Case

    cases = []
    for kind in ("tree", "logreg"):
        inputs = _model_inputs(kind)
        f, m = cell_oracle(inputs, {"sex": "F"}), cell_oracle(inputs, {"sex": "M"})
        a = cell_oracle(inputs, {"grp": "a"})
        cases.append(Case(f"{kind}_gap", 'E[pred | sex == "F"] - E[pred | sex == "M"] < 0.05',
                          lambda kind=kind: _model_inputs(kind),
                          {'E[pred | sex == "F"]': f, 'E[pred | sex == "M"]': m}))
        cases.append(Case(f"{kind}_ratio", 'E[pred | grp == "a"] >= 0.2 and E[pred] <= 1',
                          lambda kind=kind: _model_inputs(kind),
                          {'E[pred | grp == "a"]': a, "E[pred]": _mixture(inputs, "grp")}))
    inputs = _model_inputs("tree", 20000)
    cases.append(Case("long", 'E[pred | sex == "F"] - E[pred | sex == "M"] < 0.05',
                      lambda: _model_inputs("tree", 20000),
                      {'E[pred | sex == "F"]': cell_oracle(inputs, {"sex": "F"}),
                       'E[pred | sex == "M"]': cell_oracle(inputs, {"sex": "M"})}, long=True))
    return tuple(cases)


Justicia.conformance_cases = staticmethod(conformance_cases)
