"""What the report says, as plain data (no layout): facts about the audit, the verdict, the parameters, node rows.

Everything here reads an ``AuditResult`` (and optionally the ``Dataset`` / ``Model`` objects) and returns
strings, dicts and lists, so it can be tested without building a PDF. The report words nothing about an engine
itself: the verdict sentence is ``AuditResult.headline`` / ``.sentence`` (``fairaudit.core.guarantee.verdict_sentence``),
the guarantee's wording comes from ``result.guarantee`` (``Guarantee.phrase`` / ``interval_meaning`` / ``note`` /
``assumes``), and the parameter table from the engine's declarations (``fairaudit.engines.get(result.engine)``:
``Engine.title`` / ``summary``, ``Option.title`` / ``show`` / ``help``). A result whose engine is not installed
here (an old file, a newer engine) still reads: its options are then listed as they were recorded.

Where the dataset and model facts come from, first match wins per field:

1. the ``dataset`` / ``model`` arguments (a ``Dataset`` / ``Model`` object, or a dict of the same fields);
2. what the result recorded: ``result.provenance["dataset"]`` / ``["model"]`` (``AuditResult.from_json`` fills
   them from the ``info`` of older files), and ``result.rows`` (which rows were audited);
3. the inputs in ``result.options``: ``data`` (dataset name), ``model`` (``Model.describe()``) and ``pred``
   (decision expression).

Missing facts are shown as "not recorded", never guessed.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import math
import numbers
import platform
import re
from importlib import metadata
from typing import Any, Mapping

from fairaudit.core.guarantee import format_interval
from fairaudit.base.numbers import clean
from fairaudit.viz._format import option_value
from fairaudit.viz.values import shown
from fairaudit.viz.palette import VERDICTS, normalise_verdict

NOT_RECORDED = "not recorded"

#: verdict key -> (banner word, what the verdict means, whichever the engine)
HEADLINES = {
    "true": ("CERTIFIED TRUE",
             "The audit certifies that the decisions satisfy the specification."),
    "false": ("VIOLATED",
              "The audit shows that the decisions violate the specification."),
    "unknown": ("UNDECIDED",
                "The audit could not establish either outcome: its intervals are still too wide to decide the "
                "specification. This is not a pass."),
    "exploratory": ("EXPLORATORY",
                    "A threshold of this specification was chosen by the tool after looking at these data, so this "
                    "verdict is a hypothesis, not a certificate: confirm it on rows the choice did not see. This is "
                    "not a pass."),
}

#: node kind (of the specification language, the same for every engine) -> its name in the node table
KIND_LABELS = {
    "and": "and", "or": "or", "not": "not", "cmp": "comparison", "add": "sum", "sub": "difference",
    "mul": "product", "div": "ratio", "neg": "negation", "const": "constant", "expect": "probability E[…]",
    "fair": "individual fairness",
}

def kind_label(node) -> str:
    """A node's kind as the node table names it: ``KIND_LABELS``, and "average E[…]" for a leaf that averages an
    amount (its ``range``)."""
    if node.get("kind") == "expect" and node.get("range"):
        return "average E[…]"
    return KIND_LABELS.get(node.get("kind"), node.get("kind"))


#: the inputs of every audit (``fairaudit.core.inputs.Inputs.describe``), the first rows of the parameter table; the
#: dataset and the model have sections of their own, so only their names appear here
INPUTS = ("data", "follow", "model", "population", "pred", "where", "rows")
INPUT_TITLES = {"data": "Dataset", "follow": "Live log", "model": "Model", "population": "Population program",
                "pred": "Decisions", "where": "Rows matching", "rows": "Rows"}
#: the inputs that only an audit of a dataset's rows has (an audit of a population program has none of them)
ROW_INPUTS = ("data", "model", "pred", "where", "rows")
INPUT_HELP = {
    "data": "the dataset the audited rows come from (see Dataset)",
    "follow": "the live decision log the rows were read from as they arrived, in arrival order",
    "population": "the population and decision program whose individuals were audited (see Population program)",
    "model": "the model whose decisions were audited (see Decisions audited)",
    "pred": "the decision without a model: a condition over the rows (true = favourable), or a column of several "
            "classes (pred is each row's class)",
    "where": "only the rows matching this condition were audited",
    "rows": "which rows were audited (held-out: those the model was not trained on)",
}


# ---------------------------------------------------------------------------------------------------------
# numbers


def _typeset(text: str) -> str:
    """The library's number text as printed in the PDF: a real minus sign, ``∞``, ``—`` for a missing value."""
    return text.replace("nan", "—").replace("inf", "∞").replace("-", "−")


