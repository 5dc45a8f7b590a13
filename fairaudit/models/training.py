"""``train(dataset, kind)``: fit a model on a seeded split and measure it on the held-out rows."""
from __future__ import annotations

import difflib
import json
import threading
from typing import Sequence

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError
from fairaudit.models.base import MAX_MLP_PARAMETERS, Model, TrainingCancelled, report  # noqa: F401 — shared by the trainers
from fairaudit.models.encoding import Encoding
from fairaudit.base.progress import OnProgress, Progress

KINDS = ("logreg", "tree", "gbm", "mlp")
KIND_HELP = {
    "logreg": "logistic regression (linear; standardised numeric inputs)",
    "tree": "decision tree, max_depth 6",
    "gbm": "histogram gradient boosting, 100 trees",
    "mlp": "torch ReLU network, 2 hidden layers of 16",
}
HELD_OUT_SHARE = 0.25  # the share of rows held out (and audited) unless the user changes it: demo, Model page, CLI
MAX_GROUP_VALUES = 20  # a protected column with more distinct values is split at its median instead


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        close = difflib.get_close_matches(str(kind), KINDS, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ModelError(f"unknown model kind '{kind}'{hint}; choose one of {', '.join(KINDS)}")
    return kind


def training_labels(dataset) -> np.ndarray:
    """The 0/1 labels (1 = favourable) of a dataset; ModelError when there is nothing binary to learn."""
    label = dataset.schema.label
    if label is None:
        raise ModelError("cannot train without a label column")
    distinct = dataset.frame[label].dropna().unique()
    if len(distinct) > 2:
        raise ModelError(f"label column '{label}' has {len(distinct)} distinct values; training needs a binary label")
    y = dataset.labels
    if y.min() == y.max():
        raise ModelError(f"label column '{label}' has a single outcome in the data; cannot train a classifier")
    return y


def split_rows(y: np.ndarray, seed: int = 0, test_size: float = HELD_OUT_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """``(training rows, held-out rows)``: positions of the split ``train`` uses (stratified on the 0/1
    labels ``y``, ``random_state=seed``: the rows scikit-learn's ``train_test_split`` picks, drawn without
    importing it, see :mod:`fairaudit.models.stratified_split`). The one definition of the held-out rows (see
    ``fairaudit.core.group_metrics.held_out_rows``)."""
    from fairaudit.models.stratified_split import stratified_split

    return stratified_split(y, float(test_size), int(seed))


def split_positions(positions: np.ndarray, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``positions`` split at random (``seed``) into two sorted parts, the first with ``round(share × len)`` of them:
    the one definition of the split a threshold chosen on part of the rows and certified on the rest reads
    (``fairaudit.core.inputs.split_audited``; a repaired model's ``chosen_on`` record, ``held_out_positions``)."""
    positions = np.asarray(positions)
    order = np.random.default_rng(int(seed)).permutation(len(positions))
    k = int(round(len(positions) * float(share)))
    return np.sort(positions[order[:k]]), np.sort(positions[order[k:]])


def chosen_on_matches(record, dataset) -> bool:
    """Whether a repaired model's ``chosen_on`` record names ``dataset`` (its thresholds were chosen on its rows)."""
    return (isinstance(record, dict) and record.get("content_hash") == dataset.content_hash
            and record.get("rows") == len(dataset) and "share" in record and "seed" in record)


def train(dataset, kind: str, *, seed: int = 0, test_size: float = HELD_OUT_SHARE, exclude: Sequence[str] = (),
          features: Sequence[str] | None = None, on_progress: OnProgress = None, **params) -> Model:
    """Train a model of ``kind`` (logreg, tree, gbm, mlp) on ``dataset``.

    The rows are split (stratified on the label, seeded) into a training part and a held-out part of
    ``test_size`` (default ``HELD_OUT_SHARE``); the model is fitted on the training part only and ``model.metrics``
    holds its accuracy on the held-out part, overall and per value of each protected column. The model reads
    ``features`` (default: every feature column of the schema) except those in ``exclude``; the front ends propose
    ``fairaudit.models.features.default_features`` (no protected, identifier or logged-decision column). The list
    is recorded in ``model.params["features"]``.
    ``params`` go to the learner (e.g. ``max_depth=4`` for tree, ``hidden=[32]`` for mlp).
    The same data, kind, seed and params give the same model.

    ``on_progress(Progress)`` (see :mod:`fairaudit.base.progress`), when given, is told how far the fit is: mlp per
    batch in epochs, gbm per boosting iteration, logreg and tree in one step. Returning False from it stops
    training at the next report with :class:`TrainingCancelled`. The model is the same with or without it.
    """
    check_kind(kind)
    y = training_labels(dataset)
    seed, test_size = int(seed), float(test_size)
    if not 0 < test_size < 1:
        raise ModelError(f"test_size must be between 0 and 1, got {test_size}")
    features = list(dataset.schema.feature_names if features is None else dict.fromkeys(features))
    for what, names in (("use", features), ("exclude", exclude)):
        for name in names:
            if name not in dataset.schema:
                close = difflib.get_close_matches(name, dataset.schema.names, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ModelError(f"cannot {what} '{name}': {dataset.name} has no such column{hint}")
    if dataset.schema.label in features:
        raise ModelError(f"'{dataset.schema.label}' is the label: a model cannot read the outcome it predicts")
    features = [f for f in features if f not in exclude]
    if not features:
        raise ModelError("no feature columns left to train on")
    try:
        json.dumps(params)
    except TypeError:
        raise ModelError("model parameters must be plain numbers, strings, lists or booleans") from None

    train_idx, test_idx = split_rows(y, seed, test_size)
    frame = dataset.frame
    train_rows = frame.iloc[train_idx]
    encoding = Encoding.fit(dataset, train_rows, features)
    X = encoding.transform(train_rows)
    meta = {"seed": seed, "test_size": test_size, "exclude": list(exclude), "features": features,
            "trained_on": training_record(dataset)}

    progress = None if on_progress is None else Progress(f"Training {kind}", None, "steps", on_progress)
    if kind == "mlp":
        from fairaudit.models.mlp import MLPModel, fit_mlp  # torch is imported only when needed

        net, scaler, used = fit_mlp(encoding, X, y[train_idx], seed, params, progress=progress)
        model = MLPModel(net, encoding, scaler, {**used, **meta})
    else:
        from fairaudit.models.sklearn_models import SklearnModel, fit_sklearn

        estimator, scaler, used = fit_sklearn(kind, encoding, X, y[train_idx], seed, params, progress=progress)
        model = SklearnModel(kind, estimator, encoding, scaler, {**used, **meta})

    test_rows = frame.iloc[test_idx]
    model.metrics = held_out_metrics(model, test_rows, y[test_idx], dataset.schema.protected,
                                     n_train=len(train_idx))
    return model


def training_record(dataset) -> dict:
    """What identifies the rows a model was split from: the data's hash and the label that stratified the
    split (with ``seed`` and ``test_size`` it determines the held-out rows; ``held_out_positions``)."""
    return {"dataset": dataset.name, "content_hash": dataset.content_hash, "rows": len(dataset),
            "label": dataset.schema.label, "favourable": str(dataset.schema.favourable)}


def held_out_positions(model, dataset, _params: bool = False) -> np.ndarray | None:
    """Sorted positions of the rows of ``dataset`` that ``model`` was **not** trained on, or None when
    fairaudit did not train ``model`` on this very dataset (other rows, another label) and so cannot
    tell which rows it saw. A threshold repair whose thresholds were chosen on rows of ``dataset`` (its ``chosen_on``
    record): the rows that chose neither (``split_positions``)."""
    params = (model if _params else getattr(model, "params", None)) or {}
    chosen = params.get("chosen_on")
    if chosen is not None and chosen_on_matches(chosen, dataset):
        # a threshold repair of a model, chosen on part of these rows: the rows that neither trained the model nor
        # chose its thresholds (the certification part of the split the repair made)
        if chosen.get("base_rows") == "all":  # the split was of all the rows
            base = np.arange(len(dataset))
        else:  # of the base model's held-out rows
            base = held_out_positions({**params, "chosen_on": None}, dataset, _params=True)
            if base is None:
                return None
        return split_positions(base, float(chosen["share"]), int(chosen["seed"]))[1]
    record = params.get("trained_on")
    if not isinstance(record, dict) or "seed" not in params or "test_size" not in params:
        return None
    if (record.get("rows") != len(dataset) or record.get("label") != dataset.schema.label
            or record.get("favourable") != str(dataset.schema.favourable)
            or record.get("content_hash") != dataset.content_hash):
        return None
    key = (dataset.rows_hash, dataset.schema.label, repr(dataset.schema.favourable), int(params["seed"]),
           float(params["test_size"]))  # what the split depends on: the labels (the rows), the seed, the share
    held = _HELD_OUT.get(key)
    if held is None:
        _, test_idx = split_rows(dataset.labels, key[3], key[4])
        held = np.sort(test_idx)
        with _HELD_OUT_LOCK:  # the dashboard audits from several threads
            while len(_HELD_OUT) >= HELD_OUT_CACHE:
                _HELD_OUT.pop(next(iter(_HELD_OUT)))
            _HELD_OUT[key] = held
    return held.copy()


HELD_OUT_CACHE = 8  # splits remembered (an audit asks for the same one at every call: the split is not free)
_HELD_OUT: dict = {}
_HELD_OUT_LOCK = threading.Lock()


def held_out_metrics(model: Model, rows: pd.DataFrame, y: np.ndarray, protected: Sequence[str],
                     n_train: int | None = None) -> dict:
    """Accuracy of ``model`` on ``rows``, overall and per value of each protected column.

    ``{"accuracy", "n_test", "n_train", "groups": {column: {group: {"n", "accuracy"}}}}``; groups are named
    by the value as a string (JSON keys), except that a numeric column with more than 20 values is split
    at its median into ``"< m"`` and ``">= m"``.
    """
    correct = np.asarray(model.predict(rows)) == np.asarray(y)
    groups = {}
    for column in protected:
        if column in rows.columns:
            groups[column] = {name: {"n": int(mask.sum()), "accuracy": float(correct[mask].mean())}
                              for name, mask in _group_masks(rows[column]) if mask.any()}
    return {"accuracy": float(correct.mean()), "n_test": int(len(correct)), "n_train": n_train, "groups": groups}


def _group_masks(values: pd.Series):
    """(group name, row mask) pairs for one protected column."""
    codes, distinct = pd.factorize(values)  # each distinct value once (a missing value: code -1, in no group)
    if len(distinct) > MAX_GROUP_VALUES and pd.api.types.is_numeric_dtype(values):
        cut = float(np.median(values.dropna()))
        cut_text = f"{cut:g}"
        yield f"< {cut_text}", (values < cut).to_numpy()
        yield f">= {cut_text}", (values >= cut).to_numpy()
        return
    for code in sorted(range(len(distinct)), key=lambda c: str(distinct[c])):
        yield str(distinct[code]), codes == code
