"""Issue 11: no silent wrong verdicts. Each test here failed on the code before the fix."""
from __future__ import annotations

import json

import numpy as np
import pytest

import fairaudit
from fairaudit import data
from fairaudit.cli import main
from fairaudit.base.errors import FairauditError
from fairaudit.core.preflight import ValidationError

ADULT_PRED = ["--data", "adult", "--pred", 'income == ">50K"']


@pytest.fixture(scope="module")
def adult():
    return data.load("adult")


def _run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as done:  # a flag's value refused when the command line is read (argparse): exit 2
        code = done.code
    out = capsys.readouterr()
    return code, out.out, out.err


# ---- 1, 6, 9: audit refuses exactly what check refuses, with the same message, before any work

BAD_SPECS = [
    ('E[pred | sex != "male"] / E[pred | sex == "Male"] >= 0.7', 'never takes the value "male"; did you mean "Male"'),
    ('E[pred | sex < "Male"] < 0.9', "categorical, so '<' has no meaning"),
    ('E[age | sex == "Male"] > 30', "'age' holds numbers"),
    ('E[score | sex == "Male"] > 0.3', "'score' is a model's probability"),  # an amount, which logged decisions lack
    ('E[pred | sexx == "Male"] > 0.3', "did you mean 'sex'"),
    ("1 < 2", "no E[...] or Fair[...] term"),
    ("Fair[sex] >= 0.9", "needs a model"),
]


@pytest.mark.parametrize("spec, message", BAD_SPECS)
def test_audit_refuses_what_check_refuses_with_the_same_message(capsys, spec, message):
    code, out, err = _run(capsys, ["audit", *ADULT_PRED, "--spec", spec])
    assert code == 2 and out == "" and message in err and "Traceback" not in err
    assert "^" in err  # the caret under the token
    audit_message = err.split("error: ", 1)[1]
    if "needs a model" not in message and "model's probability" not in message:  # check has no decision to tell
        # it there is no model (E[score | …] is a model's mean score, valid with a model)
        code, _, check_err = _run(capsys, ["check", spec, "--data", "adult"])
        assert code == 2 and check_err == audit_message


@pytest.mark.parametrize("spec, message", BAD_SPECS)
def test_the_python_api_refuses_them_too(adult, spec, message):
    with pytest.raises(FairauditError, match=message.replace("[", r"\[").replace("]", r"\]")):
        fairaudit.audit(adult, spec, pred='income == ">50K"')


def test_a_typo_costs_no_training(capsys, monkeypatch):
    import fairaudit.models

    def boom(*a, **k):
        raise AssertionError("trained a model before validating the spec")
    monkeypatch.setattr(fairaudit.models, "train", boom)
    code, _, err = _run(capsys, ["audit", "--data", "adult", "--model", "logreg", "--spec",
                                 'E[pred | sex == "female"] > 0.1'])
    assert code == 2 and 'did you mean "Female"' in err


def test_where_pred_and_header_typos_are_positioned(capsys, tmp_path):
    code, _, err = _run(capsys, ["audit", *ADULT_PRED, "--where", 'workclass == "Federal"', "--spec",
                                 'E[pred | sex == "Male"] > 0.1'])
    assert code == 2 and err.startswith("fairaudit audit: error: --where:1:14: in the row filter:")
    spec = tmp_path / "s.spec"
    spec.write_text('# dataset: adult\n# decision: income == ">50k"\nE[pred | sex == "Male"] > 0.1\n')
    code, _, err = _run(capsys, ["audit", "--spec", f"@{spec}"])
    assert code == 2 and f"{spec}:2:23: in the decision:" in err and 'did you mean ">50K"' in err


def test_warnings_are_printed_and_recorded(capsys, tmp_path):
    out_json = tmp_path / "r.json"
    code, out, _ = _run(capsys, ["audit", "--data", "ricci", "--pred", "combine >= 70", "--spec",
                                 'E[pred | race == "Hispanic"] > 0.1', "--json", str(out_json)])
    assert code in (0, 1, 3)
    assert "warning:   1:1: only 23 rows satisfy the condition" in out
    assert any("only 23 rows" in w for w in json.loads(out_json.read_text())["warnings"])


# ---- 3, 4: decisions

def test_a_numeric_decision_that_is_not_0_1_is_refused(capsys, adult):
    code, _, err = _run(capsys, ["audit", "--data", "adult", "--pred", "age", "--spec", 'E[pred | sex == "Male"] > 0.1'])
    assert code == 2 and "'age' holds numbers (17 to 90)" in err and "write a condition such as age >=" in err
    with pytest.raises(FairauditError, match="'age' holds numbers"):
        fairaudit.models.from_expression("age and sex == 'Male'", adult)


