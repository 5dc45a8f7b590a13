"""Issue 31: the subgroup scan (``fairaudit.scan``, ``fairaudit scan``) — worked examples, the allocation's rules,
the streaming API, the JSON, Adult against fairlearn, the command line, and a fast family-wise validity check."""
from __future__ import annotations

import contextlib
import io
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit.bounds.concentration import mixture_interval
from fairaudit.cli import main
from fairaudit.data.dataset import Column, Dataset, Schema
from fairaudit.subgroups import allocation, cells
from fairaudit.subgroups.result import ScanResult
from fairaudit.subgroups.scan import ScanStream
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]

# the worked example: (sex, race, rows, selected); five more rows of unknown race (1 selected)
CELLS = [("F", "A", 10, 2), ("F", "B", 30, 9), ("M", "A", 40, 20), ("M", "B", 20, 8), ("F", "?", 5, 1)]


def example_frame() -> pd.DataFrame:
    rows = []
    for sex, race, n, s in CELLS:
        rows += [{"sex": sex, "race": race, "sel": int(i < s)} for i in range(n)]
    return pd.DataFrame(rows)


def example_dataset() -> Dataset:
    frame = example_frame()
    schema = Schema((Column("sex", "categorical", ("F", "M")), Column("race", "categorical", ("?", "A", "B")),
                     Column("sel", "numeric")), protected=("sex", "race"))
    return Dataset("example", frame, schema, source="test")


def test_exact_mode_worked_example():
    r = fairaudit.scan(example_dataset(), ["sex", "race"], pred="sel == 1", mode="exact", looks=0)
    by = {c.id: c for c in r.cells}
    assert [t.name for t in r.tables] == ["sex", "race", "sex × race"]
    assert [t.unknown for t in r.tables] == [0, 5, 5]  # race "?" is unknown, counted apart
    assert by["sex=F"].rows == 45 and by["sex=F"].rate.exact == "4/15"
    assert by["sex=F"].impact_ratio.exact == "4/7" and by["sex=F"].flag == "certified_below"
    assert by["sex=M"].is_reference and by["sex=M"].flag == "certified_above"
    assert by["race=B"].impact_ratio.exact == "17/22" and by["race=B"].flag == "certified_below"
    assert by["sex=M|race=B"].impact_ratio.exact == "4/5"
    assert by["sex=M|race=B"].flag == "certified_above"  # exactly 4/5 is not below the four-fifths rule
    assert by["sex=F|race=A"].impact_ratio.estimate == pytest.approx(0.4, abs=1e-15)
    for c in r.cells:
        assert c.rate.lo == c.rate.hi == c.rate.estimate == float(Fraction(c.rate.exact))
    assert r.exit_code == 1 and r.scope == "rows" and "these 105 rows" in r.guarantee
    assert r.cells[0].id == "sex=F|race=A"  # ranked by the upper end of the ratio


def test_anytime_intervals_are_the_monitors_confidence_sequences_at_the_split_delta():
    delta = 0.05
    r = fairaudit.scan(example_dataset(), ["sex", "race"], pred="sel == 1", delta=delta, looks=0)
    sizes = {("sex",): 2, ("race",): 2, ("sex", "race"): 4}
    for c in r.cells:
        assert c.delta == pytest.approx(delta / 3 / sizes[c.table], rel=1e-12)  # every cell can decide: equal
        lo, hi = mixture_interval(c.selected, c.rows, c.delta)
        assert (c.rate.lo, c.rate.hi) == (float(lo), float(hi))
    assert r.allocation["spent"] == pytest.approx(delta, rel=1e-12)
    for t in r.tables:  # the ratio interval from the rate intervals (to the most-selected cell's), no extra δ
        ref = [c for c in t.cells if c.flag != "excluded"]
        best = max(ref, key=lambda c: c.rate.estimate)
        assert t.reference == best.id and best.is_reference
        assert (best.impact_ratio.estimate, best.impact_ratio.lo, best.impact_ratio.hi) == (1.0, 1.0, 1.0)
        for c in ref:
            if c is not best:
                assert c.impact_ratio.lo == pytest.approx(c.rate.lo / best.rate.hi, rel=1e-15)
                assert c.impact_ratio.hi == pytest.approx(c.rate.hi / best.rate.lo, rel=1e-15)
            flag = ("certified_below" if c.impact_ratio.hi < 0.8 else
                    "certified_above" if c.impact_ratio.lo >= 0.8 else "undecided")
            assert c.flag == flag
    assert r.mode == "anytime" and r.scope == "population"


