"""Certified threshold repair (``fairaudit.repair``, ``fairaudit repair``): the search's values are the dataset
engine's, the search is the best feasible point, it never reads the certification rows, a repair of Adult is
certified, and the saved repair round-trips (and refuses a changed base model)."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit.base.errors import FairauditError, ModelError
from fairaudit.cli import main
from fairaudit.data import from_csv
from fairaudit.models.base import Model
from fairaudit.repairs.margin import Fixed
from fairaudit.repairs.search import Search, pick
from fairaudit.spec import parse

PARITY = 'E[pred | sex == "F"] - E[pred | sex == "M"] < 0.1 and E[pred | sex == "M"] - E[pred | sex == "F"] < 0.1'
MIXED = ('E[pred | sex == "F"] - E[pred | sex == "M"] > -0.1 and '
         'E[pred | sex == "M" and label == 1] - E[pred | sex == "F" and label == 1] < 0.15')


def tiny_frame(n: int = 240, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n, p=[0.4, 0.6])
    s = np.clip(rng.uniform(size=n) + np.where(sex == "M", 0.15, -0.1), 0.0, 1.0).round(2)
    y = (rng.uniform(size=n) < s).astype(int)
    return pd.DataFrame({"sex": sex, "x": rng.normal(size=n).round(3), "s": s, "y": y})


def tiny(n: int = 240, seed: int = 1, frame: pd.DataFrame | None = None):
    frame = tiny_frame(n, seed) if frame is None else frame
    return from_csv(frame.to_csv(index=False).encode(), label="y", protected="sex", favourable=1, name="tiny.csv")


class ColumnScore(Model):
    """A model whose score is the column ``s`` (decides ``s > 0.5``)."""

    kind = "column"
    params: dict = {}
    feature_names = ["s"]
    metrics: dict = {}

    def score(self, frame):
        return frame["s"].to_numpy(dtype=float)

    @property
    def content_hash(self) -> str:
        return "0" * 64


def decision_text(thresholds: dict) -> str:
    return " or ".join(f'(sex == "{g}" and s >= {float(t)!r})' for g, t in thresholds.items())


# ------------------------------------------------------------------------------------------------ exactness
def test_search_values_are_the_dataset_engines():
    ds = tiny()
    spec = parse(MIXED)
    frame = ds.frame
    search = Search(spec, frame, frame["s"].to_numpy(float), ds.labels, frame["sex"].to_numpy(object))
    for chosen in ({"F": 0.3, "M": 0.6}, {"F": 0.55, "M": 0.45}, {"F": 0.0, "M": 1.01}):
        values = search.point(chosen, 0.5)
        audited = fairaudit.audit(ds, MIXED, engine="dataset", pred=decision_text(chosen), rows="all")
        for tn in spec.nodes:
            if tn.kind in ("and", "or", "not"):
                continue
            want = audited.final_values(tn.id)["estimate"]
            assert values.nodes[tn.id][0] == pytest.approx(want, abs=1e-12), tn.text
        # the margin: each comparison's distance inside its satisfied side (a comparison's value is l − r), the
        # least of the two ("and")
        left = audited.final_values("n1")["estimate"]  # l − r of "... > -0.1"
        right = -audited.final_values(spec.nodes[0].children[1])["estimate"]  # r − l of "... < 0.15"
        assert values.margin[0] == pytest.approx(min(left, right), abs=1e-12)
        decisions = (frame["s"].to_numpy() >= frame["sex"].map(chosen).to_numpy()).astype(int)
        assert values.accuracy[0] == pytest.approx(float((decisions == ds.labels).mean()))
        assert values.favourable[0] == pytest.approx(float(decisions.mean()))


def test_the_search_picks_the_best_feasible_point_brute_force():
    ds = tiny()
    frame = ds.frame
    scores = frame["s"].to_numpy(float)
    need = 0.02
    search = Search(parse(PARITY), frame, scores, ds.labels, frame["sex"].to_numpy(object),
                    requirement=Fixed(need))
    cands = {"F": np.array([0.2, 0.35, 0.5, 0.65]), "M": np.array([0.3, 0.45, 0.6, 0.75, 0.9])}
    found = search.search(cands, 0.5, "accuracy")
    assert found.method == "exhaustive" and len(found.idx) == 20
    best = None
    for tf, tm in itertools.product(cands["F"], cands["M"]):  # each combination audited by the dataset engine
        result = fairaudit.audit(ds, PARITY, engine="dataset", pred=decision_text({"F": tf, "M": tm}), rows="all")
        margin = min(-result.final_values(c)["estimate"] for c in parse(PARITY).nodes[0].children)  # r − l of "<"
        decisions = (scores >= np.where(frame["sex"] == "F", tf, tm)).astype(int)
        accuracy = float((decisions == ds.labels).mean())
        key = (margin >= need, accuracy if margin >= need else margin)
        if best is None or key > best[0]:
            best = (key, (tf, tm), accuracy, margin)
    assert best[0][0], "the brute force found a feasible point"
    chosen = found.thresholds(found.best)
    assert found.feasible
    assert found.values.accuracy[found.best] == pytest.approx(best[2])  # the same best accuracy (ties aside)
    assert found.values.margin[found.best] >= need
    if (chosen["F"], chosen["M"]) != best[1]:  # a tie in accuracy: then the larger margin was preferred
        assert found.values.margin[found.best] >= best[3] - 1e-12


def test_pick_prefers_feasible_then_objective_then_slack():
    from fairaudit.repairs.search import Evaluated

    values = Evaluated(np.array([0.3, 0.1, 0.2, -0.1]), np.array([0.2, 0.0, 0.1, -0.2]),
                       np.array([0.6, 0.8, 0.8, 0.9]), np.array([0.5] * 4), {})
    assert pick(values, "accuracy") == 2  # feasible, best accuracy, then the larger slack
    none = Evaluated(np.array([-0.3, -0.1]), np.array([-0.3, -0.1]), np.array([0.9, 0.5]), np.array([0.5] * 2), {})
    assert pick(none, "accuracy") == 1  # none feasible: the largest slack


# ------------------------------------------------------------------------------------------------ honesty
def test_the_search_never_reads_the_certification_rows():
    from fairaudit.core.inputs import Inputs, split_audited

    frame = tiny_frame(1200, seed=3)
    ds = tiny(frame=frame)
    first, second = split_audited(Inputs(dataset=ds), 0.5, 7)
    result = fairaudit.repair(ds, PARITY, ColumnScore(), seed=7, rows="all", margin=0.02, split=0.5)
    changed = frame.copy()
    changed.loc[second, "y"] = 1 - changed.loc[second, "y"]  # every certification label flipped
    changed.loc[second, "x"] = 0.0
    again = fairaudit.repair(tiny(frame=changed), PARITY, ColumnScore(), seed=7, rows="all", margin=0.02, split=0.5)
    assert again.thresholds == result.thresholds and again.kind == result.kind
    assert again.chosen == result.chosen
    assert result.search.count == len(first) and result.certification.count == len(second)
    # the certificate read the certification rows only
    assert result.certificate.rows["audited"] == len(second)
    assert result.certificate.steps <= len(second)
    flipped = frame.copy()
    flipped.loc[first, "y"] = 1 - flipped.loc[first, "y"]  # the search rows' labels do matter
    other = fairaudit.repair(tiny(frame=flipped), PARITY, ColumnScore(), seed=7, rows="all", margin=0.02, split=0.5)
    assert other.chosen.accuracy != result.chosen.accuracy


@pytest.fixture(scope="module")
def adult_repair():
    spec = ('E[pred | sex == "Female"] - E[pred | sex == "Male"] > -0.1 and '
            'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1')
    return fairaudit.repair("adult", spec, "logreg", include_protected=True)


def test_adult_demographic_parity_repair_is_certified(adult_repair):
    r = adult_repair
    assert r.original.margin < 0  # the original model violates parity on the search rows
    original = fairaudit.audit("adult", r.spec, model=r.model.base)
    assert original.verdict == "false"  # and the monitor says so on all its held-out rows
    assert r.verdict == "certified" and r.exit_code == 0
    # issue 44: the certificate decides (the monitor's joint test may certify a margin below the interval-arithmetic
    # need reported in required_margin); the adopted repair satisfies the spec on the search rows
    assert r.feasible and r.chosen.margin > 0 and min(r.required_margin.values()) > 0
    assert r.accuracy_loss is not None and 0 <= r.accuracy_loss < 0.1  # the cost, reported
    assert "chosen on" in r.headline and f"{r.certification.count:,} certification rows" in r.headline
    # issue 44 (walkthrough): the headline is built from the parsed specification, never from its text
    assert "E[" not in r.headline and '== "' not in r.headline and "pred" not in r.headline
    assert "sex = Female" in r.headline and "sex = Male" in r.headline and "the specification" in r.headline
    assert r.is_adopted and r.adopted is not None and r.refusal is None and r.shown_name == "repaired"
    assert r.status[0] == "Certified"
    data = json.loads(r.to_json())
    for key in ("thresholds", "global_threshold", "kind", "chosen", "original", "curve", "search", "certification",
                "certificate", "verdict", "headline", "accuracy_loss"):
        assert key in data
    assert data["format"].startswith("fairaudit-repair/") and data["curve"][-1]["kind"] == "original"
    margins = [p["margin"] for p in data["curve"][:-1]]
    assert margins == sorted(margins, reverse=True)


# ------------------------------------------------------------------------------------------------ the saved model
def test_save_load_audit_round_trip_and_tampered_base(tmp_path):
    from fairaudit import models

    ds = tiny(800, seed=5)
    trained = models.train(ds, "logreg")
    result = fairaudit.repair(ds, PARITY, trained, margin=0.0)
    paths = result.save_model(tmp_path / "repaired.json")
    assert [p.name for p in paths] == ["repaired.json", "repaired-base.skops"]
    loaded = models.load(tmp_path / "repaired.json")
    assert loaded.kind == "thresholds" and "threshold repair of" in loaded.describe()
    assert np.array_equal(loaded.predict(ds.frame), result.model.predict(ds.frame))
    assert np.array_equal(loaded.score(ds.frame), trained.score(ds.frame))
    audited = fairaudit.audit(ds, PARITY, engine="dataset", model=str(tmp_path / "repaired.json"))
    direct = fairaudit.audit(ds, PARITY, engine="dataset", model=result.model)
    assert audited.final_values("n1")["estimate"] == direct.final_values("n1")["estimate"]
    assert audited.rows["audited"] == direct.rows["audited"]  # the base model's held-out rows, as for the base
    from fairaudit.core.outputs import file_kind

    assert file_kind(tmp_path / "repaired.json") == "model"
    # a base model file in another folder is copied beside the repair, byte for byte
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "m.skops").write_bytes((tmp_path / "repaired-base.skops").read_bytes())
    copied = fairaudit.repair(ds, PARITY, str(tmp_path / "elsewhere" / "m.skops"), margin=0.0)
    (tmp_path / "out").mkdir()
    paths = copied.save_model(tmp_path / "out" / "r.json")
    assert [p.name for p in paths] == ["r.json", "r-base.skops"]
    assert paths[1].read_bytes() == (tmp_path / "elsewhere" / "m.skops").read_bytes()
    assert np.array_equal(models.load(paths[0]).predict(ds.frame), copied.model.predict(ds.frame))
    # a saved repair names a base file in its own folder or below, nowhere else
    payload = json.loads(paths[0].read_text())
    payload["base"]["path"] = "../elsewhere/m.skops"
    (tmp_path / "out" / "climbs.json").write_text(json.dumps(payload))
    with pytest.raises(ModelError, match="leads outside its folder"):
        models.load(tmp_path / "out" / "climbs.json")
    base = tmp_path / "repaired-base.skops"
    base.write_bytes(base.read_bytes() + b"\0")
    with pytest.raises(ModelError, match="has changed since the thresholds were chosen"):
        models.load(tmp_path / "repaired.json")
    with pytest.raises(ModelError, match="not as an upload"):
        models.load_bytes((tmp_path / "repaired.json").read_bytes(), "repaired.json")


def test_cli_repair_save_and_audit(tmp_path, capsys):
    ds = tiny_frame(800, seed=5)
    (tmp_path / "d.csv").write_text(ds.to_csv(index=False))
    from fairaudit import models

    model = models.train(tiny(frame=ds), "logreg")
    model.save(tmp_path / "m.skops")
    data = str(tmp_path / "d.csv")
    code = main(["repair", "--data", data, "--label", "y", "--favourable", "1", "--model", str(tmp_path / "m.skops"),
                 "--spec", PARITY, "--margin", "0", "--save", str(tmp_path / "r.json"),
                 "--json", str(tmp_path / "out.json")])
    out = capsys.readouterr().out
    assert code in (0, 1, 3) and "original" in out and "verdict:" in out
    # the candidate shown is "repaired" only when a repair was adopted (issue 44)
    if code == 0:
        assert "best candidate tried" not in out and "No repair adopted" not in out
    else:  # a refused repair leads with its one line, before the details
        assert out.index("No repair adopted:") < out.index("spec:") and "best candidate tried" in out
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["kind"] == "thresholds" and saved["base"]["path"] == "m.skops"
    assert json.loads((tmp_path / "out.json").read_text())["verdict"] in ("certified", "violated", "undecided")
    code = main(["audit", "--data", data, "--label", "y", "--favourable", "1", "--model", str(tmp_path / "r.json"),
                 "--spec", PARITY])
    assert code in (0, 1, 3)
    capsys.readouterr()
    code = main(["repair", "--data", data, "--label", "y", "--favourable", "1", "--model", str(tmp_path / "m.skops"),
                 "--spec", PARITY, "--margin", "0", "--json", "-"])
    assert json.loads(capsys.readouterr().out)["format"].startswith("fairaudit-repair/")  # stdout: the JSON only
    # a changed base model: the saved repair is refused in one line
    (tmp_path / "m.skops").write_bytes((tmp_path / "m.skops").read_bytes() + b"\0")
    err = _one_line_exit_2(capsys, ["audit", "--data", data, "--label", "y", "--favourable", "1",
                                    "--model", str(tmp_path / "r.json"), "--spec", PARITY])
    assert "has changed" in err
    # an output never overwrites an input
    code = main(["repair", "--data", data, "--label", "y", "--favourable", "1", "--model", str(tmp_path / "m.skops"),
                 "--spec", PARITY, "--save", str(tmp_path / "m.skops")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err


# ------------------------------------------------------------------------------------------------ bad input
def _one_line_exit_2(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_cli_refuses_bad_input_in_one_line(tmp_path, capsys):
    (tmp_path / "d.csv").write_text(tiny_frame(300).to_csv(index=False))
    data = ["--data", str(tmp_path / "d.csv"), "--label", "y", "--favourable", "1"]
    err = _one_line_exit_2(capsys, ["repair", *data, "--pred", "s > 0.5", "--spec", PARITY])
    assert "scores" in err
    err = _one_line_exit_2(capsys, ["repair", *data, "--model", "logreg", "--spec", PARITY, "--group-by", "nope"])
    assert "nope" in err
    err = _one_line_exit_2(capsys, ["repair", *data, "--model", "logreg", "--spec", 'E[label | sex == "F"] > 0.1'])
    assert "pred" in err
    (tmp_path / "nolabel.csv").write_text(tiny_frame(300).drop(columns="y").to_csv(index=False))
    err = _one_line_exit_2(capsys, ["repair", "--data", str(tmp_path / "nolabel.csv"), "--model", "logreg",
                                    "--spec", PARITY])
    assert "label" in err
    err = _one_line_exit_2(capsys, ["repair", *data, "--model", "logreg", "--spec", PARITY, "--margin", "-1"])
    assert "margin" in err


def test_api_refuses_a_model_without_scores():
    from fairaudit.models import from_expression

    ds = tiny()
    with pytest.raises(FairauditError, match="has no scores"):
        fairaudit.repair(ds, PARITY, from_expression("s > 0.5", ds), rows="all")
    with pytest.raises(FairauditError, match="no scores"):
        fairaudit.repair(ds, PARITY, pred="s > 0.5")
    with pytest.raises(FairauditError, match="unknown group column"):
        fairaudit.repair(ds, PARITY, ColumnScore(), group_by="nope", rows="all")
    with pytest.raises(FairauditError, match="Fair"):
        fairaudit.repair(ds, "Fair[sex] > 0.9", ColumnScore(), rows="all")
    with pytest.raises(FairauditError, match="distinct values: at most"):
        fairaudit.repair(ds, PARITY, ColumnScore(), group_by="x", rows="all")
    with pytest.raises(FairauditError, match="compares no protected"):
        fairaudit.repair(ds, "E[pred] > 0.3", ColumnScore(), thresholds="group", rows="all")


def test_a_spec_over_no_group_gets_one_global_threshold():
    ds = tiny(600, seed=2)
    result = fairaudit.repair(ds, "E[pred] > 0.55", ColumnScore(), rows="all", margin=0.02, split=0.5)
    assert result.kind == "global" and result.thresholds == {} and result.group_by == []
    assert result.chosen.margin >= 0.02 and result.original.margin < 0.02
    assert any("one global threshold" in note for note in result.notes)


def test_group_labels_treat_missing_values_as_no_group():
    from fairaudit.models.thresholds import group_labels, row_thresholds

    frame = pd.DataFrame({"a": ["x", "?", "y", None], "b": [1, 2, np.nan, 3]})
    assert list(group_labels(frame, ["a"])) == ["x", None, "y", None]
    assert list(group_labels(frame, ["a", "b"])) == ["x, 1.0", None, None, None]
    assert list(row_thresholds(group_labels(frame, ["a"]), {"x": 0.2}, 0.5)) == [0.2, 0.5, 0.5, 0.5]


def test_a_saved_repair_is_audited_on_the_rows_that_did_not_choose_it(tmp_path):
    """The thresholds were chosen on the search rows: auditing or comparing the repaired model on the same data leaves
    those rows out by default (its "held-out" rows are the certification part), even after a save and a load."""
    import fairaudit
    from fairaudit import models
    from fairaudit.data import resolve as load_data

    data = load_data("compas")
    spec = 'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.15 and E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.15'
    result = fairaudit.repair(data, spec, "logreg", group_by="sex")
    cert = fairaudit.audit(data, spec, model=result.model, engine="dataset")
    assert cert.rows["audited"] == result.certification.count
    assert "chose the repair's thresholds" in cert.rows["text"]
    path = tmp_path / "r.json"
    result.save_model(path)
    loaded = models.load(path)
    again = fairaudit.audit(data, spec, model=loaded, engine="dataset")
    assert again.rows["audited"] == result.certification.count
    assert again.verdict == cert.verdict
    # the certificate's rows are exactly these rows: the same exact values as the repair's certification part
    everything = fairaudit.audit(data, spec, model=loaded, engine="dataset", rows="all")
    assert everything.rows["audited"] == len(data)
