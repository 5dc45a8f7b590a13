"""The ``justicia`` engine: exact group selection rates of a decision tree or a linear model over a modelled feature
distribution (after Justicia, Ghosh, Basu and Meel, AAAI 2021; the computation is ``fairaudit.bounds.justicia``).

The modelled population: the audited rows are split into *cells* — the value combinations of the columns the
specification conditions on (its compound groups; with ``label`` in a leaf, the label too, which gives equalized
odds its ``Pr[X | A = a, Y = y]``). Inside a cell every model feature is drawn **independently** from its
empirical distribution in that cell (``correlation`` on, the default: the paper's enumeration with group-conditional
probabilities), or from its pooled distribution over all audited rows (``correlation`` off: the paper's plain
encoding and its learning mode, which ignore how the features depend on the groups). A cell's share is its share
of the audited rows. Every ``E[event | given]`` whose events read only those columns and ``pred`` is then an exact
fraction: Σ over cells of share × Pr[pred | cell] (the tree's paths or the linear score's distribution), with no
sampling. Numeric features keep their observed values (no discretisation); missing values are encoded the way
the model encodes them.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterator

import numpy as np

from fairaudit.engines.base import Context, Engine, LeafBatch, Option
from fairaudit.evaluate import LeafValue, compile_spec, enclose
from fairaudit.guarantee import Guarantee

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

    cols, label, other = [], False, []
    for tn in spec.leaves:
        if tn.kind != "expect":
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


class Justicia(Engine):
    name = "justicia"
    title = "Justicia (exact group rates over a modelled feature distribution)"
    summary = ("the exact probability of the favourable decision in every compound group for a decision tree or a "
               "linear model, with the features independent within each group (Justicia's enumeration)")
    unit = "steps"
    leaf_kinds = frozenset({"expect"})
    requires = ("dataset", "model")
    options = (
        Option("correlation", bool, True, "draw each feature from its distribution within the group (true: the "
               "dependence between the groups and the features is kept) or from its distribution over all audited "
               "rows (false: Justicia's plain and learning encodings, under which a model that does not read the "
               "group columns is always fair)", header=True, label="Group-conditional features"),
        Option("bins", int, 0, "linear models only: each numeric feature is discretised into at most this many "
               "equal-frequency bins, each value replaced by its bin's mean (Justicia's discretisation; the exact "
               "score distribution over every observed value grows too fast); 0: keep every observed value",
               min=0, label="Bins per numeric feature (linear)", advanced=True),
        Option("multiplier", int, 0, "linear models only: round the weights to integers, the largest |weight| or "
               "|bias| becoming this multiplier (Justicia uses 30); the rates are then exact for the rounded model. "
               "0: exact weights", min=0, label="Weight rounding (linear)", advanced=True),
    )
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

    def guarantee(self, options, inputs) -> Guarantee:
        how = "within each group of the specification" if options.get("correlation", True) else \
            "with the same distribution in every group"
        return Guarantee("exact", scope="for the modelled feature distribution",
                         assumes=f"the model's features are independent, each distributed as on the audited rows "
                                 f"{how} (the rates are about that distribution, not the rows themselves)")

    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        cells, rates = self._rates(spec, inputs, bool(options["correlation"]), int(options["bins"]),
                                   int(options["multiplier"]))
        return self._batches(spec, cells, rates)

    # ------------------------------------------------------------------------------------------ computation
    @staticmethod
    def _frame(inputs):
        dataset = inputs.dataset
        positions = np.arange(len(dataset)) if inputs.positions is None else inputs.positions
        return dataset.frame.iloc[positions].reset_index(drop=True), positions

    def _rates(self, spec, inputs, correlation: bool, bins: int = 0, multiplier: int = 0):
        from fairaudit.bounds import justicia as J

        frame, positions = self._frame(inputs)
        model = inputs.model
        cols, uses_label, _ = _spec_columns(spec)
        cell_cols = list(cols) + ([_LABEL] if uses_label else [])
        encoding = (model.as_tree() if model.kind == "tree" else model.as_linear()).encoding
        work = frame.copy()
        if uses_label:
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
        for name in cell_cols:
            if name not in [c.name for c in encoding.columns]:
                work[name] = work[name].astype(object).where(work[name].notna(), MISSING)
        for c in encoding.columns:
            values = tuple(sorted(work[c.name].unique(), key=lambda u: (u is MISSING, str(u) if c.kind !=
                                                                        "numeric" else float(u))))
            variables.append(J.Variable(c.name, values, c.name in cell_cols))
        for name in cell_cols:
            if name not in [v.name for v in variables]:
                variables.append(J.Variable(name, tuple(work[name].unique()), True))
        if not cell_cols:  # one cell: the whole population
            work["\x00all"] = 0
            cell_cols = ["\x00all"]
            variables.append(J.Variable("\x00all", (0,), True))
        dist = J.estimate(work, variables, cell_cols)
        if not correlation:
            dist = dist.pooled()
        form = J.tree_paths(model.as_tree(), variables) if model.kind == "tree" else \
            J.linear_score(model.as_linear(), variables)
        if multiplier and isinstance(form, J.LinearScore):
            form = form.quantised(multiplier)
        try:
            rates = J.group_rates(form, dist)
        except J.TooManyStates as err:
            from fairaudit.errors import FairauditError

            raise FairauditError(f"justicia: {err} (options bins, multiplier)") from None
        cells = {"columns": cell_cols, "weight": dist.weight, "label": uses_label}
        return cells, rates

    @staticmethod
    def _batches(spec, cells, rates) -> Iterator[LeafBatch]:
        import pandas as pd

        from fairaudit.spec import evaluate_event

        cols = [c for c in cells["columns"] if c != _LABEL]
        keys = list(rates)
        # two rows per cell: the decision favourable (mass share × rate) and not (share × (1 − rate))
        records = [dict(zip(cells["columns"], a)) for a in keys for _ in (1, 0)]
        frame = pd.DataFrame(records, columns=cells["columns"]) if records else pd.DataFrame()
        pred = np.array([p for _ in keys for p in (1, 0)], dtype=np.int8)
        mass = [m for a in keys for m in (cells["weight"][a] * rates[a], cells["weight"][a] * (1 - rates[a]))]
        label = frame[_LABEL].to_numpy() if cells["label"] else None
        cs = compile_spec(spec)
        leaves, warnings = {}, []
        for key in cs.leaf_keys:
            node = cs.leaf_node[key].node
            ev = np.asarray(evaluate_event(node.event, frame[cols] if cols else frame, pred=pred, label=label),
                            dtype=bool)
            given = np.ones(len(pred), dtype=bool) if node.given is None else np.asarray(
                evaluate_event(node.given, frame[cols] if cols else frame, pred=pred, label=label), dtype=bool)
            den = sum((m for m, g in zip(mass, given) if g), Fraction(0))
            if den:
                value = sum((m for m, e, g in zip(mass, ev, given) if e and g), Fraction(0)) / den
                low, high = enclose(value)
                leaves[key] = LeafValue(np.array([float(value)]), np.array([low]), np.array([high]), 0.0,
                                        np.array([1.0]), exact=[value])
            else:
                warnings.append(f"{key}: its condition has probability 0 under the modelled distribution, so it "
                                "has no value (shown as [0, 1]; comparisons that need it stay undecided)")
                leaves[key] = LeafValue(np.array([np.nan]), np.array([0.0]), np.array([1.0]), 0.0,
                                        np.array([0.0]), exact=[None])
        info = {"groups": {" & ".join(map(str, a)): float(r) for a, r in rates.items()}}
        yield LeafBatch(np.array([1]), leaves, done=1, total=1, warnings=tuple(warnings), info=info)

    def methods(self, options) -> list[tuple[str, list[str]]]:
        return [("The guarantee: exact over the modelled feature distribution", [
            "The justicia engine follows Justicia (Ghosh, Basu and Meel, AAAI 2021). The audited rows are split into "
            "the groups the specification conditions on; within a group each feature of the model is drawn on its "
            "own from its distribution " + ("in that group" if options.get("correlation", True) else
                                            "over all audited rows") + ". The probability of the favourable "
            "decision in each group is then computed exactly: for a decision tree, the sum over its favourable "
            "root-to-leaf paths of the product of each feature's probability of satisfying the path's tests; for "
            "a linear model, the distribution of its score, built feature by feature.",
            "Each interval is a single point (δ = 0). The values describe the modelled distribution, in which "
            "features are independent within a group: where the features depend on each other, they differ from "
            "the rates on the rows themselves.",
        ])]


# ------------------------------------------------------------------------------------------ conformance

def product_oracle(inputs, given_col: str | None, value=None, correlation: bool = True) -> float:
    """An independent oracle for ``E[pred | given_col == value]``: every combination of the model's feature values
    (the full product space), weighted by the product of their empirical frequencies in the group (or over all
    rows), decided by the model's own ``predict`` — no paths, no dynamic program."""
    import itertools

    frame, _ = Justicia._frame(inputs)
    model = inputs.model
    sub = frame if given_col is None else frame[frame[given_col] == value]
    names = [c.name for c in (model.as_tree() if model.kind == "tree" else model.as_linear()).encoding.columns]
    source = {n: (sub if correlation or n == given_col else frame)[n].value_counts(normalize=True) for n in names}
    if given_col in source:
        source[given_col] = source[given_col][source[given_col].index == value] / 1.0
    combos = list(itertools.product(*(list(source[n].items()) for n in names)))
    import pandas as pd

    grid = pd.DataFrame([[u for u, _ in c] for c in combos], columns=names)
    weights = np.array([np.prod([p for _, p in c]) for c in combos])
    return float((weights * model.predict(grid)).sum() / weights.sum())


