"""Issue 28, item 5 ("defaults that cannot invert or leak"), in the library and the command line: the favourable value
of a yes/no label, the default features of a trained model (no label, protected, logged decision or identifier
column), the warning on a feature that gives the label away, one held-out share."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairaudit import data, models
from fairaudit.cli import main
from fairaudit.data.roles import obvious_favourable
from fairaudit.base.errors import ModelError


def loans(n: int = 600, seed: int = 0, decision_agreement: float = 0.36) -> pd.DataFrame:
    """An uploaded-looking loans file: an id column, a protected column, two features, a logged decision that agrees
    with the label on about ``decision_agreement`` of the rows, and a yes/no label."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    x, z = rng.normal(size=n), rng.normal(size=n)
    y = rng.random(n) < 1 / (1 + np.exp(-(x + 0.5 * (sex == "M"))))
    decision = np.where(rng.random(n) < decision_agreement, y, ~y).astype(int)
    return pd.DataFrame({"applicant_id": np.arange(1000, 1000 + n), "sex": sex, "x": x.round(3), "z": z.round(3),
                         "decision": decision, "approved": np.where(y, "yes", "no")})


@pytest.fixture(scope="module")
def loans_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("loans") / "loans.csv"
    loans().to_csv(path, index=False)
    return path


# ------------------------------------------------------------------------------------------------ favourable value


@pytest.mark.parametrize("values, positive", [
    (["no", "yes"], "yes"), (["No", "Yes"], "Yes"), (["false", "true"], "true"), (["0", "1"], "1"), ([0, 1], 1),
    ([False, True], True), ([0.0, 1.0], 1.0), ([np.int64(0), np.int64(1)], 1)])
def test_a_binary_label_defaults_to_the_positive_word_as_the_cli_infers_it(values, positive):
    """The Data page offered the first value in sorted order ("no") where the command line infers "yes"; one
    library function now proposes the default, the same value the command line infers."""
    from fairaudit.data.roles import default_favourable

    assert default_favourable(values) == positive
    assert default_favourable(list(reversed(values))) == positive
    assert default_favourable(values) == obvious_favourable(tuple(values))
    assert default_favourable(values, current=values[0]) == values[0]  # the user's own choice is kept
    assert default_favourable(["bad", "good"]) == "bad"  # nothing obvious: the first, for the user to change


# ------------------------------------------------------------------------------------------------ default features


