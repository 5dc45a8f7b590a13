"""Issue 44, item 5: bias-audit packs that match the rules — page 1 of every scan PDF states the finding; the LL144
pack reports what 6 RCNY §5-301/§5-302 name with no pass/fail wording; the EEOC pack puts Fisher's exact test and
the flip count beside the four-fifths rule; the reference category's ratio is exactly 1; the rows line says which
rows, with the data's hash. Item 8: the 80 % rule template compares every group with the most-selected one."""
from __future__ import annotations

import copy
import dataclasses
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


def _box(page1: str, head: str) -> str:
    """Page 1's finding box: from its heading to the facts table."""
    start = page1.index(head)
    return page1[start:page1.index("audit date", start)]


def test_eeoc_page_one_leads_with_the_categories_estimated_below_four_fifths(result):
    """Item 1: the box leads with the categories whose estimate is under 4/5 (interval, Fisher p, flips, what the
    interval says), then those certified below, then the undecided, then what each column establishes."""
    head, lines = regulatory.finding(result, "eeoc")
    assert lines[0].startswith("Impact ratio estimated below 4/5 (0.8)") and "adverse impact" in lines[0]
    assert lines[1].startswith("Certified below 0.8 by the interval")
    assert lines[2].startswith("Undecided (the interval still contains 0.8)")
    assert lines[3].startswith("What each establishes")
    for words in ("rule of thumb", "guarantee", "statistical significance", "practical significance"):
        assert words in lines[3]
    cell = result.cell("sex=Female|race=B")
    p, flip = regulatory.significance(result, cell)
    item = (f"sex = Female and race = B {regulatory._interval(cell.impact_ratio)} (interval: certified below 0.8; "
            f"Fisher p {regulatory.p_text(p)}; {flip} flips)")
    assert item in lines[0] and f"sex = Female and race = B {regulatory._interval(cell.impact_ratio)}" in lines[1]
    below = [c for c in result.cells if c.impact_ratio is not None and not c.is_reference
             and c.impact_ratio.estimate < 0.8]
    assert lines[0].index(item) == lines[0].index("lowest first: ") + len("lowest first: ")  # lowest first
    assert len(below) == int(lines[0].split("thumb: ")[1].split(" categor")[0])
    page1 = _pages(build_scan_pdf(result, "eeoc", about=About(data_kind="historical")))[0]
    box = _box(page1, head)
    assert box.index("estimated below 4/5") < box.index("Certified below 0.8") < box.index("Undecided")
    assert item in box and "impact ratio 1 by definition" in box


def test_eeoc_finding_does_not_lead_with_none_when_the_estimate_is_below(result):
    """Item 1, the walkthrough's case: nothing certified below, the estimate far under 4/5 with Fisher p < 0.0001 —
    the first line names it, with "undecided" for its interval; "none" only on the certified-below line."""
    undecided = copy.deepcopy(result)
    for c in undecided.cells:
        if c.flag == "certified_below":
            c.flag = "undecided"
    lines = regulatory.finding(undecided, "eeoc")[1]
    assert "sex = Female and race = B" in lines[0] and "interval: undecided, it contains 0.8" in lines[0]
    assert "Fisher p" in lines[0] and "flips" in lines[0] and not lines[0].endswith("none.")
    assert lines[1].endswith(": none.")


def test_ll144_page_one_has_no_comparison_level(result):
    """Item 2: per table the impact ratios lowest first with intervals, the reference, the < 2 % categories, the
    unknown count — no 0.8, no "certified", no "undecided" in the box, and no comparison level in the facts."""
    head, lines = regulatory.finding(result, "ll144")
    text = " ".join([head, *lines])
    assert not re.search(r"(?<![\d.])0\.8(?!\d)|certified|undecided|threshold|comparison level|four-fifths|4/5",
                         text, re.I), text
    for tb, line in zip(result.tables, lines):
        assert line.startswith(f"{tb.name} — impact ratios, lowest first: ")
        rated = [c for c in tb.cells if c.impact_ratio is not None and not c.is_reference]
        order = sorted(rated, key=lambda c: c.impact_ratio.estimate)[:6]
        places = [line.index(f"{regulatory.cell_words(c)} {regulatory._interval(c.impact_ratio)}") for c in order]
        assert places == sorted(places)
        ref = result.cell(tb.reference)
        assert f"Reference (the most-selected category, impact ratio 1): {regulatory.cell_words(ref)}" in line
    assert any(line.startswith("Under 2 % of the data: race = D (") for line in lines)
    assert any(line.startswith("Individuals of unknown category: sex 0; race ") for line in lines)
    page1 = _pages(build_scan_pdf(result, "ll144", about=About(data_kind="historical")))[0]
    assert "comparison level" not in page1 and not re.search(r"(?<![\d.])0\.8(?!\d)", page1), page1
    assert "Certified" not in page1 and "Undecided" not in _box(page1, head)


