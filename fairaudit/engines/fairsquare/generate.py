"""Generate ``.fr`` programs from data and models: readable text the analyst can edit.

* ``decision_program(model)``: the model's decision as the ``F()`` function (IR statements, printed by
  :func:`fairaudit.programs.printer.format_program`): a linear model is one inequality over its inputs, a
  decision tree nested ``if``/``else``, a ReLU network straight-line code (``max(0, ·)`` written as
  ``if h < 0: h = 0``, since the language has no ``max``).
* ``population_program(dataset, protected=...)``: an independent per-column population model (``popModel()``)
  with the protected group as ``sensitiveAttribute`` and, when a model is given, its decision as ``F()``.

The ``.fr`` language has real-valued variables only, so a categorical column is a numeric *code*: the
position of its value in the column's category list (the model encoding's order, which is the dataset
schema's). The generated text lists the codes in comments. Numbers are printed with ``repr`` so they read
back to the same float: the decision program decides exactly as the model does (``evaluate_decision``).
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError
from fairaudit.programs import ir
from fairaudit.programs.printer import format_program
from fairaudit.programs.sample import _Run

RESERVED = {"popModel", "F", "gaussian", "step", "sensitiveAttribute", "qualified", "fairnessTarget",
            "True", "False", "None"}


def identifiers(columns) -> dict[str, str]:
    """Raw column name -> a distinct valid ``.fr`` variable name (``capital-gain`` -> ``capital_gain``)."""
    out, used = {}, set()
    for name in columns:
        base = re.sub(r"\W", "_", str(name)) or "x"
        if base[0].isdigit():
            base = "x_" + base
        if keyword.iskeyword(base) or base in RESERVED:
            base += "_"
        cand, k = base, 2
        while cand in used:
            cand, k = f"{base}_{k}", k + 1
        used.add(cand)
        out[name] = cand
    return out


@dataclass(frozen=True)
class Generated:
    """Generated statements with the comment lines that explain them (codes of categorical columns)."""
    statements: tuple[ir.Stmt, ...]
    comments: tuple[str, ...]
    names: dict[str, str]  # raw column -> variable name


def _num(x: float) -> ir.Num:
    return ir.Num(float(x))


def _sum(terms: list[tuple[float, ir.Arith]], bias: float) -> ir.Arith:
    """``bias + w1 * x1 - |w2| * x2 ...`` (a weight of 1 is ``+ x``)."""
    expr: ir.Arith = _num(bias)
    for w, x in terms:
        if w == 0:
            continue
        mag = abs(w)
        term = x if mag == 1 else ir.BinOp("*", _num(mag), x)
        expr = ir.BinOp("+" if w > 0 else "-", expr, term)
    return expr


def _code_comments(encoding, names) -> list[str]:
    out = []
    for c in encoding.columns:
        if c.kind == "categorical":
            codes = ", ".join(f"{k} = {v!s}" for k, v in enumerate(c.values))
            out.append(f"{names[c.name]} codes: {codes}")
    return out


def _form(model, form: str | None):
    """The model's structure: ``form`` in (linear, tree, relu) or the first the model offers."""
    getters = {"linear": "as_linear", "tree": "as_tree", "relu": "as_relu_net"}
    order = [form] if form else ["linear", "tree", "relu"]
    for f in order:
        if f not in getters:
            raise FairauditError(f"unknown form '{f}': expected linear, tree or relu")
        try:
            return f, getattr(model, getters[f])()
        except (FairauditError, AttributeError):  # ModelError: no such form; AttributeError: no as_* method
            if form:
                raise
    raise FairauditError("this model exposes no linear, tree or ReLU-network structure to write as a program")


def decision_statements(model, *, form: str | None = None, names: dict[str, str] | None = None) -> Generated:
    """The statements of ``F()`` for ``model``, ending in ``fairnessTarget(...)`` (true = favourable)."""
    kind, f = _form(model, form)
    encoding = f.encoding
    names = names or identifiers(encoding.raw_names)
    comments = [f"decision program generated from a {model.describe() if hasattr(model, 'describe') else kind} "
                f"({kind} form); categorical columns are numeric codes"] + _code_comments(encoding, names)
    if kind == "linear":
        stmts = _linear(f, names)
    elif kind == "tree":
        stmts = _tree(f, names)
    else:
        stmts = _relu(f, names)
    return Generated(tuple(stmts), tuple(comments), names)