def test_one_look_mode_is_clopper_pearson_at_the_split_delta():
    from fairaudit.bounds.fixed_sample import clopper_pearson

    r = fairaudit.scan(example_dataset(), ["sex", "race"], pred="sel == 1", mode="one-look", looks=0)
    for c in r.cells:
        lo, hi = clopper_pearson(c.selected, c.rows, c.delta)
        assert (c.rate.lo, c.rate.hi) == (float(lo), float(hi))
    assert "one look" in r.guarantee and r.history is None


def test_the_allocation_reads_row_counts_only_and_spends_at_most_delta():
    frame = example_frame()
    rng = np.random.default_rng(0)
    shuffled = frame.assign(sel=rng.permutation(frame["sel"].to_numpy()))
    a = fairaudit.scan(Dataset("e", frame, example_dataset().schema), pred="sel == 1", looks=0)
    b = fairaudit.scan(Dataset("e", shuffled, example_dataset().schema), pred="sel == 1", looks=0)
    assert {c.id: c.delta for c in a.cells} == {c.id: c.delta for c in b.cells}
    assert sum(c.delta for c in a.cells) <= 0.05 * (1 + 1e-12)


def test_hopeless_and_excluded_cells_get_the_small_weight():
    from fairaudit.bounds.concentration import MixtureBound

    interval = MixtureBound().interval
    need = allocation.decisive_rows(0.01, 0.8, interval)
    assert float(interval(0, need, 0.01)[1]) < 0.8 <= float(interval(0, need - 1, 0.01)[1])
    rows = np.array([need - 1, need, 10 * need, 1])
    w = allocation.weights(rows, total=int(rows.sum()), delta_equal=0.01, min_share=0.0, threshold=0.8,
                           interval=interval)
    assert list(w) == [allocation.HOPELESS_WEIGHT, 1.0, 1.0, allocation.HOPELESS_WEIGHT]
    w = allocation.weights(np.array([1000, 10]), total=1010, delta_equal=0.01, min_share=0.02, threshold=0.8,
                           interval=interval)
    assert list(w) == [1.0, allocation.HOPELESS_WEIGHT]  # 10/1010 < 2 %: excluded, decides nothing


def test_cells_codes_bins_and_unknowns():
    frame = pd.DataFrame({"g": ["x", "y", None, "?", "x"], "age": [17, 30, 45, np.nan, 90]})
    g = cells.Attribute("g")
    assert list(g.codes(frame["g"])) == [0, 1, -1, -1, 0]
    age = cells.binned("age", frame["age"], [0, 30, 60, 90])
    assert list(age.codes(frame["age"])) == [0, 1, 1, -1, 2]  # right-open bins, the last closed; NaN unknown
    assert age.categories == ["[0, 30)", "[30, 60)", "[60, 90]"]
    assert age.condition(2) == "age >= 60 and age <= 90" and g.condition(0) == 'g == "x"'
    q = cells.binned("age", frame["age"], 2)
    assert len(q.edges) == 3
    with pytest.raises(fairaudit.FairauditError if hasattr(fairaudit, "FairauditError") else Exception):
        cells.binned("age", frame["age"], [3, 2])
    counts = cells.count(cells.encode(frame, [g, age]), (0, 1), np.array([1, 0, 1, 1, 1]))
    assert counts.unknown == 2 and counts.counts[:, 0].sum() == 3
    assert cells.tables(3, 2) == [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]


