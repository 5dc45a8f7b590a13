"""scikit-learn models: ``logreg`` (LogisticRegression), ``tree`` (DecisionTreeClassifier) and ``gbm``
(HistGradientBoostingClassifier), each with its encoding inside so it predicts from raw rows.

A logreg fit with the default parameters on at most ``NEWTON_MAX_FEATURES`` encoded columns is fairaudit's own
Newton's method (:mod:`fairaudit.models.logistic`: the same objective, solved to a tighter tolerance, the same
decisions) and imports no scikit-learn; it is saved as the scikit-learn ``LogisticRegression`` with its numbers.
scikit-learn is imported only where an estimator of it is built, fitted or saved.

Saved in skops's secure format (``skops.io``; see :mod:`fairaudit.models.storage` for what loading trusts).
Files written by older versions with joblib are pickles and load only with ``trust_pickle=True``.
"""
from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError
from fairaudit.models.base import (FORMAT, FORMAT_VERSION, Model, Standardiser, canonical_json, sha256,
                                  write_atomic)
from fairaudit.models.encoding import Encoding
from fairaudit.models.forms import DecisionNode, LinearForm, ReluNet, TreeForm
from fairaudit.models.base import report
from fairaudit.models.logistic import NewtonLogisticRegression

# kind -> (scikit-learn module, estimator class name, default parameters, standardise numeric inputs?)
ESTIMATORS = {
    "logreg": ("sklearn.linear_model", "LogisticRegression", {"C": 1.0, "max_iter": 1000}, True),
    "tree": ("sklearn.tree", "DecisionTreeClassifier", {"max_depth": 6, "min_samples_leaf": 5}, False),
    "gbm": ("sklearn.ensemble", "HistGradientBoostingClassifier", {"max_iter": 100, "learning_rate": 0.1}, False),
}


def estimator_class(kind: str) -> type:
    """The scikit-learn class of ``kind``'s estimator (importing scikit-learn)."""
    module, name, _, _ = ESTIMATORS[kind]
    return getattr(importlib.import_module(module), name)


# Newton's method with a Cholesky solve of the p × p Hessian converges in a few passes over the rows where L-BFGS
# needs ~80 (Adult: 0.9 CPU s against 2.7, the same optimum to the solvers' tolerance); its cost grows with p², so a
# wide encoding (many one-hot columns) keeps L-BFGS
NEWTON_MAX_FEATURES = 500


def logreg_solver(features: int) -> str:
    """The solver a logreg fit uses by default for ``features`` encoded columns."""
    return "newton-cholesky" if features <= NEWTON_MAX_FEATURES else "lbfgs"


def uses_own_logreg(kind: str, params: dict, features: int) -> bool:
    """Whether a fit of ``kind`` with the user's ``params`` on ``features`` encoded columns is fairaudit's own
    Newton logreg (module doc): logreg, no parameter but the defaults' own values, a narrow encoding."""
    defaults = ESTIMATORS[kind][2]
    return (kind == "logreg" and features <= NEWTON_MAX_FEATURES
            and all(name in defaults and defaults[name] == value for name, value in params.items()))


def fit_sklearn(kind: str, encoding: Encoding, X: np.ndarray, y: np.ndarray, seed: int, params: dict,
                progress=None):
    """Fit the estimator of ``kind`` on encoded rows ``X``; returns (estimator, standardiser or None, params).

    ``progress`` (a :class:`fairaudit.base.progress.Progress` or None) is told each boosting iteration of gbm, one
    step for the others; TrainingCancelled when its receiver asks to stop."""
    _, _, defaults, standardise = ESTIMATORS[kind]
    merged = {**defaults, **params}
    if kind == "logreg" and "solver" not in params:
        merged["solver"] = logreg_solver(X.shape[1])
    if uses_own_logreg(kind, params, X.shape[1]):
        merged.setdefault("random_state", seed)  # recorded as scikit-learn's LogisticRegression records it
        scaler = Standardiser.fit(X, encoding.numeric_mask)
        estimator = NewtonLogisticRegression(**merged)
        _fit(estimator, scaler(X), y, progress)
        return estimator, scaler, merged
    cls = estimator_class(kind)
    if "random_state" in cls().get_params():
        merged.setdefault("random_state", seed)
    try:
        estimator = cls(**merged)
    except TypeError:
        valid = sorted(cls().get_params())
        unknown = next(k for k in params if k not in valid)
        raise ModelError(f"unknown parameter '{unknown}' for kind {kind}; "
                         f"{cls.__name__} accepts {', '.join(valid)}") from None
    scaler = Standardiser.fit(X, encoding.numeric_mask) if standardise else None
    try:
        _fit(estimator, scaler(X) if scaler else X, y, progress)
    except ValueError as err:  # sklearn's validation of parameter values
        raise ModelError(f"cannot train {kind}: {str(err).splitlines()[0]}") from None
    return estimator, scaler, merged


