"""Issue 44, item 5: bias-audit packs that match the rules — page 1 of every scan PDF states the finding; the LL144
pack reports what 6 RCNY §5-301/§5-302 name with no pass/fail wording; the EEOC pack puts Fisher's exact test and
the flip count beside the four-fifths rule; the reference category's ratio is exactly 1; the rows line says which
rows, with the data's hash. Item 8: the 80 % rule template compares every group with the most-selected one."""
from __future__ import annotations

import io
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit.base.errors import FairauditError
from fairaudit.report.scan import build_scan_pdf
from fairaudit.subgroups import regulatory
from fairaudit.subgroups.regulatory import About

pypdf = pytest.importorskip("pypdf")

REASON = "no historical decisions yet: the tool scored 4,000 synthetic applicants drawn from last year's pool"


def hiring_frame(n: int = 4000, seed: int = 3) -> pd.DataFrame:
    """sex × race with one planted gap (Female × B selected at a third of the others' rate), a race under 2 % and
    some rows of unknown race."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    race = rng.choice(["A", "B", "C", "D"], n, p=[0.5, 0.3, 0.19, 0.01]).astype(object)
    rate = np.where((sex == "Female") & (race == "B"), 0.15, 0.45)
    hired = (rng.random(n) < rate).astype(int)
    race[rng.random(n) < 0.01] = None
    return pd.DataFrame({"sex": sex, "race": race, "hired": hired, "years": rng.normal(5, 2, n).round(1)})


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("packs") / "hiring.csv"
    hiring_frame().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def result(csv_path):
    return fairaudit.scan(str(csv_path), ["sex", "race"], pred="hired == 1", looks=0)


def _pages(pdf: bytes) -> list[str]:
    return [" ".join((p.extract_text() or "").split()) for p in pypdf.PdfReader(io.BytesIO(pdf)).pages]


def _words(text: str) -> set[str]:
    banned = re.compile(r"\b(pass|passes|passed|fail|fails|failed|four-fifths)\b|4/5", re.IGNORECASE)
    return {m.group(0).lower() for m in banned.finditer(text)}


def test_the_planted_gap_is_certified_below_and_the_reference_ratio_is_exactly_one(result):
    assert "sex=Female|race=B" in [c.id for c in result.certified_below()]
    for table in result.tables:
        ref = result.cell(table.reference)
        assert ref.is_reference and ref.rate.estimate == max(c.rate.estimate for c in table.cells
                                                             if c.flag != "excluded")
        r = ref.impact_ratio
        assert (r.estimate, r.lo, r.hi) == (1.0, 1.0, 1.0)
        assert ref.flag != "undecided"
    back = fairaudit.ScanResult.from_json(result.to_json()) if hasattr(fairaudit, "ScanResult") else None
    if back is not None:
        assert back.to_json() == result.to_json()


@pytest.mark.parametrize("pack", ["ll144", "eeoc"])
def test_page_one_states_the_finding_in_one_box(result, pack):
    page1 = _pages(build_scan_pdf(result, pack, about=About(data_kind="historical")))[0]
    assert "Finding" in page1
    assert "certified below 0.8" in page1.lower() and "Undecided (the interval still contains 0.8)" in page1
    below = result.certified_below()
    assert below
    for cell in below[:6]:  # each named with its interval
        name = cell.name if cell.depth > 1 else f"{cell.table[0]} = {cell.name}"
        assert f"{name} {regulatory._interval(cell.impact_ratio)}" in page1, cell.id
    for cell in result.undecided()[:6]:
        assert regulatory._interval(cell.impact_ratio) in page1, cell.id
    assert "impact ratio 1 by definition" in page1


def test_the_ll144_pack_has_what_the_rule_names_and_no_pass_fail_words(result, csv_path):
    about = About(data_kind="test", test_data_reason=REASON, distribution_date="2026-03-01")
    pdf_text = " ".join(_pages(build_scan_pdf(result, "ll144", about=about)))
    csv_text = regulatory.to_csv(result, "ll144", about)
    for text in (pdf_text, csv_text):
        assert _words(text) == set(), _words(text)
        assert str(result.date) in text  # the audit date
        assert "hiring.csv" in text  # the data source
        assert "test data" in text and REASON in text  # historical or test, and why
        assert "2026-03-01" in text  # the tool's distribution date
        assert result.data_hash in text  # the data's hash
    unknown = {t.name: t.unknown for t in result.tables}
    assert unknown["race"] > 0
    assert f"race {unknown['race']:,}" in pdf_text and f"race {unknown['race']:,}" in csv_text  # unknown count
    small = [c for c in result.cells if c.share < 0.02]
    assert small and all(c.flag == "excluded" for c in small)
    page1 = _pages(build_scan_pdf(result, "ll144", about=about))[0]
    for c in small:  # the < 2 % categories on page 1: count, rate, the stated reason
        name = c.name if c.depth > 1 else f"{c.table[0]} = {c.name}"
        assert f"{name} ({c.rows:,} individuals, rate {c.rate.estimate:.3f}" in page1
    assert "Reason for leaving them out" in page1 and "6 RCNY §5-301(d)" in page1
    custom = About(data_kind="historical", exclusion_reason="too few applicants to compare")
    assert "too few applicants to compare" in " ".join(_pages(build_scan_pdf(result, "ll144", about=custom)))
    assert "historical data" in regulatory.to_csv(result, "ll144", custom)
    table = pd.read_csv(io.StringIO(csv_text), skiprows=len(regulatory.preamble(result, "ll144", about)),
                        keep_default_na=False)
    rows = table[table["category"] != "Unknown"]
    assert set(rows.loc[rows["under_2_percent"] == "yes", "category"]) == {c.name for c in small}
    assert "flag" not in table.columns


def test_the_rows_line_says_which_rows_with_the_hash(csv_path):
    r = fairaudit.scan(str(csv_path), ["sex", "race"], model="logreg", label="hired", looks=0)
    total = len(hiring_frame())
    assert r.rows_line().startswith(f"{r.rows:,} rows: the held-out 25 % of hiring.csv ({total:,} rows")
    assert r.data_hash and r.hash_of
    page1 = _pages(build_scan_pdf(r, "eeoc"))[0]
    assert "the held-out 25 % of hiring.csv" in page1 and r.data_hash[:40] in page1.replace(" ", "")
    back = fairaudit.subgroups.ScanResult.from_json(r.to_json())
    assert back.rows_line() == r.rows_line() and back.data_hash == r.data_hash


def test_the_eeoc_pack_has_fisher_and_the_flips(result):
    from scipy.stats import fisher_exact

    table = pd.read_csv(io.StringIO(regulatory.to_csv(result, "eeoc")),
                        skiprows=len(regulatory.preamble(result, "eeoc")), keep_default_na=False)
    cell = result.cell("sex=Female|race=B")
    ref = result.cell(cell.reference)
    row = table[(table["group_type"] == "sex × race") & (table["group"] == cell.name)].iloc[0]
    expected = fisher_exact([[cell.selected, cell.rows - cell.selected], [ref.selected, ref.rows - ref.selected]],
                            alternative="two-sided")[1]
    assert float(row["fisher_p"]) == pytest.approx(expected, rel=1e-12)
    # the flip count by brute force: the fewest added selections that bring the ratio to 4/5
    level = Fraction(4, 5) * Fraction(ref.selected, ref.rows)
    k = next(k for k in range(cell.rows + 1) if Fraction(cell.selected + k, cell.rows) >= level)
    assert int(row["flips"]) == k and k > regulatory.PRACTICAL_FLIPS
    assert row["interval"] == "certified_below" and row["below_four_fifths"] == "yes"
    highest = table[table["interval"] == "highest"]
    assert len(highest) == len(result.tables) and set(highest["impact_ratio"]) == {"1.0"}
    assert set(highest["fisher_p"]) == {""} and set(highest["flips"]) == {""}
    text = " ".join(_pages(build_scan_pdf(result, "eeoc")))
    assert "Fisher p" in text and "flips" in text and "two-sided Fisher exact test" in text
    assert "Practical significance" in text and "Statistical significance" in text
    assert regulatory.p_text(expected) in text


def test_fisher_and_flips_on_a_small_table():
    from scipy.stats import fisher_exact

    assert regulatory.fisher_p(2, 10, 8, 10) == pytest.approx(fisher_exact([[2, 8], [8, 2]])[1], rel=1e-12)
    # rates 2/10 and 8/10: 4/5 of 0.8 is 0.64, 7 of 10 are needed: 5 flips
    assert regulatory.flips(2, 10, 8, 10, 0.8) == 5
    # at 0.8 exactly (8/10 vs 10/10): one removed selection takes it under
    assert regulatory.flips(8, 10, 10, 10, 0.8) == 1
    assert regulatory.flips(3, 10, 0, 10, 0.8) is None


def test_about_checks_test_data_needs_a_reason():
    with pytest.raises(FairauditError, match="test-data-reason"):
        About(data_kind="test")
    with pytest.raises(FairauditError):
        About(data_kind="simulated")
    assert "not stated" in About().data_line()


def test_cli_pack_options(csv_path, tmp_path):
    from tests.test_scan import _cli

    out = tmp_path / "ll.csv"
    code, _, err = _cli(["scan", "--data", str(csv_path), "--pred", "hired == 1", "--protected", "sex", "race",
                         "--csv", str(out), "--pack", "ll144", "--data-kind", "test", "--test-data-reason", REASON,
                         "--distribution-date", "2026-03-01", "--exclusion-reason", "too few to compare"])
    assert code == 1, err
    text = out.read_text()
    assert REASON in text and "2026-03-01" in text and "too few to compare" in text and not _words(text)
    code, _, err = _cli(["scan", "--data", str(csv_path), "--pred", "hired == 1", "--protected", "sex",
                         "--data-kind", "test"])
    assert code == 2 and "--test-data-reason" in err and len(err.strip().splitlines()) == 1


def test_the_eighty_percent_template_compares_each_group_with_the_most_selected():
    from fairaudit.spec import parse
    from fairaudit.spec.templates import most_selected, render

    frame = hiring_frame()
    groups = sorted(frame["race"].dropna().unique())
    best = most_selected(groups, "race", frame, frame["hired"].to_numpy())
    rates = frame.groupby("race")["hired"].mean()
    assert best == rates.idxmax()
    text = render("disparate_impact", attribute="race", groups=groups, reference=best)
    parse(text)
    assert text.count(" / ") == len(groups) - 1 and text.count(f'/ E[pred | race == "{best}"] >= 0.8') == 3
    for g in groups:
        if g != best:
            assert f'E[pred | race == "{g}"] / E[pred | race == "{best}"] >= 0.8' in text