def _linear(f, names) -> list[ir.Stmt]:
    stmts: list[ir.Stmt] = []
    terms: list[tuple[float, ir.Arith]] = []
    w = np.asarray(f.weights, dtype=float)
    for c, idx in zip(f.encoding.columns, f.encoding.mapping.values()):
        var = names[c.name]
        if c.kind == "numeric":
            terms.append((float(w[idx[0]]), ir.Var(var)))
            continue
        # one-hot weights as the column's effect: effect = weight of the row's category (0 when unknown)
        effect = var + "_effect"
        chain: tuple[ir.Stmt, ...] = ()
        for k in reversed(range(len(c.values))):
            if w[idx[k]] != 0:
                chain = (ir.If(ir.Compare("==", ir.Var(var), _num(k)), (ir.Assign(effect, _num(w[idx[k]])),),
                               chain),)
        stmts.append(ir.Assign(effect, _num(0)))
        stmts.extend(chain)
        terms.append((1.0, ir.Var(effect)))
    stmts.append(ir.Assign("score", _sum(terms, float(f.bias))))
    stmts.append(ir.Event("target", ir.Compare(">", ir.Var("score"), _num(0))))
    return stmts


def _indicator(encoding, j: int, names) -> tuple[str, str, int | None]:
    """Encoded feature ``j`` -> (raw column variable, kind, category code or None)."""
    for c, idx in zip(encoding.columns, encoding.mapping.values()):
        if j in idx:
            return names[c.name], c.kind, (idx.index(j) if c.kind == "categorical" else None)
    raise IndexError(j)


def _tree(f, names) -> list[ir.Stmt]:
    nodes = f.nodes

    def walk(i: int) -> tuple[ir.Stmt, ...]:
        node = nodes[i]
        if node.is_leaf:
            return (ir.Assign("t", _num(1 if node.value > 0.5 else 0)),)
        var, kind, code = _indicator(f.encoding, node.feature, names)
        thr = float(node.threshold)
        if kind == "numeric":
            return (ir.If(ir.Compare("<=", ir.Var(var), _num(thr)), walk(node.left), walk(node.right)),)
        # indicator (var == code) <= thr
        if thr >= 1:
            return walk(node.left)
        if thr < 0:
            return walk(node.right)
        return (ir.If(ir.Compare("==", ir.Var(var), _num(code)), walk(node.right), walk(node.left)),)

    return list(walk(0)) + [ir.Event("target", ir.Compare("==", ir.Var("t"), _num(1)))]


def _relu(f, names) -> list[ir.Stmt]:
    stmts: list[ir.Stmt] = []
    inputs: list[ir.Arith] = []
    for c in f.encoding.columns:
        var = names[c.name]
        if c.kind == "numeric":
            inputs.append(ir.Var(var))
            continue
        for k in range(len(c.values)):  # one-hot indicators: var_k = 1 iff var == k
            ind = f"{var}_{k}"
            stmts.append(ir.Assign(ind, _num(0)))
            stmts.append(ir.If(ir.Compare("==", ir.Var(var), _num(k)), (ir.Assign(ind, _num(1)),)))
            inputs.append(ir.Var(ind))
    h = inputs
    for layer, (W, b) in enumerate(f.layers):
        last = layer == len(f.layers) - 1
        out = []
        for r in range(W.shape[0]):
            name = "score" if last else f"h{layer + 1}_{r + 1}"
            stmts.append(ir.Assign(name, _sum([(float(W[r, j]), h[j]) for j in range(W.shape[1])], float(b[r]))))
            if not last:
                stmts.append(ir.If(ir.Compare("<", ir.Var(name), _num(0)), (ir.Assign(name, _num(0)),)))
            out.append(ir.Var(name))
        h = out
    stmts.append(ir.Event("target", ir.Compare(">", ir.Var("score"), _num(0))))
    return stmts