def _mixture(inputs, col: str) -> float:
    """``E[pred]`` when the specification's cells are the values of ``col``: the cells' oracles weighted by their
    shares of the audited rows (the modelled population is a mixture over the cells)."""
    frame, _ = Justicia._frame(inputs)
    shares = frame[col].value_counts(normalize=True)
    return float(sum(p * product_oracle(inputs, col, v) for v, p in shares.items()))


def _model_inputs(kind: str, rows: int = 2000, where: str | None = None):
    from fairaudit.inputs import Inputs
    from fairaudit.testing import toy_dataset

    return Inputs.build(toy_dataset(rows), model=kind, where=where)


def conformance_cases():
    """The toy dataset of ``fairaudit.testing`` with a fitted tree and a fitted logistic regression; the oracle is
    :func:`product_oracle` (a brute force over the whole feature space, with the model's own predictions)."""
    from fairaudit.testing import Case

    cases = []
    for kind in ("tree", "logreg"):
        inputs = _model_inputs(kind)
        f, m = product_oracle(inputs, "sex", "F"), product_oracle(inputs, "sex", "M")
        a = product_oracle(inputs, "grp", "a")
        cases.append(Case(f"{kind}_gap", 'E[pred | sex == "F"] - E[pred | sex == "M"] < 0.05',
                          lambda kind=kind: _model_inputs(kind),
                          {'E[pred | sex == "F"]': f, 'E[pred | sex == "M"]': m}))
        cases.append(Case(f"{kind}_ratio", 'E[pred | grp == "a"] >= 0.2 and E[pred] <= 1',
                          lambda kind=kind: _model_inputs(kind),
                          {'E[pred | grp == "a"]': a, "E[pred]": _mixture(inputs, "grp")}))
    inputs = _model_inputs("tree", 20000)
    cases.append(Case("long", 'E[pred | sex == "F"] - E[pred | sex == "M"] < 0.05',
                      lambda: _model_inputs("tree", 20000),
                      {'E[pred | sex == "F"]': product_oracle(inputs, "sex", "F"),
                       'E[pred | sex == "M"]': product_oracle(inputs, "sex", "M")}, long=True))
    return tuple(cases)


Justicia.conformance_cases = staticmethod(conformance_cases)
