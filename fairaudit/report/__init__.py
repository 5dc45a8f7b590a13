"""The audit report as a PDF (fpdf2 + charts rendered offline by vl-convert; no browser, no network, no system fonts).

    pdf = build_pdf(result, dataset=ds, model=m)          # bytes
    write_pdf(result, "audit.pdf", dataset=ds, model=m)   # the `fairaudit audit --pdf` / `fairaudit report` hook
    png = first_page_png(pdf)                             # page 1 as PNG for a preview, or None without pdftoppm

``result`` is an ``AuditResult`` (or its JSON text / path / dict). What the PDF contains, page by page, is listed in
``fairaudit.report.pdf``; where the dataset and model facts come from in ``fairaudit.report.content``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

from fairaudit.base.errors import FairauditError

__all__ = ["build_pdf", "write_pdf", "check_output_path", "first_page_png", "load_result", "recorded_dataset"]


def load_result(source):
    """An ``AuditResult`` from a result, JSON text, a dict or a path; ``FairauditError`` (one line) if unreadable."""
    from fairaudit.core.trace import AuditResult

    if isinstance(source, AuditResult):
        return source
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("{"):
        path = Path(source)
        if not path.is_file():
            raise FairauditError(f"no such audit result file: {path}")
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise FairauditError(f"cannot read {path}: {err}") from None
    try:
        data = json.loads(source) if isinstance(source, (str, bytes)) else source
    except ValueError as err:
        raise FairauditError(f"not an audit result: invalid JSON ({err})") from None
    if not isinstance(data, dict) or not {"spec", "engine", "verdict", "nodes", "trace"} <= set(data):
        missing = sorted({"spec", "engine", "verdict", "nodes", "trace"} - set(data)) if isinstance(data, dict) else []
        raise FairauditError("not an audit result (the JSON written by `fairaudit audit --json`): "
                             + (f"missing {', '.join(missing)}" if missing else f"a JSON {type(data).__name__}"))
    problem = _shape_problem(data)
    if problem:
        raise FairauditError(f"not a valid audit result: {problem}")
    try:
        return AuditResult.from_json(data)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
        detail = f"missing field {err}" if isinstance(err, KeyError) else str(err).splitlines()[0][:120]
        raise FairauditError(f"not a valid audit result: {detail}") from None


_SHAPE = {"spec": str, "engine": str, "options": dict, "info": dict, "nodes": list, "trace": list}


def _shape_problem(data: dict) -> str | None:
    """What makes a decoded result unusable by the report (a field of the wrong type), or None. Checked up
    front so that a damaged file is one line and exit 2, not an error deep inside the PDF code."""
    for key, kind in _SHAPE.items():
        if key in data and not isinstance(data[key], kind):
            return f"'{key}' should be a JSON {'object' if kind is dict else 'array' if kind is list else 'string'}"
    if data.get("verdict") not in ("true", "false", "unknown"):
        return f"'verdict' should be \"true\", \"false\" or \"unknown\", not {str(data.get('verdict'))[:40]!r}"
    for key in ("stop_step", "steps"):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            return f"'{key}' should be a whole number"
    info = data.get("info") or {}
    # the typed fields, and where a result written before they existed kept them (``info``)
    for where, holder in (("", data), ("info.", info)):
        if "warnings" in holder and not (isinstance(holder["warnings"], list)
                                         and all(isinstance(w, str) for w in holder["warnings"])):
            return f"'{where}warnings' should be a list of sentences"
        for key in ("unit", "assumption"):
            if key in holder and holder[key] is not None and not isinstance(holder[key], str):
                return f"'{where}{key}' should be a string"
        for key in ("rows", "provenance", "guarantee"):
            if key in holder and holder[key] is not None and not isinstance(holder[key], dict):
                return f"'{where}{key}' should be a JSON object"
    for node in data["nodes"]:
        if not isinstance(node, dict) or not all(isinstance(node.get(k), str) for k in ("id", "text", "kind")):
            return "every node needs string 'id', 'text' and 'kind'"
    if not all(isinstance(row, dict) for row in data["trace"]):
        return "every trace row should be a JSON object"
    return None


def recorded_dataset(result):
    """The dataset the result names, reloaded when it is a built-in one: ``(dataset | None, note | None)``.

    When the result recorded the dataset's content hash and the reloaded rows differ, the dataset is not used
    (note says why)."""
    from fairaudit.report.content import dataset_facts

    facts = dataset_facts(result)
    name = facts.get("name")
    if not name:
        return None, None
    try:
        from fairaudit import data

        if name not in data.names():
            return None, (f"The dataset '{name}' is not a built-in one; pass it with --data to include "
                          "per-group statistics.")
        ds = data.load(name)
    except Exception as err:  # noqa: BLE001
        return None, f"The dataset '{name}' could not be reloaded ({err})."
    recorded_hash = facts.get("content_hash")
    recorded_of = facts.get("hash_of")
    if recorded_hash and recorded_of != ds.hash_of:  # another kind of hash (an older fairaudit's): not comparable
        return ds, (f"The built-in dataset '{name}' was reloaded by name; the audit recorded a hash of "
                    f"{recorded_of or 'another form of its rows'}, which cannot be checked against "
                    f"{ds.hash_of}.")
    if recorded_hash and recorded_hash != ds.content_hash:
        return None, (f"The built-in dataset '{name}' has changed since the audit (content hash differs); "
                      "per-group statistics are not shown.")
    note = None if recorded_hash else (f"The built-in dataset '{name}' was reloaded by name; the audit result "
                                       "recorded no content hash to check it against.")
    return ds, note


def build_pdf(result, *, dataset=None, model=None, selected_nodes: Iterable[str] = (), title: str | None = None,
              generated_at=None, load_dataset: bool = True, on_progress=None, population=None,
              comparison=None) -> bytes:
    """The audit report as PDF bytes.

    ``dataset`` / ``model``: the ``Dataset`` / ``Model`` objects of the audit (or dicts of their facts, see
    ``fairaudit.report.content``); when absent, what the result recorded is used, and with ``load_dataset`` a
    built-in dataset named by the result is reloaded for the per-group statistics. An audit of a population
    program has its own section instead (its name and sha256 from ``result.provenance["population"]``) and no
    dataset, model or per-group statistics; ``population`` (its ``.fr`` path or text, a ``Population`` or a
    parsed ``Program``, see ``content.population_facts``) prints the program when its sha256 is the recorded one.
    ``selected_nodes``: node ids that also get a convergence plot (every comparison gets one). ``generated_at``: a
    ``datetime`` (default now).

    ``comparison``: a ``fairaudit.comparison.CompareResult`` of the same specification, added as a section of its own
    (``fairaudit.report.compare.comparison_section``); ``FairauditError`` when it asks another specification.

    ``on_progress(Progress)`` (``fairaudit.base.progress``) is told how far the report is, one unit per figure
    rendered (the slow part) and one for the layout; returning False cancels the report (``FairauditError``).
    """
    from fairaudit.core.findings import Findings
    from fairaudit.base.progress import Progress
    from fairaudit.report import charts, content
    from fairaudit.report.groups import group_table
    from fairaudit.report.pdf import layout

    result = load_result(result)
    known = {n.id for n in result.node_info}
    unknown = [s for s in selected_nodes or () if str(s) not in known]
    if unknown:
        raise FairauditError(f"unknown node id(s) {', '.join(map(str, unknown))}; "
                             f"the specification has {', '.join(sorted(known, key=_node_order))}")
    if comparison is not None and " ".join(comparison.spec.split()) != " ".join(result.spec.split()):
        raise FairauditError("the comparison asks another specification than the audit: it cannot be a section of "
                             "this report")
    moment = content.timestamp(generated_at)
    note = None
    if content.generated_from_data(result) and population is None:
        population = _generated_program(result, dataset, model)
    program = content.population_facts(result, population) if content.is_population(result) else None
    if program is not None and not content.generated_from_data(result):
        dataset = model = None  # nothing about rows applies: the individuals and decisions are the program's
        load_dataset = False
    elif program is None and population is not None:
        raise FairauditError("this audit result is about a dataset's rows, not a population program: "
                             "a population program cannot be added to its report")
    data_obj = dataset if dataset is not None and not isinstance(dataset, dict) else None
    if data_obj is None and load_dataset and not isinstance(dataset, dict):
        data_obj, note = recorded_dataset(result)
    data_facts = content.dataset_facts(result, dataset if dataset is not None else data_obj)
    model_facts = content.model_facts(result, model)
    title = title or content.default_title(result, data_facts, model_facts)

    stats = None
    if data_obj is not None:
        use_model = model if model is not None and hasattr(model, "predict") else None
        try:
            stats = group_table(data_obj, use_model)
        except Exception as err:  # noqa: BLE001 - the report still has everything else
            note = f"Per-group statistics could not be computed: {err}"
        if stats is not None and not len(stats):
            stats = None
        if stats is None and note is None:
            note = "The dataset declares no protected attribute, so there are no groups to describe."

    findings = getattr(result, "findings", None) or Findings()
    # one step has no convergence to plot (the node table says so)
    over_steps = len(result.trace_table) > 1
    chart_ids = content.chart_nodes(result, selected_nodes) if over_steps else []
    rate_ids = content.fair_nodes(result) if over_steps else []
    tasks = (["the specification tree"] + [f"the convergence of {nid}" for nid in chart_ids]
             + [f"the rates of {nid}" for nid in rate_ids] + (["the group statistics"] if stats is not None else [])
             + (["the groups the run found"] if findings.groups else [])
             + (["the influence of each feature"] if findings.influence else [])
             + (["the comparison of models"] if comparison is not None else []) + ["the pages"])
    progress = Progress("Building the PDF report", len(tasks), "parts", on_progress)
    queue = iter(tasks[1:] + [None])

    def done():
        """One part done; the message names the part being made now (the receiver may cancel)."""
        if not progress.advance(message=next(queue) or "done"):
            raise FairauditError("the report was cancelled")

    if not progress(0, message=tasks[0]):
        raise FairauditError("the report was cancelled")
    frame = result.to_frame()
    tree = charts.tree_figure(result)
    done()
    convergence = []
    for nid in chart_ids:
        convergence.append((nid, charts.convergence_figure(result, frame, nid)))
        done()
    rates = []
    for nid in rate_ids:
        rates.append((nid, charts.rates_figure(result, frame, nid), charts.undecided_where_figure(result, nid)))
        done()
    group_fig = None
    if stats is not None:
        group_fig = charts.group_figure(stats.drop(columns=[c for c in ("sel", "sel_lo", "sel_hi") if c in stats]))
        done()
    found = {}
    if findings.groups:
        found["groups"] = charts.findings_group_figure(findings)
        done()
    if findings.influence:
        found["influence"] = charts.findings_influence_figure(findings)
        done()
    sections = []
    if comparison is not None:
        from fairaudit.report.compare import comparison_section

        sections.append(lambda pdf: comparison_section(pdf, comparison))
    pdf = layout(result, title=title, moment=moment, data_facts=data_facts, model_facts_=model_facts, tree=tree,
                 convergence=convergence, rates=rates, stats=stats, group_fig=group_fig, group_note=note,
                 program=program, findings_figures=found, sections=sections)
    if comparison is not None:
        done()
    done()
    return pdf


def _generated_program(result, dataset, model) -> str | None:
    """The text of a population program generated from ``dataset`` and ``model`` as the audit generated it
    (``fairaudit.engines.fairsquare.generate.population_program``, the structure the result's options record), or None
    when they are not at hand or it cannot be made (``content.population_facts`` then checks its sha256)."""
    if dataset is None or isinstance(dataset, dict) or model is None or isinstance(model, dict):
        return None
    try:
        from fairaudit.api import GENERATED_OPTION
        from fairaudit.engines.fairsquare.generate import population_program

        structure = (result.options or {}).get(GENERATED_OPTION) or "independent"
        return population_program(dataset, model=model, structure=structure)
    except Exception:  # noqa: BLE001 - the report then says how to print the program
        return None


def _node_order(nid: str):
    digits = "".join(ch for ch in nid if ch.isdigit())
    return (int(digits) if digits else 0, nid)


def check_output_path(path, *, force: bool = False) -> Path:
    """``path`` as a Path a report can be written to (``fairaudit.core.outputs.check_output``: a file in an existing
    folder; an existing file only when it is a fairaudit report, or with ``force``); ``FairauditError`` otherwise
    (call it before a long audit)."""
    from fairaudit.core.outputs import check_output

    return check_output(path, "pdf", force=force, what="report")


def write_pdf(result, path, *, force: bool = False, **kw) -> Path:
    """Build the report (``build_pdf(result, **kw)``) and write it to ``path``; ``FairauditError`` (one line) when
    the path cannot be written, or holds another kind of file (``force=True`` replaces it)."""
    from fairaudit.core.outputs import write_atomically

    path = check_output_path(path, force=force)
    return write_atomically(path, build_pdf(result, **kw), what="report")


def first_page_png(pdf_bytes: bytes, dpi: int = 80, timeout: float = 30.0) -> bytes | None:
    """Page 1 of a PDF as PNG bytes, rasterised by poppler's ``pdftoppm``; None when it is not installed or fails.

    (pypdf cannot rasterise and fpdf2 only writes; ``pdftoppm`` comes with poppler-utils on Debian/Ubuntu,
    ``brew install poppler`` on macOS, conda-forge ``poppler`` elsewhere.)
    """
    exe = shutil.which("pdftoppm")
    if exe is None or not pdf_bytes:
        return None
    with tempfile.TemporaryDirectory(prefix="fairaudit-preview-") as tmp:
        src = Path(tmp) / "report.pdf"
        src.write_bytes(pdf_bytes)
        out = Path(tmp) / "page"
        try:
            subprocess.run([exe, "-png", "-r", str(int(dpi)), "-f", "1", "-l", "1", "-singlefile", str(src), str(out)],
                           check=True, capture_output=True, timeout=timeout)
        except (subprocess.SubprocessError, OSError):
            return None
        png = out.with_suffix(".png")
        return png.read_bytes() if png.exists() else None