def num(value: Any, digits: int = 4) -> str:
    """A number for the report by the library's one rule (``fairaudit.core.guarantee.format_interval``: ``digits``
    significant digits, a subnormal is 0), typeset: ``—`` when missing, ``∞`` when infinite, a real minus sign.
    A whole number given as an int stays whole."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return _typeset(value) if value in ("inf", "-inf", "nan") else value
    try:
        x = float(clean(value))
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "—"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return _typeset(str(int(value)))
    return _typeset(format_interval(x, x, digits))


def interval(lo: Any, hi: Any, digits: int = 4) -> str:
    """``[lo, hi]`` by the library's rule (a point interval is printed as its value), typeset as ``num``."""
    if _missing(lo) and _missing(hi):
        return "—"
    a, b = (math.nan if _missing(v) else float(_unstring(v)) for v in (lo, hi))
    return _typeset(format_interval(a, b, digits))


def _unstring(v):
    return float(v) if isinstance(v, str) else v


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
    """What the result recorded about its ``"dataset"`` or ``"model"`` (``result.provenance``); empty when absent."""
    found = (getattr(result, "provenance", None) or {}).get(key)
    return dict(found) if isinstance(found, Mapping) else {}


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
    audited = result.rows.get("audited") if isinstance(getattr(result, "rows", None), Mapping) else None
    out["audited_rows"] = audited if isinstance(audited, int) and not isinstance(audited, bool) else None
    out["where"] = options.get("where")
    # a live log keeps growing: its rows are those read while it was watched, and it has no content hash
    out["live"] = isinstance(getattr(result, "rows", None), Mapping) and result.rows.get("policy") == "live"
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
        classes = (facts.get("params") or {}).get("classes")
        if classes:  # a column of logged classes (``fairaudit.models.expression.ClassColumnModel``)
            shown = ", ".join(classes[:8]) + (", …" if len(classes) > 8 else "")
            return [("decisions", f"the classes in column  {facts['decisions']}  ({len(classes)}: {shown}; logged "
                                  "decisions, no model)")]
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
    if facts.get("live"):  # its rows are those it held while it was watched (those matching ``where``)
        if facts.get("where"):
            rows.append(("rows", "a live log: it keeps growing"))
            rows.append(("rows audited", f"{count(audited)} (the rows matching  {facts['where']}, while it was "
                                         "watched)"))
        else:
            rows.append(("rows", f"{count(audited)} read while it was watched (a live log: it keeps growing)"))
        rows.append(("content hash", "none: a live log keeps growing (the rows audited are the first ones it "
                                     "held, in the order they arrived)"))
        return rows
    if audited is not None and facts.get("rows") is not None and int(audited) == int(facts["rows"]) \
            and not facts.get("where"):
        rows.append(("rows", f"{count(facts['rows'])} (all audited)"))
    else:
        rows.append(("rows", count(facts.get("rows"))))
        if audited is not None:
            text = count(audited)
            if facts.get("where"):
                text += f" (the rows matching  {facts['where']})"
            rows.append(("rows audited", text))
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
    if isinstance(v, (int, float)):  # the one format of an option's number (``fairaudit.base.numbers.option_value``)
        return _typeset(option_value(v)) if isinstance(v, float) and v < 0 else option_value(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_plain(x) for x in v) + "]" if v else "none"
    return str(v)


def engine_of(result):
    """The engine that produced ``result`` (``fairaudit.engines.get``), or None when it is not installed here
    (a result from another version, or from an engine this installation does not have)."""
    from fairaudit import engines
    from fairaudit.base.errors import FairauditError

    try:
        return engines.get(str(result.engine))
    except (FairauditError, ImportError, AttributeError):
        return None


def engine_title(result) -> str:
    engine = engine_of(result)
    return (engine.title or engine.name) if engine is not None else str(result.engine)


