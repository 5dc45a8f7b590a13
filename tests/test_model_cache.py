"""Issue 30: the model cache (``fairaudit.models.cache``): a hit is the very model a fit gives, anything wrong with an
entry makes it a miss (and the entry is rebuilt), nothing is ever unpickled, the folder stays bounded."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from fairaudit import data
from fairaudit.models import cache, training
from fairaudit.models.features import default_features


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(folder))
    monkeypatch.setattr(cache, "MIN_FIT_SECONDS", 0.0)  # every fit is stored (these tests are about the entries)
    monkeypatch.delenv(cache.ENV_SWITCH, raising=False)
    return folder


@pytest.fixture(scope="module")
def german():
    return data.load("german")


def _args(dataset, **more):
    return {"seed": 0, "features": default_features(dataset), **more}


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "models").glob(f"*{cache.SUFFIX}"))


def _same(a, b, frame):
    assert a.content_hash == b.content_hash
    assert a.predict(frame).tobytes() == b.predict(frame).tobytes()
    assert a.score(frame).tobytes() == b.score(frame).tobytes()
    assert a.metrics == b.metrics and a.params == b.params


@pytest.mark.parametrize("kind", ["logreg", "tree", "gbm"])
def test_a_hit_is_the_model_a_fit_gives_to_the_bit(cache_dir, german, kind):
    fresh = training.train(german, kind, **_args(german))
    first = cache.cached_train(german, kind, **_args(german))  # a miss: fits and stores
    assert len(_entries(cache_dir)) == 1
    second = cache.cached_train(german, kind, **_args(german))  # a hit
    for model in (first, second):
        _same(fresh, model, german.frame)
    if kind == "logreg":
        assert second.estimator.coef_.tobytes() == fresh.estimator.coef_.tobytes()
        assert second.estimator.intercept_.tobytes() == fresh.estimator.intercept_.tobytes()
    assert training.held_out_positions(second, german).tolist() == training.held_out_positions(fresh, german).tolist()


def test_adult_logreg_from_the_cache_predicts_bit_for_bit(cache_dir):
    adult = data.load("adult")
    fresh = cache.cached_train(adult, "logreg", **_args(adult))
    again = cache.cached_train(adult, "logreg", **_args(adult))
    _same(fresh, again, adult.frame)


def test_a_hit_does_not_train(cache_dir, german, monkeypatch):
    cache.cached_train(german, "logreg", **_args(german))

    def no_training(*args, **kwargs):
        raise AssertionError("trained on a hit")

    monkeypatch.setattr(training, "train", no_training)
    cache.cached_train(german, "logreg", **_args(german))


def test_another_training_is_another_key(cache_dir, german):
    keys = {cache.cache_key(german, "logreg", **_args(german)), cache.cache_key(german, "tree", **_args(german)),
            cache.cache_key(german, "logreg", **_args(german, seed=1)),
            cache.cache_key(german, "logreg", **_args(german, C=0.5)),
            cache.cache_key(german, "logreg", **_args(german, features=["age", "duration_months"])),
            cache.cache_key(data.load("compas"), "logreg", **_args(german))}
    assert len(keys) == 6


@pytest.mark.parametrize("damage", ["truncated", "garbage", "flipped byte", "empty"])
def test_a_damaged_entry_is_ignored_and_rebuilt(cache_dir, german, damage):
    fresh = cache.cached_train(german, "logreg", **_args(german))
    [entry] = _entries(cache_dir)
    good = entry.read_bytes()
    bad = {"truncated": good[: len(good) // 2], "garbage": os.urandom(len(good)), "empty": b"",
           "flipped byte": good[:2000] + bytes([good[2000] ^ 0xFF]) + good[2001:]}[damage]
    entry.write_bytes(bad)
    again = cache.cached_train(german, "logreg", **_args(german))
    _same(fresh, again, german.frame)
    assert entry.read_bytes() != bad  # rebuilt
    assert cache.cached_train(german, "logreg", **_args(german)).content_hash == fresh.content_hash


class _Marker:
    def __reduce__(self):
        return (Path.touch, (Path(os.environ[cache.ENV_DIR]) / "unpickled",))


def test_a_pickle_in_the_cache_is_never_unpickled(cache_dir, german):
    fresh = cache.cached_train(german, "logreg", **_args(german))
    [entry] = _entries(cache_dir)
    entry.write_bytes(pickle.dumps(_Marker()))
    again = cache.cached_train(german, "logreg", **_args(german))
    assert not (cache_dir / "unpickled").exists()
    _same(fresh, again, german.frame)


def test_a_valid_model_of_another_training_is_not_taken(cache_dir, german):
    fresh = cache.cached_train(german, "logreg", **_args(german))
    [entry] = _entries(cache_dir)
    training.train(german, "logreg", **_args(german, seed=1)).save(entry)  # a well-formed file, the wrong model
    again = cache.cached_train(german, "logreg", **_args(german))
    _same(fresh, again, german.frame)


def test_no_cache_reads_and_writes_nothing(cache_dir, german, monkeypatch):
    cache.cached_train(german, "logreg", use_cache=False, **_args(german))
    monkeypatch.setenv(cache.ENV_SWITCH, "off")
    cache.cached_train(german, "logreg", **_args(german))
    assert not cache_dir.exists()


def test_an_unwritable_cache_just_trains(tmp_path, german, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(cache.ENV_DIR, str(blocker))
    fresh = training.train(german, "logreg", **_args(german))
    _same(fresh, cache.cached_train(german, "logreg", **_args(german)), german.frame)
    assert blocker.read_text() == "not a folder"


def test_the_folder_is_kept_under_its_size(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    for i in range(5):
        entry = folder / f"{i}{cache.SUFFIX}"
        entry.write_bytes(b"x" * 1000)
        os.utime(entry, (1000 + i, 1000 + i))
    other = folder / "notes.txt"
    other.write_bytes(b"y" * 5000)
    cache.prune(folder, max_bytes=2500, keep=folder / f"0{cache.SUFFIX}")
    # oldest first, the one just written kept, other files untouched
    assert sorted(p.name for p in folder.iterdir()) == ["0.model", "4.model", "notes.txt"]


def test_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "c"))
    assert cache.models_dir() == tmp_path / "c" / "models"
    monkeypatch.delenv(cache.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "fairaudit"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the XDG spec says
    assert cache.cache_dir() == Path.home() / ".cache" / "fairaudit"


def test_a_quick_fit_is_not_stored(tmp_path, german, monkeypatch):
    """A fit quicker than reading an entry back would be is not stored (module doc): nothing is written."""
    folder = tmp_path / "quick"
    monkeypatch.setenv(cache.ENV_DIR, str(folder))
    monkeypatch.setattr(cache, "MIN_FIT_SECONDS", 3600.0)
    cache.cached_train(german, "logreg", **_args(german))
    assert not _entries(folder)
    monkeypatch.setattr(cache, "MIN_FIT_SECONDS", 0.0)  # the same fit, stored once worth it
    cache.cached_train(german, "logreg", **_args(german))
    assert len(_entries(folder)) == 1
