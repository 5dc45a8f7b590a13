"""Certified threshold repair (``fairaudit repair``) beside fairlearn's ``ThresholdOptimizer`` (issue 32, item 4).

On Adult and COMPAS, a logistic regression trained by fairaudit (default features: no protected attribute), and a
two-sided constraint on the gap between women's and men's rates — demographic parity (favourable-decision rates)
and equal opportunity (true-positive rates). Both methods choose on the same search rows (half of the model's
held-out rows, seed 0) and are measured on the same certification rows (the other half):

* ours: group thresholds (or one global threshold) chosen on the search rows with the automatic margin, then the
  monitor's certificate on the certification rows at Δ = 0.05 (anytime-valid, rows in random order);
* ours with ``margin=0`` (the spec merely satisfied on the search rows, as fairlearn does): what certification
  costs beside it;
* fairlearn 0.15 ``ThresholdOptimizer`` (prefit on the same scores, ``objective="accuracy_score"``), exact
  (``tol=None``: equal rates, randomised thresholds) and relaxed (``tol`` = the constraint's tolerance), fitted on
  the search rows and predicted on the certification rows (``random_state=0``). It gives no certificate.

Each of five seeds splits the held-out rows differently (the model is trained once). Printed per method: the mean and
standard deviation over the seeds of the accuracy and of the gap on the certification rows, how often |gap| is under
the tolerance there, and how often our certificate certified. Run: ``.venv/bin/python bench/repair.py
[--markdown]`` (about two minutes on 2 shared cores). Not a test.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

import fairaudit
from fairaudit import data, models
from fairaudit.core.inputs import Inputs, split_audited
from fairaudit.models.features import default_features

DELTA = 0.05
SEEDS = range(5)  # the search/certification split (and the monitor's order, fairlearn's randomisation)
METHODS = ("original", "ours (auto margin)", "ours (margin 0)", "fairlearn (tol None)", "fairlearn (tol = tolerance)")
LABELS = {"demographic_parity": "demographic parity", "true_positive_rate_parity": "equal opportunity (TPR)"}
MARKDOWN = "--markdown" in sys.argv
CASES = [  # dataset, held-out share, tolerance, constraint
    ("adult", 0.25, 0.10, "demographic_parity"),
    ("adult", 0.25, 0.10, "true_positive_rate_parity"),
    ("compas", 0.5, 0.15, "demographic_parity"),
    ("compas", 0.5, 0.15, "true_positive_rate_parity"),
]


def spec_text(constraint: str, tol: float) -> str:
    cond = {"demographic_parity": "", "true_positive_rate_parity": " and label == 1"}[constraint]
    gap = f'E[pred | sex == "Female"{cond}] - E[pred | sex == "Male"{cond}]'
    return f"{gap} > -{tol:g} and {gap} < {tol:g}"


class Scores(BaseEstimator, ClassifierMixin):
    """The model's score as a prefit classifier for fairlearn (X: one column, the score)."""

    def __init__(self):
        self.classes_ = np.array([0, 1])

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        s = np.asarray(X, dtype=float)[:, 0]
        return np.stack([1 - s, s], axis=1)

    def predict(self, X):
        return (np.asarray(X, dtype=float)[:, 0] > 0.5).astype(int)


def measure(decisions, labels, sex, constraint):
    decisions, labels = np.asarray(decisions).astype(int), np.asarray(labels).astype(int)
    acc = float((decisions == labels).mean())
    f, m = sex == "Female", sex == "Male"
    if constraint == "true_positive_rate_parity":
        f, m = f & (labels == 1), m & (labels == 1)
    return acc, float(decisions[f].mean() - decisions[m].mean())


def main() -> None:
    from fairlearn.postprocessing import ThresholdOptimizer

    rows = []
    for name, held_out, tol, constraint in CASES:
        ds = data.load(name)
        model = models.train(ds, "logreg", seed=0, test_size=held_out, features=default_features(ds))
        spec = spec_text(constraint, tol)
        frame, labels = ds.frame, ds.labels
        scores = model.score(frame)
        sex = frame["sex"].to_numpy(object)
        X = pd.DataFrame({"score": scores})
        runs = {m: [] for m in METHODS}
        for seed in SEEDS:
            inputs = Inputs(dataset=ds, positions=models.held_out_positions(model, ds))
            first, second = split_audited(inputs, 0.5, seed)
            y, s = labels[second], sex[second]

            def record(method, decided, verdict=None, seconds=None):
                acc, gap = measure(decided, y, s, constraint)
                runs[method].append((acc, gap, abs(gap) < tol, verdict, seconds))

            record("original", model.predict(frame.iloc[second]))
            for method, margin in (("ours (auto margin)", "auto"), ("ours (margin 0)", 0.0)):
                t0 = time.perf_counter()
                result = fairaudit.repair(ds, spec, model, seed=seed, delta=DELTA, margin=margin, split=0.5,
                                          thresholds="both")  # the halves the other methods use; per group as they
                record(method, result.model.predict(frame.iloc[second]), result.verdict, time.perf_counter() - t0)
            for method, fl_tol in (("fairlearn (tol None)", None), ("fairlearn (tol = tolerance)", tol)):
                t0 = time.perf_counter()
                opt = ThresholdOptimizer(estimator=Scores(), constraints=constraint, objective="accuracy_score",
                                         prefit=True, predict_method="predict_proba", tol=fl_tol)
                opt.fit(X.iloc[first], labels[first], sensitive_features=sex[first])
                record(method, opt.predict(X.iloc[second], sensitive_features=s, random_state=seed), None,
                       time.perf_counter() - t0)
        for method, found in runs.items():
            acc, gap, inside, verdicts, seconds = zip(*found)
            certified = sum(v == "certified" for v in verdicts)
            rows.append({"data": name, "constraint": f"{LABELS[constraint]} |gap| < {tol:g}",
                         "cert rows": len(second), "method": method,
                         "accuracy": f"{np.mean(acc):.3f} ± {np.std(acc):.3f}",
                         "gap": f"{np.mean(gap):+.3f} ± {np.std(gap):.3f}",
                         "within tolerance": f"{sum(inside)}/{len(SEEDS)}",
                         "certified (Δ = 0.05)": "—" if verdicts[0] is None else f"{certified}/{len(SEEDS)}",
                         "s per fit": "—" if seconds[0] is None else f"{np.mean(seconds):.2f}"})
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    print(f"logreg (fairaudit, default features, seed 0); each of {len(SEEDS)} seeds splits the held-out rows in half: "
          "search rows (what every method fits on) and certification rows (every figure below: mean ± sd over seeds)")
    print(markdown(table) if MARKDOWN else table.to_string(index=False))


def markdown(table: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
