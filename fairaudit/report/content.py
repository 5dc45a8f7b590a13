"""What the report says, as plain data (no layout): facts about the audit, the verdict sentence, node rows.

Everything here reads an ``AuditResult`` (and optionally the ``Dataset`` / ``Model`` objects) and returns
strings, dicts and lists, so it can be tested without building a PDF.

Where the dataset and model facts come from, first match wins per field:

1. the ``dataset`` / ``model`` arguments (a ``Dataset`` / ``Model`` object, or a dict of the same fields);
2. what the result recorded: ``result.info["dataset"]`` / ``result.info["model"]`` (dicts), or the same keys of
   a ``result.meta`` dict when the result class has one;
3. the monitor's ``options``: ``options["data"]`` (dataset name), ``options["model"]`` (``Model.describe()``),
   ``options["pred"]`` (decision expression) and ``info["stream_length"]`` (rows audited).

Missing facts are shown as "not recorded", never guessed.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import math
import platform
import re
from importlib import metadata
from typing import Any, Mapping

from fairaudit.viz._format import clean
from fairaudit.viz.values import shown
from fairaudit.viz.palette import VERDICTS, normalise_verdict

NOT_RECORDED = "not recorded"

#: verdict key -> (banner word, plain-language explanation)
HEADLINES = {
    "true": ("CERTIFIED TRUE",
             "The audit certifies that the decisions satisfy the specification."),
    "false": ("VIOLATED",
              "The audit shows that the decisions violate the specification."),
    "unknown": ("UNDECIDED",
                "The evidence was not enough to decide either way at the required confidence. "
                "This is not a pass: more data (or a looser confidence level) is needed."),
}

KIND_LABELS = {
    "and": "and", "or": "or", "not": "not", "cmp": "comparison", "add": "sum", "sub": "difference",
    "mul": "product", "div": "ratio", "neg": "negation", "const": "constant", "expect": "probability E[…]",
    "fair": "individual fairness",
}

#: option name -> what it means (the first page explains every option it lists)
OPTION_HELP = {
    "delta": "Δ: total probability that any reported bound is wrong",
    "batch": "observations between two checks of the bounds",
    "split": "how Δ is divided among the probabilities (see Methods)",
    "bound": "confidence-sequence formula (see Methods)",
    "order": ("order in which the rows were observed (shuffle: seeded random order, which the guarantee "
              "assumes; given: file order)"),
    "seed": "random seed (row shuffling, model training)",
    "where": "only rows matching this condition were observed",
    "pred": "decision expression used instead of a model",
    "model": "model whose decisions were audited",
    "data": "dataset the observations came from",
    "stop": "stop observing as soon as the verdict is decided",
    "time_budget": ("seconds the optimised δ split may spend searching for an earlier decision; after that the "
                    "equal split decides and the audit still reads every row (no effect with the equal split)"),
    "rows": "which rows were audited (held-out: those not used to train the model)",
}


# ---------------------------------------------------------------------------------------------------------
# numbers


def num(value: Any, digits: int = 4) -> str:
    """A number for the report: ``—`` when missing, ``∞`` when infinite, a real minus sign."""
    if value is None:
        return "—"
    if isinstance(value, str):
        if value in ("inf", "-inf"):
            return "∞" if value == "inf" else "−∞"
        return value
    try:
        x = float(clean(value))
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if x == int(x) and abs(x) < 1e9 and not isinstance(value, float):
        text = str(int(x))
    elif x != 0 and (abs(x) < 10 ** -digits or abs(x) >= 1e6):
        text = f"{x:.{digits - 1}e}"
    else:
        text = f"{x:.{digits}f}"
    return text.replace("-", "−")


def interval(lo: Any, hi: Any, digits: int = 4) -> str:
    if _missing(lo) and _missing(hi):
        return "—"
    return f"[{num(lo, digits)}, {num(hi, digits)}]"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def count(value: Any) -> str:
    """An integer with thousands separators (``32,561``)."""
    if _missing(value):
        return NOT_RECORDED
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


# ---------------------------------------------------------------------------------------------------------
# recorded facts


def recorded(result, key: str) -> dict:
    """A dict the result recorded under ``key`` (``info[key]``, ``meta[key]``); empty when absent."""
    for holder in (getattr(result, "meta", None), getattr(result, "info", None),
                   (getattr(result, "info", None) or {}).get("meta") if isinstance(getattr(result, "info", None), dict)
                   else None):
        if isinstance(holder, Mapping) and isinstance(holder.get(key), Mapping):
            return dict(holder[key])
    return {}


def dataset_facts(result, dataset=None) -> dict:
    """``name rows content_hash source protected label favourable audited_rows where`` (None when unknown)."""
    out: dict[str, Any] = {k: None for k in ("name", "rows", "content_hash", "source", "protected", "label",
                                             "favourable")}
    out.update({k: v for k, v in recorded(result, "dataset").items() if v is not None})
    if isinstance(dataset, Mapping):
        out.update({k: v for k, v in dataset.items() if v is not None})
    elif dataset is not None:
        schema = dataset.schema
        out.update(name=dataset.name, rows=len(dataset), content_hash=dataset.content_hash,
                   source=getattr(dataset, "source", None) or None, protected=list(schema.protected),
                   label=schema.label, favourable=schema.favourable)
    options = result.options or {}
    if out["name"] is None:
        out["name"] = options.get("data") or options.get("dataset")
    out["audited_rows"] = (result.info or {}).get("stream_length")
    out["where"] = options.get("where")
    return out


def model_facts(result, model=None) -> dict:
    """``kind params content_hash description decisions features`` (None when unknown).

    ``decisions`` is the decision expression when the audited decisions came from a condition over the rows.
    """
    out: dict[str, Any] = {k: None for k in ("kind", "params", "content_hash", "description", "decisions",
                                             "features")}
    out.update({k: v for k, v in recorded(result, "model").items() if v is not None})
    if isinstance(model, Mapping):
        out.update({k: v for k, v in model.items() if v is not None})
    elif model is not None:
        out.update(kind=getattr(model, "kind", type(model).__name__), params=dict(getattr(model, "params", {}) or {}),
                   description=model.describe() if hasattr(model, "describe") else None,
                   features=len(getattr(model, "feature_names", []) or []) or None)
        try:
            out["content_hash"] = model.content_hash
        except Exception:  # a model without a hash is still reportable
            pass
        if out["kind"] == "expression":
            out["decisions"] = getattr(model, "expression", None) or out["params"].get("expression")
    options = result.options or {}
    if out["decisions"] is None and options.get("pred"):
        out["decisions"] = options["pred"]
    if out["description"] is None and isinstance(options.get("model"), str):
        out["description"] = options["model"]
    if out["content_hash"] is None and out["description"]:
        found = re.search(r"sha256 ([0-9a-f]{8,64})", str(out["description"]))
        if found:
            out["short_hash"] = found.group(1)
    return out


def model_lines(facts: dict) -> list[tuple[str, str]]:
    """(label, value) rows describing where the decisions came from."""
    if facts.get("decisions"):
        return [("decisions", f"from the expression  {facts['decisions']}  (logged decisions, no model)")]
    if not any(facts.get(k) for k in ("kind", "description", "content_hash")):
        return [("model", NOT_RECORDED)]
    rows = []
    if facts.get("kind"):
        rows.append(("kind", str(facts["kind"])))
    if facts.get("description"):
        rows.append(("description", str(facts["description"])))
    if facts.get("params"):
        rows.append(("parameters", ", ".join(f"{k} = {_plain(v)}" for k, v in facts["params"].items()
                                             if k != "trained_on")))  # the rows record is shown as "rows audited"
    else:
        rows.append(("parameters", NOT_RECORDED))
    if facts.get("content_hash"):
        rows.append(("content hash", f"sha256 {facts['content_hash']}"))
    elif facts.get("short_hash"):
        rows.append(("content hash", f"sha256 {facts['short_hash']}… (first {len(facts['short_hash'])} hex digits, "
                                     "from the description; the full hash was not recorded)"))
    else:
        rows.append(("content hash", NOT_RECORDED))
    return rows


def dataset_lines(facts: dict) -> list[tuple[str, str]]:
    rows = [("name", str(facts.get("name") or NOT_RECORDED))]
    if facts.get("source"):
        rows.append(("source", str(facts["source"])))
    audited = facts.get("audited_rows")
    if audited is not None and facts.get("rows") is not None and int(audited) == int(facts["rows"]) \
            and not facts.get("where"):
        rows.append(("rows", f"{count(facts['rows'])} (all observed by the audit)"))
    else:
        rows.append(("rows", count(facts.get("rows"))))
        if audited is not None:
            text = count(audited)
            if facts.get("where"):
                text += f" (the rows matching  {facts['where']})"
            rows.append(("rows observed by the audit", text))
    rows.append(("content hash", f"sha256 {facts['content_hash']}" if facts.get("content_hash") else NOT_RECORDED))
    if facts.get("protected"):
        rows.append(("protected attributes", ", ".join(map(str, facts["protected"]))))
    if facts.get("label"):
        rows.append(("label", f"{facts['label']} (favourable value: {_plain(facts.get('favourable'))})"))
    return rows


def _plain(v) -> str:
    if v is None:
        return "not set"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return num(v, 6).rstrip("0").rstrip(".") if math.isfinite(v) else num(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_plain(x) for x in v) + "]" if v else "none"
    return str(v)


def option_rows(result) -> list[tuple[str, str, str]]:
    """(option, value, meaning) for the engine and every option that is set, model/data excluded (listed
    elsewhere); the options left unset are one last row ``("not set", "pred, where", "")``."""
    rows = [("engine", result.engine, ENGINE_HELP.get(result.engine, ""))]
    unset = []
    for key in sorted(result.options or {}):
        if key in ("data", "model", "dataset"):
            continue
        value = result.options[key]
        if value is None or value == "":
            unset.append(key)
            continue
        rows.append((key, _plain(value), OPTION_HELP.get(key, "")))
    if unset:
        rows.append(("not set", ", ".join(unset), "; ".join(f"{k}: {OPTION_HELP[k]}" for k in unset if k in OPTION_HELP)))
    return rows


ENGINE_HELP = {
    "monitor": "statistical monitor (AVOIR): anytime-valid bounds from observed decisions",
    "fairsquare": "verifier (FairSquare): sound bounds by volume computation",
    "justicia": "verifier (Justicia): exact probabilities for the encoded distribution",
    "fvgm": "verifier (FVGM): exact probabilities for the encoded distribution",
    "fairquant": "verifier (FairQuant): sound certified / unfair / undecided fractions",
}


# ---------------------------------------------------------------------------------------------------------
# the verdict


def verdict_key(result) -> str:
    key = normalise_verdict(result.verdict)
    return key if key in HEADLINES else "unknown"


def verdict_colour(key: str) -> str:
    return VERDICTS.get(key, VERDICTS["unknown"])[1]


def guarantee_sentence(result) -> str:
    """``result.guarantee_headline`` ("certified true with probability ≥ 0.95 after 870 observations"),
    capitalised; the reason for a weaker guarantee goes in the explanation, not the headline."""
    try:
        text = result.guarantee_headline
    except Exception:  # a result class without the property: say what we know
        text = f"{HEADLINES[verdict_key(result)][0].lower()} after {result.steps} steps"
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def headline(result) -> dict:
    """``word`` (banner), ``sentence`` (verdict + guarantee), ``explanation`` and ``colour``."""
    key = verdict_key(result)
    word, explanation = HEADLINES[key]
    delta = _delta(result)
    if delta:
        explanation += (f" The probability that any bound in this report is wrong is at most {_plain(delta)} "
                        f"(confidence {_percent(1 - delta)}).")
        note = getattr(result, "guarantee_note", None)
        if note:
            explanation += f" This is weaker than the Δ asked for: {note}."
    elif result.engine != "monitor":
        explanation += " The bounds are sound: they hold with certainty for the model and input domain encoded."
    return {"key": key, "word": word, "sentence": guarantee_sentence(result), "explanation": explanation,
            "colour": verdict_colour(key)}


def audit_context(result) -> list[tuple[str, str]]:
    """("Rows audited", ...) and ("The guarantee assumes", ...) as the result states them; absent facts are left
    out (the dashboard's verdict line and the report's first page both show these)."""
    out = []
    rows = getattr(result, "rows_text", None)
    if rows:
        out.append(("Rows audited", str(rows)))
    assumption = getattr(result, "assumption", None)
    if assumption:
        out.append(("The guarantee assumes", str(assumption)))
    return out


def result_warnings(result) -> list[str]:
    """Every warning the result carries (``AuditResult.warnings``), in order, without repeats."""
    try:
        found = list(getattr(result, "warnings", None) or [])
    except Exception:  # noqa: BLE001 - a result class without warnings has none
        found = []
    return list(dict.fromkeys(str(w) for w in found if str(w).strip()))


def _delta(result) -> float:
    try:
        if hasattr(result, "guarantee_delta"):
            return float(result.guarantee_delta)
        return float((result.options or {}).get("delta", 0.0) or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _percent(p: float) -> str:
    text = f"{100 * p:.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


# ---------------------------------------------------------------------------------------------------------
# nodes


def node_rows(result) -> list[dict]:
    """One row per node in tree order: id, depth, expression, kind, estimate, interval, δ, n, verdict key/label."""
    nodes = result.nodes
    depth: dict[str, int] = {}
    for n in nodes:
        depth[n["id"]] = 0 if n["parent"] is None else depth.get(n["parent"], 0) + 1
    names = {n["id"]: n.get("name") for n in nodes}
    rows = []
    for n in nodes:
        f = n.get("final") or {}
        v = normalise_verdict(f.get("verdict"))
        text = f"{n['name']}: {n['text']}" if n.get("name") else n["text"]
        kids = result.node(n["id"]).children
        if n["kind"] in ("and", "or") and kids and all(names.get(k) for k in kids):
            text = f" {n['kind']} ".join(names[k] for k in kids)  # named parts: their names, not their texts
        const = n["kind"] == "const"
        values = shown(n["id"], nodes)  # a comparison: its compared term beside the threshold, not lhs − threshold
        estimate = num(values.value)
        if values.op is not None and not _missing(values.value):
            estimate += f" ({values.threshold_text.replace('-', '−')})"
        kind = KIND_LABELS.get(n["kind"], n["kind"])
        if n["kind"] == "cmp" and values.quantity != "value":
            kind = f"comparison ({values.quantity})"
        rows.append({
            "id": n["id"], "depth": depth[n["id"]], "expression": text,
            "kind": kind,
            "raw_kind": n["kind"],
            "estimate": estimate,
            "interval": "—" if const else interval(values.lo, values.hi),
            "threshold": values.threshold_text.replace("-", "−"),
            "margin": None if values.margin is None or values.op is None else num(values.margin),
            "delta": "—" if const or _missing(f.get("delta")) else num(f.get("delta"), 4),
            "n": count(f.get("n")) if not _missing(f.get("n")) else "",
            "verdict": v, "verdict_label": "—" if v == "term" else VERDICTS[v][0],
            "certified": f.get("certified"), "unfair": f.get("unfair"), "undecided": f.get("undecided"),
        })
    return rows


def chart_nodes(result, selected=()) -> list[str]:
    """Nodes that get a convergence plot: every comparison, then the selected nodes, in tree order."""
    chosen = {n.id for n in result.node_info if n.kind == "cmp"} | {str(s) for s in selected or ()}
    return [n.id for n in result.node_info if n.id in chosen]


def fair_nodes(result) -> list[str]:
    return [n.id for n in result.node_info if n.kind == "fair"]


def allocation_rows(result) -> list[tuple[str, str, str]]:
    """(leaf, δ at the decision, δ displayed after it) from the monitor's ``info``; empty when not recorded."""
    info = result.info or {}
    final = info.get("allocation") or {}
    decision = info.get("decision_deltas") or {}
    keys = list(info.get("leaf_keys") or final.keys() or decision.keys())
    return [(k, num(decision.get(k), 4) if k in decision else ("0 (not needed)" if decision else "—"),
             num(final.get(k), 4) if k in final else "—") for k in keys]


