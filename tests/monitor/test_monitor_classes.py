"""Decisions among several classes (issue 46): ``pred`` is each row's class.

A logged decision column of several values named as the decision (``--pred decision``) and an imported scikit-learn
classifier fitted on several classes make ``pred`` the class (``fairaudit.models.base.Model.decisions_for``). Checked here:
every route counts the same rows the same way (in memory, out of core at several chunk sizes, Dask over uneven
parts); the dataset engine's rates equal fairlearn's ``MetricFrame`` selection rate of each class, one against the
rest, on real data (COMPAS's three-class ``score_text``) and a model's; a typo in a class, a bare ``pred``, an order
between text classes, a text compared with yes/no decisions and ``Fair[...]`` on a class model are refused before
any work, positioned; the engines and the scan that read yes/no refuse classes in one line; a yes/no column stays
yes/no; the headline names the class's rate in words.
"""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit import data
from fairaudit.base.errors import FairauditError
from fairaudit.spec.errors import SpecError
from tests.monitor.same_result import assert_same

SPEC = ('E[pred == "approve" | sex == "F"] - E[pred == "approve" | sex == "M"] < 0.08 '
        'and E[pred in {"approve", "refer"} | race == "B"] > 0.4 and E[pred != "decline" | race == "C"] > 0.3')
CLASSES = ("approve", "refer", "decline")


def decisions(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    p_approve = np.where(sex == "M", 0.45, 0.35)
    u = rng.uniform(size=n)
    decision = np.where(u < p_approve, "approve", np.where(u < p_approve + 0.25, "refer", "decline"))
    income = np.round(rng.gamma(3.0, 15000.0, n))
    return pd.DataFrame({"sex": sex, "race": race, "income": income, "decision": decision,
                         "repaid": rng.integers(0, 2, n)})


def dataset(frame):
    return data.from_csv(frame.to_csv(index=False).encode(), label="repaid", protected=["sex", "race"])




def test_a_logged_class_column_gives_the_same_answer_on_every_route(tmp_path):
    from fairaudit.engines.monitor.distributed import audit_parquet, dask_client
    from fairaudit.engines.monitor.outofcore import audit_file
    from tests.engines.parquet_logs import write_log

    frame = decisions()
    memory = fairaudit.audit(dataset(frame), SPEC, pred="decision", engine="monitor", order="given")
    assert memory.verdict in ("true", "false")
    folder = tmp_path / "log"
    write_log(frame, folder, parts=5)
    parquet = tmp_path / "whole.parquet"
    frame.to_parquet(parquet)
    for path in (parquet, folder.parent / "log.csv"):
        for read_rows in (100_000, 997, 1 if path == parquet else 4999):
            out = audit_file(str(path), SPEC, pred="decision", label="repaid", protected=["sex", "race"],
                             read_rows=read_rows, order="given")
            assert_same(memory, out)
    with dask_client(workers=2, threads=1, timeout=60) as client:
        out = audit_parquet(folder, SPEC, pred="decision", label="repaid", client=client, order="given")
    assert_same(memory, out)


def test_the_dataset_engine_counts_each_class_as_pandas_does():
    frame = decisions(3001, seed=3)
    out = fairaudit.audit(dataset(frame), SPEC, pred="decision", engine="dataset")
    values = {tn.text: out.final_values(tn.id)["estimate"] for tn in out.tree.nodes if tn.kind == "expect"}
    f, m = frame[frame.sex == "F"], frame[frame.sex == "M"]
    assert values['E[pred == "approve" | sex == "F"]'] == (f.decision == "approve").mean()
    assert values['E[pred == "approve" | sex == "M"]'] == (m.decision == "approve").mean()
    b, c = frame[frame.race == "B"], frame[frame.race == "C"]
    assert values['E[pred in {"approve", "refer"} | race == "B"]'] == b.decision.isin(["approve", "refer"]).mean()
    assert values['E[pred != "decline" | race == "C"]'] == (c.decision != "decline").mean()


def _per_class_metricframe(y_pred, groups):
    """fairlearn's selection rate of each class (one against the rest) in each group."""
    from fairlearn.metrics import MetricFrame, selection_rate

    out = {}
    for cls in pd.unique(y_pred):
        chosen = (np.asarray(y_pred) == cls).astype(int)
        frame = MetricFrame(metrics=selection_rate, y_true=chosen, y_pred=chosen, sensitive_features=groups)
        out[cls] = frame.by_group
    return out


def test_per_class_selection_rates_equal_metricframe_on_compas():
    compas = data.load("compas")
    spec = " and ".join(f'E[pred == "{c}" | race == "{r}"] >= 0' for c in ("Low", "Medium", "High")
                        for r in ("African-American", "Caucasian"))
    out = fairaudit.audit(compas, spec, pred="score_text", engine="dataset")
    expected = _per_class_metricframe(compas.frame["score_text"], compas.frame["race"])
    for tn in out.tree.nodes:
        if tn.kind == "expect":
            cls, race = tn.node.event.right.value, tn.node.given.right.value
            assert abs(out.final_values(tn.id)["estimate"] - expected[cls][race]) <= 1e-12


@pytest.fixture(scope="module")
def class_model(tmp_path_factory):
    """A scikit-learn pipeline fitted on three classes, saved as a skops file and loaded as a user's would be."""
    import skops.io as sio
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    frame = decisions(4000, seed=1)
    pipe = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["race"]),
                                                 remainder=StandardScaler()),
                         LogisticRegression(max_iter=500))
    pipe.fit(frame[["race", "income"]], frame["decision"])
    path = tmp_path_factory.mktemp("model") / "classes.skops"
    sio.dump(pipe, path)
    return path, pipe


