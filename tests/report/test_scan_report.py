"""A scan's regulatory PDF (issue 31): "NYC LL144 bias audit" and "EEOC four-fifths" — every cell's count, rate
and impact ratio with its interval, the unknowns, the < 2 % exclusions, the guarantee, the audit's date, data
source and rows; the scoring-rate version; ``fairaudit scan --pdf`` never writes over an input."""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

pypdf = pytest.importorskip("pypdf")

from fairaudit.core.outputs import file_kind  # noqa: E402
from fairaudit.report.scan import build_scan_pdf, with_interval  # noqa: E402
from fairaudit.subgroups.scan import scan  # noqa: E402
from tests.console import run_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PRED = 'income == ">50K"'


def _flat(pdf: bytes) -> str:
    return " ".join("\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


@pytest.fixture(scope="module")
def result():
    return scan("adult", ["sex", "race"], pred=PRED, depth=2)


@pytest.mark.parametrize("template, title, columns", [
    ("ll144", "NYC Local Law 144 bias audit", ["category", "applicants", "share", "selected", "note"]),
    ("eeoc", "EEOC four-fifths rule", ["group", "applicants", "selected", "below 4/5", "interval vs 4/5", "Fisher p",
                                       "flips"]),
])
def test_every_cell_with_its_interval_and_the_guarantee(result, template, title, columns):
    text = _flat(build_scan_pdf(result, template))
    assert title in text
    for column in columns + ["selection rate [interval]", "impact ratio [interval]"]:
        assert column in text
    for cell in result.cells:  # every count, rate and ratio, each with its interval
        assert cell.name in text
        assert f"{cell.rows:,}" in text and f"{cell.selected:,}" in text
        assert with_interval(cell.rate) in text, cell.id
        if cell.impact_ratio is not None:
            assert with_interval(cell.impact_ratio) in text, cell.id
    assert " ".join(result.guarantee.split()) in text
    assert str(result.date) in text and "adult" in text and f"{result.rows:,}" in text
    excluded = [c for c in result.cells if c.flag == "excluded"]
    assert excluded and "Left out of the impact ratios (under 2% of the rows" in text and "Reason:" in text
    assert "Unknown" in text
    assert "Female × Black" in text  # the compact name in the table, under its "sex × race" heading
    assert "sex = Female and race = Black" in text  # the sentence's name in the finding
    if template == "eeoc":
        assert "Certified below 0.8 by the interval" in text and "estimated below 4/5" in text
    else:
        assert "certified below" not in text.lower() and "comparison level" not in text


def test_the_convergence_chart_is_titled_with_the_cells_sentence_name(result):
    from fairaudit.viz.scan import cell_convergence

    chart = cell_convergence(result, "sex=Female|race=Black")
    assert chart is not None and chart.to_dict()["title"]["text"][0] == "sex = Female and race = Black:"


def test_scoring_model_gets_the_scoring_rate(result):
    scoring = dataclasses.replace(result, rate_kind="scoring")
    text = _flat(build_scan_pdf(scoring, "ll144"))
    assert "(scoring rate)" in text and "scoring rate [interval]" in text
    assert "above the median score" in text


def test_the_pdf_is_known_as_a_report_and_reads_from_json(result, tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(build_scan_pdf(result.to_json(), "eeoc"))
    assert file_kind(path) == "pdf"


def test_cli_pdf_never_overwrites_an_input(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("sex,y\n" + "a,1\nb,0\n" * 30)
    run = lambda *extra: run_main(  # noqa: E731
        capsys, "scan", "--data", str(data), "--pred", "y == 1", "--protected", "sex", "--mode", "exact", *extra,
        cwd=ROOT)
    bad = run("--pdf", str(data))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    out = tmp_path / "r.pdf"
    ok = run("--pdf", str(out), "--template", "eeoc")
    assert ok.returncode in (0, 1, 3), ok.stderr
    assert file_kind(out) == "pdf" and "EEOC four-fifths rule" in _flat(out.read_bytes())
    fresh = tmp_path / "new.out"
    same = run("--pdf", str(fresh), "--csv", str(fresh))
    assert same.returncode == 2 and "different files" in same.stderr
