"""The default ``logreg`` fit in numpy alone: L2-regularised logistic regression by Newton's method.

The objective is scikit-learn's ``LogisticRegression(C=C)`` (the ``l2`` penalty, an unpenalised intercept)::

    f(w, b) = Σ_i log(1 + exp(−s_i (x_i·w + b))) + ‖w‖² / (2C),   s_i = ±1 for labels 1 / 0,

strictly convex in ``w`` with a finite minimum even on separable rows (the L2 term). Each step solves the Newton
system ``H d = −∇f`` with a Cholesky factor of the (p+1) × (p+1) Hessian (p encoded columns plus the intercept),
then halves the step until ``f`` decreases enough (Armijo), so it cannot diverge (once the predicted decrease is
below what ``f``'s rounding can show, the full step is taken: there Newton converges quadratically); it stops when every component of
the gradient, divided by the number of rows, is below ``GRADIENT_TOLERANCE`` — far tighter than scikit-learn's
default ``tol=1e-4`` — so it lands on the optimum scikit-learn's ``newton-cholesky`` solver approaches, and the same
decisions (``bench/logreg_agreement.py`` compares them on every built-in dataset).

``fairaudit.models.sklearn_models.fit_sklearn`` uses it for a logreg fit with the default parameters and at most
``NEWTON_MAX_FEATURES`` encoded columns: importing scikit-learn (and scipy.stats under it) for that fit cost more
than a second of every CLI audit (issue 30). Any other logreg fit is scikit-learn's, as before. The fitted model
has the attributes of a fitted ``LogisticRegression`` that fairaudit reads (``coef_``, ``intercept_``,
``classes_``, ``n_features_in_``, ``n_iter_``, ``predict_proba``, ``predict``, ``get_params``);
``to_sklearn()`` builds the real estimator with those numbers, for saving to a skops file.
"""
from __future__ import annotations

import numpy as np

from fairaudit.base.errors import ModelError

GRADIENT_TOLERANCE = 1e-12  # stop when max |∂f/∂θ| / rows is below this (scikit-learn's default tol is 1e-4)
MAX_NEWTON_STEPS = 100  # a strictly convex logistic loss needs ~10; more means the data are nearly separable
ARMIJO = 1e-4  # the share of the predicted decrease a step must achieve before it is accepted
MAX_HALVINGS = 60
FINAL_DECREMENT = 1e-9  # a Newton decrement −∇f·d below this × |f|: the full step, no line search (``_newton``)


def _objective(margins: np.ndarray, s: np.ndarray, theta: np.ndarray, penalty: np.ndarray) -> float:
    """``f`` at ``theta = (w, b)`` (module doc) from the rows' ``margins`` ``x·w + b``; ``s`` the ±1 labels,
    ``penalty`` 1/C on w and 0 on b."""
    return float(np.logaddexp(0.0, -s * margins).sum() + 0.5 * (penalty * theta * theta).sum())


def newton_fit(X: np.ndarray, y: np.ndarray, C: float = 1.0) -> tuple[np.ndarray, float, int]:
    """``(w, b, steps)``: the minimiser of the module doc's ``f`` for rows ``X`` and 0/1 labels ``y``.

    The matrix products run on one BLAS thread: the numbers then do not depend on how many cores the machine has
    (a threaded sum adds in another order), and on a loaded machine two OpenBLAS threads spinning for each other
    made this fit 20–50× slower (measured on Adult with a test run beside it: 0.13–0.25 s on one thread, 4.7–7.2 s
    on two)."""
    with _one_blas_thread():
        return _newton(X, y, C)