def test_a_multiclass_model_decides_its_classes_on_every_route(tmp_path, class_model):
    from fairaudit.engines.monitor.outofcore import audit_file
    from fairaudit.models import load

    path, pipe = class_model
    model = load(path)
    assert model.classes == ("approve", "decline", "refer")
    assert "3 classes: approve, decline, refer" in model.describe()
    frame = decisions(3000, seed=2)
    exact = fairaudit.audit(dataset(frame), SPEC, model=model, engine="dataset")
    predicted = pipe.predict(frame[["race", "income"]])
    expected = _per_class_metricframe(predicted, frame["sex"])
    node = next(tn for tn in exact.tree.nodes if tn.text == 'E[pred == "approve" | sex == "F"]')
    assert abs(exact.final_values(node.id)["estimate"] - expected["approve"]["F"]) <= 1e-12
    memory = fairaudit.audit(dataset(frame), SPEC, model=model, engine="monitor", order="given")
    csv = tmp_path / "log.csv"
    frame.to_csv(csv, index=False)
    assert_same(memory, audit_file(str(csv), SPEC, model=model, label="repaid", read_rows=777, order="given"))


@pytest.mark.parametrize("spec, said, column", [
    ('E[pred == "aprove" | sex == "F"] > 0.1', 'never takes the value "aprove"; did you mean "approve"?', 11),
    ('E[pred | sex == "F"] > 0.1', "'pred' is one of several classes, not yes/no", 3),
    ('E[pred < "refer" | sex == "F"] > 0.1', "so '<' has no meaning", 10),
])
def test_what_pred_is_compared_with_is_checked_against_the_classes(spec, said, column, class_model):
    from fairaudit.models import load

    frame = decisions(500)
    for decider in ({"pred": "decision"}, {"model": load(class_model[0])}):
        with pytest.raises(SpecError) as err:
            fairaudit.audit(dataset(frame), spec, **decider)
        assert said in err.value.message and (err.value.line, err.value.column) == (1, column), err.value


def test_yes_no_decisions_stay_yes_no_and_refuse_a_class(class_model):
    from fairaudit.models import ClassColumnModel, ExpressionModel, decider

    frame = decisions(400).assign(approved=lambda f: (f.decision == "approve").astype(int),
                                  verdict=lambda f: np.where(f.decision == "approve", "yes", "no"))
    ds = data.from_csv(frame.to_csv(index=False).encode(), label="repaid", protected=["sex"])
    assert isinstance(decider("approved", ds.schema), ExpressionModel)  # a 0/1 column: yes/no, as ever
    assert isinstance(decider("verdict", ds.schema), ClassColumnModel)  # two texts: its classes
    assert decider("approved", ds.schema).decisions_for(ds.frame).dtype == np.int8
    with pytest.raises(SpecError, match="compare it with a number"):
        fairaudit.audit(ds, 'E[pred == "approve" | sex == "F"] > 0.1', pred="approved")
    binary = fairaudit.audit(ds, 'E[pred | sex == "F"] > 0.1', pred="approved", engine="dataset")
    same = fairaudit.audit(ds, 'E[pred == "yes" | sex == "F"] > 0.1', pred="verdict", engine="dataset")
    assert binary.final_values("n0")["estimate"] == same.final_values("n0")["estimate"]


