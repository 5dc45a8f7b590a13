"""An engine's findings (issue 15) in the PDF, in `fairaudit report --pdf` from a saved result, and in the CLI's
summary: the per-group table with the most / least favoured marked, the metrics, the influence chart, the graph as
its edges — only when present; drawn from ``result.findings`` whichever engine made it."""
from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
from pathlib import Path

import pytest

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("vl_convert")

from fairaudit.core import findings_view as fv  # noqa: E402
from fairaudit.core.findings import Findings  # noqa: E402
from fairaudit.report import build_pdf  # noqa: E402
from tests.viz.findings_sample import sample_findings  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _flat(pdf: bytes) -> str:
    return " ".join("\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


def _images(pdf: bytes) -> int:
    return sum(len(page.images) for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)


@pytest.fixture(scope="module")
def plain():
    """A small real audit (exact on the dataset's rows), whose engine reports no findings."""
    from fairaudit import data, models
    from fairaudit.api import audit

    ds = data.load("ricci")
    model = models.train(ds, "tree", seed=0)
    result = audit(ds, 'E[pred | race == "White"] - E[pred | race == "Black"] < 0.3', engine="dataset",
                   model=model)
    assert not result.findings
    return result


@pytest.fixture(scope="module")
def found(plain):
    return dataclasses.replace(plain, findings=sample_findings())


def test_the_pdf_has_the_groups_section_only_with_findings(plain, found):
    with_findings, without = build_pdf(found, load_dataset=False), build_pdf(plain, load_dataset=False)
    text, bare = _flat(with_findings), _flat(without)
    assert "Favourable rate in each group" in text and "Favourable rate in each group" not in bare
    for label in ("sex = Male, race = White", "sex = Female, race = Black"):
        assert label in text
    assert "most favoured" in text and "least favoured" in text
    assert "disparate impact" in text and "[0.1818, 0.2258]" in text  # the metrics, by the library's rule
    assert "Each feature's contribution to statistical parity" in text  # the findings' own words
    assert "sex → education" in text and "age → hours_per_week" in text  # the graph as its edges
    assert "Dependencies modelled" not in bare
    assert _images(with_findings) == _images(without) + 2  # the group chart and the influence chart


def test_only_what_the_findings_carry(plain):
    only_groups = dataclasses.replace(sample_findings(ci=False, influence=False, edges=False), metrics=())
    text = _flat(build_pdf(dataclasses.replace(plain, findings=only_groups), load_dataset=False))
    assert "Favourable rate in each group" in text and "most favoured" in text
    for absent in ("Group metrics", "Influence of each feature", "Dependencies modelled", "confidence interval"):
        assert absent not in text, absent


def test_report_from_a_saved_result_draws_the_findings(found, tmp_path):
    saved = tmp_path / "result.json"
    saved.write_text(found.to_json(), encoding="utf-8")
    out = tmp_path / "report.pdf"
    proc = subprocess.run([sys.executable, "-m", "fairaudit", "report", str(saved), "--pdf", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = _flat(out.read_bytes())
    assert "least favoured" in text and "sex = Female, race = Black" in text and "sex → education" in text


def test_the_cli_summary_lists_groups_marks_and_metrics(plain, found, capsys):
    from fairaudit.cli.audit import print_summary

    print_summary(found)
    out = capsys.readouterr().out
    lines = out.splitlines()
    most = next(line for line in lines if "most favoured" in line)
    least = next(line for line in lines if "least favoured" in line)
    assert "sex = Male, race = White" in most and "[0.31, 0.33]" in most
    assert "sex = Female, race = Black" in least
    assert any(line.startswith("metric:") and "statistical parity [0.24, 0.27]" in line for line in lines)
    assert any(line.startswith("influence:") and line.index("age") < line.index("education") for line in lines)
    print_summary(plain)
    assert "groups:" not in capsys.readouterr().out


def test_many_groups_print_in_a_few_lines():
    from fairaudit.core.findings import GroupRate

    many = Findings(groups=tuple(GroupRate((("g", str(i)),), i / 50, i / 50) for i in range(40)))
    lines = fv.summary_lines(many, max_groups=8)
    assert len(lines) <= 10 and "… 32 more" in " ".join(lines)
    assert any("g = 39" in line and "most favoured" in line for line in lines)
    assert any("g = 0 " in line and "least favoured" in line for line in lines)


def test_tables():
    rows = fv.group_table(sample_findings())
    assert list(rows[0]) == [fv.GROUP, fv.RATE, fv.SHARE, fv.CI, fv.MARK]
    assert rows[0][fv.MARK] == "most favoured" and rows[-1][fv.MARK] == "least favoured"
    assert rows[1][fv.RATE] == "0.18" and rows[0][fv.SHARE] == "61.0%"
    no_ci = fv.group_table(sample_findings(ci=False))
    assert fv.CI not in no_ci[0]
    metrics = fv.metric_table(sample_findings())
    assert metrics[0]["metric"] == "disparate impact" and metrics[0][fv.CI] == "–" and metrics[2][fv.CI] != "–"
    assert [r["feature"] for r in fv.influence_table(sample_findings())][:2] == ["age", "education"]


def test_the_groups_in_the_data_table_has_a_selection_rate_for_a_numeric_attribute():
    """German's age is split at its median ("< 33" / ">= 33") for the base rates; the model's selection rate must
    use the same groups (it used to match rows by value and leave them empty)."""
    import numpy as np

    from fairaudit import data
    from fairaudit.models.training import train
    from fairaudit.report.groups import group_table

    ds = data.load("german")
    model = train(ds, "tree", seed=0)
    table = group_table(ds, model)
    age = table[table["attribute"] == "age"]
    assert len(age) == 2 and age["sel"].notna().all()
    pred = np.asarray(model.predict(ds.frame))
    cut = float(age["group"].iloc[0].split()[-1])
    young = (ds.frame["age"] < cut).to_numpy()
    assert float(age["sel"].iloc[0]) == pred[young].mean()
