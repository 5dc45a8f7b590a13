"""Oracle tests of the ``dataset`` engine: its values are the exact values on the audited rows, computed here
independently with pandas (groupby, direct counting, flip-and-repredict); its verdicts are exact; the CLI says so."""
import math

import numpy as np
import pytest

import fairaudit
from fairaudit import data, models
from fairaudit.cli import main

EXACT = "exactly on these {rows} rows (not the population they were drawn from)"


@pytest.fixture(scope="module")
def adult():
    return data.load("adult")


@pytest.fixture(scope="module")
def compas():
    return data.load("compas")


@pytest.fixture(scope="module")
def logreg(adult):
    return models.train(adult, "logreg", seed=0)


@pytest.fixture(scope="module")
def held_out(adult, logreg):
    """The held-out rows of Adult with the model's decision and the 0/1 label, as a plain frame."""
    positions = models.held_out_positions(logreg, adult)
    frame = adult.frame.iloc[positions].reset_index(drop=True)
    frame["pred"] = np.asarray(logreg.predict(frame)).astype(int)
    frame["label"] = (frame["income"] == ">50K").astype(int)
    return frame


def final(result, text):
    """The final values of the (first) node whose text is ``text``."""
    table = result.final
    rows = table[table["text"] == text]
    assert len(rows), f"no node {text!r} in {list(table['text'])}"
    return rows.iloc[0]


def assert_exact(result, text, value, n=None):
    row = final(result, text)
    assert row["estimate"] == pytest.approx(value, abs=1e-12)
    assert row["lo"] == pytest.approx(value, abs=1e-12) and row["hi"] == pytest.approx(value, abs=1e-12)
    assert row["delta"] == 0
    if n is not None:
        assert row["n"] == n


def test_adult_logreg_held_out_rows_equal_groupby(adult, logreg, held_out):
    spec = ('E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8 and '
            'E[pred | label == 1 and race == "Black"] - E[pred | label == 1 and race == "White"] > -0.1 and '
            'E[label == 1 | pred == 1] > 0.5 and E[pred] < 0.5')
    r = fairaudit.audit(adult, spec, engine="dataset", model=logreg)
    assert r.rows["policy"] == "held-out" and r.rows["audited"] == len(held_out) == 8141
    assert r.steps == len(held_out) and r.stop_step == len(held_out) and r.unit == "rows"
    rate = held_out.groupby("sex")["pred"].agg(["mean", "size"])
    for sex in ("Female", "Male"):
        assert_exact(r, f'E[pred | sex == "{sex}"]', rate.loc[sex, "mean"], n=rate.loc[sex, "size"])
    tpr = held_out[held_out["label"] == 1].groupby("race")["pred"].agg(["mean", "size"])
    for race in ("Black", "White"):
        assert_exact(r, f'E[pred | label == 1 and race == "{race}"]', tpr.loc[race, "mean"], n=tpr.loc[race, "size"])
    precision = held_out.loc[held_out["pred"] == 1, "label"]
    assert_exact(r, "E[label == 1 | pred == 1]", precision.mean(), n=len(precision))
    assert_exact(r, "E[pred]", held_out["pred"].mean(), n=len(held_out))
    # the verdict is the exact one: every comparison computed by hand
    expected = (rate.loc["Female", "mean"] / rate.loc["Male", "mean"] >= 0.8
                and tpr.loc["Black", "mean"] - tpr.loc["White", "mean"] > -0.1
                and precision.mean() > 0.5 and held_out["pred"].mean() < 0.5)
    assert r.verdict == ("true" if expected else "false")
    assert r.guarantee.kind == "exact" and r.guarantee_delta == 0
    assert r.sentence == ("certified true " if expected else "violated ") + EXACT.format(rows="8,141")