def decision_program(model, *, form: str | None = None, dataset=None, protected: str | None = None,
                     group=None) -> str:
    """The ``.fr`` text of ``model``'s decision. With ``dataset`` (and ``protected``) the program's
    ``popModel()`` is :func:`population_program`'s; without, a placeholder population to edit (each input
    uniform on [0, 1) and a coin for the group) so that the text parses."""
    if dataset is not None:
        return population_program(dataset, protected=protected, group=group, model=model, form=form)
    gen = decision_statements(model, form=form)
    pop: list[ir.Stmt] = [ir.Draw(v, ir.Step(((0.0, 1.0, 1.0),))) for v in gen.names.values()]
    pop.append(ir.Draw("group", ir.Step(((0.0, 1.0, 1.0),))))
    pop.append(ir.Event("sensitive", ir.Compare("<", ir.Var("group"), _num(0.5))))
    program = _program(pop, list(gen.statements))
    notes = list(gen.comments) + ["popModel below is a placeholder: replace it with the population to audit"]
    return _with_comments(notes, format_program(program))


def _program(pop, dec) -> ir.Program:
    sens = next(s.cond for s in pop if isinstance(s, ir.Event) and s.kind == "sensitive")
    target = next(s.cond for s in dec if isinstance(s, ir.Event) and s.kind == "target")
    return ir.Program(tuple(pop), tuple(dec), sens, target)


def _with_comments(lines, text: str) -> str:
    return "".join(f"# {line}\n" for line in lines) + text


# ---------------------------------------------------------------------------------------------- population


def _column_model(series: pd.Series, var: str, kind: str, values: tuple, bins: int) -> tuple[list, str]:
    """Statements drawing one column, and a comment line describing the choice."""
    if kind == "categorical":
        codes = pd.Index(list(values)).get_indexer(series)
        counts = np.bincount(codes[codes >= 0], minlength=len(values)).astype(float)
        p = counts / counts.sum()
        pieces = tuple((float(k), float(k + 1), float(p[k])) for k in range(len(values)) if p[k] > 0)
        pieces = _normalise(pieces)
        # draw a point in [code, code + 1), then snap it to the code
        snap: tuple = ()
        present = [k for k in range(len(values)) if p[k] > 0]
        for k in reversed(present[:-1]):
            snap = (ir.If(ir.Compare("<", ir.Var(var), _num(k + 1)), (ir.Assign(var, _num(k)),),
                          snap or (ir.Assign(var, _num(present[-1])),)),)
        if not snap:
            snap = (ir.Assign(var, _num(present[-1])),)
        codes_txt = ", ".join(f"{k} = {values[k]!s}" for k in range(len(values)))
        return [ir.Draw(var, ir.Step(pieces)), *snap], f"{var}: categorical, codes {codes_txt}"
    x = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype=float)
    distinct = np.unique(x)
    mean, var_ = float(x.mean()), float(x.var())
    if len(distinct) == 1 or var_ <= 0:
        return [ir.Assign(var, _num(distinct[0]))], f"{var}: constant"
    integral = np.all(distinct == np.round(distinct))
    if integral and len(distinct) <= 30:  # integer values: one piece [v - 0.5, v + 0.5) each
        counts = np.array([(x == v).sum() for v in distinct], dtype=float)
        pieces = tuple((float(v - 0.5), float(v + 0.5), float(c / counts.sum())) for v, c in zip(distinct, counts))
        # merge-free: pieces are disjoint when values differ by >= 1
        return [ir.Draw(var, ir.Step(_normalise(pieces)))], f"{var}: integer values, histogram of each value"
    skew = float(((x - mean) ** 3).mean() / var_ ** 1.5)
    if abs(skew) <= 0.5:
        return [ir.Draw(var, ir.Gaussian(mean, var_))], f"{var}: gaussian(mean, variance), skew {skew:.2f}"
    counts, edges = np.histogram(x, bins=bins)
    pieces = tuple((float(edges[i]), float(edges[i + 1]), float(counts[i] / counts.sum()))
                   for i in range(len(counts)) if counts[i] > 0)
    return [ir.Draw(var, ir.Step(_normalise(pieces)))], f"{var}: skewed ({skew:.2f}), {bins}-bin histogram"


def _normalise(pieces):
    """Round probabilities to 6 digits, keeping Σp = 1 exactly (the remainder goes to the largest piece)."""
    p = np.round(np.array([q for _, _, q in pieces]), 6)
    big = int(np.argmax(p))
    p[big] = 0.0
    p[big] = round(1.0 - float(p.sum()), 6)
    return tuple((lo, hi, float(q)) for (lo, hi, _), q in zip(pieces, p) if q > 0)