def _fit(estimator, X: np.ndarray, y: np.ndarray, progress) -> None:
    """``estimator.fit(X, y)``, telling ``progress`` how far it is (the fitted estimator is the same either way)."""
    if progress is None:
        estimator.fit(X, y)
    elif not _fit_boosting(estimator, X, y, progress):
        report(progress, 0, 1, "steps")
        estimator.fit(X, y)
        report(progress, 1, 1)


def _reporting_binomial_loss(progress, total: int):
    """The log loss of a HistGradientBoostingClassifier (a subclass of scikit-learn's, so the same numbers) that
    tells ``progress`` each time the booster asks for gradients: once at the start of every boosting iteration;
    None when this scikit-learn lacks the (private) class."""
    try:  # the loss HistGradientBoostingClassifier uses for two classes (private module: used only to report)
        from sklearn._loss.loss import HalfBinomialLoss
    except ImportError:  # pragma: no cover - a future scikit-learn moved it: gbm then reports in one step
        return None

    class ReportingBinomialLoss(HalfBinomialLoss):
        def __init__(self):
            super().__init__()
            self.iterations = 0

        def _tell(self):
            report(progress, self.iterations, total, "boosting iterations")
            self.iterations += 1

        def gradient_hessian(self, *args, **kwargs):
            self._tell()
            return super().gradient_hessian(*args, **kwargs)

        def gradient(self, *args, **kwargs):
            self._tell()
            return super().gradient(*args, **kwargs)

    return ReportingBinomialLoss()


def _fit_boosting(estimator, X: np.ndarray, y: np.ndarray, progress) -> bool:
    """Fit a HistGradientBoostingClassifier reporting every boosting iteration; False (nothing done) for other
    estimators or when this scikit-learn lacks what it relies on.

    scikit-learn has no callback for this. The booster's ``loss`` is, for the fit only, a subclass of the very
    loss it would use (``HalfBinomialLoss``, which ``loss="log_loss"`` means for two classes) that reports when
    the gradients of an iteration are computed; afterwards ``loss`` and the fitted ``_loss`` are put back to what
    a plain ``fit`` leaves. One ``fit`` call, the same arithmetic: the pickled estimator and the content hash are
    identical to a fit without progress (tests/test_training_progress.py checks it byte for byte, early stopping
    included). Growing ``max_iter`` under ``warm_start`` would also give the same model, but each extra ``fit``
    re-bins the data and re-predicts every tree (about +70 % time for 5 steps on adult)."""
    if type(estimator).__name__ != "HistGradientBoostingClassifier":
        return False
    accepted = getattr(type(estimator), "_parameter_constraints", {}).get("loss", ())
    loss = _reporting_binomial_loss(progress, int(estimator.max_iter))
    if (loss is None or not any(isinstance(c, type) and isinstance(loss, c) for c in accepted)
            or estimator.loss != "log_loss" or len(np.unique(y)) != 2):
        return False
    estimator.set_params(loss=loss)
    try:
        estimator.fit(X, y)
    finally:
        estimator.set_params(loss="log_loss")
    estimator._loss = estimator._get_loss(sample_weight=None)  # what fit(loss="log_loss") sets for two classes
    done = int(estimator.n_iter_)
    report(progress, done, done)  # early stopping may end before max_iter
    return True