def test_an_inverted_decision_is_pointed_out():
    compas = data.load("compas")
    spec = 'E[pred | race == "Caucasian"] > 0.1'
    inverted = fairaudit.audit(compas, spec, pred="decile_score > 4")
    assert any("did you invert it?" in w and "two_year_recid == 0" in w for w in inverted.warnings)
    right = fairaudit.audit(compas, spec, pred="decile_score <= 4")
    assert not any("invert" in w for w in right.warnings)


# ---- 5: rows the model trained on are not audited by default

SEX_GAP = 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.3'


def test_a_model_trained_here_is_audited_on_held_out_rows(adult, tmp_path, capsys):
    r = fairaudit.audit(adult, SEX_GAP, model="logreg")
    assert r.rows["policy"] == "held-out" and r.rows["audited"] == 8141
    assert r.steps == 8141 and "held-out" in r.rows_text
    everything = fairaudit.audit(adult, SEX_GAP, model="logreg", rows="all")
    assert everything.steps == 32561 and "including the 24,420 the model was trained on" in everything.rows_text
    # a saved model remembers which rows it was trained on
    path = tmp_path / "m.joblib"
    assert main(["train", "--data", "adult", "--kind", "logreg", "--out", str(path)]) == 0
    code, out, _ = _run(capsys, ["audit", "--data", "adult", "--model", str(path), "--spec", SEX_GAP])
    assert "rows:      8,141 held-out rows of adult" in out
    # on other data (or with other roles) it cannot know: all rows, and says so
    code, out, _ = _run(capsys, ["audit", "--data", "adult_test", "--model", str(path), "--spec", SEX_GAP])
    assert "all 16,281 rows of adult_test (the model was trained on adult" in out
    code, _, err = _run(capsys, ["audit", "--data", "adult_test", "--model", str(path), "--rows", "held-out",
                                 "--spec", SEX_GAP])
    assert code == 2 and "cannot audit held-out rows only" in err


def test_decisions_from_an_expression_audit_every_row(adult):
    r = fairaudit.audit(adult, SEX_GAP, pred='income == ">50K"')
    assert r.steps == len(adult) and r.rows["policy"] == "all"


# ---- 6: crashes never look like verdicts

def test_an_internal_error_exits_4_with_one_line(capsys, monkeypatch):
    import fairaudit.api

    def broken(*a, **k):
        raise RuntimeError("generator raised StopIteration")
    monkeypatch.setattr(fairaudit.api, "audit", broken)
    code, _, err = _run(capsys, ["audit", *ADULT_PRED, "--spec", 'E[pred | sex == "Male"] > 0.1'])
    assert code == 4 and err.count("\n") == 1 and "internal error: RuntimeError" in err


@pytest.mark.parametrize("argv", [["--seed", "-1"], ["--delta", "nan"], ["--delta", "1"], ["--batch", "0"],
                                  ["--time-budget", "-3"]])
def test_bad_options_exit_2(capsys, argv):
    code, _, err = _run(capsys, ["audit", *ADULT_PRED, "--spec", 'E[pred | sex == "Male"] > 0.1', *argv])
    assert code == 2 and err.count("\n") == 1


# ---- 7, 8: row order