def _one_blas_thread():
    """A context in which numpy's BLAS uses one thread (threadpoolctl, a scikit-learn requirement); a no-op
    without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - installed with scikit-learn
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _newton(X: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, float, int]:
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    X1 = np.hstack([X, np.ones((n, 1))])
    s = np.where(np.asarray(y) == 1, 1.0, -1.0)
    target = (s + 1.0) / 2.0
    penalty = np.r_[np.full(p, 1.0 / C), 0.0]
    theta = np.zeros(p + 1)
    margins = np.zeros(n)
    value = _objective(margins, s, theta, penalty)
    for step in range(1, MAX_NEWTON_STEPS + 1):
        prob = 0.5 * (1.0 + np.tanh(0.5 * margins))  # the logistic function, without overflow
        gradient = X1.T @ (prob - target) + penalty * theta
        if np.abs(gradient).max() / n <= GRADIENT_TOLERANCE:
            return theta[:p], float(theta[p]), step - 1
        weighted = X1 * np.sqrt(prob * (1.0 - prob))[:, None]
        hessian = weighted.T @ weighted  # Σ_i p_i (1 − p_i) x_i x_iᵀ, symmetric by construction
        hessian[np.diag_indices_from(hessian)] += penalty
        direction = -_solve(hessian, gradient)
        slope = float(gradient @ direction)
        if not slope < 0:  # rounding made the Newton direction useless: descend along the gradient instead
            direction, slope = -gradient, -float(gradient @ gradient)
        elif -slope <= FINAL_DECREMENT * max(1.0, abs(value)):
            # the predicted decrease is below what f's rounding lets a line search see: at the optimum's door,
            # where the quadratic model is exact to far beyond that, take the full Newton step
            theta = theta + direction
            margins = X1 @ theta
            value = _objective(margins, s, theta, penalty)
            continue
        t = 1.0
        for _ in range(MAX_HALVINGS):
            candidate = theta + t * direction
            candidate_margins = X1 @ candidate
            new_value = _objective(candidate_margins, s, candidate, penalty)
            if new_value <= value + ARMIJO * t * slope:
                break
            t /= 2
        else:  # no step decreases f any more: the optimum to the precision of float64
            return theta[:p], float(theta[p]), step - 1
        theta, value, margins = candidate, new_value, candidate_margins
    return theta[:p], float(theta[p]), MAX_NEWTON_STEPS


def _solve(hessian: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """``hessian⁻¹ gradient`` by a Cholesky factor; a least-squares solve when rounding leaves the Hessian not
    positive definite (the intercept's curvature vanishes on separable rows)."""
    try:
        lower = np.linalg.cholesky(hessian)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(hessian, gradient, rcond=None)[0]
    return np.linalg.solve(lower.T, np.linalg.solve(lower, gradient))


class NewtonLogisticRegression:
    """A fitted binary L2 logistic regression (module doc), read like a fitted scikit-learn
    ``LogisticRegression``; ``params`` are the scikit-learn parameters it stands for (``to_sklearn``)."""

    def __init__(self, **params):
        self.params = dict(params)

    def get_params(self, deep: bool = True) -> dict:
        return dict(self.params)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "NewtonLogisticRegression":
        classes = np.unique(y)
        if len(classes) != 2:
            raise ModelError(f"logistic regression needs two label values to learn from, got {len(classes)}")
        w, b, steps = newton_fit(X, y == classes[1], float(self.params.get("C", 1.0)))
        self.classes_ = classes
        self.coef_ = w[None, :]
        self.intercept_ = np.array([b])
        self.n_features_in_ = int(np.shape(X)[1])
        self.n_iter_ = np.array([steps], dtype=np.int32)
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=np.float64) @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        positive = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1.0 - positive, positive])

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def to_sklearn(self):
        """The scikit-learn ``LogisticRegression`` with these parameters and these fitted numbers (it imports
        scikit-learn: for saving the model, which skops writes as that estimator)."""
        from sklearn.linear_model import LogisticRegression

        estimator = LogisticRegression(**self.params)
        for name in ("classes_", "coef_", "intercept_", "n_features_in_", "n_iter_"):
            setattr(estimator, name, getattr(self, name))
        return estimator