class SklearnModel(Model):
    """A fitted scikit-learn classifier behind the raw-row encoding (class 1 = favourable)."""

    def __init__(self, kind: str, estimator, encoding: Encoding, scaler: Standardiser | None,
                 params: dict, metrics: dict | None = None):
        self.kind = kind
        self.estimator = estimator
        self.encoding = encoding
        self.scaler = scaler
        self.params = params
        self.metrics = metrics or {}
        self.feature_names = encoding.raw_names
        self._hash: str | None = None
        self._linear = self.as_linear() if kind == "logreg" else None

    def _matrix(self, frame: pd.DataFrame) -> np.ndarray:
        X = self.encoding.transform(frame)
        X = self.scaler(X) if self.scaler else X
        if self.kind != "logreg":  # scikit-learn's trees and boosting read float32: say so before it fails
            big = np.abs(X) > np.finfo(np.float32).max
            if big.any():
                j = int(np.argwhere(big)[0][1])
                name = self.encoding.names[j]
                raise ModelError(f"column {name!r} holds values beyond what this {self.kind} model reads (float32, "
                                 f"at most {np.finfo(np.float32).max:.3g} in size): remove or rescale those rows")
        return X

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        if self.kind == "logreg":  # one matrix-vector product on the raw encoding
            return 1.0 / (1.0 + np.exp(-self._linear.margin(self.encoding.transform(frame))))
        proba = self.estimator.predict_proba(self._matrix(frame))
        return proba[:, list(self.estimator.classes_).index(1)].astype(np.float64)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        if self.kind == "logreg":
            return self._linear.predict(frame)
        return self.estimator.predict(self._matrix(frame)).astype(np.int8)

    def score_and_predict(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """``score`` and ``predict`` from one encoding of the rows (logreg: one margin), the same values."""
        if self.kind == "logreg":
            margin = self._linear.margin(self.encoding.transform(frame))
            return 1.0 / (1.0 + np.exp(-margin)), (margin > 0).astype(np.int8)
        X = self._matrix(frame)
        proba = self.estimator.predict_proba(X)
        return (proba[:, list(self.estimator.classes_).index(1)].astype(np.float64),
                self.estimator.predict(X).astype(np.int8))

    def _config(self) -> dict:
        return {"kind": self.kind, "params": self.params, "encoding": self.encoding.to_dict(),
                "scaler": self.scaler.to_dict() if self.scaler else None}

    @property
    def content_hash(self) -> str:
        if self._hash is None:
            self._hash = sha256(canonical_json(self._config()),
                                *(_array_bytes(a) for a in fitted_arrays(self.kind, self.estimator)))
        return self._hash

    def describe(self) -> str:
        name = ESTIMATORS[self.kind][1]  # fairaudit's own logreg fit is a LogisticRegression too (module doc)
        return super().describe().replace(f"{self.kind} model", f"{self.kind} ({name})", 1)

    def save(self, path) -> None:
        """Write the model to ``path`` as one skops file (whatever the name; ``.skops`` is the usual one)."""
        from fairaudit.models.skops_files import dump_bytes

        estimator = self.estimator
        if isinstance(estimator, NewtonLogisticRegression):  # saved as scikit-learn's, with the same numbers
            estimator = estimator.to_sklearn()
        payload = {"format": FORMAT, "version": FORMAT_VERSION, **self._config(),
                   "metrics": self.metrics, "estimator": estimator}
        write_atomic(path, dump_bytes(payload))

    @classmethod
    def from_payload(cls, payload: dict) -> "SklearnModel":
        """The model in a saved payload (a dict); ValueError if its estimator does not match its kind."""
        kind, estimator = payload["kind"], payload["estimator"]
        own = kind == "logreg" and type(estimator) is NewtonLogisticRegression  # in a trusted pickle only
        if kind not in ESTIMATORS or not (own or type(estimator) is estimator_class(kind)):
            raise ValueError(f"kind {kind!r} with a {type(estimator).__name__}")
        scaler = Standardiser.from_dict(payload["scaler"]) if payload["scaler"] else None
        return cls(payload["kind"], payload["estimator"], Encoding.from_dict(payload["encoding"]), scaler,
                   payload["params"], payload.get("metrics"))

    # ---- structure adapters ---------------------------------------------------------------

    def as_linear(self) -> LinearForm:
        if self.kind != "logreg":
            return super().as_linear()
        w, b = self.estimator.coef_[0], self.estimator.intercept_
        if self.scaler:
            W, b = self.scaler.fold(w, b)
            w = W[0]
        return LinearForm(weights=np.asarray(w, dtype=np.float64), bias=float(b[0]), encoding=self.encoding)

    def as_relu_net(self) -> ReluNet:
        if self.kind != "logreg":
            return super().as_relu_net()
        lin = self.as_linear()
        return ReluNet(layers=((lin.weights[None, :], np.array([lin.bias])),), encoding=self.encoding)

    def as_tree(self) -> TreeForm:
        """The fitted tree as nodes; each threshold is the float64 cut that sends an encoded value left exactly
        when scikit-learn does (it compares the value cast to float32: ``float32_cut``)."""
        if self.kind != "tree":
            return super().as_tree()
        t = self.estimator.tree_
        favourable = list(self.estimator.classes_).index(1)
        fractions = t.value[:, 0, :] / t.value[:, 0, :].sum(axis=1, keepdims=True)
        nodes = []
        for i in range(t.node_count):
            leaf = t.children_left[i] < 0
            nodes.append(DecisionNode(
                id=i, value=float(fractions[i, favourable]), samples=int(t.n_node_samples[i]),
                feature=None if leaf else int(t.feature[i]),
                threshold=None if leaf else float32_cut(float(t.threshold[i])),
                left=None if leaf else int(t.children_left[i]),
                right=None if leaf else int(t.children_right[i])))
        return TreeForm(nodes=tuple(nodes), encoding=self.encoding)


def fitted_arrays(kind: str, estimator) -> list[np.ndarray]:
    """The arrays that define a fitted estimator (what ``content_hash`` digests)."""
    if kind == "logreg":
        return [estimator.classes_, estimator.coef_, estimator.intercept_]
    if kind == "tree":
        t = estimator.tree_
        return [estimator.classes_, t.children_left, t.children_right, t.feature, t.threshold, t.value,
                t.n_node_samples]
    try:  # scikit-learn has no public view of a HistGradientBoosting's trees; these fields are private
        arrays = [estimator.classes_, np.asarray(estimator._baseline_prediction)]
        for predictors in estimator._predictors:  # one list of trees per boosting iteration
            for tree in predictors:
                arrays += [tree.nodes, tree.raw_left_cat_bitsets]
        return arrays
    except AttributeError:  # a future scikit-learn renamed them: fall back to the pickled estimator
        import pickle

        return [estimator.classes_, np.frombuffer(pickle.dumps(estimator, protocol=5), dtype=np.uint8)]


def _array_bytes(array: np.ndarray) -> bytes:
    """Bytes of an array's values; structured arrays field by field (their padding bytes are arbitrary)."""
    array = np.asarray(array)
    if array.dtype.names:
        return b"".join(_array_bytes(array[name]) for name in array.dtype.names)
    header = f"{array.dtype.str}{array.shape}".encode()
    return header + np.ascontiguousarray(array).tobytes()


def float32_cut(t: float) -> float:
    """The float64 number c such that, for every float64 x in float32's range, ``x <= c`` exactly when
    ``float32(x) <= t`` — scikit-learn's trees cast their input to float32 before comparing it with a float64
    threshold, so 1.4 goes right of a threshold 1.3999999762 (the float32 nearest 1.4) although 1.4 > it in float64
    is false... and every reader of a ``TreeForm`` must decide as the model does.

    Let f be the largest float32 ≤ t and u the next float32 above f. float32(x) ≤ t ⇔ float32(x) ≤ f ⇔ x rounds
    (to nearest, ties to even) to f or below ⇔ x < m, or x = m when m rounds to f, with m = (f + u)/2 — exact in
    float64 (a float32 has 24 significant bits, m needs 25)."""
    import math

    f = np.float32(t)
    if float(f) > t:
        f = np.nextafter(f, np.float32(-np.inf))
    u = np.nextafter(f, np.float32(np.inf))
    if not np.isfinite(u):
        return math.inf
    m = (float(f) + float(u)) / 2
    return m if np.float32(m) == f else math.nextafter(m, -math.inf)