def option_rows(result) -> list[tuple[str, str, str]]:
    """(parameter, value, meaning) for the parameter table, from the engine's declarations.

    First the engine (its title and summary), then the inputs that were set (``INPUTS``; the dataset and the
    model have sections of their own), then every option the result records in the engine's declaration order
    (``Option.title`` / ``show`` / ``help``); options the engine does not declare (an engine not installed here,
    an older result) are listed as recorded. Unset options are one last row ``("not set", titles, meanings)``."""
    engine = engine_of(result)
    options = dict(result.options or {})
    if engine is not None:
        rows = [("Engine", engine.title or engine.name, engine.summary or "")]
    else:
        rows = [("Engine", str(result.engine), "this engine is not installed here, so its options are listed "
                 "as the result recorded them")]
    unset: list[tuple[str, str]] = []

    def add(title: str, value, shown_value: str, meaning: str):
        if value is None or value == "":
            unset.append((title, meaning))
        else:
            rows.append((title, shown_value, meaning))

    program = is_population(result)
    for key in INPUTS:
        if key not in options or key in ("data", "model"):
            continue
        if program and key in ROW_INPUTS:
            continue  # no rows, no model, no row filter: the rows sentence on the first page says what was audited
        add(INPUT_TITLES[key], options[key], _plain(options[key]), INPUT_HELP[key])
    declared = list(engine.all_options()) if engine is not None else []
    for option in declared:
        if option.name in options:
            value = options[option.name]
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            add(option.title, value, option_value(value) if number else option.show(value), option.help)
    known = set(INPUTS) | {o.name for o in declared} | {"dataset"}
    for key in sorted(k for k in options if k not in known):
        add(key, options[key], _plain(options[key]), "")
    if unset:
        rows.append(("not set", ", ".join(t for t, _ in unset),
                     "; ".join(f"{t}: {m}" for t, m in unset if m)))
    return rows


# ---------------------------------------------------------------------------------------------------------
# a population program


#: lines of a population program printed in the report; a longer one is cut with a note
MAX_PROGRAM_LINES = 150


def is_population(result) -> bool:
    """Whether the audited individuals came from a population program (``result.provenance["population"]``, or
    the ``population`` input of the options) rather than a dataset's rows."""
    return bool(recorded(result, "population") or (result.options or {}).get("population"))


def generated_from_data(result) -> bool:
    """Whether the audited population program was generated from a dataset and a model (the result then records
    all three: the dataset and the model sections of the report apply too)."""
    return is_population(result) and bool(recorded(result, "dataset"))


def population_facts(result, population=None) -> dict:
    """``name sha256 text origin note`` of the audited population program (None when unknown).

    ``population``: the program as the audit had it, to print it: a path to its ``.fr`` file or its text (as
    written, comments included: what the recorded sha256 identifies), a ``fairaudit.programs.population.Population``
    or a parsed ``Program`` (printed by ``fairaudit.programs.printer.format_program``). A program whose sha256
    differs from the recorded one is not printed (``note`` says why); without one, ``note`` says how to give it."""
    import hashlib
    from pathlib import Path

    out: dict[str, Any] = {"name": None, "sha256": None, "text": None, "origin": None, "note": None}
    out.update({k: v for k, v in recorded(result, "population").items() if k in ("name", "sha256") and v})
    if out["name"] is None:
        out["name"] = (result.options or {}).get("population")
    text = sha = None
    if population is not None:
        from fairaudit.programs import ir
        from fairaudit.programs.printer import format_program

        if isinstance(population, ir.Program):
            text = format_program(population)
            sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
            origin = "printed from the parsed program"
        elif hasattr(population, "program") and hasattr(population, "sha256"):  # a Population
            text, sha = format_program(population.program), population.sha256
            origin = "printed from the parsed program (the file's comments and layout are not kept)"
            if hashlib.sha256(text.encode("utf-8")).hexdigest() == sha:
                origin = "printed from the parsed program"
        elif isinstance(population, str) and "\n" in population:  # the program's text (e.g. edited on a page)
            text = population
            sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
            origin = "the program's text as it was audited"
        else:
            path = Path(population)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                out["note"] = f"The population program could not be read from {path} ({err}), so it is not printed."
                return out
            sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
            origin = f"the text of {path.name} as it was audited"
        if out["sha256"] and sha != out["sha256"]:
            out["note"] = (f"The program given to the report (sha256 {sha[:16]}…) is not the one audited "
                           f"(sha256 {out['sha256'][:16]}…), so it is not printed.")
            return out
        out["sha256"] = out["sha256"] or sha
        out["name"] = out["name"] or getattr(population, "name", None)
        out["text"], out["origin"] = text, origin
    elif generated_from_data(result):
        out["note"] = ("The audit result records the program's name and sha256, not its text; rebuild the report "
                       "with the dataset and the model it was generated from (fairaudit report RESULT.json --data "
                       "NAME --model KIND|PATH) to print it.")
    else:
        out["note"] = ("The audit result records the program's name and sha256, not its text; rebuild the report "
                       "with the program (fairaudit report RESULT.json --population FILE.fr) to print it.")
    return out


