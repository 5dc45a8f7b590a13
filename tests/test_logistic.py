"""fairaudit's own default logreg fit (``fairaudit.models.logistic``): the optimum of scikit-learn's objective, the
same decisions as scikit-learn's fit, saved as scikit-learn's estimator, and no scikit-learn import on its path."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from fairaudit import models
from fairaudit.models.logistic import NewtonLogisticRegression, newton_fit
from fairaudit.models.sklearn_models import NEWTON_MAX_FEATURES, uses_own_logreg
from tests.test_models import synthetic

ROOT = Path(__file__).resolve().parents[1]


def _rows(seed: int, n: int = 600, p: int = 8, shift: float = 0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X @ rng.normal(size=p) + shift + rng.logistic(size=n) > 0).astype(np.int8)
    return X, y


def _gradient(X, y, w, b, C=1.0):
    p = 1.0 / (1.0 + np.exp(-(X @ w + b)))
    return np.r_[X.T @ (p - y) + w / C, (p - y).sum()]


@pytest.mark.parametrize("seed, shift, C", [(0, 0.0, 1.0), (1, 2.5, 1.0), (2, -1.0, 0.05), (3, 0.0, 20.0)])
def test_it_reaches_the_optimum_scikit_learn_approaches_with_the_same_decisions(seed, shift, C):
    X, y = _rows(seed, shift=shift)
    ours = NewtonLogisticRegression(C=C).fit(X, y)
    theirs = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-10, max_iter=1000).fit(X, y)
    assert np.abs(_gradient(X, y, ours.coef_[0], ours.intercept_[0], C)).max() / len(y) < 1e-11
    assert np.allclose(ours.coef_, theirs.coef_, atol=1e-7) and np.allclose(ours.intercept_, theirs.intercept_,
                                                                                atol=1e-7)
    assert np.array_equal(ours.predict(X), theirs.predict(X))
    assert np.allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-7)
    assert ours.classes_.tolist() == theirs.classes_.tolist() and ours.n_features_in_ == theirs.n_features_in_


def test_separable_rows_give_a_finite_optimum():
    X = np.r_[np.linspace(-3, -0.5, 50), np.linspace(0.5, 3, 50)][:, None]
    y = (X[:, 0] > 0).astype(int)
    w, b, steps = newton_fit(X, y)
    assert np.isfinite(w).all() and np.isfinite(b) and steps < 100
    assert np.abs(_gradient(X, y, w, b)).max() / len(y) < 1e-11
    big = newton_fit(X * 1e6, y)  # huge margins: the line search keeps the steps from overflowing
    assert np.isfinite(big[0]).all() and np.isfinite(big[1])


def test_the_default_logreg_is_ours_and_any_other_parameter_is_scikit_learns(tmp_path):
    data = synthetic(400)
    own = models.train(data, "logreg")
    assert isinstance(own.estimator, NewtonLogisticRegression)
    assert own.params["solver"] == "newton-cholesky" and own.params["C"] == 1.0
    assert isinstance(models.train(data, "logreg", C=1.0).estimator, NewtonLogisticRegression)
    other = models.train(data, "logreg", C=0.5)
    assert isinstance(other.estimator, LogisticRegression)
    assert not uses_own_logreg("logreg", {"solver": "lbfgs"}, 10)
    assert not uses_own_logreg("logreg", {}, NEWTON_MAX_FEATURES + 1)
    assert not uses_own_logreg("tree", {}, 10)
    assert "logreg (LogisticRegression)" in own.describe()


def test_saved_as_scikit_learns_estimator_with_the_same_numbers_and_hash(tmp_path):
    data = synthetic(400)
    model = models.train(data, "logreg")
    model.save(tmp_path / "m.skops")
    back = models.load(tmp_path / "m.skops")
    assert type(back.estimator) is LogisticRegression
    assert back.content_hash == model.content_hash
    assert np.array_equal(back.estimator.coef_, model.estimator.coef_)
    assert np.array_equal(back.predict(data.frame), model.predict(data.frame))
    assert np.array_equal(back.score(data.frame), model.score(data.frame))  # both read the linear form
    X = model.scaler(model.encoding.transform(data.frame))
    assert np.allclose(back.estimator.predict_proba(X), model.estimator.predict_proba(X), rtol=0, atol=1e-14)
    assert back.as_linear().weights.tolist() == model.as_linear().weights.tolist()


def test_training_the_default_logreg_imports_no_scikit_learn():
    code = ("import sys; from fairaudit import models; from tests.test_models import synthetic; "
            "models.train(synthetic(300), 'logreg'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn' or m.startswith('scipy.stats')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_cli_audit_of_adult_with_the_default_logreg_imports_neither_scikit_learn_nor_scipy_stats(tmp_path):
    code = ("import sys; from fairaudit.cli import main; "
            f"code = main(['audit', '--data', 'adult', '--model', 'logreg', '--spec', "
            f"'@specs/demographic_parity.spec', '--json', {str(tmp_path / 'o.json')!r}]); "
            "print('IMPORTED', sorted({m for m in sys.modules if m.split('.')[0] == 'sklearn' "
            "or m.startswith('scipy.stats')}), code)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "FAIRAUDIT_CACHE": "off"}, cwd=ROOT)
    assert out.stdout.strip().splitlines()[-1] == "IMPORTED [] 1"  # 1: the verdict is "violated"
