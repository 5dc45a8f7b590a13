"""``CompareResult``: each model's value of every node, the differences between models, and their verdicts; the
sentences a signer reads, and the stable JSON (``to_dict``).

A difference is ``a − b`` (the first-named model's value minus the second's). Its verdict is ``a_lower`` when the
whole interval is below 0, ``b_lower`` when above, ``undecided`` otherwise, and ``equal`` when an exact engine finds
exactly the same value. For a comparison node ``l op r`` the difference is of its margin ``l − r``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from fairaudit.base.numbers import json_number
from fairaudit.bounds.rules import FALSE, TRUE
from fairaudit.comparison.difference import verdicts
from fairaudit.comparison.wording import SCOPES

VERSION = 1
FORMAT = f"fairaudit-comparison/{VERSION}"  # fairaudit.core.outputs.COMPARISON_FORMAT + the version
TRACE_POINTS = 200  # looks kept in the JSON trace (every verdict change is kept too)



def verdict_name(code) -> str | None:
    """A verdict code as the JSON names it: "true" / "false" / "unknown" (None: no verdict)."""
    return _verdict_name(code)


def _verdict_name(code) -> str | None:
    if code is None or (isinstance(code, float) and math.isnan(code)):
        return None
    return {TRUE: "true", FALSE: "false"}.get(int(code), "unknown")


@dataclass
class NodeSeries:
    """One node's values for one model at every look: estimate, lo, hi (float arrays) and verdict (int8, booleans)."""

    estimate: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    verdict: np.ndarray | None = None
    rates: dict | None = None  # a Fair[...] node: "certified", "unfair", "undecided" arrays (shares of individuals)
    slack: object = None  # a boolean node: its slack (``fairaudit.comparison.difference.slacks``) as an Interval

    @classmethod
    def of(cls, nv, slack=None) -> "NodeSeries":
        rates = None
        if nv.certified is not None:
            rates = {k: np.broadcast_to(np.asarray(getattr(nv, k), float), np.shape(nv.lo))
                     for k in ("certified", "unfair", "undecided")}
        return cls(np.asarray(nv.estimate, float), np.asarray(nv.lo, float), np.asarray(nv.hi, float),
                   None if nv.verdict is None else np.asarray(nv.verdict, np.int8), rates, slack)

    @classmethod
    def final(cls, values: dict, slack=None) -> "NodeSeries":
        verdict = values.get("verdict")
        code = None if verdict is None else {"true": TRUE, "false": FALSE}.get(verdict, -1)
        rates = ({k: np.array([float(values[k])]) for k in ("certified", "unfair", "undecided")}
                 if all(values.get(k) is not None for k in ("certified", "unfair", "undecided")) else None)
        return cls(np.array([float(values.get("estimate", np.nan))]), np.array([float(values.get("lo", np.nan))]),
                   np.array([float(values.get("hi", np.nan))]), None if code is None else np.array([code], np.int8),
                   rates, slack)

    def upto(self, k: int) -> "NodeSeries":
        from fairaudit.bounds.rules import Interval

        slack = None if self.slack is None else Interval(*(np.broadcast_to(getattr(self.slack, a), self.lo.shape)[:k]
                                                           for a in ("estimate", "lo", "hi")))
        return NodeSeries(self.estimate[:k], self.lo[:k], self.hi[:k], None if self.verdict is None else
                          self.verdict[:k], None if self.rates is None else {n: a[:k] for n, a in self.rates.items()},
                          slack)

    def at(self, i: int) -> dict:
        out = {"estimate": json_number(float(self.estimate[i])), "lo": json_number(float(self.lo[i])),
               "hi": json_number(float(self.hi[i]))}
        if self.verdict is not None:
            out["verdict"] = _verdict_name(self.verdict[i])
        if self.rates is not None:
            out.update({k: json_number(float(a[i])) for k, a in self.rates.items()})
        if self.slack is not None:
            out["slack"] = {k: json_number(float(np.asarray(getattr(self.slack, k))[i])) for k in ("estimate", "lo", "hi")}
        return out