def test_demographic_parity_ratio_verdict_is_exact(adult, logreg, held_out):
    """Just below the hand-computed ratio the 80 % rule-style comparison holds, just above it does not."""
    by_sex = held_out.groupby("sex")["pred"].mean()
    ratio = by_sex["Female"] / by_sex["Male"]
    below, above = math.floor(ratio * 1e6) / 1e6, math.ceil(ratio * 1e6) / 1e6
    assert below < ratio < above
    spec = 'E[pred | sex == "Female"] / E[pred | sex == "Male"] >= {:.6f}'
    results = {t: fairaudit.audit(adult, spec.format(t), engine="dataset", model=logreg) for t in (below, above)}
    assert results[below].verdict == "true" and results[above].verdict == "false"
    gap = by_sex["Male"] - by_sex["Female"]
    lo, hi = math.floor(gap * 1e6) / 1e6, math.ceil(gap * 1e6) / 1e6
    diff = 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < {:.6f}'
    assert fairaudit.audit(adult, diff.format(hi), engine="dataset", model=logreg).verdict == "true"
    assert fairaudit.audit(adult, diff.format(lo), engine="dataset", model=logreg).verdict == "false"


def test_fair_leaves_equal_a_direct_flip_and_repredict_count(adult, logreg, held_out):
    r = fairaudit.audit(adult, "Fair[sex] >= 0.95 and Fair[race] >= 0.95", engine="dataset", model=logreg)
    features = held_out.drop(columns=["pred", "label"])
    for column in ("sex", "race"):
        same = np.ones(len(features), dtype=bool)
        for value in adult.schema.column(column).values:  # every value of the column, the row's own included
            flipped = features.copy()
            flipped[column] = value
            same &= np.asarray(logreg.predict(flipped)) == held_out["pred"].to_numpy()
        row = final(r, f"Fair[{column}]")
        assert row["estimate"] == pytest.approx(same.mean(), abs=1e-12)
        assert row["certified"] == pytest.approx(same.mean(), abs=1e-12)  # certified = lo
        assert row["unfair"] == pytest.approx(1 - same.mean(), abs=1e-12)  # 1 − unfair = hi
        assert row["undecided"] == pytest.approx(0, abs=1e-12)
        assert 0.5 < same.mean() < 1  # the model uses the attribute, so the check is not vacuous
    assert r.verdict == ("true" if final(r, "Fair[sex]")["estimate"] >= 0.95
                         and final(r, "Fair[race]")["estimate"] >= 0.95 else "false")


def compas_frame(compas, where=None):
    frame = compas.frame.copy()
    frame["pred"] = (frame["decile_score"] <= 4).astype(int)
    frame["label"] = (frame["two_year_recid"] == 0).astype(int)  # the favourable label: no re-arrest
    return frame if where is None else frame[where(frame)].reset_index(drop=True)


COMPAS_SPEC = ('E[pred | race == "African-American"] / E[pred | race == "Caucasian"] >= 0.8 or '
               'E[pred | label == 1 and race == "African-American"] - E[pred | label == 1 and race == "Caucasian"] > -0.2')


def check_compas(result, frame):
    rate = frame.groupby("race")["pred"].agg(["mean", "size"])
    good = frame[frame["label"] == 1].groupby("race")["pred"].agg(["mean", "size"])
    for race in ("African-American", "Caucasian"):
        assert_exact(result, f'E[pred | race == "{race}"]', rate.loc[race, "mean"], n=rate.loc[race, "size"])
        assert_exact(result, f'E[pred | label == 1 and race == "{race}"]', good.loc[race, "mean"],
                     n=good.loc[race, "size"])
    holds = (rate.loc["African-American", "mean"] / rate.loc["Caucasian", "mean"] >= 0.8
             or good.loc["African-American", "mean"] - good.loc["Caucasian", "mean"] > -0.2)
    assert result.verdict == ("true" if holds else "false")


def test_compas_decision_expression(compas):
    r = fairaudit.audit(compas, COMPAS_SPEC, engine="dataset", pred="decile_score <= 4")
    assert r.rows["audited"] == len(compas) == 6172
    check_compas(r, compas_frame(compas))


def test_compas_where_filter(compas):
    r = fairaudit.audit(compas, COMPAS_SPEC, engine="dataset", pred="decile_score <= 4", where='sex == "Male"')
    frame = compas_frame(compas, where=lambda f: f["sex"] == "Male")
    assert r.rows["audited"] == r.steps == len(frame) == (compas.frame["sex"] == "Male").sum()
    check_compas(r, frame)
    assert r.sentence.endswith(EXACT.format(rows=f"{len(frame):,}"))


