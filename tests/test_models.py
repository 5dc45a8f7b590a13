"""fairaudit.models: training, prediction from raw rows, adapters, save/load, decision expressions."""
from __future__ import annotations

import io
import json

import joblib
import numpy as np
import pandas as pd
import pytest

from fairaudit import models
from fairaudit.data.dataset import Column, Dataset, Schema
from fairaudit.base.errors import ModelError

SYNTHETIC_SCHEMA = Schema(
    columns=(Column("age", "numeric"), Column("sex", "categorical", ("F", "M")),
             Column("job", "categorical", ("clerk", "manager", "nurse")), Column("income", "numeric"),
             Column("outcome", "categorical", ("bad", "good"))),
    label="outcome", favourable="good", protected=("sex",))


def synthetic(n: int = 800, seed: int = 0) -> Dataset:
    """A small credit-like dataset whose label depends on every feature (sex included)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 70, n)
    sex = rng.choice(["F", "M"], n)
    job = rng.choice(["clerk", "manager", "nurse"], n)
    income = rng.normal(50, 15, n).round(1)
    logit = 0.12 * (income - 50) + 1.5 * (job == "manager") - 0.8 * (sex == "F") + 0.03 * (age - 40)
    good = rng.random(n) < 1 / (1 + np.exp(-logit))
    frame = pd.DataFrame({"age": age, "sex": sex, "job": job, "income": income,
                          "outcome": np.where(good, "good", "bad")})
    return Dataset("synthetic", frame, SYNTHETIC_SCHEMA, source="test")


@pytest.fixture(scope="module")
def data() -> Dataset:
    return synthetic()


@pytest.fixture(scope="module")
def trained(data) -> dict[str, models.Model]:
    return {kind: models.train(data, kind, seed=0) for kind in models.KINDS}


def logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


# ---- training --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", models.KINDS)
def test_each_kind_trains_and_predicts_from_raw_rows(trained, data, kind):
    model = trained[kind]
    assert model.kind == kind
    assert model.feature_names == ["age", "sex", "job", "income"]
    features = data.frame.drop(columns=["outcome"])  # no label column needed
    pred, score = model.predict(features), model.score(features)
    assert pred.dtype == np.int8 and set(np.unique(pred)) <= {0, 1} and len(pred) == len(data)
    assert score.dtype == np.float64 and np.all((score >= 0) & (score <= 1))
    assert np.array_equal(pred, model.predict(data.frame))  # the label column is ignored
    assert np.array_equal(pred, model.predict(features[features.columns[::-1]]))  # column order is irrelevant
    assert model.metrics["accuracy"] > 0.65
    assert model.metrics["n_test"] == 200 and model.metrics["n_train"] == 600
    assert set(model.metrics["groups"]["sex"]) == {"F", "M"}
    assert sum(g["n"] for g in model.metrics["groups"]["sex"].values()) == 200
    json.dumps(model.params), json.dumps(model.metrics)  # JSON-able
    assert kind in model.describe() and model.content_hash[:12] in model.describe()


@pytest.mark.parametrize("kind", models.KINDS)
def test_training_is_deterministic_with_the_seed(trained, data, kind):
    again = models.train(data, kind, seed=0)
    assert again.content_hash == trained[kind].content_hash
    assert np.array_equal(again.score(data.frame), trained[kind].score(data.frame))
    assert models.train(data, kind, seed=1).content_hash != trained[kind].content_hash


def test_predicted_scores_are_consistent_with_decisions(trained, data):
    for model in trained.values():
        score, pred = model.score(data.frame), model.predict(data.frame)
        clear = np.abs(score - 0.5) > 1e-9
        assert np.array_equal(pred[clear], (score[clear] > 0.5).astype(np.int8))


def test_params_are_passed_to_the_learner(data):
    shallow = models.train(data, "tree", max_depth=2)
    assert shallow.params["max_depth"] == 2 and shallow.as_tree().depth <= 2
    wide = models.train(data, "mlp", hidden=[8], epochs=2)
    assert wide.as_relu_net().sizes == [7, 8, 1]


def test_exclude_drops_a_feature(data):
    unaware = models.train(data, "logreg", exclude=["sex"])
    assert unaware.feature_names == ["age", "job", "income"]
    assert np.array_equal(unaware.predict(data.frame.drop(columns=["sex"])), unaware.predict(data.frame))


def test_unseen_category_and_missing_number_still_predict(trained, data):
    rows = data.frame.head(3).copy()
    rows["job"] = ["astronaut", "clerk", "nurse"]
    rows["income"] = [np.nan, 40.0, 60.0]
    for model in trained.values():
        assert model.predict(rows).shape == (3,)
    with pytest.raises(ModelError, match="column 'sex' holds none of the values the model was trained on"):
        trained["tree"].predict(data.frame.assign(sex=data.frame["sex"].map({"F": 0, "M": 1})))


@pytest.mark.parametrize("call, message", [
    (lambda d: models.train(d, "lgreg"), "unknown model kind 'lgreg' (did you mean 'logreg'?)"),
    (lambda d: models.train(d, "logreg", test_size=1.5), "test_size"),
    (lambda d: models.train(d, "tree", depth=3), "unknown parameter 'depth' for kind tree"),
    (lambda d: models.train(d, "mlp", layers=3), "unknown parameter 'layers' for kind mlp"),
    (lambda d: models.train(d, "tree", max_depth=-1), "cannot train tree"),
    (lambda d: models.train(d, "logreg", exclude=["sexx"]), "did you mean 'sex'?"),
])
def test_bad_training_requests_raise_one_line_model_errors(data, call, message):
    with pytest.raises(ModelError) as err:
        call(data)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_training_needs_a_binary_label(data):
    no_label = Dataset("x", data.frame, Schema(SYNTHETIC_SCHEMA.columns, protected=("sex",)))
    with pytest.raises(ModelError, match="cannot train without a label column"):
        models.train(no_label, "logreg")
    three = data.frame.assign(outcome=np.resize(["bad", "good", "so-so"], len(data)))
    with pytest.raises(ModelError, match="3 distinct values"):
        models.train(Dataset("x", three, SYNTHETIC_SCHEMA), "logreg")
    single = data.frame.assign(outcome="good")
    with pytest.raises(ModelError, match="single outcome"):
        models.train(Dataset("x", single, SYNTHETIC_SCHEMA), "logreg")


def test_missing_column_is_named_with_a_suggestion(trained, data):
    rows = data.frame.rename(columns={"income": "incme"})
    with pytest.raises(ModelError, match=r"lack column 'income'.*did you mean 'incme'"):
        trained["logreg"].predict(rows)
    with pytest.raises(ModelError, match="should be numeric"):
        trained["logreg"].predict(data.frame.assign(age="old"))


# ---- structure adapters ----------------------------------------------------------------------


def test_as_linear_agrees_with_predict(trained, data):
    model = trained["logreg"]
    lin = model.as_linear()
    X = lin.encoding.transform(data.frame)
    assert lin.feature_names == ["age", "sex=F", "sex=M", "job=clerk", "job=manager", "job=nurse", "income"]
    assert lin.columns == {"age": [0], "sex": [1, 2], "job": [3, 4, 5], "income": [6]}
    assert X[:, 0].tolist() == data.frame["age"].tolist()  # numeric features keep their raw units
    assert np.allclose(lin.margin(X), logit(model.score(data.frame)))
    assert np.array_equal((X @ lin.weights + lin.bias > 0).astype(np.int8), model.predict(data.frame))
    est = model.estimator  # scikit-learn's own decisions on its standardised inputs
    assert np.array_equal(est.predict(model.scaler(X)), model.predict(data.frame))


def test_logreg_is_a_one_layer_relu_net(trained, data):
    net = trained["logreg"].as_relu_net()
    assert net.sizes == [7, 1]
    assert np.array_equal(net.predict(data.frame), trained["logreg"].predict(data.frame))


def test_as_tree_traversal_agrees_with_predict(trained, data):
    model = trained["tree"]
    tree = model.as_tree()
    X = tree.encoding.transform(data.frame)
    assert tree.nodes[0].id == 0 and all(n.id == i for i, n in enumerate(tree.nodes))
    assert tree.depth <= 6 and len(tree.leaves) >= 2
    for node in tree.nodes:
        if not node.is_leaf:
            assert node.left > node.id and node.right > node.id and 0 <= node.feature < len(tree.feature_names)
    assert np.allclose(tree.score_encoded(X), model.score(data.frame))
    assert np.array_equal(tree.predict_encoded(X), model.predict(data.frame))
    # one row by hand: walk from the root
    row, at = X[0], tree.nodes[0]
    while not at.is_leaf:
        at = tree.nodes[at.left if row[at.feature] <= at.threshold else at.right]
    assert at.value == pytest.approx(model.score(data.frame.head(1))[0])


def test_as_relu_net_of_mlp_agrees_with_score(trained, data):
    model = trained["mlp"]
    net = model.as_relu_net()
    assert net.sizes == [7, 16, 16, 1] and net.lower is None
    X = net.encoding.transform(data.frame)
    assert np.allclose(net.margin(X), model.logit(data.frame), atol=1e-9)
    assert np.allclose(1 / (1 + np.exp(-net.margin(X))), model.score(data.frame))
    assert np.array_equal(net.predict_encoded(X), model.predict(data.frame))


@pytest.mark.parametrize("kind, adapter, message", [
    ("gbm", "as_linear", "a gbm model has no linear form; use kind logreg"),
    ("mlp", "as_linear", "a mlp model has no linear form"),
    ("logreg", "as_tree", "no decision-tree form; use kind tree"),
    ("gbm", "as_tree", "no decision-tree form"),
    ("tree", "as_relu_net", "no ReLU-network form"),
    ("gbm", "as_relu_net", "no ReLU-network form"),
])
def test_adapters_refuse_models_without_that_structure(trained, kind, adapter, message):
    with pytest.raises(ModelError, match=message):
        getattr(trained[kind], adapter)()


# ---- save / load -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", models.KINDS)
def test_save_load_round_trip(trained, data, tmp_path, kind):
    model = trained[kind]
    path = tmp_path / f"model-{kind}"
    model.save(path)
    back = models.load(path)
    assert type(back) is type(model) and back.kind == kind
    assert back.content_hash == model.content_hash
    assert back.params == model.params and back.metrics == model.metrics
    assert back.feature_names == model.feature_names
    assert np.array_equal(back.predict(data.frame), model.predict(data.frame))
    assert np.array_equal(back.score(data.frame), model.score(data.frame))
    models.load(str(path))  # str paths too


def test_mlp_file_holds_no_pickled_objects(trained, tmp_path):
    import torch

    trained["mlp"].save(tmp_path / "m.pt")
    payload = torch.load(tmp_path / "m.pt", weights_only=True)  # would fail on arbitrary objects
    assert payload["kind"] == "mlp" and json.loads(payload["config"])["params"]["hidden"] == [16, 16]


def test_load_refuses_bad_inputs(tmp_path):
    with pytest.raises(ModelError, match="not a file-like object"):
        models.load(io.BytesIO(b"\x80\x04junk"))
    with pytest.raises(ModelError, match="no such model file"):
        models.load(tmp_path / "missing.joblib")
    with pytest.raises(ModelError, match="is a directory"):
        models.load(tmp_path)
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(ModelError, match="not a model file in a safe format"):
        models.load(tmp_path / "notes.txt")
    with pytest.raises(ModelError, match="is not a fairaudit model"):
        models.load(tmp_path / "notes.txt", trust_pickle=True)
    joblib.dump({"something": "else"}, tmp_path / "other.joblib")
    with pytest.raises(ModelError, match="may be a pickle"):
        models.load(tmp_path / "other.joblib")
    with pytest.raises(ModelError, match="not a fairaudit model file"):
        models.load(tmp_path / "other.joblib", trust_pickle=True)
    import torch

    torch.save({"weights": torch.zeros(3)}, tmp_path / "other.pt")
    with pytest.raises(ModelError, match="not a fairaudit model file"):
        models.load(tmp_path / "other.pt")


def test_save_to_an_unwritable_place_is_a_model_error(trained, tmp_path):
    for kind in ("logreg", "mlp"):
        with pytest.raises(ModelError, match="cannot write the model to .*does not exist"):
            trained[kind].save(tmp_path / "no" / "such" / "dir" / "m")


# ---- decision expressions --------------------------------------------------------------------


spec = pytest.importorskip("fairaudit.spec")
has_events = hasattr(spec, "parse_event") and hasattr(spec, "evaluate_event")
needs_events = pytest.mark.skipif(not has_events, reason="fairaudit.spec.parse_event/evaluate_event missing")


@needs_events
def test_expression_acts_as_the_decision(data):
    model = models.from_expression("income > 50 and job != 'nurse'", data)
    expected = ((data.frame["income"] > 50) & (data.frame["job"] != "nurse")).to_numpy().astype(np.int8)
    assert model.kind == "expression" and model.feature_names == ["income", "job"]
    assert np.array_equal(model.predict(data.frame), expected)
    assert np.array_equal(model.score(data.frame), expected.astype(float))
    labels = data.labels
    assert model.metrics["accuracy"] == pytest.approx((expected == labels).mean())
    assert set(model.metrics["groups"]["sex"]) == {"F", "M"}
    assert models.from_expression("income  >  50 and job != 'nurse'", data).content_hash != \
        models.from_expression("income > 51 and job != 'nurse'", data).content_hash


@needs_events
def test_expression_errors_are_one_line(data):
    with pytest.raises(ModelError, match="unknown column 'incme'.*did you mean 'income'"):
        models.from_expression("incme > 3", data)
    with pytest.raises(ModelError, match="cannot use 'pred'"):
        models.from_expression("pred == 1", data)
    with pytest.raises(ModelError, match="decision expression"):
        models.from_expression("income >", data)
    with pytest.raises(ModelError, match="never takes the value \"Female\""):
        models.from_expression("sex == 'Female'", data)
    with pytest.raises(ModelError, match="nothing to save"):
        models.from_expression("income > 3", data).save("x")


# ---- real data (Adult) -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult():
    data_module = pytest.importorskip("fairaudit.data")
    return data_module.load("adult")


@pytest.mark.slow
def test_logreg_on_adult_is_about_85_percent_accurate(adult):
    model = models.train(adult, "logreg", seed=0)
    assert 0.83 <= model.metrics["accuracy"] <= 0.87
    assert set(model.metrics["groups"]) == {"sex", "race"}
    assert set(model.metrics["groups"]["sex"]) == {"Female", "Male"}
    lin = model.as_linear()
    assert len(lin.weights) == len(lin.feature_names) > 90
    # predicting 50k raw rows is vectorised (and works on the test split, which lacks a country)
    test = pytest.importorskip("fairaudit.data").load("adult_test")
    rows = pd.concat([adult.frame, test.frame, adult.frame], ignore_index=True).head(50_000)
    pred = model.predict(rows)
    assert pred.shape == (50_000,) and 0.1 < pred.mean() < 0.4
    assert (pred[len(adult): len(adult) + len(test)] == test.labels).mean() > 0.83


@pytest.mark.slow
@pytest.mark.parametrize("kind, floor", [("tree", 0.83), ("gbm", 0.85), ("mlp", 0.83)])
def test_other_kinds_on_adult(adult, kind, floor, tmp_path):
    model = models.train(adult, kind, seed=0)
    assert model.metrics["accuracy"] >= floor
    model.save(tmp_path / "m")
    assert models.load(tmp_path / "m").content_hash == model.content_hash


def test_gbm_hash_survives_renamed_private_fields(trained):
    """The gbm hash reads private scikit-learn fields; if a release renames them, hashing falls back to the
    pickled estimator instead of failing (still deterministic, still different for a different fit)."""
    import copy

    from fairaudit.models.sklearn_models import fitted_arrays

    est = copy.deepcopy(trained["gbm"].estimator)
    del est._predictors
    a, b = fitted_arrays("gbm", est), fitted_arrays("gbm", copy.deepcopy(est))
    assert len(a) == 2 and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_a_tree_refuses_values_beyond_float32_with_a_clear_error():
    """scikit-learn's trees read float32: a value beyond it is a ModelError naming the column (exit 2 at the CLI),
    not scikit-learn's internal ValueError."""
    from fairaudit.models.training import train
    from fairaudit.testing import toy_dataset

    ds = toy_dataset(300)
    model = train(ds, "tree", seed=0)
    frame = ds.frame.copy()
    frame["age"] = frame["age"].astype(float)
    frame.loc[frame.index[0], "age"] = 1e300
    with pytest.raises(ModelError, match="age"):
        model.predict(frame)
