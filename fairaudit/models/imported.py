"""A user's own scikit-learn classifier (not trained by fairaudit), imported from a skops file.

The estimator (typically a ``Pipeline`` that encodes its own columns) must have been fitted on a pandas
DataFrame, so that ``feature_names_in_`` names the raw columns it reads, and on 0/1 labels with
1 = favourable. fairaudit passes it those raw columns and reads ``predict_proba`` of class 1; it has no
linear / tree / ReLU form, so the sampling engine is the one that audits it. Its ``content_hash`` is the
SHA-256 of the skops file, and ``save`` writes that file back unchanged.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError
from fairaudit.models.base import Model, sha256, write_atomic
from fairaudit.models.encoding import check_columns


class ImportedSklearnModel(Model):
    kind = "imported"

    def __init__(self, estimator, data: bytes, name: str):
        for attribute in ("predict_proba", "classes_"):
            if not hasattr(estimator, attribute):
                raise ModelError(f"{name} holds a {type(estimator).__name__}, not a fitted scikit-learn classifier "
                                 "with predict_proba")
        names = getattr(estimator, "feature_names_in_", None)
        if names is None:
            raise ModelError(f"{name}: the {type(estimator).__name__} was fitted without column names; fit it on a "
                             "pandas DataFrame so that fairaudit knows which columns it reads")
        classes = list(estimator.classes_)
        if len(classes) != 2 or 1 not in classes:
            raise ModelError(f"{name}: the classifier's classes are {classes[:5]}; fairaudit needs two classes 0/1 "
                             "with 1 = favourable (fit it on y = (label == favourable value))")
        self.estimator = estimator
        self.favourable = classes.index(1)
        self.feature_names = [str(n) for n in names]
        self.params = {"estimator": type(estimator).__name__, "source": name}
        self.metrics = {}
        self._data = bytes(data)

    def _call(self, method: str, frame: pd.DataFrame) -> np.ndarray:
        check_columns(frame, self.feature_names)
        try:
            return np.asarray(getattr(self.estimator, method)(frame[self.feature_names]))
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            text = str(err).strip().splitlines()
            raise ModelError(f"the imported {self.params['estimator']} cannot read these rows: "
                             f"{(text[0] if text else type(err).__name__)[:160]}") from None

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        return self._call("predict_proba", frame)[:, self.favourable].astype(np.float64)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return (self._call("predict", frame) == 1).astype(np.int8)

    @property
    def content_hash(self) -> str:
        return sha256(self._data)

    def describe(self) -> str:
        return super().describe().replace("imported model", f"imported {self.params['estimator']}", 1)

    def save(self, path) -> None:
        """Write the original skops file back (so the content hash stays the same)."""
        write_atomic(path, self._data)
