"""Issue 12: model files never run code unless the caller explicitly trusts a pickle.

A malicious pickle (it creates a marker file when unpickled) is planted under many names and must never
run through ``models.load`` (without trust), ``models.load_bytes`` or the CLI's ``--model PATH``.
Models are saved as skops / torch state_dict / .nnet, detected from the content, and an old joblib
model still loads with ``trust_pickle=True``.
"""
from __future__ import annotations

import io
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, TransformerMixin

from fairaudit import models
from fairaudit.base.errors import ModelError
from fairaudit.models.base import FORMAT
from fairaudit.models.skops_files import FAIRAUDIT_TYPES
from tests.test_models import synthetic

NAMES = ["x.joblib", "x.spec", "x.skops", "x.pt", "x.nnet", "x.pkl", "x"]
SPEC = 'E[pred | sex == "M"] - E[pred | sex == "F"] < 0.9'


class _Plant:
    """Unpickling this object opens (creates) the marker file: proof that code from the file ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def malicious_payloads(marker: Path) -> dict[str, bytes]:
    """Pickles that create ``marker`` when loaded: the issue's protocol-0 text one, a binary one, joblib's."""
    buffer = io.BytesIO()
    joblib.dump({"format": FORMAT, "estimator": _Plant(marker)}, buffer)
    return {
        "protocol0": f"cbuiltins\nopen\n(S'{marker}'\nS'w'\ntR.".encode("ascii"),
        "protocol5": pickle.dumps(_Plant(marker), protocol=5),
        "joblib": buffer.getvalue(),
    }


@pytest.fixture(scope="module")
def data():
    return synthetic()


@pytest.fixture(scope="module")
def trained(data):
    return {kind: models.train(data, kind, seed=0) for kind in models.KINDS}


def test_the_planted_pickle_really_runs_code_when_unpickled(tmp_path):
    """The payloads are live: unpickling each creates the marker (so the tests below can fail)."""
    for label, payload in malicious_payloads(tmp_path / "marker").items():
        marker = tmp_path / "marker"
        marker.unlink(missing_ok=True)
        (joblib.load if label == "joblib" else pickle.loads)(io.BytesIO(payload) if label == "joblib" else payload)
        assert marker.exists(), label


@pytest.mark.parametrize("name", NAMES)
def test_load_and_load_bytes_never_unpickle(tmp_path, name):
    marker = tmp_path / "marker"
    for label, payload in malicious_payloads(marker).items():
        path = tmp_path / name
        path.write_bytes(payload)
        with pytest.raises(ModelError) as err:
            models.load(path)
        message = str(err.value)
        assert "\n" not in message
        if name != "x.nnet":  # .nnet text is parsed as numbers (and fails on the first line)
            assert "may be a pickle" in message and "--trust-pickle" in message and "trust_pickle=True" in message
        with pytest.raises(ModelError) as err:
            models.load_bytes(payload, name)
        assert "\n" not in str(err.value)
        assert not marker.exists(), (name, label)
    # a .nnet name is read as text even when pickles are trusted
    path = tmp_path / "x.nnet"
    path.write_bytes(malicious_payloads(marker)["protocol0"])
    with pytest.raises(ModelError, match="malformed .nnet"):
        models.load(path, trust_pickle=True)
    assert not marker.exists()


def test_a_pickle_inside_a_torch_style_zip_is_refused(tmp_path):
    """torch archives are read with weights_only=True: a pickle inside one cannot run code either."""
    marker = tmp_path / "marker"
    path = tmp_path / "m.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(_Plant(marker), protocol=2))
        archive.writestr("archive/version", "3\n")
    for load in (lambda: models.load(path), lambda: models.load_bytes(path.read_bytes(), "m.pt"),
                 lambda: models.load(path, trust_pickle=True)):
        with pytest.raises(ModelError, match="is not a fairaudit model"):
            load()
    assert not marker.exists()


def test_another_zip_is_neither_skops_nor_torch(tmp_path):
    path = tmp_path / "m.skops"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(ModelError, match="neither a skops nor a torch model file"):
        models.load(path, trust_pickle=True)


@pytest.mark.parametrize("name", ["x.joblib", "notes.spec", "x.skops", "x.pt"])
def test_cli_audit_never_unpickles_a_model_file(tmp_path, name):
    marker = tmp_path / "marker"
    csv = tmp_path / "credit.csv"
    synthetic(200).frame.to_csv(csv, index=False)
    for payload in malicious_payloads(marker).values():
        (tmp_path / name).write_bytes(payload)
        done = subprocess.run([sys.executable, "-m", "fairaudit", "audit", "--data", str(csv), "--label", "outcome",
                               "--favourable", "good", "--protected", "sex", "--model", str(tmp_path / name),
                               "--spec", SPEC, "--trust-type", "builtins.open"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "--trust-pickle" in done.stderr
        assert not marker.exists()


# ---- the safe formats ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["logreg", "tree", "gbm"])
def test_sklearn_kinds_are_skops_files_needing_only_fairaudit_types(trained, tmp_path, kind):
    import skops.io as sio

    path = tmp_path / "m.skops"
    trained[kind].save(path)
    with zipfile.ZipFile(path) as archive:
        assert "schema.json" in archive.namelist()
        assert not any(n.endswith(".pkl") for n in archive.namelist())
    assert set(sio.get_untrusted_types(file=path)) <= set(FAIRAUDIT_TYPES)


@pytest.mark.parametrize("kind", models.KINDS)
@pytest.mark.parametrize("name", ["m.joblib", "m.nnet", "m.spec", "m"])
def test_format_comes_from_the_content_not_the_name(trained, data, tmp_path, kind, name):
    model = trained[kind]
    model.save(tmp_path / name)
    for back in (models.load(tmp_path / name), models.load_bytes((tmp_path / name).read_bytes(), name)):
        assert back.kind == kind and back.content_hash == model.content_hash
        assert np.array_equal(back.predict(data.frame), model.predict(data.frame))


def test_mlp_file_with_an_oversized_config_is_refused_before_allocating(trained, tmp_path):
    import json

    import torch

    path = tmp_path / "m.pt"
    trained["mlp"].save(path)
    payload = torch.load(path, weights_only=True)
    config = json.loads(payload["config"])
    config["params"]["hidden"] = [100_000, 100_000]
    payload["config"] = json.dumps(config)
    torch.save(payload, path)
    with pytest.raises(ModelError, match="the limit is 2,000,000"):
        models.load(path)


# ---- old joblib files ----------------------------------------------------------------------------


def old_joblib(model, path: Path) -> None:
    """A model file exactly as fairaudit wrote it before skops (SklearnModel.save with joblib.dump)."""
    payload = {"format": FORMAT, "version": 1, **model._config(), "metrics": model.metrics,
               "estimator": model.estimator}
    joblib.dump(payload, path)


@pytest.mark.parametrize("kind", ["logreg", "tree", "gbm"])
def test_old_joblib_model_loads_only_when_trusted(trained, data, tmp_path, kind):
    model = trained[kind]
    path = tmp_path / "old.joblib"
    old_joblib(model, path)
    with pytest.raises(ModelError, match="may be a pickle"):
        models.load(path)
    with pytest.raises(ModelError, match="never loaded from an upload"):
        models.load_bytes(path.read_bytes(), "old.joblib")
    back = models.load(path, trust_pickle=True)
    assert back.kind == kind and back.content_hash == model.content_hash
    assert np.array_equal(back.predict(data.frame), model.predict(data.frame))
    back.save(tmp_path / "new.skops")  # re-saving converts it to the safe format, same hash
    assert models.load(tmp_path / "new.skops").content_hash == model.content_hash


def test_cli_trust_pickle_loads_an_old_model(trained, tmp_path):
    from fairaudit.cli import main

    csv = tmp_path / "credit.csv"
    synthetic(200).frame.to_csv(csv, index=False)
    old_joblib(trained["logreg"], tmp_path / "old.joblib")
    args = ["audit", "--data", str(csv), "--label", "outcome", "--favourable", "good", "--protected", "sex",
            "--model", str(tmp_path / "old.joblib"), "--spec", SPEC]
    assert main(args) == 2
    assert main([*args, "--trust-pickle"]) in (0, 1, 3)  # a verdict


# ---- skops files with other types; a user's own classifier ---------------------------------------


class Doubler(BaseEstimator, TransformerMixin):
    """A user-defined transformer: a type skops does not trust by default."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.asarray(X, dtype=float) * 2


