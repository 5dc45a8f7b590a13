"""The ``fvgm`` engine (issue 15): bounds on ``E[pred | group]``
for a linear model over a Bayesian network learnt from the dataset, after FVGM (Ghosh et al., AAAI 2022).

1. **Variables** (``fairaudit.models.bn.discretise``): every column the model reads is ONE categorical variable; a
   numeric column with more than ``bins`` values is cut into ``bins`` equal-width bins, each standing for the mean
   of its values (the bins are mutually exclusive — not FVGM's independent Boolean bins).
2. **Network** (``fairaudit.models.bn.learn_bn``): pgmpy hill climbing (BIC or K2), no edge into a protected
   column, maximum-likelihood parameters.
3. **Probabilities** (``fairaudit.bounds.subset_sum.rate_bounds``): the model's weights are rounded down and up to a
   grid, and the exact stochastic subset sum over the network (variable elimination, the group as evidence — every
   value of a protected attribute enumerated, so the greedy trap of FVGM cannot occur) gives a lower and an upper
   bound; the grid is halved each round, the bounds are nested.

The bounds are certain **for the modelled distribution** (the network and the discretised model), not for the
population: the network's fit and the discretisation are assumptions, stated in the guarantee.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterator

import numpy as np

from fairaudit.engines.base import Context, Engine, LeafBatch, Option
from fairaudit.evaluate import LeafValue, compile_spec
from fairaudit.guarantee import Guarantee


class FVGM(Engine):
    name = "fvgm"
    title = "FVGM (a linear model over a Bayesian network of the data)"
    summary = ("bounds that hold with certainty on E[pred | group] for a linear model, under a Bayesian network "
               "learnt from the dataset (numeric columns binned)")
    unit = "refinement rounds"
    leaf_kinds = frozenset({"expect"})
    requires = ("dataset", "model")
    options = (
        Option("bins", int, 5, "equal-width bins per numeric column (a column with fewer values keeps them)",
               min=1, max=50, label="Bins per numeric column", header=True),
        Option("structure_score", str, "bic", "the score of the hill-climbing structure search",
               choices=("bic", "k2"), label="Structure score", advanced=True),
        Option("max_parents", int, 3, "the most parents a variable of the network may have", min=0, max=10,
               label="Most parents", advanced=True),
        Option("precision", float, 1e-3, "stop refining once every probability's bounds are this close", min=0,
               exclusive=True, label="Precision", advanced=True),
    )

    # ------------------------------------------------------------------------------------------ checks
    def check(self, spec, inputs) -> list[str]:
        reasons = super().check(spec, inputs)
        if spec is None:
            return reasons
        for tn in getattr(spec, "leaves", ()):
            if tn.kind != "expect":
                continue
            try:
                _query(tn.node, None)
            except ValueError as why:
                if str(why) not in reasons:
                    reasons.append(str(why))
        if inputs is not None and getattr(inputs, "where", None):
            reasons.append("it does not take a row filter (where) yet")
        if inputs is not None and getattr(inputs, "model", None) is not None:
            try:
                inputs.model.as_linear()
            except Exception:  # noqa: BLE001 — any failure means "not linear"
                reasons.append("it needs a linear model (logistic regression)")
        return reasons

    def guarantee(self, options, inputs) -> Guarantee:
        return Guarantee("sound", scope="for the Bayesian network learnt from the dataset",
                         assumes=f"individuals are distributed as the network learnt from the dataset says (numeric "
                                 f"columns in {options.get('bins', 5)} bins, each standing for its mean)")

    # ------------------------------------------------------------------------------------------ run
    def run(self, spec, inputs, options, ctx: Context) -> Iterator[LeafBatch]:
        from fairaudit.models.bn import discretise, learn_bn, linear_weights

        form = inputs.model.as_linear()
        frame = inputs.dataset.frame
        positions = getattr(inputs, "positions", None)
        if positions is not None:  # the network is learnt on the audited rows
            frame = frame.iloc[np.asarray(positions)]
        cat, binnings = discretise(frame, form.encoding, bins=int(options["bins"]))
        protected = [p for p in inputs.dataset.schema.protected if p in cat.columns]
        bn = learn_bn(cat, protected, score=options["structure_score"], max_indegree=int(options["max_parents"]))
        weights, tau, strict = linear_weights(form, binnings)
        cs = compile_spec(spec)
        queries = {key: _query(cs.leaf_node[key].node, bn) for key in cs.leaf_keys}
        return self._rounds(bn, weights, tau, strict, queries, options, ctx)

    @staticmethod
    def _rounds(bn, weights, tau, strict, queries, options, ctx) -> Iterator[LeafBatch]:
        from fairaudit.bounds.subset_sum import Stopped, rate_bounds

        scale = max((abs(w) for ws in weights.values() for w in ws.values()), default=1.0) or 1.0
        step = Fraction(scale) / 8
        k = 0
        while True:
            leaves, warnings = {}, []
            widest = 0.0
            # after the first round a round is abandoned at the deadline (the previous, sound, bounds stand)
            stop = ctx.expired if k else None
            try:
                bounds = {key: rate_bounds(bn, weights, tau, ev, strict=strict, step=step, should_stop=stop)
                          for key, (_, ev) in queries.items()}
            except Stopped:
                return
            for key, (positive, evidence) in queries.items():
                b = bounds[key]
                if b is None:
                    warnings.append(f"{key}: its condition has probability 0 under the network (shown as [0, 1])")
                    lo, hi = 0.0, 1.0
                else:
                    lo, hi = (float(b[0]), float(b[1])) if positive else (1 - float(b[1]), 1 - float(b[0]))
                    widest = max(widest, hi - lo)
                leaves[key] = LeafValue(np.array([(lo + hi) / 2]), np.array([lo]), np.array([hi]), 0.0,
                                        np.array([np.nan]))
            done = widest <= float(options["precision"])
            yield LeafBatch(np.array([k]), leaves, done=k, total=k if done else None, warnings=tuple(warnings),
                            info={"network": {v: list(p) for v, p in bn.parents.items() if p}, "grid": float(step)})
            if done or ctx.expired():
                return
            step /= 2
            k += 1


def _query(node, bn):
    """``E[pred | given]`` as ``(pred is asked, evidence {column: frozenset of states})``; ``bn`` None: only check."""
    from fairaudit.spec import ast

    ev = node.event
    positive = True
    if isinstance(ev, ast.EvNot):
        ev, positive = ev.operand, False
    if not (isinstance(ev, ast.Name) and ev.reserved and ev.name == "pred"):
        raise ValueError("it bounds only E[pred | ...] and E[not pred | ...] (conditions after '|')")
    evidence: dict = {}

    def allow(col, values, negated):
        if bn is None:
            return
        if col not in bn.states:
            raise ValueError(f"the network has no column '{col}'")
        states = bn.states[col]
        want = {str(v) for v in values}
        hit = frozenset(s for s in states if (str(s) in want) != negated)
        evidence[col] = evidence.get(col, frozenset(states)) & hit

    def walk(e):
        if isinstance(e, ast.EvAnd):
            walk(e.left); walk(e.right)
        elif isinstance(e, ast.Compare) and e.op in ("==", "!=") and isinstance(e.left, ast.Name) \
                and not e.left.reserved and isinstance(e.right, ast.Value):
            allow(e.left.name, [e.right.value], e.op == "!=")
        elif isinstance(e, ast.In) and not e.operand.reserved:
            allow(e.operand.name, [v.value for v in e.values], e.negated)
        else:
            raise ValueError("its conditions must be 'and's of column == value, != value or in {...}")

    if node.given is not None:
        walk(node.given)
    return positive, evidence


# ---------------------------------------------------------------------------------------------- conformance
def _case_inputs(rows: int):
    import pandas as pd

    from fairaudit import data
    from fairaudit.inputs import Inputs
    from fairaudit.models.training import train

    rng = np.random.default_rng(3)
    sex = rng.choice(["F", "M"], rows)
    x = np.where(sex == "M", rng.choice(["lo", "mid", "hi"], rows, p=[.2, .3, .5]),
                 rng.choice(["lo", "mid", "hi"], rows, p=[.6, .3, .1]))
    y = np.where(rng.random(rows) < np.select([x == "lo", x == "mid"], [.1, .5], .9), "yes", "no")
    frame = pd.DataFrame({"sex": sex, "x": x, "outcome": y})
    ds = data.from_csv(frame.to_csv(index=False).encode("utf-8"), label="outcome", protected=["sex"],
                       favourable="yes", name=f"fvgm{rows}.csv")
    return Inputs.build(ds, model=train(ds, "logreg", seed=0))


def _oracle(inputs, group: str) -> float:
    """The model's positive rate on the audited rows of ``group``: the learnt network (sex → x) reproduces the
    rows' joint of (sex, x) exactly, so the bounds must contain this number."""
    frame = inputs.dataset.frame
    if inputs.positions is not None:
        frame = frame.iloc[np.asarray(inputs.positions)]
    pred = inputs.model.predict(frame)
    return float(pred[(frame["sex"] == group).to_numpy()].mean())


def conformance_cases():
    from fairaudit.testing import Case

    def case(name, spec, rows, long=False):
        holder = {}

        def make():
            if "inputs" not in holder:
                holder["inputs"] = _case_inputs(rows)
            return holder["inputs"]
        inp = make()
        return Case(name, spec, make, {f'E[pred | sex == "{g}"]': _oracle(inp, g) for g in ("F", "M")}, long=long)

    return (case("gap", 'E[pred | sex == "F"] - E[pred | sex == "M"] < -0.1', 2000),
            case("long", 'E[pred | sex == "F"] - E[pred | sex == "M"] < -0.9', 4000, long=True))


FVGM.conformance_cases = staticmethod(conformance_cases)
