"""A cache of trained models, so that a pipeline that runs ``fairaudit audit --model logreg`` on the same data again
does not fit the same model again (issue 30: the fit is most of such a call).

``cached_train(dataset, kind, **train_args)`` returns ``fairaudit.models.train(dataset, kind, **train_args)``,
read from the cache when the same training ran before. An entry is keyed (``cache_key``) by everything the fitted
model depends on: the data's content hash, its label and favourable value, the kind, the seed, the held-out share,
the features and the learner's parameters, and the versions of fairaudit, Python and the libraries that fit it
(numpy, scipy, scikit-learn, torch, skops) and the machine's architecture. A hit gives the very model a fit would
(the same coefficients to the bit, the same held-out metrics: ``tests/test_model_cache.py``).

**Where.** ``$FAIRAUDIT_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/fairaudit``, else ``~/.cache/fairaudit``;
the models are in its ``models/`` folder, one file per key. ``--no-cache`` (the CLI) or ``FAIRAUDIT_CACHE=off``
turns the cache off: every call trains, nothing is read or written. Only fits that took at least
``MIN_FIT_SECONDS`` of CPU time are stored: reading a model file back costs about as much as a quick fit (its reader
imports scikit-learn whole), so caching those would make both the first and the later calls slower.

**Safe.** An entry is a model file in fairaudit's own safe format (``Model.save``: skops for scikit-learn kinds,
a torch ``state_dict`` + JSON for mlp; never a pickle) and is read as any model file is (``fairaudit.models.load``:
the format from the content, zip bounds, skops's trusted types only), then checked against the training asked for
(kind, seed, held-out share, features, the data's hash, the parameters). An entry that fails any of this —
truncated, corrupted, tampered with, from another version — is ignored and replaced by a fresh fit. Entries are
written through a temporary file and a rename (never half a file), only inside the cache folder (never over an
input), and the folder is kept under ``MAX_BYTES`` by removing the least recently used entries. A cache that
cannot be written (read-only home, full disk) just trains, as without it.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

from fairaudit.base.errors import FairauditError
from fairaudit.models.base import Model, canonical_json, sha256

ENV_DIR = "FAIRAUDIT_CACHE_DIR"
ENV_SWITCH = "FAIRAUDIT_CACHE"  # "off" (or 0, no, false) turns the cache off
MAX_BYTES = 256 * 2**20  # the models folder is kept under this size (least recently used entries go first)
SUFFIX = ".model"
# a fit that took less CPU time than this is not stored: reading an entry back imports its reader (skops imports
# all of scikit-learn, ~3 CPU s on 2 shared cores: issue 30's measurement), so a quicker fit gains nothing from it
MIN_FIT_SECONDS = 5.0
# the libraries a fit depends on: a new version of any may fit other numbers, so it is another key
LIBRARIES = ("fairaudit", "numpy", "scipy", "scikit-learn", "torch", "skops")
# fairaudit's own fitting defaults (``fairaudit.models.sklearn_models``): raised when they change, so that a model
# fitted under the former ones is not read back for a training that would now fit another one (3: the default
# logreg is fairaudit's own Newton fit, ``fairaudit.models.logistic``)
FIT_DEFAULTS_VERSION = 3


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "").strip().lower() not in ("off", "0", "no", "false")


def cache_dir() -> Path:
    """The folder of the cache (module doc); it need not exist."""
    given = os.environ.get(ENV_DIR)
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "fairaudit"


def models_dir() -> Path:
    return cache_dir() / "models"


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _request(dataset, kind: str, train_args: dict) -> dict:
    """What the fitted model depends on, as plain JSON (the key's content)."""
    return {"dataset": dataset.content_hash, "rows": len(dataset), "label": dataset.schema.label,
            "favourable": str(dataset.schema.favourable), "kind": kind, "train": train_args,
            "python": sys.version, "machine": platform.machine(), "fit_defaults": FIT_DEFAULTS_VERSION,
            "versions": {name: _version(name) for name in LIBRARIES}}


def cache_key(dataset, kind: str, **train_args) -> str:
    """The key of a training (``fairaudit.models.train``'s arguments), a hex digest."""
    return sha256(canonical_json(_request(dataset, kind, train_args)))


def cached_train(dataset, kind: str, *, use_cache: bool = True, **train_args) -> Model:
    """``fairaudit.models.train(dataset, kind, **train_args)``, from the cache when it holds that training (module
    doc); ``use_cache=False`` (or ``FAIRAUDIT_CACHE=off``): train, as without a cache. ``train_args`` must be
    plain JSON (seed, test_size, features, exclude, the learner's parameters) except ``on_progress``, which is
    told of a fit and not part of the key."""
    from fairaudit.models.training import train

    on_progress = train_args.pop("on_progress", None)
    if not (use_cache and enabled()):
        return train(dataset, kind, on_progress=on_progress, **train_args)
    try:
        key = cache_key(dataset, kind, **train_args)
    except (TypeError, ValueError):  # arguments that are not plain JSON: train will say what is wrong
        return train(dataset, kind, on_progress=on_progress, **train_args)
    path = models_dir() / f"{key}{SUFFIX}"
    model = _read(path, dataset, kind, train_args)
    if model is not None:
        return model
    started = time.process_time()
    model = train(dataset, kind, on_progress=on_progress, **train_args)
    if time.process_time() - started >= MIN_FIT_SECONDS:
        _write(path, model)
    return model


def _read(path: Path, dataset, kind: str, train_args: dict) -> Model | None:
    """The model in the entry ``path`` when it is a valid model file of this very training, else None."""
    from fairaudit.models.storage import load

    if not path.is_file():
        return None
    try:
        model = load(path)  # as any model file: safe formats only, never a pickle
    except Exception:  # noqa: BLE001 — whatever a damaged file makes its reader raise: the entry is not used
        return None
    if not _matches(model, dataset, kind, train_args):
        return None
    try:
        os.utime(path)  # recently used: the last to be removed
    except OSError:
        pass
    return model


def _matches(model: Model, dataset, kind: str, train_args: dict) -> bool:
    """Whether ``model`` records the training asked for (its params hold what ``train`` recorded)."""
    params = getattr(model, "params", None)
    if getattr(model, "kind", None) != kind or not isinstance(params, dict):
        return False
    record = params.get("trained_on")
    if not isinstance(record, dict) or record.get("content_hash") != dataset.content_hash \
            or record.get("rows") != len(dataset) or record.get("label") != dataset.schema.label \
            or record.get("favourable") != str(dataset.schema.favourable):
        return False
    checks = {"seed": "seed", "test_size": "test_size", "exclude": "exclude"}
    for arg, recorded in checks.items():
        if arg in train_args and _plain(params.get(recorded)) != _plain(train_args[arg]):
            return False
    if train_args.get("features") is not None:
        wanted = [f for f in dict.fromkeys(train_args["features"]) if f not in train_args.get("exclude", ())]
        if params.get("features") != wanted:
            return False
    learner = {k: v for k, v in train_args.items() if k not in ("seed", "test_size", "exclude", "features")}
    return all(_plain(params.get(k)) == _plain(v) for k, v in learner.items())


def _plain(value):
    """``value`` as JSON sees it (a tuple is a list; 0.25 and 0.25 compare equal)."""
    return json.loads(json.dumps(value))


def _write(path: Path, model: Model) -> None:
    """Store ``model`` as the entry ``path`` (atomically), then keep the folder under ``MAX_BYTES``; a cache that
    cannot be written is no error (the model is already trained)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        model.save(path)
    except (FairauditError, OSError):
        return
    prune(path.parent, keep=path)


def prune(folder: Path, max_bytes: int = MAX_BYTES, keep: Path | None = None) -> None:
    """Remove the least recently used entries of ``folder`` until the rest take at most ``max_bytes`` (``keep``,
    the entry just written, stays). Only files named as entries are touched."""
    entries = []
    for entry in folder.glob(f"*{SUFFIX}"):
        try:
            if entry.is_file() and not entry.is_symlink():
                stat = entry.stat()
                entries.append((stat.st_mtime, stat.st_size, entry))
        except OSError:
            continue
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        if keep is not None and entry == keep:
            continue
        try:
            entry.unlink()
            total -= size
        except OSError:
            continue
