"""Training reports progress through fairaudit.base.progress (issue 13): per gbm boosting iteration, per mlp batch, one
step for logreg/tree; the model is the same with or without a receiver; a receiver returning False cancels."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from fairaudit import models
from fairaudit.base.errors import FairauditError, ModelError
from fairaudit.base.progress import Progress
from tests.test_models import synthetic

SMALL = {"gbm": {"max_iter": 20}, "mlp": {"epochs": 3, "batch_size": 64}, "logreg": {}, "tree": {}}


@pytest.fixture(scope="module")
def data():
    return synthetic(600)


class Recorder:
    """An ``on_progress`` that records what it is told and answers False from report number ``stop_at`` on."""

    def __init__(self, stop_at: int | None = None):
        self.seen: list[tuple[float, float | None, str, str]] = []
        self.stop_at = stop_at

    def __call__(self, progress: Progress):
        assert isinstance(progress, Progress)
        self.seen.append((progress.done, progress.total, progress.unit, progress.text()))
        return self.stop_at is None or len(self.seen) < self.stop_at


def fitted_state(model) -> bytes:
    """Everything that defines a fitted model: the pickled estimator, or the network's weights."""
    if model.kind == "mlp":
        state = model.net.state_dict()
        return b"".join(name.encode() + state[name].numpy().tobytes() for name in sorted(state))
    return pickle.dumps(model.estimator, protocol=5)


@pytest.mark.parametrize("kind, unit, reports", [("gbm", "boosting iterations", 21), ("mlp", "epochs", 3 * 8 + 1),
                                                 ("logreg", "steps", 2), ("tree", "steps", 2)])
def test_progress_rises_to_the_total(data, kind, unit, reports):
    recorder = Recorder()
    models.train(data, kind, seed=0, on_progress=recorder, **SMALL[kind])
    done = [d for d, _, _, _ in recorder.seen]
    assert len(done) == reports  # gbm: 0..20 iterations; mlp: 0 then each of 8 batches (450 rows / 64) x 3 epochs
    assert done[0] == 0 and all(b > a for a, b in zip(done, done[1:]))
    assert done[-1] == recorder.seen[-1][1] == {"gbm": 20, "mlp": 3}.get(kind, 1)
    assert {u for _, _, u, _ in recorder.seen} == {unit}
    assert recorder.seen[-1][3] == f"Training {kind}: 100%"


def test_gbm_that_stops_early_ends_at_100_percent(data):
    recorder = Recorder()
    model = models.train(data, "gbm", seed=0, on_progress=recorder, early_stopping=True, max_iter=200)
    n = model.estimator.n_iter_
    assert n < 200  # early stopping ended it
    assert [d for d, *_ in recorder.seen] == list(range(n + 1))
    assert recorder.seen[-2][1] == 200 and recorder.seen[-1][1] == n


@pytest.mark.parametrize("kind, params", [
    ("gbm", {}),
    ("gbm", {"max_iter": 60, "early_stopping": True}),  # internal validation split + early stopping
    ("gbm", {"max_iter": 60, "early_stopping": True, "scoring": "accuracy", "learning_rate": 0.5}),
    ("gbm", {"max_iter": 30, "class_weight": "balanced"}),
    ("mlp", {"epochs": 2}),
    ("logreg", {}),
    ("tree", {}),
])
def test_the_model_is_the_same_with_or_without_a_receiver(data, kind, params):
    plain = models.train(data, kind, seed=1, **params)
    watched = models.train(data, kind, seed=1, on_progress=Recorder(), **params)
    assert fitted_state(watched) == fitted_state(plain)
    assert watched.content_hash == plain.content_hash and watched.params == plain.params
    frame = data.frame
    assert np.array_equal(watched.score(frame), plain.score(frame))
    assert np.array_equal(watched.predict(frame), plain.predict(frame))
    if kind == "gbm":  # nothing of the progress machinery is left in the estimator
        assert watched.estimator.get_params() == plain.estimator.get_params()
        assert type(watched.estimator._loss) is type(plain.estimator._loss)


@pytest.mark.parametrize("kind", ["gbm", "mlp"])
def test_saved_models_are_the_same_with_or_without_a_receiver(data, kind, tmp_path):
    paths = []
    for name, receiver in (("plain", None), ("watched", Recorder())):
        paths.append(tmp_path / f"{name}.{'pt' if kind == 'mlp' else 'skops'}")
        models.train(data, kind, seed=2, on_progress=receiver, **SMALL[kind]).save(paths[-1])
    plain, watched = (models.load(p) for p in paths)
    assert watched.content_hash == plain.content_hash
    assert fitted_state(watched) == fitted_state(plain)


@pytest.mark.parametrize("kind, stop_at", [("gbm", 5), ("mlp", 4), ("logreg", 1), ("tree", 2)])
def test_a_receiver_returning_false_cancels_training(data, kind, stop_at):
    recorder = Recorder(stop_at=stop_at)
    with pytest.raises(models.TrainingCancelled, match="^training cancelled$") as caught:
        models.train(data, kind, seed=0, on_progress=recorder, **SMALL[kind])
    assert isinstance(caught.value, ModelError) and isinstance(caught.value, FairauditError)
    assert len(recorder.seen) == stop_at  # stopped at that report: nothing ran on to tell it more


def test_cancelling_gbm_leaves_the_next_training_unaffected(data):
    with pytest.raises(models.TrainingCancelled):
        models.train(data, "gbm", seed=0, on_progress=Recorder(stop_at=3), **SMALL["gbm"])
    again = models.train(data, "gbm", seed=0, **SMALL["gbm"])
    assert again.estimator.get_params()["loss"] == "log_loss"
    assert fitted_state(again) == fitted_state(models.train(data, "gbm", seed=0, **SMALL["gbm"]))


def test_mlp_progress_does_not_touch_the_global_torch_generator(data):
    before = torch.random.get_rng_state()
    models.train(data, "mlp", seed=0, on_progress=Recorder(), **SMALL["mlp"])
    assert torch.equal(torch.random.get_rng_state(), before)