def test_engines_and_commands_that_read_yes_no_refuse_classes_in_one_line(class_model):
    from fairaudit.models import load

    frame = decisions(600)
    model = load(class_model[0])
    for engine in ("justicia", "fvgm", "fairsquare"):  # each refuses (for this or its own reason), none answers
        with pytest.raises(FairauditError) as err:
            fairaudit.audit(dataset(frame), 'E[pred == "approve" | sex == "F"] > 0.1', model=model, engine=engine)
        assert "\n" not in str(err.value)
        assert engine != "justicia" or "several classes" in str(err.value)
    with pytest.raises(FairauditError, match="the scan reads yes/no decisions.*--pred 'decision == \"approve\"'"):
        fairaudit.scan(dataset(frame), ["sex"], pred="decision")
    with pytest.raises(SpecError, match="Fair\\[race\\].*several classes"):
        fairaudit.audit(dataset(frame), "Fair[race] > 0.9", model=model)


def test_the_headline_names_the_rate_of_a_class():
    frame = decisions(8000)
    out = fairaudit.audit(dataset(frame), 'E[pred == "approve" | sex == "F"] - E[pred == "approve" | sex == "M"] '
                                          '< 0.02', pred="decision", engine="dataset")
    assert out.claim.summary.startswith("The rate of decision = approve among those with sex = F is lower than among "
                                        "those with sex = M: the gap is")


def test_a_missing_decision_is_an_error_naming_the_row_on_every_route(tmp_path):
    from fairaudit.base.errors import ModelError
    from fairaudit.engines.monitor.outofcore import audit_file

    frame = decisions(400)
    frame.loc[[7, 9, 300], "decision"] = None
    csv = tmp_path / "log.csv"
    frame.to_csv(csv, index=False)
    said = "the decision column 'decision' is missing on 3 rows (first: row 8"
    with pytest.raises(ModelError, match=said.replace("(", "\\(")):
        fairaudit.audit(dataset(frame), 'E[pred == "approve" | sex == "F"] > 0.1', pred="decision")
    for read_rows in (1000, 3):  # (the first chunk with a missing decision: rows 7 to 9)
        with pytest.raises(FairauditError, match="missing on .* row.* \\(first: row 8\\)"):
            audit_file(str(csv), 'E[pred == "approve" | sex == "F"] > 0.1', pred="decision", label="repaid",
                       read_rows=read_rows)


def test_a_row_filter_on_the_classes_is_checked_against_them(class_model):
    from fairaudit.models import load

    frame = decisions(500)
    spec = 'E[pred == "approve" | sex == "F"] > 0.1'
    for decider in ({"pred": "decision"}, {"model": load(class_model[0])}):
        with pytest.raises(SpecError, match='never takes the value "refr"; did you mean "refer"'):
            fairaudit.audit(dataset(frame), spec, where='pred != "refr"', **decider)
    kept = fairaudit.audit(dataset(frame), spec, where='pred != "refer"', pred="decision", engine="dataset")
    assert kept.rows["audited"] == int((frame.decision != "refer").sum())


def test_numbers_that_code_classes_are_read_as_classes_once_declared_categorical():
    frame = decisions(600).assign(code=lambda f: f.decision.map({"approve": 2, "refer": 1, "decline": 0}))
    text = frame.to_csv(index=False).encode()
    plain = data.from_csv(text, label="repaid", protected=["sex"])
    with pytest.raises(FairauditError, match="declare it categorical \\(--column-type code=categorical"):
        fairaudit.audit(plain, 'E[pred == 2 | sex == "F"] > 0.1', pred="code")
    coded = data.from_csv(text, label="repaid", protected=["sex"], column_types={"code": "categorical"})
    with pytest.raises(SpecError, match="write the value in quotes"):
        fairaudit.audit(coded, 'E[pred == 2 | sex == "F"] > 0.1', pred="code")
    out = fairaudit.audit(coded, 'E[pred == "2" | sex == "F"] > 0.1', pred="code", engine="dataset")
    assert out.final_values("n1")["estimate"] == (frame.decision[frame.sex == "F"] == "approve").mean()


