"""Issue 44, item 4 and its item-8 pieces: a repair worth adopting.

* The degenerate repair of the issue (one global threshold that makes everyone favourable, accuracy 0.89 → 0.34) is
  refused — never certified — with one line saying what sample size would make a useful repair certifiable.
* One threshold for everyone is the default; per-group thresholds need an explicit choice and carry the legal caveat
  (CLI text and ``--help``, JSON).
* A "Not certified" repair does not wear the certified icon; the repaired model reports its own accuracy (on the
  certification rows), never the base model's.
* The selection rule: among the useful candidates, the plan's expected objective; the certificates stay sound.
* The browser walkthrough's hiring CSV (a model trained with the protected attributes, no single threshold within the
  allowed loss satisfies the specification): the refusal leads in one line, "No repair adopted: …", with the loss
  bound named as the surface names it; sentences come from the parsed specification (never its text); the candidates
  are "tried", never "repaired", "chosen" or "adopted"; a negative loss is "gained".
"""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit.cli import main
from fairaudit.data import from_csv
from fairaudit.repairs import PER_GROUP_CAVEAT
from fairaudit.repairs.select import best_set, front
from tests.test_repair import ColumnScore  # the score is the column ``s``

SPEC = ('E[pred | sex == "Female"] - E[pred | sex == "Male"] > -0.1 and '
        'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1')


