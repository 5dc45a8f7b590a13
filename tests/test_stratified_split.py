"""``fairaudit.models.stratified_split`` draws exactly scikit-learn's stratified ``train_test_split`` (the version
pinned in requirements.txt): these tests fail the day a scikit-learn release changes its split, and the held-out
rows of every trained model with it."""
import numpy as np
import pytest
from sklearn.model_selection import train_test_split

from fairaudit.base.errors import ModelError
from fairaudit.models.stratified_split import stratified_split
from fairaudit.models.training import HELD_OUT_SHARE, split_rows

SHARES = (0.25, 0.1, 0.5, 0.33, 0.2, 0.7, 0.01)


def _cases(count: int):
    """``count`` random (labels, share, seed): sizes from 4 to 50 000, balanced to very unbalanced labels."""
    rng = np.random.default_rng(20261128)
    for i in range(count):
        n = int(rng.choice([4, 5, 7, 10, 23, 100, 999, 4_000, 50_000])) if i % 3 else int(rng.integers(4, 3_000))
        positive = float(rng.choice([0.5, 0.24, 0.05, 0.005, 0.9]))
        y = (rng.random(n) < positive).astype(np.int8)
        y[rng.choice(n, size=4, replace=False)] = [0, 0, 1, 1]  # both classes at least twice (else neither splits)
        yield y, float(rng.choice(SHARES)), int(rng.integers(0, 2**31))


def _sklearn(y, share, seed):
    try:
        return train_test_split(np.arange(len(y)), test_size=share, random_state=seed, stratify=y)
    except ValueError:
        return None


def test_the_same_rows_as_scikit_learn_on_hundreds_of_random_cases():
    compared = refused = 0
    for y, share, seed in _cases(400):
        expected = _sklearn(y, share, seed)
        if expected is None:
            with pytest.raises(ModelError):
                stratified_split(y, share, seed)
            refused += 1
            continue
        train, test = stratified_split(y, share, seed)
        assert train.dtype == expected[0].dtype and test.dtype == expected[1].dtype
        assert np.array_equal(train, expected[0]) and np.array_equal(test, expected[1]), (len(y), share, seed)
        compared += 1
    assert compared >= 300 and refused + compared == 400  # the cases are mostly splittable: a bug that refuses them all cannot pass


@pytest.mark.parametrize("seed", [0, 1, 2, 41])
def test_the_default_split_of_training_on_exactly_divisible_and_tied_counts(seed):
    # n × share exact, and class counts tied (remainders tie in the approximate mode: the random tie-break)
    for y in (np.array([0, 1] * 50), np.array([0] * 6 + [1] * 6), np.array([1, 0, 0, 1, 1, 0, 1, 0])):
        train, test = split_rows(y, seed)
        expected = train_test_split(np.arange(len(y)), test_size=HELD_OUT_SHARE, random_state=seed, stratify=y)
        assert np.array_equal(train, expected[0]) and np.array_equal(test, expected[1])


def test_every_row_lands_once_and_each_class_keeps_its_proportion():
    y = np.array([0] * 300 + [1] * 100)
    train, test = split_rows(y, 7)
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(400))
    assert len(test) == 100 and int(y[test].sum()) == 25


@pytest.mark.parametrize("y, share, says", [
    (np.array([0, 0, 0, 1]), 0.25, "occur only once"),
    (np.array([0, 0, 1, 1]), 0.75, "training part would have 1 row"),
    (np.array([0, 0, 1, 1, 1]), 0.2, "held-out part would have 1 row"),
    (np.array([0, 0, 1, 1]), 0.99, "keep any row to train on"),
])
def test_a_split_that_cannot_be_made_is_a_model_error_and_scikit_learn_refuses_it_too(y, share, says):
    assert _sklearn(y, share, 0) is None
    with pytest.raises(ModelError, match=says):
        stratified_split(y, share, 0)


def test_the_default_path_does_not_import_scikit_learn():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from fairaudit.models.training import split_rows; "
            "split_rows(np.array([0, 1] * 20), 3); print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
