"""Does fairaudit's own default logreg fit (``fairaudit.models.logistic``) decide as scikit-learn's did?

For every built-in dataset with a label, seeds 0–2, and two feature lists (every feature column: ``train``'s
default; the front ends' ``default_features``: no protected, identifier or decision column): the default ``logreg``
training (``fairaudit.models.train``, its held-out rows), then the same training by scikit-learn's ``LogisticRegression`` (solver newton-cholesky,
tol 1e-4, as fairaudit fitted it before) on the same standardised rows. Prints one row per (dataset, seed): the
held-out rows, how many decisions differ (must be 0), max |Δ coefficient| (standardised scale), max |Δ probability|
on the held-out rows, and the Newton steps. Exit status 1 if any decision differs.

    python bench/logreg_agreement.py [--seeds 0 1 2] [--only adult]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from fairaudit import data, models
from fairaudit.models.features import default_features
from fairaudit.models.sklearn_models import SklearnModel
from fairaudit.models.training import training_labels, split_rows


def sklearn_twin(dataset, model) -> SklearnModel:
    """``model`` (a default logreg) refitted by scikit-learn on the same rows, encoding and standardisation."""
    from sklearn.linear_model import LogisticRegression

    y = training_labels(dataset)
    train_idx, _ = split_rows(y, model.params["seed"], model.params["test_size"])
    X = model.scaler(model.encoding.transform(dataset.frame.iloc[train_idx]))
    estimator = LogisticRegression(**model.estimator.get_params()).fit(X, y[train_idx])
    return SklearnModel("logreg", estimator, model.encoding, model.scaler, model.params)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--only", help="only this dataset")
    args = parser.parse_args()
    print(f"| dataset | features | seed | held-out rows | decisions differing | max abs d coef | max abs d prob | Newton steps |")
    print("|---|---|---|---|---|---|---|---|")
    differing = 0
    for entry in data.info():
        if entry.label is None or (args.only and entry.name != args.only):
            continue
        dataset = data.load(entry.name)
        for label, features, seed in [(label, features, seed) for label, features in
                                      (("all", None), ("front ends'", default_features(dataset)))
                                      for seed in args.seeds]:
            model = models.train(dataset, "logreg", seed=seed, features=features)
            twin = sklearn_twin(dataset, model)
            held_out = dataset.frame.iloc[split_rows(training_labels(dataset), seed)[1]]
            ours_p, ours_d = model.score_and_predict(held_out)
            theirs_p, theirs_d = twin.score_and_predict(held_out)
            d_coef = np.abs(np.r_[model.estimator.coef_[0], model.estimator.intercept_]
                            - np.r_[twin.estimator.coef_[0], twin.estimator.intercept_]).max()
            diff = int((ours_d != theirs_d).sum())
            differing += diff
            print(f"| {entry.name} | {label} | {seed} | {len(held_out)} | {diff} | {d_coef:.2e} | "
                  f"{np.abs(ours_p - theirs_p).max():.2e} | {int(model.estimator.n_iter_[0])} |", flush=True)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