def hiring_frame(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    """The issue's shape: a score that separates the sexes (no single threshold brings their hiring rates within 0.1
    except near everyone or no one hired), about a third hired, a model accurate near 0.9."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    s = np.where(sex == "Male", rng.beta(6, 2, n), rng.beta(1.2, 9, n))
    hired = (rng.uniform(size=n) < np.where(s > 0.5, 0.75, 0.04)).astype(int)
    return pd.DataFrame({"sex": sex, "s": s.round(6), "hired": hired})


def hiring(frame=None):
    frame = hiring_frame() if frame is None else frame
    return from_csv(frame.to_csv(index=False).encode(), label="hired", protected="sex", favourable=1,
                    name="hiring.csv")


@pytest.fixture(scope="module")
def degenerate():
    return fairaudit.repair(hiring(), SPEC, ColumnScore(), rows="all")


def test_the_degenerate_repair_of_the_issue_is_refused(degenerate):
    r = degenerate
    assert r.original.accuracy > 0.85  # a good model whose only parity-satisfying single thresholds are degenerate
    assert r.verdict != "certified" and r.exit_code in (1, 3)
    assert r.refusal and r.refusal.startswith("No repair adopted:")
    assert "certification rows" in r.refusal or "no sample size" in r.refusal
    # nothing degenerate or beyond the bound was certified, or even tried
    for c in r.tried:
        assert 0 < c.point.favourable < 1
        assert r.original.accuracy - c.point.accuracy <= r.max_loss + 1e-12
    assert not (r.chosen.favourable in (0.0, 1.0) and r.verdict == "certified")
    data = json.loads(r.to_json())
    assert data["verdict"] in ("undecided", "violated") and data["refusal"] == r.refusal
    assert data["per_group"] is False and data["caveat"] is None


def test_a_larger_bound_still_never_certifies_everyone_favourable():
    r = fairaudit.repair(hiring(), SPEC, ColumnScore(), rows="all", max_loss=1.0)
    for c in r.tried:
        assert 0 < c.point.favourable < 1
    if r.verdict == "certified":
        assert 0 < r.chosen.favourable < 1


def test_the_refusal_says_what_sample_size_would_do():
    # per-group thresholds (an explicit choice) can satisfy the specification: a sample size is named
    r = fairaudit.repair(hiring(hiring_frame(600, seed=3)), SPEC, ColumnScore(), rows="all", thresholds="both",
                         max_loss=0.3)
    if r.verdict != "certified":
        assert r.rows_needed is not None and r.rows_needed > r.certification.count
        assert f"{r.rows_needed:,} certification rows" in r.refusal
    assert r.caveat == PER_GROUP_CAVEAT


def test_per_group_thresholds_are_off_by_default_and_carry_the_caveat(tmp_path, capsys):
    frame = hiring_frame(1500, seed=4)
    (tmp_path / "h.csv").write_text(frame.to_csv(index=False))
    from fairaudit import models

    model = models.train(hiring(frame), "logreg")
    model.save(tmp_path / "m.skops")
    argv = ["repair", "--data", str(tmp_path / "h.csv"), "--label", "hired", "--favourable", "1",
            "--model", str(tmp_path / "m.skops"), "--spec", SPEC]
    main([*argv, "--json", str(tmp_path / "default.json")])
    out = capsys.readouterr().out
    default = json.loads((tmp_path / "default.json").read_text())
    assert default["thresholds_mode"] == "global" and default["per_group"] is False and default["caveat"] is None
    assert default["kind"] == "global" and default["thresholds"] == {}
    assert "one for everyone" in out and "caveat:" not in out
    main([*argv, "--per-group", "--json", str(tmp_path / "group.json")])
    out = " ".join(capsys.readouterr().out.split())
    grouped = json.loads((tmp_path / "group.json").read_text())
    assert grouped["per_group"] is True and grouped["caveat"] == PER_GROUP_CAVEAT
    for words in ("unlawful in US employment decisions (Title VII, 42 U.S.C. §2000e-2(l), which forbids adjusting "
                  "scores or using different cutoffs by race, color, religion, sex or national origin)",
                  "restricted in credit (ECOA / Regulation B)"):
        assert words in PER_GROUP_CAVEAT and words in out
    with pytest.raises(SystemExit):
        main(["repair", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert " ".join(PER_GROUP_CAVEAT.split()) in help_text and "--per-group" in help_text


def test_the_status_icon_matches_the_verdict_and_the_model_reports_its_own_accuracy(degenerate):
    from fairaudit.repairs.wording import status
    from fairaudit.ui.repair import status_box

    certified_icon = status("certified")[2]
    for verdict in ("violated", "undecided"):
        word, box, icon = status(verdict)
        assert icon != certified_icon and box != "success" and word != "Certified"
    assert status_box(degenerate) == status("refused" if degenerate.refusal else degenerate.verdict)[1:]
    if degenerate.verdict != "certified":
        assert status_box(degenerate)[1] != certified_icon
    r = fairaudit.repair(hiring(hiring_frame(3000, seed=1)), SPEC, ColumnScore(), rows="all", thresholds="both")
    model = r.model
    if r.shown is not None:
        # the repaired model's accuracy is its own, measured on the certification rows
        positions = np.sort(np.asarray(_certification_positions(r)))
        frame = hiring_frame(3000, seed=1).iloc[positions]
        own = float((model.predict(frame) == frame["hired"].to_numpy()).mean())
        assert r.certified_accuracy == pytest.approx(own)
        assert model.metrics["accuracy"] == pytest.approx(own)


def _certification_positions(result):
    from fairaudit.core.inputs import Inputs, split_audited

    ds = hiring(hiring_frame(3000, seed=1))
    return split_audited(Inputs(dataset=ds), result.search.share, result.search.seed)[1]


def test_a_repaired_model_does_not_describe_the_base_models_accuracy():
    from fairaudit import models
    from fairaudit.repairs.model import repaired_model

    ds = hiring(hiring_frame(800, seed=2))
    base = models.train(ds, "logreg")
    assert "held-out accuracy" in base.describe()
    wrapper = repaired_model(base, [], {}, 1e-6)
    assert "held-out accuracy" not in wrapper.describe() and "threshold repair of" in wrapper.describe()


def test_the_plan_maximises_the_expected_objective():
    score = np.array([0.80, 0.75, 0.70])
    chance = np.array([0.1, 0.6, 0.99])
    total, picked = best_set(score, chance, 1)
    assert picked == [2] and total == pytest.approx(0.70 * 0.99)
    total, picked = best_set(score, chance, 2)
    assert picked == [1, 2] and total == pytest.approx(0.75 * 0.6 + 0.70 * 0.39)
    kept = front(np.array([0.8, 0.7, 0.6, 0.65]), np.array([0.2, 0.5, 0.4, 0.9]))
    assert list(kept) == [0, 1, 3]  # 0.6 at odds 0.4 is beaten on both


def test_certificates_are_sound_on_a_known_population():
    """Per-group repairs of rows drawn from a population whose gap is known: a certified repair's population gap is
    under the tolerance (a wrong certificate has probability ≤ Δ per run; a few runs, none wrong)."""
    from scipy import stats

    wrong = certified = 0
    for run in range(4):
        rng = np.random.default_rng(run)
        n = 4000
        sex = np.where(rng.uniform(size=n) < 0.6, "Male", "Female")
        s = np.where(sex == "Male", rng.beta(1.6, 0.9, n), rng.beta(0.9, 1.3, n))
        y = (rng.uniform(size=n) < s).astype(int)
        ds = hiring(pd.DataFrame({"sex": sex, "s": s, "hired": y}))
        r = fairaudit.repair(ds, SPEC, ColumnScore(), rows="all", thresholds="both", seed=run, split=0.3)
        for c in r.tried:
            if c.verdict == "certified":
                certified += 1
                tf = c.point.thresholds.get("Female", c.point.default)
                tm = c.point.thresholds.get("Male", c.point.default)
                gap = stats.beta.sf(tf, 0.9, 1.3) - stats.beta.sf(tm, 1.6, 0.9)
                wrong += abs(gap) >= 0.1
    assert wrong == 0, (wrong, certified)


def test_the_refusal_never_asks_for_the_rows_it_already_has():
    """When the search rows' rates promised a certificate the certification rows denied, the line says so instead
    of asking for "about 875 certification rows; there are 875"."""
    from types import SimpleNamespace

    from fairaudit.repairs.repair import _refusal

    from fairaudit.repairs.wording import refusal_text

    best = SimpleNamespace(accuracy=0.755, favourable=0.04)
    line = refusal_text(_refusal("accuracy", 0.1, 2, 2, [1, 2], 875, 875, 0.3, best))
    assert "did not bear it out" in line and "with about 875" not in line
    line = refusal_text(_refusal("accuracy", 0.1, 2, 2, [1, 2], 2_000, 875, 0.3, best))
    assert "about 2,000 certification rows" in line and "there are 875" in line


# ------------------------------------------------------------------------------------------------ the walkthrough
ANALYST_SPEC = ('ratio: E[pred | sex == "Female" and race == "Black"] / E[pred | sex == "Male" and race == "White"] '
                '>= 0.8\ngap: E[pred | sex == "Female"] - E[pred | sex == "Male"] >= -0.1\n')
ANALYST_FEATURES = ["sex", "race", "years_experience", "test_score", "education"]  # protected attributes included
# a group name or a comparison read from the specification's printed text
SPEC_FRAGMENT = re.compile(r'"\s+and\b|==\s*"|E\[|\bpred\b')
INTERSECTION = "sex = Female and race = Black"


def analyst_frame(n: int = 5000, seed: int = 7) -> pd.DataFrame:
    """The browser walkthrough's hiring file (``tests/e2e/test_analyst_walkthrough.py``): a gap planted against
    Black women."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    race = rng.choice(["Black", "White", "Asian", "Hispanic"], n, p=[.2, .5, .12, .18])
    experience = rng.gamma(2, 3, n).round(1)
    score = rng.normal(70, 10, n).round(1)
    education = rng.choice(["HS", "BA", "MS", "PhD"], n, p=[.3, .45, .2, .05])
    z = (-9 + 0.1 * score + 0.12 * experience + 0.4 * (education == "MS") + 0.6 * (education == "PhD")
         - 1.2 * ((sex == "Female") & (race == "Black")))
    hired = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return pd.DataFrame({"applicant_id": np.arange(1, n + 1), "sex": sex, "race": race,
                         "years_experience": experience, "test_score": score, "education": education,
                         "hired": hired})


def analyst_data():
    return from_csv(analyst_frame().to_csv(index=False).encode(), label="hired", protected=["sex", "race"],
                    favourable=1, name="hiring.csv")


def analyst_model(ds):
    from fairaudit import models

    return models.train(ds, "logreg", features=ANALYST_FEATURES)


@pytest.fixture(scope="module")
def analyst():
    ds = analyst_data()
    model = analyst_model(ds)
    return ds, model, fairaudit.repair(ds, ANALYST_SPEC, model)


def test_the_walkthrough_refusal_leads_in_one_line_from_structure(analyst):
    _, _, r = analyst
    # the walkthrough's case: the only useful candidate tried is far from the specification on the search rows
    assert not r.is_adopted and r.adopted is None and r.tried and r.chosen.margin < 0
    line = r.refusal
    assert line == r.headline and "\n" not in line and len(line) < 400
    assert line.startswith("No repair adopted: no threshold that keeps accuracy within 0.1 of the original satisfies "
                           "the specification on the search rows")
    assert "useful" not in line and "candidate(s)" not in line and "Refused" not in line
    assert r.status[0] == "No repair adopted" and r.shown_name == "best candidate tried"
    # the surfaces name the bound their own way, in the one sentence
    assert "(max_loss)" in r.refusal_for("library") and "--max-loss" not in r.refusal_for("library")
    assert "(--max-loss)" in r.refusal_for("cli") and "max_loss" not in r.refusal_for("cli")
    dashboard = r.refusal_for("dashboard")
    assert "the 'Largest loss allowed' slider" in dashboard and "max" not in dashboard.replace("maximum", "")
    # each candidate's certificate in words, from the parsed specification
    for c in r.tried:
        said = r.candidate_sentence(c)
        assert INTERSECTION in said and "sex = Male and race = White" in said and "(ratio)" in said
        assert not SPEC_FRAGMENT.search(said), said
    assert not SPEC_FRAGMENT.search(r.headline)
    # a negative loss is a gain
    assert r.accuracy_loss < 0 and r.accuracy_change() == f"accuracy gained on the search rows: {-r.accuracy_loss:.4f}"
    data = json.loads(r.to_json())
    assert data["adopted"] is False and data["refused"]["satisfying"] == 0 and data["headline"] == line


def test_the_cli_says_the_walkthrough_refusal_first_in_its_own_words(analyst, tmp_path, capsys):
    ds, model, _ = analyst
    analyst_frame().to_csv(tmp_path / "hiring.csv", index=False)
    model.save(tmp_path / "m.skops")
    code = main(["repair", "--data", str(tmp_path / "hiring.csv"), "--label", "hired", "--favourable", "1",
                 "--protected", "sex", "race", "--model", str(tmp_path / "m.skops"), "--spec", ANALYST_SPEC])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert code in (1, 3)
    assert lines[0].startswith("No repair adopted: no threshold that keeps accuracy within 0.1 of the original")
    assert "(--max-loss)" in lines[0] and "max_loss" not in out and "slider" not in out
    prose = [ln for ln in lines if not ln.startswith("spec:")]  # the specification only on its own line
    for ln in prose:
        assert not SPEC_FRAGMENT.search(ln), ln
        assert "repaired" not in ln and "(chosen)" not in ln and "useful" not in ln, ln
    assert "adopted" not in "\n".join(prose[1:]).replace("No repair adopted", "")
    assert "best candidate tried" in out and INTERSECTION in out
    assert "accuracy gained on the search rows" in out and "given up" not in out


def test_the_refusal_sentence_is_one_place_with_the_surfaces_option():
    from fairaudit.repairs.wording import OPTION_NAMES, Refusal, change_words, plural, refusal_sentence, refusal_text

    base = dict(objective="accuracy", max_loss=0.1, cert_rows=875, split=0.3)
    none = Refusal(useful=0, satisfying=0, tried=0, **base)
    outside = Refusal(useful=3, satisfying=0, tried=1, **base)
    one = Refusal(useful=3, satisfying=2, tried=1, rows_needed=4950, best="accuracy 0.755", **base)
    two = Refusal(useful=3, satisfying=2, tried=2, rows_needed=None, **base)
    for refusal in (none, outside, one, two):
        for surface, option in OPTION_NAMES.items():
            line = refusal_text(refusal, surface)
            assert line == refusal_sentence(refusal, option) and line.startswith("No repair adopted: ")
            assert "candidate(s)" not in line and "useful" not in line and "\n" not in line
            others = [o for s_, o in OPTION_NAMES.items() if s_ != surface and o not in option]
            assert not any(o in line for o in others), (surface, line)
    assert "no threshold that keeps accuracy within 0.1 of the original satisfies the specification on the search " \
           "rows" in refusal_text(outside)
    assert "the one candidate tried" in refusal_text(one) and "about 4,950 certification rows" in refusal_text(one)
    assert "none of the 2 candidates tried" in refusal_text(two)
    favourable = Refusal(useful=0, satisfying=0, tried=0, objective="favourable", max_loss=0.05, cert_rows=10,
                         split=0.5)
    assert "share of favourable decisions within 0.05" in refusal_text(favourable)
    assert plural(1, "candidate") == "1 candidate" and plural(2, "candidate") == "2 candidates"
    assert change_words(0.0107) == "accuracy given up on the search rows: 0.0107"
    assert change_words(-0.0107) == "accuracy gained on the search rows: 0.0107"
    assert change_words(-0.04, points=True) == "accuracy gained on the search rows: 4.0 points"


@pytest.mark.parametrize("seed", range(6))
def test_the_plans_rule_is_the_certificates_own(tmp_path, seed):
    """``select.one_look_verdict`` (what the plan predicts with) decides as the certificate does: the ``dataset``
    engine's one-look audit of the same rows — including a group with one row and a constant group."""
    from fairaudit.repairs.repair import CERTIFY_ENGINE, CERTIFY_OPTIONS
    from fairaudit.repairs.select import one_look_verdict
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.spec import parse

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.45, 0.05])
    d = (rng.random(n) < rng.uniform(0, 1, 3)[np.searchsorted(["a", "b", "c"], g)]).astype(int)
    if seed == 0:
        d[g == "c"] = 1  # a constant group
    frame = pd.DataFrame({"g": g, "d": d})
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    text = 'E[pred | g == "a"] - E[pred | g == "b"] <= 0.1 and E[pred | g == "c"] >= 0.2'
    spec = parse(text)
    verdict = fairaudit.audit(str(path), text, pred="d == 1", engine=CERTIFY_ENGINE, **CERTIFY_OPTIONS).verdict
    counts = {}  # per distinct leaf of the compiled spec (the search's keys): its successes and rows
    for key in compile_spec(spec).leaf_keys:
        group = key.split('"')[1]
        inside = frame["g"] == group
        counts[key] = (np.array([float(frame.loc[inside, "d"].sum())]), np.array([float(inside.sum())]))
    got = int(one_look_verdict(spec, counts, 0.05)[0])
    assert {1: "true", 0: "false", -1: "unknown"}[got] == verdict
