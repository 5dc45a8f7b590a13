"""An independent oracle for the soundness tests: exact (rational) evaluation of a spec at given leaf
values, random specs with known leaf means, and simulated i.i.d. streams for the monitor."""
from __future__ import annotations

import operator
from fractions import Fraction

import numpy as np

from fairaudit.spec import ast as A
from spec_helpers import C, X, make_spec

EXACT = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
CMP_FN = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
          "!=": operator.ne}


def concrete(node, env):
    """Exact value of a term / truth of a spec node; ``env`` maps an ``E[...]`` leaf's text (or, for
    bare names, the event name) to a Fraction. None where a denominator is exactly 0."""
    k = node.kind
    if k == "expect":
        text = f"E[{node.event.name}]" if node.given is None else f"E[{node.event.name} | {node.given.name}]"
        return env[text] if text in env else env[node.event.name]
    if k == "const":
        return Fraction(node.value)
    if k == "neg":
        v = concrete(node.operand, env)
        return None if v is None else -v
    if k in EXACT:
        x, y = concrete(node.left, env), concrete(node.right, env)
        if x is None or y is None or (k == "div" and y == 0):
            return None
        return EXACT[k](x, y)
    if k == "cmp":
        x, y = concrete(node.left, env), concrete(node.right, env)
        return None if x is None or y is None else CMP_FN[node.op](x, y)
    if k == "not":
        v = concrete(node.operand, env)
        return None if v is None else not v
    x, y = concrete(node.left, env), concrete(node.right, env)
    if k == "and":
        return False if (x is False or y is False) else (None if (x is None or y is None) else True)
    return True if (x is True or y is True) else (None if (x is None or y is None) else False)


def node_truths(spec, env) -> dict:
    """Per node id: the true value — for cmp nodes the value of left − right, for boolean nodes the
    truth (bool), for terms the number (None where undefined)."""
    out = {}
    for tn in spec.nodes:
        if tn.kind == "cmp":
            l, r = (concrete(c, env) for c in (tn.node.left, tn.node.right))
            out[tn.id] = (None if l is None or r is None else l - r, concrete(tn.node, env))
        else:
            out[tn.id] = concrete(tn.node, env)
    return out


# the leaves of the random specs: (name, condition) — unconditional, or rejection-sampled on g / not g
LEAF_FORMS = [("x0", None), ("x1", "g"), ("x2", "h"), ("x3", None)]


def random_spec(rng: np.random.Generator, means: dict):
    """A random spec over 2–4 of the leaves: comparisons of a leaf, a difference or a ratio with a
    threshold near (±0.02, ±0.05) or far (±0.15, ±0.3) from the true value, combined by and / or /
    not. Returns the Spec."""
    k = int(rng.integers(2, 5))
    names = [LEAF_FORMS[i] for i in rng.permutation(len(LEAF_FORMS))[:k]]
    leaves = [X(n, g) for n, g in names]
    env = {f"E[{n}]" if g is None else f"E[{n} | {g}]": Fraction(means[n]) for n, g in names}

    def comparison(terms):
        kind = rng.choice(["leaf", "sub", "div"]) if len(terms) >= 2 else "leaf"
        if kind == "leaf":
            term = terms[0]
        elif kind == "sub":
            term = A.Sub(terms[0], terms[1])
        else:
            term = A.Div(terms[0], terms[1])
        truth = float(concrete(term, env))
        offset = float(rng.choice([-0.3, -0.15, -0.05, -0.02, 0.02, 0.05, 0.15, 0.3]))
        c = round(truth + offset * (abs(truth) if kind == "div" else 1.0), 4)
        op = str(rng.choice(["<", "<=", ">", ">="]))
        return A.Cmp(op, term, C(c))

    order = list(rng.permutation(k))
    pool = [leaves[i] for i in order]
    cmps = []
    while pool:
        take = int(rng.integers(1, min(2, len(pool)) + 1))
        cmps.append(comparison(pool[:take]))
        pool = pool[take:]
    if rng.random() < 0.5:  # reuse a leaf in one more comparison (shared leaf, counted once)
        cmps.append(comparison([leaves[int(rng.integers(k))]]))
    node = cmps[0]
    for other in cmps[1:]:
        node = (A.And if rng.random() < 0.5 else A.Or)(node, other)
        if rng.random() < 0.3:
            node = A.Not(node)
    return make_spec(node), env


def simulate(spec, means: dict, length: int, rng: np.random.Generator):
    """Observations of an i.i.d. stream: g ~ Bern(0.4), h ~ Bern(0.25) independent, and each leaf
    value x_i ~ Bern(mean_i) independent of everything (so E[x_i | g] = mean_i)."""
    from fairaudit.engines.monitor.engine import Observations

    g = rng.random(length) < 0.4
    h = rng.random(length) < 0.25
    values, masks = {}, {}
    for tn in spec.leaves:
        node = tn.node
        name = node.event.name
        values[tn.text] = rng.random(length) < means[name]
        masks[tn.text] = np.ones(length, bool) if node.given is None else {"g": g, "h": h}[node.given.name]
    return Observations(values, masks, length)
