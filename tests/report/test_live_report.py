"""The report of a live log's audit (``fairaudit.engines.monitor.livelog.live_audit``): its Dataset section says how many rows were
read while the log was watched and why it has no content hash (a growing log), never "not recorded"; a verdict its
own run found evidence against (COMPAS appended in ``decile_score`` order: drift) says under its banner that it is
not backed by its guarantee, as the CLI's exit code 3 does."""
from __future__ import annotations

import io

import numpy as np
import pytest

from fairaudit import data, engines
from fairaudit.core.explain import NOT_BACKED, not_backed
from fairaudit.engines.monitor.livelog import live_audit
from fairaudit.models import from_expression
from fairaudit.report import build_pdf, content
from fairaudit.core.driver import last
from fairaudit.spec import parse

pypdf = pytest.importorskip("pypdf")

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] >= -0.1 and E[pred | sex == "Female"] >= 0.3'
PRED = "decile_score <= 4"


def _live(frame, where=None):
    from fairaudit.spec import parse_event

    opts = engines.get("monitor").resolve_options({"order": "given", "stop": False})
    decide = from_expression(PRED, data.load("compas")).predict
    chunks = np.array_split(np.arange(len(frame)), 20)
    return last(live_audit(parse(SPEC), iter(frame.iloc[c] for c in chunks), decide=decide, options=opts,
                           where=parse_event(where) if where else None,
                           describe={"dataset": "decisions.csv", "follow": "decisions.csv", "pred": PRED,
                                     "where": where}))


def _text(pdf: bytes) -> str:
    return " ".join("\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


@pytest.fixture(scope="module")
def compas():
    return data.load("compas").frame


def test_a_live_logs_rows_and_hash_are_said_not_unrecorded(compas):
    result = _live(compas.iloc[:3000])
    lines = dict(content.dataset_lines(content.dataset_facts(result)))
    assert lines["rows"].startswith("3,000 read while it was watched"), lines
    assert lines["content hash"].startswith("none: a live log keeps growing"), lines
    assert content.NOT_RECORDED not in lines.values()
    filtered = _live(compas.iloc[:3000], where='sex == "Male"')
    lines = dict(content.dataset_lines(content.dataset_facts(filtered)))
    matching = int((compas.iloc[:3000]["sex"] == "Male").sum())
    assert lines["rows audited"].startswith(f"{matching:,} (the rows matching"), lines  # not the rows read
    assert filtered.rows_text.startswith(f"the {matching:,} rows matching sex == \"Male\" among"), filtered.rows_text
    text = _text(build_pdf(result))
    assert "read while it was watched" in text and "rows not recorded" not in text


def test_a_verdict_its_run_found_evidence_against_says_so_under_the_banner(compas):
    drifting = _live(compas.sort_values("decile_score", kind="stable").iloc[:6000])
    assert drifting.verdict in ("true", "false") and drifting.assumption_broken and not_backed(drifting)
    assert content.not_backed_line(drifting).startswith(f"This verdict is {NOT_BACKED}")
    assert f"This verdict is {NOT_BACKED}" in _text(build_pdf(drifting))
    steady = _live(compas.iloc[:3000])
    assert not steady.assumption_broken and content.not_backed_line(steady) is None
