"""The ``Model`` contract every engine codes against.

A model reads raw rows (a DataFrame with the dataset's feature columns; other columns, such as the
label, are ignored) and returns, vectorised over the rows:

* ``score(frame)``: the probability of the favourable decision (float64);
* ``predict(frame)``: the decision, 1 = favourable (int8).

A model that decides among several classes (``approve`` / ``refer`` / ``decline``: an imported multi-class
classifier, a logged decision column with several values) has ``classes`` (its class values, a tuple; None for a
yes/no model), ``predict`` gives each row's class and it has no single ``score``. ``decisions_for(frame)`` is what every
route reads: 0/1 (int8) for a yes/no model, the classes as an object array otherwise (the dtype tells the two apart:
``fairaudit.spec.events`` refuses a bare ``pred`` that holds classes).

It also has ``kind``, JSON-able ``params``, the raw ``feature_names`` it reads, a ``content_hash``
(SHA-256 of its saved parameters, the same before and after save/load), held-out ``metrics`` (empty
when unknown), ``describe()``, ``save(path)`` and the structure adapters ``as_linear()``,
``as_tree()`` and ``as_relu_net()``, which raise ``ModelError`` when the model has no such structure.
"""
from __future__ import annotations

import hashlib
import json
import os
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError
from fairaudit.models.forms import LinearForm, ReluNet, TreeForm
from fairaudit.base.progress import Progress

FORMAT = "fairaudit-model"  # marker stored in every saved model file
FORMAT_VERSION = 1


class Model(ABC):
    kind: str
    params: dict
    feature_names: list[str]
    metrics: dict
    classes: tuple | None = None  # the decision's classes when it has several (module doc); None: yes/no

    @abstractmethod
    def score(self, frame: pd.DataFrame) -> np.ndarray:
        """Probability of the favourable decision for each row."""

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """The decision for each row: 1 = favourable, 0 = not (score > 0.5)."""
        return (self.score(frame) > 0.5).astype(np.int8)

    def decisions_for(self, frame: pd.DataFrame) -> np.ndarray:
        """The decision on each row as every route reads it: 0/1 (int8, 1 = favourable) for a yes/no model; for a
        model with ``classes``, each row's class as an object array (``class_decisions``)."""
        decided = np.asarray(self.predict(frame))
        return decided.astype(np.int8) if self.classes is None else class_decisions(decided)

    def score_and_predict(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """``(score(frame), predict(frame))`` — what an audit reads of every row; a model that can give both from
        one pass over the rows (one encoding, one margin) overrides this, with the very same values."""
        return self.score(frame), self.predict(frame)

    @property
    @abstractmethod
    def content_hash(self) -> str:
        """SHA-256 (hex) of the model's parameters; identifies the model in a report."""

    def describe(self) -> str:
        """One line: kind, inputs, held-out accuracy when known, short hash."""
        text = f"{self.kind} model on {len(self.feature_names)} features"
        if "accuracy" in self.metrics:
            text += f", held-out accuracy {self.metrics['accuracy']:.3f}"
        return f"{text} (sha256 {self.content_hash[:12]})"

    def save(self, path) -> None:
        raise ModelError(f"a {self.kind} model cannot be saved")

    def as_linear(self) -> LinearForm:
        raise ModelError(f"a {self.kind} model has no linear form; use kind logreg")

    def as_tree(self) -> TreeForm:
        raise ModelError(f"a {self.kind} model has no decision-tree form; use kind tree")

    def as_relu_net(self) -> ReluNet:
        raise ModelError(f"a {self.kind} model has no ReLU-network form; use kind mlp or logreg, or a .nnet file")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"


def class_decisions(values) -> np.ndarray:
    """Decisions among several classes as one object array of plain Python values (``np.int64(2)`` is ``2``,
    ``np.str_('refer')`` is ``'refer'``): the form ``pred`` takes for such a decision on every route."""
    values = np.asarray(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values.tolist()
    return out


class Standardiser:
    """``(x - mean) / scale`` on the encoded numeric columns; indicator columns pass unchanged."""

    def __init__(self, mean: np.ndarray, scale: np.ndarray):
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)

    @classmethod
    def fit(cls, X: np.ndarray, numeric_mask: np.ndarray) -> "Standardiser":
        mean = np.where(numeric_mask, X.mean(axis=0), 0.0)
        std = X.std(axis=0)
        scale = np.where(numeric_mask & (std > 0), std, 1.0)
        return cls(mean, scale)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean) / self.scale

    def fold(self, W: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The affine layer ``x -> W·scaled(x) + b`` rewritten over unscaled ``x``."""
        W = np.atleast_2d(W)
        W_raw = W / self.scale
        return W_raw, np.asarray(b, dtype=np.float64) - W_raw @ self.mean

    def to_dict(self) -> dict:
        return {"mean": self.mean.tolist(), "scale": self.scale.tolist()}

    @classmethod
    def from_dict(cls, data: dict) -> "Standardiser":
        return cls(np.array(data["mean"]), np.array(data["scale"]))


# ---------------------------------------------------------------------- what every trainer shares (``training``)
MAX_MLP_PARAMETERS = 2_000_000  # weights + biases of an mlp (16 MB in float64); checked before allocating


class TrainingCancelled(ModelError):
    """The receiver of training progress asked to stop (``on_progress`` returned False); no model was made."""


def report(progress: Progress | None, done: float, total: float | None = None, unit: str | None = None) -> None:
    """Tell ``progress`` (None: nobody listens) how far training is; TrainingCancelled once its receiver asked
    to stop. Reporting never changes what is trained."""
    if progress is None:
        return
    if unit is not None:
        progress.unit = unit
    if not progress(done, total):
        raise TrainingCancelled("training cancelled")


def output_path(path) -> Path:
    """``path`` as a Path a model can be written to (ModelError otherwise), for ``save``: a file in an existing
    folder, never a directory or a device (``fairaudit.base.files.check_path``; what an existing file holds is the
    caller's to check: ``fairaudit train --out`` does before training)."""
    from fairaudit.base.errors import FairauditError
    from fairaudit.base.files import check_path

    if not isinstance(path, (str, os.PathLike)):
        raise ModelError("save() takes a file path")
    try:
        return check_path(path, what="model")
    except FairauditError as err:
        raise ModelError(str(err)) from None


def write_atomic(path, data: bytes) -> None:
    """Write ``data`` to ``path`` (checked with :func:`output_path`) through a temporary file and a rename
    (:func:`fairaudit.base.files.write_atomically`), so a failed write never leaves half a model file."""
    from fairaudit.base.errors import FairauditError
    from fairaudit.base.files import write_atomically

    target = output_path(path)
    try:
        write_atomically(target, data, what="model")
    except FairauditError as err:
        raise ModelError(str(err)) from None


def canonical_json(data) -> bytes:
    """Deterministic JSON bytes (sorted keys, no spaces) for hashing."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=True).encode("utf-8")


def sha256(*chunks: bytes) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(len(chunk).to_bytes(8, "little"))
        digest.update(chunk)
    return digest.hexdigest()