def program_listing(text: str, limit: int = MAX_PROGRAM_LINES) -> tuple[str, str | None]:
    """``(text, note)``: the program's first ``limit`` lines, and a note saying how many were left out (None
    when it is printed whole)."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines), None
    return ("\n".join(lines[:limit]),
            f"The program has {len(lines):,} lines; the first {limit:,} are printed, the other "
            f"{len(lines) - limit:,} are left out (the sha256 above identifies the whole text).")


def population_lines(facts: dict) -> list[tuple[str, str]]:
    """(label, value) rows identifying the audited population program, and where its text is printed."""
    rows = [("name", str(facts.get("name") or NOT_RECORDED)),
            ("content hash", f"sha256 {facts['sha256']}" if facts.get("sha256") else NOT_RECORDED)]
    if facts.get("text"):
        n = len(facts["text"].rstrip("\n").splitlines())
        shown = f"the first {MAX_PROGRAM_LINES:,} of its {n:,} lines" if n > MAX_PROGRAM_LINES else f"{n:,} lines"
        rows.append(("program", f"printed on the next page ({shown}; {facts['origin']})"))
    else:
        rows.append(("program", facts.get("note") or NOT_RECORDED))
    return rows


# ---------------------------------------------------------------------------------------------------------
# the verdict


def verdict_key(result) -> str:
    """The banner's key: the headline's status (``result.claim``: exploratory for a threshold chosen from these
    data), as a verdict key."""
    claim = result.claim
    key = "exploratory" if claim.status == "exploratory" else normalise_verdict(claim.verdict)
    return key if key in HEADLINES else "unknown"


def verdict_colour(key: str) -> str:
    return VERDICTS.get(key, VERDICTS["unknown"])[1]


def as_sentence(text: str) -> str:
    text = str(text).strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def headline(result) -> dict:
    """``word`` (banner), ``summary`` (the verdict in plain words: ``result.summary``), ``sentence``
    (``result.headline``: the verdict and its guarantee), ``second`` (the engine's own result on its narrower scope,
    when the headline is not it), ``explanation`` (what the verdict means, what every interval means under the
    result's guarantee, and why that guarantee is weaker than asked for, when it is) and ``colour``."""
    key = verdict_key(result)
    word, explanation = HEADLINES[key]
    claim = result.claim
    g = result.guarantee
    explanation += " " + as_sentence(f"Every interval in this report: {g.interval_meaning}")
    if g.note:
        explanation += " " + as_sentence(f"The guarantee is weaker than asked for: {g.note}")
    return {"key": key, "word": word, "summary": as_sentence(claim.summary), "sentence": as_sentence(result.headline),
            "second": claim.second, "explanation": explanation, "colour": verdict_colour(key)}


def not_backed_line(result) -> str | None:
    """Said under the verdict when its own run found evidence against its guarantee
    (``fairaudit.core.explain.not_backed``): the banner alone would read as a pass or a proof; None otherwise."""
    from fairaudit.core.explain import not_backed, not_backed_sentence

    return not_backed_sentence() if not_backed(result) else None


def progress_line(result) -> str:
    """How far the run went, in the result's own unit ("Rows processed: 32,561.")."""
    return as_sentence(f"{result.unit} processed: {count(result.steps)}")


def count_meaning(result) -> str:
    """What a leaf's n counts: the engine's declaration (``Engine.count_meaning``), else the steps that
    satisfied the leaf's condition."""
    engine = engine_of(result)
    declared = getattr(engine, "count_meaning", None) if engine is not None else None
    return declared or (f"the number of {result.unit} that counted for a probability or an average (those "
                        "satisfying its condition)")


def partial_line(result) -> str | None:
    """Why the run ended before its end (``result.stopped_reason``), or None for a complete run."""
    reason = result.stopped_reason
    return as_sentence(f"This result is partial: {reason}") if reason else None


def worst_line(result) -> str | None:
    """For a violated or undecided specification, the comparison the headline is about and the rule that chose it
    (``result.worst_node``, ``fairaudit.core.focus``), in words from the parsed specification — its name, what it
    compares, never a node id or the specification's text: "The violated comparison, ratio (favourable rate of
    sex = Female ÷ that of sex = Male ≥ 0.8), is violated: the ratio's estimate 0.1626 in [0.0166, 0.7925]."."""
    if verdict_key(result) == "true":
        return None
    worst = result.worst_node()
    if worst is None:
        return None
    from fairaudit.core.explain import clause_words, comparison_parts, fair_text, term_kind

    nodes = result.nodes
    by_id = {str(n["id"]): n for n in nodes}
    node = by_id[str(worst["id"])]
    words = _typeset_signs(clause_words(node["id"], nodes))
    which = f"{node['name']} ({words})" if node.get("name") else words
    verdict = {"true": "certified", "false": "violated"}.get(worst["verdict"], "undecided")
    if getattr(result, "scope", None) == "modelled":  # the engine's own verdict: about its model, not the population
        verdict += " for the modelled distribution"
    line = f"{worst['rule']}, {which}, is {verdict}"
    parts = comparison_parts(node["id"], nodes)
    if parts is not None:
        term = parts[0]
        f = term.get("final") or {}
        if term.get("kind") == "fair":  # its rates, never a midpoint
            line += f": its share is {fair_text(f)}"
        else:
            span = interval(f.get("lo"), f.get("hi"))
            line += f": the {term_kind(term)}'s estimate {num(f.get('estimate'))}" + (
                f" in {span}" if span.startswith("[") else "")
    else:
        f = node.get("final") or {}
        span = interval(f.get("lo"), f.get("hi"))
        if span != "—":
            line += f": the difference of its two sides lies in {span}"
    return as_sentence(line)


def _typeset_signs(text: str) -> str:
    """A clause's words as printed: a real minus sign before a number (``≥ -0.1`` → ``≥ −0.1``)."""
    return re.sub(r"(?<![\w])-(?=\d)", "−", text)


def suggestion_lines(result) -> list[str]:
    """Refinement suggestions for every undecided comparison (``fairaudit.core.suggest``), ending with what was tested;
    empty when nothing is undecided. Each comparison is named by its name and in words from the parsed specification
    (``fairaudit.core.explain.clause_label``), never by a node id or its text; detail lines are indented."""
    from dataclasses import replace

    from fairaudit.core.explain import PRETTY, children, clause_label, number, term_words
    from fairaudit.core.suggest import POST_HOC, lines, suggestions

    nodes = result.nodes
    by_id = {str(n["id"]): n for n in nodes}
    found = suggestions(result)
    out = []
    for s in found:
        node = by_id.get(str(s.node_id))
        if node is None:
            continue
        head = clause_label(node["id"], nodes)
        if s.form == "margin":
            kids = children(node["id"], nodes)
            subject = (f"{term_words(kids[0], nodes)} − {term_words(kids[1], nodes)}" if len(kids) == 2
                       else "left − right")
        else:
            subject = clause_label(node["id"], nodes, threshold=False).split(": ", 1)[-1]

        def said(t):
            return None if t is None else replace(t, text=f"{subject} {PRETTY.get(s.op, s.op)} {number(t.value)}")

        worded = replace(s, text=head, subject=subject, certify=said(s.certify), refute=said(s.refute))
        out.append(_typeset_signs(f"{head}: undecided."))
        out.extend("  " + _typeset_signs(as_sentence(line)) for line in lines(worded))
    if out:
        out.append(POST_HOC)
    return out


def audit_context(result) -> list[tuple[str, str]]:
    """("Rows audited", ...) and ("The guarantee assumes", ...) as the result states them; absent facts are left
    out (the dashboard's verdict line and the report's first page both show these)."""
    out = []
    claim = getattr(result, "claim", None)
    if claim is not None:
        from fairaudit.core.claim import chosen_line

        out.append(("The verdict is about", claim.about))
        chosen = chosen_line(result)
        if chosen:
            out.append(("Threshold chosen from the data", chosen))
    rows = getattr(result, "rows_text", None)
    if rows:
        out.append(("Rows audited", str(rows)))
    assumption = getattr(result, "assumption", None)
    if assumption:
        out.append(("The guarantee assumes", str(assumption)))
    return out


def result_warnings(result) -> list[str]:
    """Every warning the result carries (``AuditResult.warnings``), in order, without repeats."""
    found = list(getattr(result, "warnings", None) or [])
    return list(dict.fromkeys(str(w) for w in found if str(w).strip()))


def has_delta(result) -> bool:
    """Whether any interval of the result has a failure probability (the node table's δ column), i.e. whether
    its guarantee is a probabilistic one; sound and exact results have none to show."""
    return result.guarantee.kind == "probabilistic"


# ---------------------------------------------------------------------------------------------------------
# nodes


def node_rows(result) -> list[dict]:
    """One row per node in tree order: id, depth, expression, label (its name or its words, for a page), kind, estimate, interval, δ, n, verdict key/label."""
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
        estimate = values.fair or num(values.value)  # a Fair[...] term: its rates, never a midpoint
        if values.op is not None and (values.fair or not _missing(values.value)):
            estimate += f" ({values.threshold_text.replace('-', '−')})"
        kind = kind_label(n)
        if n["kind"] == "cmp" and values.quantity != "value":
            kind = f"comparison ({values.quantity})"
        rows.append({
            "id": n["id"], "depth": depth[n["id"]], "expression": text, "label": _row_label(n, nodes),
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


def node_label(result, node_id: str, threshold: bool = True) -> str:
    """A node as the report and the Report page name it: its name and its words from the parsed specification
    (``fairaudit.core.explain.clause_label``: "ratio: favourable rate of sex = Female ÷ that of sex = Male ≥ 0.8"),
    never its id."""
    from fairaudit.core.explain import clause_label

    return _typeset_signs(clause_label(str(node_id), result.nodes, threshold))


def _row_label(node, nodes) -> str:
    """A node table's row label on a page: a named clause by its name, any other node in short words from the
    parsed specification (``fairaudit.core.explain.clause_words``), never its id."""
    from fairaudit.core.explain import clause_words

    if node.get("name"):
        return str(node["name"])
    return _typeset_signs(clause_words(node["id"], nodes))


def chart_nodes(result, selected=()) -> list[str]:
    """Nodes that get a convergence plot: every comparison, then the selected nodes, in tree order."""
    chosen = {n.id for n in result.node_info if n.kind == "cmp"} | {str(s) for s in selected or ()}
    return [n.id for n in result.node_info if n.id in chosen]


def fair_nodes(result) -> list[str]:
    return [n.id for n in result.node_info if n.kind == "fair"]


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
    if is_population(result) and not generated_from_data(result):
        name = population_facts(result).get("name")
        return f"Fairness audit: {name}" if name and name != "program" else "Fairness audit of a population program"
    parts = []
    if data_facts.get("name"):
        parts.append(str(data_facts["name"]))
    if model_facts_.get("decisions"):
        parts.append("logged decisions")
    elif model_facts_.get("kind"):
        parts.append(f"{model_facts_['kind']} model")
    if is_population(result):  # generated from the dataset and the model
        parts.append("generated population")
    return "Fairness audit" + (f": {', '.join(parts)}" if parts else "")


VERSION_PACKAGES = ("fairaudit", "numpy", "pandas", "scipy", "scikit-learn", "altair", "vl-convert-python",
                    "fpdf2", "pyomo", "lark", "pyscipopt", "z3-solver", "mpmath")


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