def user_pipeline(frame: pd.DataFrame, y, extra=False):
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = make_pipeline(Doubler(), StandardScaler()) if extra else StandardScaler()
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["sex", "job"]),
                                     (numeric, ["age", "income"]))
    return make_pipeline(encode, LogisticRegression(max_iter=500)).fit(frame, y)


def test_untrusted_types_are_listed_and_loaded_only_when_named(data, tmp_path):
    import skops.io as sio

    frame, y = data.frame.drop(columns=["outcome"]), data.labels
    path = tmp_path / "user.skops"
    sio.dump(user_pipeline(frame, y, extra=True), path)
    name = f"{__name__}.Doubler"
    with pytest.raises(models.UntrustedTypesError) as err:
        models.load(path)
    assert err.value.types == [name] and name in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(models.UntrustedTypesError):
        models.load(path, trusted_types=["some.Other"])
    assert models.load(path, trusted_types=err.value.types).kind == "imported"
    with pytest.raises(models.UntrustedTypesError) as err:  # an upload never trusts more (no way to ask)
        models.load_bytes(path.read_bytes(), "u.skops")
    assert err.value.types == [name] and "--trust-type" in str(err.value)
    with pytest.raises(models.UntrustedTypesError):  # trusting pickles does not trust skops types
        models.load(path, trust_pickle=True)
    # a function such as os.system is a type to trust, named as such (and never called by loading)
    import os

    sio.dump({"f": os.system}, tmp_path / "evil.skops")
    with pytest.raises(models.UntrustedTypesError) as err:
        models.load(tmp_path / "evil.skops")
    assert any(t.endswith(".system") for t in err.value.types)


