"""A row's score does not depend on the batch it is scored in (issue 43: the routes cut the same rows into different
chunks — a file's, a Dask partition's, a live poll's — and a score near a threshold must not move by a rounding
step between them)."""
import numpy as np
import pandas as pd

from fairaudit.models.forms import LinearForm


def _margins_in_pieces(form, X, cuts):
    return np.concatenate([form.margin(X[a:b]) for a, b in zip(cuts[:-1], cuts[1:])])


def test_a_linear_margin_is_the_same_bits_in_any_batch():
    rng = np.random.default_rng(0)
    for width in (3, 7, 16, 33):
        X = rng.normal(size=(257, width)) * rng.choice([1e-3, 1.0, 1e3], size=width)
        form = LinearForm.__new__(LinearForm)
        object.__setattr__(form, "weights", rng.normal(size=width))
        object.__setattr__(form, "bias", float(rng.normal()))
        whole = form.margin(X)
        for _ in range(20):
            cuts = np.unique(np.concatenate([[0, len(X)], rng.integers(0, len(X), size=rng.integers(1, 12))]))
            assert np.array_equal(_margins_in_pieces(form, X, cuts), whole)
        order = rng.permutation(len(X))
        assert np.array_equal(form.margin(X[order]), whole[order])
        assert np.array_equal(form.margin(np.asfortranarray(X)), whole)