def test_json_is_the_issues_shape_and_reads_back():
    r = fairaudit.scan(example_dataset(), ["sex", "race"], pred="sel == 1")
    data = json.loads(r.to_json())
    assert set(data["scan"]) >= {"attributes", "depth", "delta", "mode"}
    assert data["scan"]["attributes"] == ["sex", "race"] and data["scan"]["depth"] == 2
    assert data["reference"]["groups"] == {"sex": "M", "race": "A"}
    cell = data["cells"][0]
    assert set(cell) >= {"groups", "rows", "share", "rate", "impact_ratio", "flag", "table"}
    assert set(cell["rate"]) == {"estimate", "lo", "hi"} and cell["flag"] in ("certified_below", "undecided",
                                                                             "certified_above", "excluded")
    assert data["unknown"] == {"sex": 0, "race": 5, "sex × race": 5}
    assert data["history"]["rows"][-1] == 105
    back = ScanResult.from_json(r.to_json())
    assert back.to_json() == r.to_json()
    assert r.spec_for("sex=F|race=A") == 'E[pred | sex == "F" and race == "A"] / E[pred | sex == "M" and race == "A"] >= 0.8'
    fairaudit.spec.parse(r.spec_for("sex=F|race=A"))


def test_adult_exact_rates_equal_fairlearn():
    metrics = pytest.importorskip("fairlearn.metrics")
    r = fairaudit.scan("adult", ["sex", "race"], pred='income == ">50K"', mode="exact", looks=0)
    d = fairaudit.data.load("adult")
    y = (d.frame["income"] == ">50K").astype(int)
    frame = metrics.MetricFrame(metrics={"rate": metrics.selection_rate}, y_true=y, y_pred=y,
                                sensitive_features=d.frame[["sex", "race"]]).by_group["rate"]
    joint = {c.id: c for c in r.cells if c.table == ("sex", "race")}
    assert len(joint) == len(frame)
    for (sex, race), value in frame.items():
        assert abs(joint[f"sex={sex}|race={race}"].rate.estimate - value) <= 1e-12
    for attr in ("sex", "race"):
        single = metrics.MetricFrame(metrics={"rate": metrics.selection_rate}, y_true=y, y_pred=y,
                                     sensitive_features=d.frame[attr]).by_group["rate"]
        for group, value in single.items():
            assert abs(r.cell(f"{attr}={group}").rate.estimate - value) <= 1e-12


def test_the_stream_matches_the_rows_at_rest_and_keeps_a_reserve_for_new_cells():
    frame = example_frame().sample(frac=1.0, random_state=1).reset_index(drop=True)
    exact = ScanStream(["sex", "race"], mode="exact")
    for start in range(0, len(frame), 20):
        part = frame.iloc[start:start + 20]
        exact.update(part[["sex", "race"]], part["sel"].to_numpy())
    rest = fairaudit.scan(Dataset("e", frame, example_dataset().schema), pred="sel == 1", mode="exact",
                          order="given", looks=0)
    assert {c.id: c.rate.exact for c in exact.result().cells} == {c.id: c.rate.exact for c in rest.cells}

    live = ScanStream(["sex", "race"], delta=0.05)
    first = frame[frame["sex"] == "M"]
    live.update(first[["sex", "race"]], first["sel"].to_numpy())
    early = live.result()  # the first look fixes the δ split
    assert {c.id for c in early.cells} == {"sex=M", "race=A", "race=B", "sex=M|race=A", "sex=M|race=B"}
    rest_rows = frame[frame["sex"] == "F"]
    live.update(rest_rows[["sex", "race"]], rest_rows["sel"].to_numpy())
    later = live.result()
    assert later.cell("sex=M").delta == early.cell("sex=M").delta  # fixed once used
    assert later.cell("sex=F").delta == pytest.approx(0.05 / 3 * allocation.NEW_CELL_RESERVE * 6 / np.pi ** 2)
    assert later.allocation["spent"] <= 0.05
    assert later.rows == len(frame)