def test_a_condition_no_row_satisfies_is_0_to_1_with_a_warning(compas):
    empty = 'E[pred | race == "Asian" and age > 200]'
    r = fairaudit.audit(compas, f"{empty} < 0.5", engine="dataset", pred="decile_score <= 4")
    row = final(r, empty)
    assert (row["lo"], row["hi"], row["n"]) == (0, 1, 0) and math.isnan(row["estimate"])
    assert r.verdict == "unknown" and r.stop_step is None
    assert any(w.startswith(f"{empty}: no audited row satisfies its condition") for w in r.warnings), r.warnings
    assert r.sentence.startswith("undecided after 6,172 rows: ")
    # it does not block a verdict that does not depend on it
    other = fairaudit.audit(compas, f'{empty} <= 1 and E[pred] > 0.1', engine="dataset", pred="decile_score <= 4")
    assert other.verdict == "true"


def audit_cli(capsys, *args):
    code = main(["audit", "--engine", "dataset", "--data", "compas", "--pred", "decile_score <= 4", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_exit_code_and_wording(capsys):
    frame = compas_frame(compas=data.load("compas"))
    rate = frame.groupby("race")["pred"].mean()
    ratio = rate["African-American"] / rate["Caucasian"]
    spec = 'E[pred | race == "African-American"] / E[pred | race == "Caucasian"] >= {:.4f}'
    code, out, _ = audit_cli(capsys, "--spec", spec.format(math.floor(ratio * 1e4) / 1e4))
    assert code == 0
    assert "verdict:   certified\n" in out
    assert "guarantee: certified true exactly on these 6,172 rows (not the population they were drawn from)\n" in out
    assert "stop step: 6,172 (of 6,172 rows)\n" in out
    code, out, _ = audit_cli(capsys, "--spec", spec.format(math.ceil(ratio * 1e4) / 1e4))
    assert code == 1
    assert "verdict:   violated\n" in out
    assert "guarantee: violated exactly on these 6,172 rows (not the population they were drawn from)\n" in out
    assert f"left side {ratio:.4g}\n" in out  # a point, not "in [x, x]"
    for word in ("probability", "observations", "Δ"):
        assert word not in out


def test_cli_help_shows_no_monitor_option(capsys):
    with pytest.raises(SystemExit) as done:
        main(["audit", "--engine", "dataset", "--help"])
    assert done.value.code in (0, None)
    text = capsys.readouterr().out
    assert "options of the dataset engine" in text and "--interval" in text and "one-look" in text
    for flag in ("--batch", "--split", "--bound", "--order"):
        assert flag not in text
    for word in ("Hoeffding", "observations", "betting"):
        assert word not in text
    assert "--time-budget" in text and "--stop" in text and "--seed" in text


def test_cli_refuses_a_monitor_option(capsys):
    code, out, err = audit_cli(capsys, "--batch", "10", "--spec", "E[pred] > 0.1")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "--batch is an option of the monitor engine, not of dataset" in lines[0]
    assert "fairaudit audit --engine dataset --help" in lines[0]


@pytest.mark.parametrize("spec, verdict", [
    ('E[pred | sex == "F"] - E[pred | sex == "F"] >= 0', "true"),
    ('E[pred | sex == "F"] / E[pred | sex == "F"] >= 1', "true"),
    ('E[pred | sex == "F"] / E[pred | sex == "F"] > 1', "false"),
    ('not (E[pred | sex == "F"] - E[pred | sex == "F"] != 0) and E[pred] * 3 == E[pred] + E[pred] + E[pred]', "true"),
])
def test_an_exact_tie_is_decided(spec, verdict):
    """Exact leaves get exact arithmetic (fractions): a tie is decided, not left undecided by the outward
    rounding that sound floating-point interval arithmetic needs."""
    from fairaudit.testing import toy_dataset

    r = fairaudit.audit(toy_dataset(2000), spec, engine="dataset", pred='age >= 40 or sex == "M"')
    assert r.verdict == verdict
    root = r.final_values(r.root)
    assert root["verdict"] == verdict


def test_exact_values_are_enclosed_by_the_tightest_floats():
    """1/3 is not a float: its interval is the two floats around it, and a ratio's interval encloses the exact
    ratio of the two counts."""
    from fractions import Fraction

    from fairaudit.core.evaluate import enclose

    lo, hi = enclose(Fraction(1, 3))
    assert lo < hi and Fraction(lo) < Fraction(1, 3) < Fraction(hi)
    assert enclose(Fraction(1, 2)) == (0.5, 0.5)