def _plan(dataset, protected, model, form, columns):
    """``(protected column, the decision's Generated or None, the drawn columns (protected first), raw column ->
    variable name)`` of a population program."""
    schema = dataset.schema
    protected = protected or (schema.protected[0] if schema.protected else None)
    if protected is None or protected not in schema:
        raise FairauditError(f"name the protected column (one of {', '.join(schema.names)})")
    gen = None
    if model is not None:
        gen = decision_statements(model, form=form)
        enc = _form(model, form)[1].encoding
        for c in enc.columns:
            if c.kind == "categorical" and tuple(schema.column(c.name).values) != tuple(c.values):
                raise FairauditError(f"column '{c.name}': the model's categories differ from the dataset's")
        wanted = list(enc.raw_names)
    else:
        wanted = list(columns) if columns is not None else list(schema.feature_names)
    if protected not in wanted:
        wanted = [protected] + wanted
    else:
        wanted = [protected] + [c for c in wanted if c != protected]  # protected first (the root)
    names = identifiers(wanted)
    if gen is not None:
        names.update(gen.names)
    return protected, gen, wanted, names


def population_variables(dataset, *, protected: str | None = None, model=None, form: str | None = None,
                         columns=None) -> dict[str, str]:
    """The dataset columns :func:`population_program` draws (same arguments), each with its variable name."""
    _, _, wanted, names = _plan(dataset, protected, model, form, columns)
    return {c: names[c] for c in wanted}


def population_program(dataset, *, protected: str | None = None, group=None, model=None, form: str | None = None,
                       columns=None, bins: int = 10, structure: str = "independent") -> str:
    """A per-column population model of ``dataset`` as ``.fr`` text.

    ``structure="independent"``: every column drawn independently. ``structure="bn"``: a Bayesian-network-style
    model like FairSquare's BN1: the protected attribute is the root and every other column is drawn from its
    distribution within the row's protected group (an ``if`` per group; for a numeric protected attribute, the
    two sides of ``group``).

    Numeric columns: ``gaussian(mean, variance)`` when roughly symmetric, a ``step`` histogram when skewed,
    one piece per value for integer columns with few values; categorical columns: ``step`` over their codes.
    ``sensitiveAttribute``: ``protected == code of group`` (categorical; ``group`` defaults to the least
    frequent value) or ``protected < group`` (numeric; defaults to the median). ``F()`` is ``model``'s
    decision when given (its columns are drawn), else a placeholder coin to replace.
    """
    if structure not in ("independent", "bn"):
        raise FairauditError(f"unknown structure '{structure}': expected independent or bn")
    schema = dataset.schema
    protected, gen, wanted, names = _plan(dataset, protected, model, form, columns)
    frame = dataset.frame
    pvar, pspec = names[protected], schema.column(protected)
    if pspec.kind == "categorical":
        values = list(pspec.values)
        if group is None:
            counts = frame[protected].value_counts()
            group = min(values, key=lambda v: (counts.get(v, 0), str(v)))
        if group not in values:
            raise FairauditError(f"'{group}' is not a value of '{protected}' ({', '.join(map(str, values))})")
        sens = ir.Compare("==", ir.Var(pvar), _num(values.index(group)))
        sens_note = f"sensitive group: {protected} == {group!s} (code {values.index(group)})"
    else:
        if group is None:
            group = float(pd.to_numeric(frame[protected], errors="coerce").median())
        sens = ir.Compare("<", ir.Var(pvar), _num(float(group)))
        sens_note = f"sensitive group: {protected} < {float(group):g}"
    pop: list[ir.Stmt] = []
    how = "each column drawn independently" if structure == "independent" else \
        f"{protected} is the root; every other column drawn within the row's {protected} group"
    notes = [f"population program generated from dataset '{dataset.name}' ({len(frame)} rows): {how}"]
    stmts, note = _column_model(frame[protected], pvar, pspec.kind, tuple(pspec.values), bins)
    pop += stmts
    notes.append(note)
    rest = [c for c in wanted if c != protected]
    if structure == "independent":
        for col in rest:
            spec = schema.column(col)
            stmts, note = _column_model(frame[col], names[col], spec.kind, tuple(spec.values), bins)
            pop += stmts
            notes.append(note)
    else:
        if pspec.kind == "categorical":
            codes = pd.Index(values).get_indexer(frame[protected])
            branches = [(ir.Compare("==", ir.Var(pvar), _num(k)), codes == k, f"{protected} == {values[k]!s}")
                        for k in range(len(values)) if (codes == k).any()]
        else:
            x = pd.to_numeric(frame[protected], errors="coerce").to_numpy(float)
            branches = [(sens, x < float(group), f"{protected} < {float(group):g}"),
                        (ir.Not(sens), ~(x < float(group)), f"{protected} >= {float(group):g}")]
            branches = [b for b in branches if b[1].any()]
        bodies = []
        for _, rows, label in branches:
            body: list[ir.Stmt] = []
            for col in rest:
                spec = schema.column(col)
                stmts, note = _column_model(frame[col][rows], names[col], spec.kind, tuple(spec.values), bins)
                body += stmts
                notes.append(f"[{label}] {note}")
            bodies.append(tuple(body))
        chain: tuple[ir.Stmt, ...] = bodies[-1]
        for (cond, _, _), body in zip(reversed(branches[:-1]), reversed(bodies[:-1])):
            chain = (ir.If(cond, body, chain),)
        pop += chain
    notes.append(sens_note)
    pop.append(ir.Event("sensitive", sens))
    if gen is not None:
        dec = list(gen.statements)
        notes += list(gen.comments)
    else:
        dec = [ir.Assign("t", _num(1)), ir.Event("target", ir.Compare("==", ir.Var("t"), _num(1)))]
        notes.append("F() is a placeholder: write the decision to audit (fairnessTarget = favourable)")
    return _with_comments(notes, format_program(_program(pop, dec)))