def test_the_finding_lists_end_with_one_stop(result):
    """Item 3: a cut-off list ends "…; and N more (in the tables)." — never a double stop."""
    for pack in ("ll144", "eeoc"):
        for most in (1, 2, 6):
            for line in regulatory.finding(result, pack, most=most)[1]:
                assert not re.search(r"\.\.|….|\. \.", line), line
                assert line.endswith("."), line
    assert regulatory.sentence("a …") == "a …" and regulatory.sentence("a.") == "a." and regulatory.sentence("a") == "a."
    assert regulatory._listed([1, 2, 3], str, 2) == "1; 2; and 1 more (in the tables)"


def test_cells_are_named_in_sentences_as_the_audit_page_names_groups(result):
    """Item 4: in the finding, the PDFs' sentences and the chart's title a cell reads "sex = Female and race = B"
    (the words of ``spec.words``), never "Female × B"; the compact form stays in the tables."""
    from fairaudit.spec.parser import parse_event
    from fairaudit.spec.words import condition_words, pairs_words
    from fairaudit.subgroups.wording import cell_words
    from fairaudit.viz.scan import cell_convergence

    cell = result.cell("sex=Female|race=B")
    assert cell_words(cell) == condition_words(parse_event(cell.condition)) == "sex = Female and race = B"
    assert pairs_words([("sex", "Female"), ("race", "B")]) == "sex = Female and race = B"
    assert pairs_words([("race", "Black and Asian"), ("zip", "10001"), ("x", 3)]) == \
        condition_words(parse_event('race == "Black and Asian" and zip == "10001" and x == 3'))
    assert pairs_words([]) == "everyone"
    for pack in ("ll144", "eeoc"):
        head, lines = regulatory.finding(result, pack)
        text = " ".join(lines)
        assert "sex = Female and race = B" in text and "Female × B" not in text
    pdf = " ".join(_pages(build_scan_pdf(result, "eeoc")))
    assert "most-selected category (the ratios' reference, ratio 1): sex = " in pdf
    chart = cell_convergence(result, cell.id)
    if chart is not None:
        assert chart.to_dict()["title"]["text"][0] == "sex = Female and race = B:"


def test_the_subtitle_names_the_data_and_the_day(result):
    """Item 5: "audit of hiring.csv · 7 December 2026", not an audit of a timestamp; the timestamp is in the facts."""
    from fairaudit.report.scan import date_words, subtitle

    assert date_words("2026-12-07T04:13:16+00:00") == "7 December 2026"
    assert date_words("not a date") == "not a date"
    dated = dataclasses.replace(result, date="2026-12-07T04:13:16+00:00")
    assert subtitle(dated).endswith("audit of hiring.csv · 7 December 2026")
    for pack in ("ll144", "eeoc"):
        page1 = _pages(build_scan_pdf(dated, pack))[0]
        assert "audit of hiring.csv · 7 December 2026" in page1 and "audit of 2026" not in page1
        assert "7 December 2026 (2026-12-07T04:13:16+00:00)" in page1


def test_both_pdfs_say_why_the_scan_is_wider_than_one_audit(result):
    """Item 7: the scan's intervals hold for all cells at once, so an audit of one comparison may decide more."""
    from fairaudit.subgroups.wording import simultaneous_note

    note = simultaneous_note(len(result.cells), result.mode)
    assert f"all {len(result.cells)} cells at once" in note and "may decide what the scan leaves undecided" in note
    assert simultaneous_note(3, "exact") is None
    for pack in ("ll144", "eeoc"):
        assert " ".join(note.split()) in " ".join(_pages(build_scan_pdf(result, pack))), pack


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
        name = regulatory.cell_words(c)
        assert f"{name} ({c.rows:,} individuals, rate {c.rate.estimate:.3f}" in page1
    assert "Reason for leaving the categories under 2 % out of the impact ratios" in page1
    assert "6 RCNY §5-301(d)" in page1
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