@dataclass
class Difference:
    """One node's difference between models ``a`` and ``b`` at the last look shown."""

    node: str
    text: str
    kind: str
    a: str
    b: str
    estimate: float
    lo: float
    hi: float
    verdict: str          # a_lower / b_lower / undecided / equal
    pairing: str          # paired / unpaired / same (the node does not read the decision)
    decided_at: int | None = None  # rows read when the verdict was first decided (None: undecided, or one look)

    def to_dict(self) -> dict:
        return {"node": self.node, "text": self.text, "a": self.a, "b": self.b,
                "difference": {"estimate": json_number(self.estimate), "lo": json_number(self.lo),
                               "hi": json_number(self.hi)},
                "verdict": self.verdict, "pairing": self.pairing, "decided_at": self.decided_at}


@dataclass
class CompareResult:
    spec: str
    tree: object
    engine: str
    scope: str
    delta: float
    seed: int | None
    order: str | None
    stop: str
    names: list[str]
    models: list[dict]              # per model: name, model/pred, description, provenance
    looks: np.ndarray               # rows read at each look (up to the stop look)
    model_series: dict              # name → node id → NodeSeries (over the looks)
    diff_series: dict               # (a, b) → node id → Interval arrays (over the looks)
    differences: list[Difference]
    node_roles: dict
    rows: dict
    warnings: list[str] = field(default_factory=list)
    levels: dict = field(default_factory=dict)
    exact: bool = False
    data: str | None = None
    results: list | None = field(default=None, repr=False)  # the per-model AuditResults (engines other than monitor)
    said: dict = field(default_factory=dict)  # name → how a sentence names the model ("the current model (logreg)")

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, *, spec, engine, scope, delta, seed, order, stop, sides, looks, stop_index, model_series,
              diff_series, node_roles, rows, warnings, levels, dataset, exact=False, results=None):
        from fairaudit.core.evaluate import compile_spec

        cs = compile_spec(spec)
        k = stop_index + 1
        looks = np.asarray(looks)[:k]
        model_series = {name: {nid: s.upto(k) for nid, s in series.items()} for name, series in model_series.items()}
        diffs = []
        for (a, b), series in diff_series.items():
            for nid in cs.postorder[::-1]:  # pre-order: the root's comparisons first
                if nid not in series:
                    continue
                iv = series[nid]
                v = verdicts(iv)[:k]
                role = node_roles[nid]
                lo, hi, est = float(iv.lo[k - 1]), float(iv.hi[k - 1]), float(iv.estimate[k - 1])
                if role == "same":
                    verdict = "equal"
                elif exact and lo == hi == 0.0:
                    verdict = "equal"
                else:
                    verdict = {1: "a_lower", -1: "b_lower"}.get(int(v[-1]), "undecided")
                decided = np.flatnonzero(v != 0)
                decided_at = int(looks[decided[0]]) if len(decided) and verdict in ("a_lower", "b_lower") \
                    and len(looks) > 1 else None
                tn = cs.nodes[nid]
                diffs.append(Difference(nid, tn.text, tn.kind, a, b, est, lo, hi, verdict, role, decided_at))
                if len(decided) and np.any(v[decided[0]:] != v[decided[0]]):
                    from fairaudit.comparison.wording import node_words

                    warnings = list(warnings) + [
                        f"the difference of “{node_words(spec, nid)}” between {a} and {b} changed after it was decided: the rows "
                        "may not be in random order (drift, a sorted file), which the guarantee assumes"]
        models = [{"name": s.name, "model": s.describe if s.inputs.pred is None else None,
                   "pred": s.inputs.pred, "provenance": getattr(s.inputs, "provenance", {})} for s in sides]
        return cls(spec=spec.text if hasattr(spec, "text") else str(spec), tree=spec, engine=engine, scope=scope,
                   delta=float(delta), seed=seed, order=order, stop=stop, names=[s.name for s in sides],
                   models=models, looks=looks, model_series=model_series, diff_series=diff_series,
                   differences=diffs, node_roles=node_roles, rows=rows, warnings=list(dict.fromkeys(warnings)),
                   levels=levels, exact=exact, data=getattr(dataset, "name", None), results=results)

    # ------------------------------------------------------------------ views
    @property
    def sequential(self) -> bool:
        """Whether the comparison read the rows look after look (then ``rows_read`` is how many it read)."""
        from fairaudit.comparison.options import is_sequential

        return is_sequential(self.engine)

    @property
    def rows_read(self) -> int | None:
        return int(self.looks[-1]) if len(self.looks) else None

    def difference(self, node: str, a: str | None = None, b: str | None = None) -> Difference:
        a, b = a or self.names[0], b or self.names[1]
        for d in self.differences:
            if d.node == node and d.a == a and d.b == b:
                return d
        raise KeyError((node, a, b))

    def verdict_of(self, name: str, node: str | None = None) -> str | None:
        node = node or self.tree.nodes[0].id
        s = self.model_series[name][node]
        return None if s.verdict is None else _verdict_name(s.verdict[-1])

    @property
    def guarantee(self) -> str:
        """What every interval and difference verdict is worth, in one sentence."""
        from fairaudit.comparison.wording import guarantee_sentence

        return guarantee_sentence(self)

    def sentence(self, d: Difference) -> str:
        from fairaudit.comparison.wording import difference_sentence

        return difference_sentence(self, d)

    @property
    def share_note(self) -> str | None:
        """Why a model's verdict here can be less decided than in an audit of that model alone (the failure
        probability is shared with the differences), when that is so; else None."""
        from fairaudit.comparison.wording import share_sentence

        return share_sentence(self)

    @property
    def headline(self) -> str:
        from fairaudit.comparison.wording import headline

        return headline(self)

    def questions(self) -> list[Difference]:
        """The differences a reader asks about first: the spec's comparisons (their margins), then the terms."""
        cmp_ = [d for d in self.differences if d.kind == "cmp"]
        return cmp_ + [d for d in self.differences if d.kind != "cmp"]

    # ------------------------------------------------------------------ JSON
    def _kept(self) -> np.ndarray:
        n = len(self.looks)
        if n <= TRACE_POINTS:
            return np.arange(n)
        keep = set(np.unique(np.linspace(0, n - 1, TRACE_POINTS).round().astype(int)).tolist())
        for series in self.diff_series.values():
            for iv in series.values():
                v = verdicts(iv)[:n]
                keep.update((np.flatnonzero(np.diff(v) != 0) + 1).tolist())
        return np.array(sorted(keep))

    def to_dict(self) -> dict:
        kept = self._kept()
        nodes = []
        for tn in self.tree.nodes:
            nodes.append({"id": tn.id, "parent": tn.parent, "text": tn.text, "kind": tn.kind,
                          "pairing": self.node_roles.get(tn.id),
                          "models": {name: self.model_series[name][tn.id].at(len(self.looks) - 1)
                                     for name in self.names}})
        trace = {"rows": [int(self.looks[i]) for i in kept],
                 "models": {name: {nid: {k: [json_number(float(getattr(s, k)[i])) for i in kept]
                                         for k in ("estimate", "lo", "hi")}
                                   for nid, s in series.items() if s.verdict is None or self.tree_kind(nid) == "cmp"}
                            for name, series in self.model_series.items()},
                 "differences": [{"a": a, "b": b, "nodes": {nid: {"estimate": [json_number(float(iv.estimate[i]))
                                                                               for i in kept],
                                                                  "lo": [json_number(float(iv.lo[i])) for i in kept],
                                                                  "hi": [json_number(float(iv.hi[i])) for i in kept]}
                                                            for nid, iv in series.items()}}
                                 for (a, b), series in self.diff_series.items()]}
        return {"format": FORMAT, "version": VERSION, "spec": self.spec, "data": self.data, "engine": self.engine,
                "scope": self.scope, "scope_text": SCOPES.get(self.scope, self.scope), "delta": self.delta,
                "guarantee": self.guarantee, "headline": self.headline, "seed": self.seed, "order": self.order,
                "stop": self.stop, "rows": {**self.rows, "read": self.rows_read},
                "models": [m | ({"said": self.said[m["name"]]} if m["name"] in self.said else {}) for m in self.models],
                "nodes": nodes, "differences": [d.to_dict() | {"sentence": self.sentence(d)} for d in
                                                self.differences],
                "levels": self.levels, "warnings": self.warnings, "trace": trace}

    def tree_kind(self, nid: str) -> str:
        for tn in self.tree.nodes:
            if tn.id == nid:
                return tn.kind
        raise KeyError(nid)

    def to_json(self, path=None) -> str:
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False, default=str)
        if path is not None:
            from fairaudit.base.files import write_atomically

            write_atomically(path, text.encode("utf-8"), what="comparison JSON")
        return text