def generated_inputs(dataset, *, model, structure: str = "independent", protected: str | None = None,
                     seed: int = 0, trust_pickle: bool = False, trusted_types=(), warnings=(),
                     include_protected: bool = False):
    """``Inputs`` for auditing ``model`` (a ``Model``, a saved-model path or a training kind:
    ``fairaudit.core.inputs.resolve_model``) over a population program generated from ``dataset``
    (:func:`population_program` with ``structure`` independent or bn; ``fairaudit.core.inputs.Inputs.from_generated``
    holds it): what ``FairSquare.derive_inputs`` gives the resolver."""
    from fairaudit.core.inputs import Inputs, resolve_model
    from fairaudit.programs.parse import parse_program

    model_obj = resolve_model(model, dataset, seed, trust_pickle=trust_pickle, trusted_types=trusted_types,
                              include_protected=include_protected)
    text = population_program(dataset, protected=protected, model=model_obj, structure=structure)
    variables = population_variables(dataset, protected=protected, model=model_obj)
    name = f"generated from {dataset.name} ({structure})"
    program = parse_program(text, filename=name)
    return Inputs.from_generated(dataset, model_obj, program, text, variables, structure=structure, name=name,
                                 warnings=warnings)


# ---------------------------------------------------------------------------------------------- evaluation


def encode_rows(frame: pd.DataFrame, encoding, names: dict[str, str] | None = None) -> dict[str, np.ndarray]:
    """The variables of a generated program for the rows of ``frame``: numeric columns as values (missing ->
    the model's fill value), categorical columns as codes (-1 for a value the model does not know)."""
    names = names or identifiers(encoding.raw_names)
    out = {}
    for c in encoding.columns:
        if c.kind == "numeric":
            x = pd.to_numeric(frame[c.name], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            out[names[c.name]] = np.where(np.isnan(x), c.fill, x)
        else:
            codes, uniques = pd.factorize(frame[c.name])
            position = pd.Index(list(c.values)).get_indexer(uniques)
            out[names[c.name]] = np.where(codes >= 0, position[codes], -1).astype(float)
    return out


def evaluate_decision(program: ir.Program, values: dict[str, np.ndarray]) -> np.ndarray:
    """Run ``program``'s ``F()`` on given variable values (no sampling, no ``eval``): the target per row."""
    n = len(next(iter(values.values())))
    run = _Run(n, np.random.default_rng(0))
    run.env = {k: np.asarray(v, dtype=float) for k, v in values.items()}
    with np.errstate(invalid="ignore", over="ignore"):
        run.block(program.decision, np.ones(n, dtype=bool))
    return np.array(run.events["target"])