def test_id_like_columns_are_found_by_their_values_not_only_their_names():
    from fairaudit.models.features import id_like

    n = 200
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({
        "applicant_id": np.arange(n),                                   # a row counter
        "ref": [f"R-{i:05d}" for i in rng.permutation(n)],              # text, unique per row, no id name
        "customerID": [i // 50 if i < 4 else i for i in range(n)],      # named like one, 98.5 % distinct
        "seq": np.sort(rng.choice(10**9, n, replace=False)),           # sparse numbers rising with the rows
        "income": rng.choice(10**6, n, replace=False),                  # distinct whole numbers, but no id
        "score": rng.normal(size=n),                                    # a distinct float measurement
        "age": rng.integers(18, 80, n),
        "key_group": rng.choice(["a", "b"], n),                         # an id word, but two values
    })
    assert id_like(frame) == ["applicant_id", "ref", "customerID", "seq"]
    assert id_like(frame, "income") is False and id_like(frame["score"]) is False
    assert id_like(frame.head(10)) == []  # a handful of rows: distinct by chance, nothing is called an id


def test_default_features_leave_out_the_label_protected_decision_and_identifier_columns():
    from fairaudit.models.features import default_features, left_out

    ds = data.from_csv(loans().to_csv(index=False).encode(), name="loans.csv", label="approved", protected=["sex"])
    assert ds.schema.favourable == "yes"
    assert default_features(ds) == ["x", "z"]
    assert default_features(ds, include_protected=True) == ["sex", "x", "z"]
    assert set(left_out(ds)) == {"applicant_id", "sex", "decision", "approved"}
    compas = data.load("compas")  # the dataset's own logged decisions (score_text ...) are not features either
    assert not set(compas.schema.excluded) & set(default_features(compas))
    assert not set(compas.schema.protected) & set(default_features(compas))


def test_train_records_its_features_and_refuses_the_label():
    from fairaudit.models.features import default_features

    ds = data.from_csv(loans().to_csv(index=False).encode(), name="loans.csv", label="approved", protected=["sex"])
    model = models.train(ds, "logreg", features=default_features(ds))
    assert model.feature_names == ["x", "z"] and model.params["features"] == ["x", "z"]
    with pytest.raises(ModelError, match="is the label"):
        models.train(ds, "logreg", features=["x", "approved"])
    with pytest.raises(ModelError, match="did you mean 'decision'"):
        models.train(ds, "logreg", features=["x", "decisio"])


# ------------------------------------------------------------------------------------------------ leaks


def test_a_feature_that_predicts_the_label_almost_perfectly_is_one_sentence_naming_it():
    from fairaudit.models.features import leak_warnings

    frame = loans(n=1000, decision_agreement=0.99)
    frame["later"] = np.where(frame["approved"] == "yes", 5.0, -5.0) + np.random.default_rng(2).normal(0, 1, 1000)
    frame["inverted"] = (frame["approved"] == "no").astype(int)  # the opposite of the label: a leak all the same
    ds = data.from_csv(frame.to_csv(index=False).encode(), name="leaky.csv", label="approved", protected=["sex"])
    warnings = leak_warnings(ds, ["x", "z", "decision", "later", "inverted"])
    assert len(warnings) == 3, warnings
    decision = next(w for w in warnings if w.startswith("column 'decision'"))
    share = ((frame["decision"] == 1) == (frame["approved"] == "yes")).mean()
    assert f"{share:.1%} of the rows" in decision and "approved == 'yes'" in decision
    assert "the rule `later >" in next(w for w in warnings if w.startswith("column 'later'"))
    assert any(w.startswith("column 'inverted'") and "100.0%" in w for w in warnings)
    # an inverted decision (36 %) is no leak; nor a feature of a label that is almost always the same
    assert leak_warnings(data.from_csv(loans().to_csv(index=False).encode(), name="l.csv", label="approved"),
                         ["decision", "x"]) == []
    rare = pd.DataFrame({"f": np.random.default_rng(3).integers(0, 2, 1000), "y": [0] * 990 + [1] * 10})
    assert leak_warnings(data.from_csv(rare.to_csv(index=False).encode(), name="r.csv", label="y"), ["f"]) == []


# ------------------------------------------------------------------------------------------------ the command line


def test_fairaudit_train_uses_the_default_features_and_says_which(tmp_path, loans_csv, capsys):
    out = tmp_path / "m.skops"
    base = ["train", "--data", str(loans_csv), "--label", "approved", "--protected", "sex", "--kind", "logreg"]
    assert main(base + ["--out", str(out)]) == 0
    text = capsys.readouterr().out
    model = models.load(out)
    assert model.feature_names == ["x", "z"] and model.params["features"] == ["x", "z"]  # recorded in the file
    assert "features x, z" in text
    assert "applicant_id (an identifier" in text and "decision (named like a logged decision)" in text
    assert main(base + ["--out", str(out), "--include-protected"]) == 0
    assert models.load(out).feature_names == ["sex", "x", "z"]
    capsys.readouterr()
    assert main(base + ["--out", str(out), "--features", "x,decision", "--exclude", "x"]) == 0
    assert models.load(out).feature_names == ["decision"]


def test_fairaudit_train_warns_on_a_feature_that_gives_the_label_away(tmp_path, capsys):
    path = tmp_path / "leaky.csv"
    loans(decision_agreement=0.995).rename(columns={"decision": "outcome_flag"}).to_csv(path, index=False)
    assert main(["train", "--data", str(path), "--label", "approved", "--kind", "logreg",
                 "--out", str(tmp_path / "m.skops")]) == 0
    err = capsys.readouterr().err
    assert "warning: column 'outcome_flag' predicts the label almost perfectly" in err, err


def test_every_route_that_trains_a_model_uses_the_same_default_features():
    """The demo, the Model page, ``fairaudit train`` and ``fairaudit audit --model KIND`` / ``audit(model=KIND)``
    train on one default; a Fair[...] on a column the model then does not read is said to be vacuous."""
    from fairaudit import audit
    from fairaudit.data import load
    from fairaudit.core.inputs import Inputs
    from fairaudit.models.features import default_features

    adult = load("adult")
    inputs = Inputs.build(adult, model="logreg")
    assert inputs.model.params["features"] == default_features(adult)
    assert Inputs.build(adult, model="logreg", include_protected=True).model.params["features"] == \
        default_features(adult, include_protected=True)
    r = audit(adult, "Fair[sex] >= 0.95", model="logreg", engine="dataset")
    assert any("does not read 'sex'" in w and "1 by construction" in w for w in r.warnings)
    r = audit(adult, "Fair[sex] >= 0.95", model="logreg", engine="dataset", include_protected=True)
    assert not any("does not read" in w for w in r.warnings)