def _cli(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_cli_scan_adult_prints_the_table_and_exits_1(tmp_path):
    code, out, err = _cli(["scan", "--data", "adult", "--pred", 'income == ">50K"', "--protected", "sex", "race",
                           "--depth", "2", "--json", str(tmp_path / "s.json"), "--csv", str(tmp_path / "s.csv")])
    assert code == 1, err
    assert "Female × Black" in out and "certified below" in out and "guarantee: With probability" in out
    assert "below:     sex=Female|race=Black" in out
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["summary"]["exit_code"] == 1
    csv = (tmp_path / "s.csv").read_text().splitlines()
    assert csv[0].startswith("# fairaudit scan: NYC Local Law 144")
    assert any(line.startswith("sex,Unknown,0") for line in csv)
    # the same outputs may be replaced by a second run; never the input
    assert _cli(["scan", "--data", "adult", "--pred", 'income == ">50K"', "--json", str(tmp_path / "s.json"),
                 "--csv", str(tmp_path / "s.csv"), "--template", "eeoc", "--mode", "exact"])[0] == 1
    assert "significant" in (tmp_path / "s.csv").read_text()


def test_cli_exit_codes_0_and_3(tmp_path):
    rows = pd.DataFrame({"g": ["a"] * 500 + ["b"] * 500, "sel": [1, 0] * 500})
    rows.to_csv(tmp_path / "even.csv", index=False)
    code, out, _ = _cli(["scan", "--data", str(tmp_path / "even.csv"), "--pred", "sel == 1", "--protected", "g",
                         "--mode", "exact"])
    above = next(line for line in out.splitlines() if line.startswith("above:")).split(None, 1)[1].split(", ")
    reference = next(line for line in out.splitlines() if line.startswith("reference:")).split(None, 1)[1]
    # equal rates: one is the reference (ratio 1 by definition, not listed as certified), the other certified above
    assert code == 0 and len(above) == 1 and sorted(above + [reference.split(" ")[0]]) == ["g=a", "g=b"]
    code, out, _ = _cli(["scan", "--data", str(tmp_path / "even.csv"), "--pred", "sel == 1", "--protected", "g"])
    assert code == 3 and "more rows" in out


@pytest.mark.parametrize("extra, words", [
    (["--protected", "sexx"], "unknown column 'sexx'"),
    (["--bins", "age"], "--bins"),
    (["--bins", "age=1"], "bins for age"),
    (["--bins", "age=30,20"], "increasing"),
    (["--bins", "grp=3"], "not numeric"),
    (["--bins", "sex=3"], "given twice"),
    (["--depth", "0"], "depth"),
    (["--delta", "1.5"], "delta"),
    (["--threshold", "0"], "threshold"),
    (["--json", "LOCAL_CSV"], "input"),
    (["--where", "pred == 1"], "reads the decision"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, extra, words):
    local = tmp_path / "d.csv"
    pd.DataFrame({"sex": ["a", "b"] * 20, "grp": ["x"] * 40, "age": range(40),
                  "sel": [0, 1, 1, 1] * 10}).to_csv(local, index=False)
    extra = [str(local) if e == "LOCAL_CSV" else e for e in extra]
    code, out, err = _cli(["scan", "--data", str(local), "--pred", "sel == 1", "--protected", "sex", *extra])
    assert code == 2, (out, err)
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_scan_is_listed_and_lazy():
    code, out, _ = _cli(["--help"])
    assert "scan" in out
    import subprocess
    import sys

    probe = ("import sys, fairaudit.cli as c; c.build_parser(['--help']); "
             "print(any(m.startswith('fairaudit.subgroups') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "False", done.stderr


def _harness():
    return load_script(ROOT / "bench" / "scan_validity.py", "scan_validity")


def test_family_wise_validity_fast_and_it_catches_an_uncorrected_split():
    """At the four-fifths boundary, 60 seeded populations, 20 looks each: the scan's family-wise wrong-claim rate
    (any rate or ratio interval missing its true value at any look) stays ≤ Δ; the same check rejects the
    uncorrected split (every interval at Δ) — so it would catch an allocation that forgot the union bound."""
    h = _harness()
    delta, seeds = 0.1, 60

    def wrong_rate(method):
        return np.mean([h.run(h.population(s), 2000, s, method, delta, looks=20)["wrong"] for s in range(seeds)])

    assert wrong_rate("scan anytime") <= delta
    assert wrong_rate("uncorrected anytime") > delta


def test_cli_follow_scans_a_log_and_ends_with_the_table(tmp_path):
    log = tmp_path / "log.csv"
    frame = example_frame().sample(frac=1.0, random_state=2)
    frame.to_csv(log, index=False)
    code, out, err = _cli(["scan", "--follow", str(log), "--pred", "sel == 1", "--protected", "sex", "race",
                           "--mode", "exact", "--idle-timeout", "0.3", "--poll", "0.05", "--burn-in", "10",
                           "--json", str(tmp_path / "f.json")])
    assert code == 1, err
    assert out.startswith("rows 105: ") and "guarantee: Exact for these 105 rows" in out
    got = {c["id"]: c["rate"]["exact"] for c in json.loads((tmp_path / "f.json").read_text())["cells"]}
    assert got["sex=F"] == "4/15" and got["race=B"] == "17/50"
    code, _, err = _cli(["scan", "--follow", str(log), "--data", "adult", "--pred", "sel == 1"])
    assert code == 2 and "one of them" in err


def test_the_history_ends_at_the_final_values_and_starts_wide():
    r = fairaudit.scan("adult", ["sex", "race"], pred='income == ">50K"', bins={"age": 3}, depth=2)
    assert r.history["rows"][-1] == r.rows and len(r.history["rows"]) > 10
    for c in r.cells:
        h = r.history["cells"][c.id]
        assert (h["rate"][-1], h["rate_lo"][-1], h["rate_hi"][-1]) == (c.rate.estimate, c.rate.lo, c.rate.hi)
        if c.impact_ratio is not None:
            assert (h["ratio_lo"][-1], h["ratio_hi"][-1]) == (c.impact_ratio.lo, c.impact_ratio.hi)
        widths = np.subtract(h["rate_hi"], h["rate_lo"])
        assert widths[0] >= widths[-1]


def test_regulatory_tables_have_exactly_their_columns():
    from fairaudit.subgroups import regulatory

    r = fairaudit.scan(example_dataset(), ["sex", "race"], pred="sel == 1", looks=0, min_share=0.1)
    for name in ("ll144", "eeoc"):
        text = regulatory.to_csv(r, name)
        lines = text.splitlines()
        preamble = [line for line in lines if line.startswith("#")]
        assert lines[0].startswith("# fairaudit scan: ") and len(preamble) == len(regulatory.preamble(r, name))
        assert any("guarantee: With probability" in line for line in preamble)
        table = pd.read_csv(io.StringIO(text), skiprows=len(preamble), keep_default_na=False)
        assert list(table.columns) == [c for c, _ in regulatory.TEMPLATES[name]["columns"]]
    ll = pd.read_csv(io.StringIO(regulatory.to_csv(r, "ll144")), skiprows=len(regulatory.preamble(r, "ll144")),
                     keep_default_na=False)
    unknown = ll[ll["category"] == "Unknown"]
    assert list(unknown["applicants"]) == [0, 5, 5]
    small = ll[(ll["category_type"] == "sex × race") & (ll["category"] == "F × A")].iloc[0]
    assert small["excluded_under_min_share"] == "yes" and small["impact_ratio"] == ""  # 10/105 < 10 %
    eeoc = pd.read_csv(io.StringIO(regulatory.to_csv(r, "eeoc")), skiprows=len(regulatory.preamble(r, "eeoc")),
                       keep_default_na=False)
    assert set(eeoc["interval"]) <= {"certified_below", "certified_above", "undecided", "excluded", "highest"}
    assert set(eeoc.loc[eeoc["group_type"] == "sex", "highest_group"]) == {"M"}
    assert list(eeoc.loc[eeoc["interval"] == "highest", "impact_ratio"]) == ["1.0"] * 3  # exactly 1, each table
    assert list(ll.loc[ll["most_selected"] == "yes", "impact_ratio_lo"]) == ["1.0"] * 3


def test_scan_is_exported_lazily_from_the_package():
    import fairaudit.api

    assert "scan" in fairaudit.__all__ and fairaudit.scan is fairaudit.api.scan


def _more_rows_whole_grid(s, n, d, reference, threshold, interval, total, undecided, factors):
    """The projection by its definition: every cell on the whole grid at once, the first factor that decides."""
    lo, hi = interval(s[:, None] * factors, n[:, None] * factors, np.broadcast_to(d[:, None], (len(s), len(factors))))
    best = int(np.argmax(np.where(reference, np.where(n > 0, s / np.maximum(n, 1), -1.0), -np.inf)))
    with np.errstate(invalid="ignore", divide="ignore"):
        r_lo = np.where(hi[best] > 0, lo / hi[best], 0.0)
        r_hi = np.where(lo[best] > 0, hi / lo[best], np.inf)
    decided = (r_hi < threshold) | (r_lo >= threshold)
    out = np.zeros(len(s), dtype=np.int64)
    for i in np.flatnonzero(undecided):
        hit = np.flatnonzero(decided[i])
        out[i] = -1 if not len(hit) else max(1, int(np.ceil(total * factors[hit[0]])) - int(total))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_more_rows_a_chunk_at_a_time_is_the_whole_grid(seed):
    # cells that decide on the first factor, on the last chunk's edge, never, empty cells, one cell, a reference with
    # rate 0: the chunked search must give the first deciding factor of the whole grid
    from fairaudit.bounds.fixed_sample import clopper_pearson
    from fairaudit.core.suggest import FACTORS
    from fairaudit.subgroups import intervals

    rng = np.random.default_rng(seed)
    k = int(rng.choice([1, 2, 7, 60]))
    n = rng.choice([0, 1, 5, 40, 3000], k).astype(float)
    s = np.floor(n * rng.choice([0.0, 0.1, 0.45, 0.5, 1.0], k))
    d = rng.choice([1e-6, 1e-3, 0.05], k)
    reference = rng.random(k) < 0.9
    undecided = rng.random(k) < 0.8
    total = int(max(n.sum(), 1))
    want = _more_rows_whole_grid(s, n, d, reference, 0.8, clopper_pearson, total, undecided, FACTORS)
    got = intervals.more_rows(s, n, d, reference, 0.8, clopper_pearson, total, undecided)
    if reference.any():
        assert got.tolist() == want.tolist()


def test_a_category_that_reads_like_an_intersection_has_an_id_of_its_own():
    frame = pd.DataFrame({"sex": ["M", "M|race=a", "F", "M", "a\\", "M"], "race": ["a", "b", "a", "b", "a", "a"],
                          "sel": [1, 0, 1, 0, 1, 1]})
    schema = Schema((Column("sex", "categorical", tuple(sorted(set(frame["sex"])))),
                     Column("race", "categorical", ("a", "b")), Column("sel", "numeric")), protected=("sex", "race"))
    result = fairaudit.scan(Dataset("ids", frame, schema, source="memory"), pred="sel == 1", depth=2, mode="exact",
                            looks=0, min_share=0.0)
    ids = [c.id for c in result.cells]
    assert len(ids) == len(set(ids)) == len({tuple(sorted(c.groups.items())) for c in result.cells})
    assert result.cell("sex=M|race=a").groups == {"sex": "M", "race": "a"}
    assert result.cell("sex=M\\|race\\=a").groups == {"sex": "M|race=a"}