@pytest.fixture(scope="module")
def sorted_adult(tmp_path_factory, adult):
    path = tmp_path_factory.mktemp("sorted") / "adult_sorted.csv"
    adult.frame.sort_values("income", kind="stable").to_csv(path, index=False)
    return ["--data", str(path), "--label", "income", "--favourable", ">50K", "--protected", "sex",
            "--pred", 'income == ">50K"', "--spec", 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1']


def test_a_sorted_file_is_shuffled_by_default(capsys, sorted_adult, tmp_path):
    out_json = tmp_path / "r.json"
    code, out, _ = _run(capsys, ["audit", *sorted_adult, "--json", str(out_json)])
    assert code == 1  # the true gap is 0.18: violated (file order certified it true)
    result = json.loads(out_json.read_text())
    assert result["options"]["order"] == "shuffle" and "shuffled (seed 0)" in result["guarantee"]["assumes"]


def test_file_order_says_what_it_assumes_and_warns_when_broken(capsys, sorted_adult):
    code, out, _ = _run(capsys, ["audit", *sorted_adult, "--order", "given"])
    assert "assumes:   the rows were streamed in their given order" in out
    assert "warning:   the rows do not look randomly ordered" in out
    assert "became empty at step" in out and "on the first half of the stream" in out
    # 8: the sentence names the step of the reported verdict, not the first (overturned) decision
    assert code == 3 and "violated with probability ≥ 0.95 after 28,495 observations" in out
    assert "the verdict was true at step 120 but is false from step 28,495" in out
    code, out, _ = _run(capsys, ["audit", *sorted_adult, "--order", "given", "--stop"])
    # "certified true" on the sorted prefix, but the run's own evidence says the rows are not random: not a pass
    assert "verdict:   certified" in out and "warning:   the rows do not look randomly ordered" in out
    assert code == 3 and "exit:      3 — the verdict is not backed by its guarantee" in out


def test_order_header(tmp_path, capsys):
    spec = tmp_path / "s.spec"
    spec.write_text('# dataset: adult\n# decision: income == ">50K"\n# order: sorted\nE[pred] > 0.1\n')
    code, _, err = _run(capsys, ["audit", "--spec", f"@{spec}"])
    assert code == 2 and ":3:10: '# order:' must be one of shuffle, given" in err


def test_order_warnings_are_rare_when_the_order_is_random():
    """The detectors fire with probability ≤ Δ under exchangeability (each is a level-Δ test)."""
    from fairaudit.engines.monitor.engine import Observations, run_monitor
    from fairaudit.spec import parse

    spec = parse("E[a] - E[b | c] < 0.05")
    rng = np.random.default_rng(1)
    runs, delta, alarms = 200, 0.1, 0
    for _ in range(runs):
        n = 2000
        a, b, c = rng.random(n) < 0.3, rng.random(n) < 0.28, rng.random(n) < 0.5
        obs = Observations({"E[a]": a, "E[b | c]": b}, {"E[a]": np.ones(n, bool), "E[b | c]": c}, n)
        r = run_monitor(spec, obs, delta=delta, options={"order": "given"})
        alarms += bool(r.warnings)
    assert alarms / runs <= delta


# ---- 9: events

def test_check_refuses_a_bare_numeric_column_too(capsys):
    code, _, err = _run(capsys, ["check", 'E[age | sex == "Male"] > 30', "--data", "adult"])
    assert code == 2 and "'age' holds numbers" in err


def test_score_needs_a_model(capsys):
    code, _, err = _run(capsys, ["audit", "--data", "compas", "--pred", "decile_score <= 4", "--spec",
                                 'E[score > 0.5 | race == "Caucasian"] > 0.3'])
    assert code == 2 and "'score' is a model's probability; a decision expression has none" in err


@pytest.mark.parametrize("headers, message", [
    ('# wher: workclass == "Federal-gov"\n', "'# wher:' is not a header fairaudit knows; did you mean '# where:'?"),
    ("# delt: 0.15\n", "did you mean '# delta:'?"),
    ("# decison: income == \">50K\"\n", "did you mean '# decision:'?"),
    ("# delta: 0.2\n# delta: 0.1\n", "repeats an earlier one"),
])
def test_a_misspelt_or_repeated_header_is_refused(capsys, tmp_path, headers, message):
    """Review finding: '# wher:' was silently ignored, so all rows were audited instead of the intended view."""
    spec = tmp_path / "s.spec"
    spec.write_text(f"# dataset: adult\n{headers}E[label | sex == \"Female\"] < 0.2\n")
    for argv in (["check", f"@{spec}"], ["audit", "--pred", 'income == ">50K"', "--spec", f"@{spec}"]):
        code, _, err = _run(capsys, argv)
        assert code == 2 and message in err


def test_a_header_after_the_spec_is_refused_and_plain_comments_are_fine(capsys, tmp_path):
    spec = tmp_path / "s.spec"
    spec.write_text('# dataset: adult\n# note: compare women and men\nE[label | sex == "Female"] < 0.2\n'
                    '# where: age > 30\n')
    code, _, err = _run(capsys, ["check", f"@{spec}"])
    assert code == 2 and ":4:3: this '# where:' header comes after the specification starts" in err
    spec.write_text('# dataset: adult\n# note: compare women and men\n# order_id: 7\nE[label | sex == "Female"] < 0.2\n')
    assert _run(capsys, ["check", f"@{spec}"])[0] == 0


def test_rows_audited_counts_the_rows_the_filter_keeps(adult):
    r = fairaudit.audit(adult, SEX_GAP, model="logreg", where='workclass == "Federal-gov"')
    assert r.rows["audited"] == r.steps < 8141
    assert r.rows_text.startswith(f"{r.steps:,} rows matching workclass == \"Federal-gov\", among 8,141 held-out")


def test_the_api_says_when_it_does_not_apply_a_spec_texts_headers(adult):
    text = '# where: workclass == "Federal-gov"\n# delta: 0.15\nE[pred | sex == "Female"] > 0.01\n'
    r = fairaudit.audit(adult, text, pred='income == ">50K"')
    assert "# where:, # delta: header(s) are not applied by fairaudit.audit(); pass where=..., delta=..." in r.warnings[0]
