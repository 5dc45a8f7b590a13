"""The stratified, seeded train/held-out split of ``fairaudit.models.training.split_rows``, in numpy alone.

It draws exactly the positions ``sklearn.model_selection.train_test_split(np.arange(n), test_size=share,
random_state=seed, stratify=y)`` returns (scikit-learn's StratifiedShuffleSplit, the version pinned in
requirements.txt), from the same random numbers in the same order, so that a model trained before and after this
module holds out the same rows; importing scikit-learn for it cost about a second of every CLI audit (issue 30).
``tests/test_stratified_split.py`` compares the two on hundreds of cases and fails the day a scikit-learn
release changes its split.

The recipe, one ``np.random.RandomState(seed)`` throughout:

1. sizes: ``n_test = ceil(share × n)``, ``n_train = n − n_test``; each must hold at least one row per class;
2. the classes are the sorted distinct labels; each must have at least 2 rows;
3. how many training rows each class gets: the approximate mode of the multivariate hypergeometric
   (``class_counts / n × n_train`` floored, the rows still missing given to the largest fractional remainders, ties
   broken by ``choice`` without replacement), then the same for the held-out rows from what each class has left;
4. per class in order: a ``permutation`` of its rows (in their original order); the first ones train, the next ones
   are held out;
5. the training positions are permuted once more, then the held-out positions.
"""
from __future__ import annotations

import math

import numpy as np

from fairaudit.base.errors import ModelError


def split_sizes(n: int, share: float) -> tuple[int, int]:
    """``(training rows, held-out rows)`` of a split holding out ``share`` of ``n`` rows (rounded up)."""
    if not 0 < share < 1:
        raise ModelError(f"the held-out share must be between 0 and 1, got {share}")
    n_test = math.ceil(share * n)
    n_train = n - n_test
    if n_train <= 0:
        raise ModelError(f"cannot hold out {share:g} of {n} rows and keep any row to train on")
    return n_train, n_test


def approximate_mode(class_counts: np.ndarray, draws: int, rng: np.random.RandomState) -> np.ndarray:
    """How many of ``draws`` rows each class gets, proportionally to ``class_counts`` (step 3 of the module doc)."""
    continuous = class_counts / class_counts.sum() * draws
    floored = np.floor(continuous)
    missing = int(draws - floored.sum())
    if missing > 0:
        remainder = continuous - floored
        for value in np.sort(np.unique(remainder))[::-1]:
            (tied,) = np.where(remainder == value)
            now = min(len(tied), missing)
            floored[rng.choice(tied, size=now, replace=False)] += 1
            missing -= now
            if missing == 0:
                break
    return floored.astype(int)


def stratified_split(y: np.ndarray, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(training positions, held-out positions)`` of the rows with labels ``y`` (module doc); ModelError when
    the rows cannot be split so (a class with fewer than 2 rows, too few rows for every class on both sides)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ModelError(f"the labels to stratify on must be one column, got an array of shape {y.shape}")
    n = len(y)
    n_train, n_test = split_sizes(n, float(share))
    classes, class_of_row, class_counts = np.unique(y, return_inverse=True, return_counts=True)
    if class_counts.min() < 2:
        rare = classes[class_counts < 2].tolist()
        raise ModelError(f"cannot split {n} rows stratified on the label: the label value(s) {rare} occur only "
                         "once, and each value needs at least 2 rows")
    for side, size in (("training", n_train), ("held-out", n_test)):
        if size < len(classes):
            raise ModelError(f"cannot split {n} rows stratified on the label: the {side} part would have {size} "
                             f"row(s), fewer than the {len(classes)} label values")
    try:
        rng = np.random.RandomState(int(seed))
    except ValueError:
        raise ModelError(f"the split's seed must be an integer from 0 to 2**32 - 1, got {seed}") from None
    rows_of_class = np.split(np.argsort(class_of_row, kind="stable"), np.cumsum(class_counts)[:-1])
    to_train = approximate_mode(class_counts, n_train, rng)
    to_test = approximate_mode(class_counts - to_train, n_test, rng)
    train, test = [], []
    for rows, k_train, k_test in zip(rows_of_class, to_train, to_test):
        shuffled = rows.take(rng.permutation(len(rows)), mode="clip")
        train.append(shuffled[:k_train])
        test.append(shuffled[k_train:k_train + k_test])
    train = rng.permutation(np.concatenate(train))
    test = rng.permutation(np.concatenate(test))
    return train, test