def test_favourable_classes_read_a_model_of_classes_as_yes_no(tmp_path, class_model):
    """The favourable classes are a role, as a label's favourable value is: ``with_favourable`` (``--favourable-class``)
    makes ``pred`` 1 where the model's class is one of them, so every yes/no tool applies (the bare ``E[pred | g]``,
    the scan); its score is the probability of those classes together."""
    import subprocess
    import sys

    from fairaudit.base.errors import ModelError
    from fairaudit.models import load, with_favourable

    path, pipe = class_model
    frame = decisions(2000, seed=5)
    model = load(path)
    yes_no = with_favourable(model, ["approve", "refer"])
    assert yes_no.classes is None and "favourable: approve, refer" in yes_no.describe()
    exact = fairaudit.audit(dataset(frame), 'E[pred | sex == "F"] >= 0', model=yes_no, engine="dataset")
    predicted = pipe.predict(frame[["race", "income"]])
    assert exact.final_values("n1")["estimate"] == np.isin(predicted[frame.sex == "F"], ["approve", "refer"]).mean()
    proba = pipe.predict_proba(frame[["race", "income"]])
    chosen = [list(pipe.classes_).index(c) for c in ("approve", "refer")]
    assert np.allclose(yes_no.score(frame), proba[:, chosen].sum(axis=1), rtol=0, atol=1e-15)
    assert fairaudit.scan(dataset(frame), ["sex", "race"], model=yes_no).cells
    with pytest.raises(ModelError, match="'aprove' is not a class of the model; did you mean 'approve'"):
        with_favourable(model, ["aprove"])
    with pytest.raises(ModelError, match="decides yes/no already"):
        with_favourable(yes_no, ["approve"])
    csv = tmp_path / "log.csv"
    frame.to_csv(csv, index=False)
    run = subprocess.run([sys.executable, "-m", "fairaudit", "audit", "--data", str(csv), "--label", "repaid",
                          "--protected", "sex", "--model", str(path), "--favourable-class", "approve",
                          "--favourable-class", "refer", "--engine", "dataset", "--spec", 'E[pred | sex == "F"] >= 0'],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    refused = subprocess.run([sys.executable, "-m", "fairaudit", "audit", "--data", str(csv), "--label", "repaid",
                              "--pred", "decision", "--favourable-class", "approve", "--spec",
                              'E[pred | sex == "F"] >= 0'], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--pred 'COLUMN in {" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_the_starting_specification_and_the_report_follow_a_decision_of_classes():
    """Decisions among classes: the dashboard's starting specification compares the rate of a class (a bare pred
    would be refused), and the PDF's decisions line names the column's classes."""
    from fairaudit.report.content import model_facts, model_lines
    from fairaudit.spec import parse, validate
    from fairaudit.ui.logic import starting_spec

    compas = data.load("compas")
    starter = starting_spec("compas", {"race": ["African-American", "Caucasian"], "sex": ["Male", "Female"]},
                            ("High", "Low", "Medium"))
    assert "the rate of decision = High" in starter and "E[pred ==" in starter
    assert [d for d in validate(parse(starter), compas.schema, compas.frame, classes=("High", "Low", "Medium"))
            if d.severity == "error"] == []
    out = fairaudit.audit(compas, 'E[pred == "High" | sex == "Male"] <= 0.5', pred="score_text", engine="dataset")
    model = fairaudit.models.from_expression("score_text", compas)
    lines = dict(model_lines(model_facts(out, model)))
    assert lines["decisions"].startswith("the classes in column  score_text  (3: High, Low, Medium")


def test_a_live_log_of_classes_counts_as_the_file_at_rest():
    """A live log read in chunks of random sizes (``fairaudit.engines.monitor.livelog``) with a column of classes as
    the decision: the same trace as the file at rest in the given order."""
    from fairaudit.core import registry
    from fairaudit.core.driver import last
    from fairaudit.engines.monitor.livelog import live_audit
    from fairaudit.models import from_expression
    from fairaudit.spec import parse

    frame = decisions(3000, seed=9)
    ds = dataset(frame)
    rest = fairaudit.audit(ds, SPEC, pred="decision", order="given", trace_points=None)
    model = from_expression("decision", ds)
    cuts = [0, 17, 18, 900, 1500, 2999, 3000]
    frames = (ds.frame.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:]))
    opts = registry.get("monitor").resolve_options({"order": "given"})
    live = last(live_audit(parse(SPEC), frames, decide=model.decisions_for, options=opts, trace_points=None))
    assert (live.verdict, live.stop_step) == (rest.verdict, rest.stop_step)
    for field in ("estimate", "lo", "hi", "n"):
        assert np.array_equal(getattr(live.trace_table, field), getattr(rest.trace_table, field), equal_nan=True)