def test_a_users_own_pipeline_is_imported_as_a_model(data, tmp_path):
    import skops.io as sio

    frame, y = data.frame.drop(columns=["outcome"]), data.labels
    pipeline = user_pipeline(frame, y)
    path = tmp_path / "user.skops"
    sio.dump(pipeline, path)
    model = models.load(path)
    assert model.kind == "imported" and model.feature_names == ["age", "sex", "job", "income"]
    assert np.array_equal(model.predict(data.frame), pipeline.predict(frame).astype(np.int8))
    assert np.allclose(model.score(data.frame), pipeline.predict_proba(frame)[:, 1])
    model.save(tmp_path / "again.skops")
    assert models.load(tmp_path / "again.skops").content_hash == model.content_hash
    with pytest.raises(ModelError, match="lack column 'job'"):
        model.predict(data.frame.drop(columns=["job"]))
    import fairaudit

    result = fairaudit.audit(data, SPEC, model=model)
    assert result.verdict is not None


def test_an_unusable_user_estimator_is_refused_clearly(data, tmp_path):
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    frame = data.frame.drop(columns=["outcome"])[["age", "income"]]
    sio.dump(LogisticRegression().fit(frame.to_numpy(), data.labels), tmp_path / "a.skops")
    with pytest.raises(ModelError, match="fitted without column names"):
        models.load(tmp_path / "a.skops")
    sio.dump(LogisticRegression().fit(frame, data.frame["outcome"]), tmp_path / "b.skops")
    texts = models.load(tmp_path / "b.skops")  # fitted on text classes: pred is the class (issue 46), no score
    assert texts.classes == ("bad", "good")
    with pytest.raises(ModelError, match="decides among 2 classes and has no single score"):
        texts.score(data.frame)
    sio.dump({"weights": [1, 2]}, tmp_path / "c.skops")
    with pytest.raises(ModelError, match="not a fairaudit model file"):
        models.load(tmp_path / "c.skops")


def test_the_python_api_never_unpickles_a_model_path_unless_trusted(trained, data, tmp_path):
    import fairaudit

    marker = tmp_path / "MARKER"
    path = tmp_path / "model.joblib"
    path.write_bytes(malicious_payloads(marker)["protocol0"])
    with pytest.raises(ModelError, match="may be a pickle"):
        fairaudit.audit(data, SPEC, model=str(path))
    assert not marker.exists()
    old_joblib(trained["logreg"], path)
    with pytest.raises(ModelError, match="may be a pickle"):
        fairaudit.audit(data, SPEC, model=str(path))
    assert fairaudit.audit(data, SPEC, model=str(path), trust_pickle=True, rows="all").steps == len(data)


def test_an_upload_never_trusts_a_callable_the_file_names(tmp_path):
    """Review finding: a skops Pipeline whose FunctionTransformer calls pandas.to_pickle(path) wrote a file on the
    server once the dashboard passed the file's own type list back as trusted. Uploads trust nothing extra."""
    import inspect

    import pandas as pd
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from fairaudit.models.skops_files import UntrustedTypesError

    target = tmp_path / "PWNED"
    frame = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.0, 1.0, 0.0]})
    pipe = make_pipeline(FunctionTransformer(pd.to_pickle, kw_args={"path": str(target)}), LogisticRegression())
    pipe.steps[0][1].func = pd.to_pickle  # never fitted: building it must not write anything either
    data = sio.dumps(pipe)
    with pytest.raises(UntrustedTypesError) as err:
        models.load_bytes(data, "evil.skops")
    assert "--trust-type" in str(err.value) and "pandas" in str(err.value)
    assert "trusted_types" not in inspect.signature(models.load_bytes).parameters
    assert not target.exists()
