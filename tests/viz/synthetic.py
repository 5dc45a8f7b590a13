"""Synthetic audit results (nodes + trace) in the JSON contract's shape, for chart tests."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

INF = math.inf


def _spec_tree(parity_threshold=0.1, ratio_threshold=1.25):
    # (E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1) & (E[pred | race == "White"] / E[pred | race == "Black"] < 1.25)
    return [
        {"id": "n0", "parent": None, "kind": "and"},
        {"id": "n1", "parent": "n0", "kind": "cmp", "op": "<"},
        {"id": "n2", "parent": "n1", "kind": "sub"},
        {"id": "n3", "parent": "n2", "kind": "expect", "text": 'E[pred | sex == "Male"]', "p": 0.30},
        {"id": "n4", "parent": "n2", "kind": "expect", "text": 'E[pred | sex == "Female"]', "p": 0.11},
        {"id": "n5", "parent": "n1", "kind": "const", "value": parity_threshold},
        {"id": "n6", "parent": "n0", "kind": "cmp", "op": "<"},
        {"id": "n7", "parent": "n6", "kind": "div"},
        {"id": "n8", "parent": "n7", "kind": "expect", "text": 'E[pred | race == "White"]', "p": 0.26},
        {"id": "n9", "parent": "n7", "kind": "expect", "text": 'E[pred | race == "Black"]', "p": 0.12},
        {"id": "n10", "parent": "n6", "kind": "const", "value": ratio_threshold},
    ]


def _kids(tree):
    kids = {n["id"]: [] for n in tree}
    for n in tree:
        if n["parent"]:
            kids[n["parent"]].append(n["id"])
    return kids


def _texts(tree):
    by = {n["id"]: n for n in tree}
    kids = _kids(tree)
    sym = {"and": "&", "or": "|", "sub": "-", "add": "+", "mul": "*", "div": "/"}

    def text(i):
        n = by[i]
        k = n["kind"]
        if k == "expect" or k == "fair":
            return n["text"]
        if k == "const":
            return f"{n['value']:g}"
        if k == "not":
            return f"not ({text(kids[i][0])})"
        op = n.get("op") or sym[k]
        return f"({text(kids[i][0])}) {op} ({text(kids[i][1])})" if k in ("and", "or") else f"{text(kids[i][0])} {op} {text(kids[i][1])}"

    return {i: text(i) for i in by}


#: the ``op`` a result's node carries (``fairaudit.core.trace.NodeInfo.op``)
OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "neg": "-", "and": "and", "or": "or", "not": "not"}


def _op_value(n):
    """The ``op`` / ``value`` fields of a node in the JSON contract."""
    if n["kind"] == "const":
        return {"value": n["value"]}
    op = n.get("op") or OPS.get(n["kind"])
    return {"op": op} if op else {}


def _interval(kind, a, b):
    (al, ah), (bl, bh) = a, b
    if kind == "add":
        return al + bl, ah + bh
    if kind == "sub":
        return al - bh, ah - bl
    if kind == "mul":
        p = [x * y for x in (al, ah) for y in (bl, bh)]
        return min(p), max(p)
    if kind == "div":
        if bl <= 0 <= bh:
            return -INF, INF
        q = [x / y for x in (al, ah) for y in (bl, bh)]
        return min(q), max(q)
    raise ValueError(kind)


def _cmp(op, a, b):
    (al, ah), (bl, bh) = a, b
    if op in ("<", "<="):
        return "true" if ah < bl else ("false" if al >= bh else "unknown")
    if op in (">", ">="):
        return "true" if al > bh else ("false" if ah <= bl else "unknown")
    raise ValueError(op)


def make_result(tree=None, steps=400, batch=5, delta=0.05, seed=0, fair_rates=False):
    """A dict shaped like ``AuditResult.to_json()`` with a shrinking interval (width ~ 1/sqrt(n)) per leaf."""
    tree = tree or _spec_tree()
    rng = np.random.default_rng(seed)
    kids = _kids(tree)
    texts = _texts(tree)
    leaves = [n for n in tree if n["kind"] in ("expect", "fair")]
    d_leaf = delta / max(1, len(leaves))
    order = list(reversed(tree))  # children after parents in pre-order -> reverse = children first
    trace = []
    counts = {}
    stop = None
    for s in range(1, steps + 1):
        n_obs = s * batch
        val = {}
        ver = {}
        row_extra = {}
        for n in order:
            i, k = n["id"], n["kind"]
            if k in ("expect", "fair"):
                # a running mean of Bernoulli draws; about 40% of the rows satisfy the condition
                hits, seen = counts.setdefault(i, [0, 0])
                m = int(rng.binomial(batch, 0.4))
                counts[i] = [hits + int(rng.binomial(m, n["p"])), seen + m]
                hits, seen = counts[i]
                eps = math.sqrt(math.log(2 / d_leaf) / (2 * seen)) if seen else INF
                est = hits / seen if seen else 0.5
                val[i] = (est, max(0.0, est - eps), min(1.0, est + eps))
                ver[i] = None
                if k == "fair":
                    cert = max(0.0, est - eps)
                    unfair = max(0.0, 1 - min(1.0, est + eps))
                    row_extra[i] = {"certified": cert, "unfair": unfair, "undecided": 1 - cert - unfair}
            elif k == "const":
                val[i] = (n["value"], n["value"], n["value"])
                ver[i] = None
            elif k in ("add", "sub", "mul", "div"):
                a, b = kids[i]
                lo, hi = _interval(k, val[a][1:], val[b][1:])
                ea, eb = val[a][0], val[b][0]
                est = {"add": ea + eb, "sub": ea - eb, "mul": ea * eb, "div": ea / eb if eb else INF}[k]
                val[i] = (est, lo, hi)
                ver[i] = None
            elif k == "cmp":
                a, b = kids[i]
                ver[i] = _cmp(n["op"], val[a][1:], val[b][1:])
                val[i] = (val[a][0] - val[b][0], val[a][1] - val[b][2], val[a][2] - val[b][1])
            elif k in ("and", "or"):
                vs = [ver[c] for c in kids[i]]
                if k == "and":
                    ver[i] = "false" if "false" in vs else ("true" if all(v == "true" for v in vs) else "unknown")
                else:
                    ver[i] = "true" if "true" in vs else ("false" if all(v == "false" for v in vs) else "unknown")
                val[i] = (None, None, None)
            elif k == "not":
                v = ver[kids[i][0]]
                ver[i] = {"true": "false", "false": "true"}.get(v, "unknown")
                val[i] = (None, None, None)
        for n in tree:
            i = n["id"]
            trace.append({"step": n_obs, "node": i, "estimate": val[i][0], "lo": val[i][1], "hi": val[i][2],
                          "delta": d_leaf if n["kind"] in ("expect", "fair") else delta, "verdict": ver[i],
                          **row_extra.get(i, {})})
        if stop is None and ver[tree[0]["id"]] in ("true", "false"):
            stop = n_obs
    last = {r["node"]: r for r in trace[-len(tree):]}
    nodes = []
    for n in tree:
        r = last[n["id"]]
        final = {k: r[k] for k in ("estimate", "lo", "hi", "delta", "verdict")}
        if n["kind"] == "fair":
            final.update({k: r[k] for k in ("certified", "unfair", "undecided")})
        nodes.append({"id": n["id"], "parent": n["parent"], "kind": n["kind"], "text": texts[n["id"]],
                      **_op_value(n), "final": final})
    return {"spec": texts[tree[0]["id"]], "engine": "monitor", "options": {"delta": delta, "batch": batch},
            "verdict": last[tree[0]["id"]]["verdict"], "stop_step": stop, "steps": steps * batch,
            "nodes": nodes, "trace": trace}


def big_tree(n_parts=4):
    """A conjunction of ``n_parts`` parity comparisons plus a Fair leaf: about 6*n_parts + 3 nodes."""
    tree = []
    counter = iter(range(1000))

    def nid():
        return f"n{next(counter)}"

    groups = ["sex", "race", "age_group", "native_country", "marital_status", "education"]

    def part(parent, g, p):
        c = nid()
        tree.append({"id": c, "parent": parent, "kind": "cmp", "op": "<"})
        s = nid()
        tree.append({"id": s, "parent": c, "kind": "sub"})
        tree.append({"id": nid(), "parent": s, "kind": "expect", "text": f'E[pred | {g} == "a"]', "p": p})
        tree.append({"id": nid(), "parent": s, "kind": "expect", "text": f'E[pred | {g} == "b"]', "p": p - 0.05})
        tree.append({"id": nid(), "parent": c, "kind": "const", "value": 0.1})

    root = nid()
    tree.append({"id": root, "parent": None, "kind": "and"})
    parent = root
    for i in range(n_parts - 1):
        a = nid()
        tree.append({"id": a, "parent": parent, "kind": "and"})
        part(a, groups[i], 0.3 + 0.02 * i)
        parent = a
    part(parent, groups[n_parts - 1], 0.25)
    f = nid()
    tree.append({"id": f, "parent": root, "kind": "cmp", "op": ">"})
    tree.append({"id": nid(), "parent": f, "kind": "fair", "text": "Fair[sex]", "p": 0.97})
    tree.append({"id": nid(), "parent": f, "kind": "const", "value": 0.9})
    # the contract lists nodes in pre-order: re-sort
    kids = _kids(tree)
    by = {n["id"]: n for n in tree}
    out = []

    def visit(i):
        out.append(by[i])
        for c in kids[i]:
            visit(c)

    visit(root)
    return out
