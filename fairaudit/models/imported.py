"""A user's own scikit-learn classifier (not trained by fairaudit), imported from a skops file.

The estimator (typically a ``Pipeline`` that encodes its own columns) must have been fitted on a pandas
DataFrame, so that ``feature_names_in_`` names the raw columns it reads. Fitted on 0/1 labels (1 = favourable), it is
a yes/no model: fairaudit passes it those raw columns and reads ``predict_proba`` of class 1. Fitted on other classes
(approve / refer / decline, or 0/1/2) it decides among them: ``classes`` are its ``classes_``, ``pred`` is the class it
predicts (``E[pred == "approve" | …]``) and it has no single score. It has no
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
        classes = [c.item() if hasattr(c, "item") else c for c in estimator.classes_]
        self.estimator = estimator
        if len(classes) == 2 and {0, 1} == set(classes) and not any(isinstance(c, str) for c in classes):
            self.favourable = classes.index(1)
        else:  # several classes (or two that are not 0/1): ``pred`` is the class
            self.favourable, self.classes = None, tuple(classes)
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
        if self.classes is not None:
            raise ModelError(f"the imported {self.params['estimator']} decides among {len(self.classes)} classes and "
                             "has no single score")
        return self._call("predict_proba", frame)[:, self.favourable].astype(np.float64)

    def class_probabilities(self, frame: pd.DataFrame) -> np.ndarray:
        """``predict_proba``: one column per class, in the order of ``classes``."""
        return self._call("predict_proba", frame).astype(np.float64)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        if self.classes is not None:
            return self._call("predict", frame)
        return (self._call("predict", frame) == 1).astype(np.int8)

    @property
    def content_hash(self) -> str:
        return sha256(self._data)

    def describe(self) -> str:
        text = super().describe().replace("imported model", f"imported {self.params['estimator']}", 1)
        if self.classes is not None:
            from fairaudit.models.expression import class_listing

            text = text.replace(" features", f" features, {class_listing(self.classes)}", 1)
        return text

    def save(self, path) -> None:
        """Write the original skops file back (so the content hash stays the same)."""
        write_atomic(path, self._data)