# ---------------------------------------------------------------------------------------------------------
# identification


def spec_hash(result) -> str:
    return hashlib.sha256(str(result.spec).encode("utf-8")).hexdigest()


def timestamp(generated_at=None) -> _dt.datetime:
    if generated_at is None:
        return _dt.datetime.now().astimezone().replace(microsecond=0)
    if isinstance(generated_at, str):
        return _dt.datetime.fromisoformat(generated_at)
    if isinstance(generated_at, (int, float)):
        return _dt.datetime.fromtimestamp(generated_at).astimezone().replace(microsecond=0)
    return generated_at


def when(moment: _dt.datetime) -> str:
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.tzinfo is not None:
        off = moment.strftime("%z")
        text += f" (UTC{off[:3]}:{off[3:]})" if off else ""
    return text


def default_title(result, data_facts: dict, model_facts_: dict) -> str:
    parts = []
    if data_facts.get("name"):
        parts.append(str(data_facts["name"]))
    if model_facts_.get("decisions"):
        parts.append("logged decisions")
    elif model_facts_.get("kind"):
        parts.append(f"{model_facts_['kind']} model")
    return "Fairness audit" + (f": {', '.join(parts)}" if parts else "")


VERSION_PACKAGES = ("fairaudit", "numpy", "pandas", "scipy", "scikit-learn", "altair", "vl-convert-python",
                    "fpdf2", "pyomo", "lark", "pyscipopt")


def versions() -> list[tuple[str, str]]:
    """(package, version) for Python and the packages the audit and the report used."""
    rows = [("Python", platform.python_version()), ("platform", platform.platform(terse=True))]
    for name in VERSION_PACKAGES:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            if name == "fairaudit":
                import fairaudit

                rows.append((name, getattr(fairaudit, "__version__", "unknown") + " (source tree)"))
            else:
                rows.append((name, "not installed"))
    return rows
