"""One model, whatever the command: how a model of a kind is trained on a dataset here, decided in one place.

Every route that trains a model — ``fairaudit audit|scan|compare|repair --model KIND``, ``fairaudit train``, the
library's ``fairaudit.audit(model="logreg")`` (and ``scan``, ``compare``, ``repair``, ``confirm``) and the
dashboard's Model page — calls ``train_model``, so the same dataset (its rows and roles), kind, held-out share and
seed give the same model, audited on the same rows:

* **features** (``recipe``): the columns the user chose, else ``fairaudit.models.features.default_features`` —
  every column but the label, the dataset's protected attributes (unless ``include_protected``), its logged
  decisions and outcomes, and identifier-like columns. The protected attributes are the dataset's roles: a route
  that names them (``--protected``, the Data page, a scan's attributes) gives the dataset those roles first;
* **split**: stratified on the label, ``held_out_share`` of the rows held out (``HELD_OUT_SHARE`` unless changed),
  seeded with ``seed`` (``fairaudit.models.training.split_rows``, ``fairaudit.models.stratified_split``);
* **learner**: seeded with the same ``seed``; read back from the model cache when asked (``use_cache``,
  ``fairaudit.models.cache``: the very model a new fit gives).

``HeldOut`` is the one record of which rows such a model is audited on (the file, the share, the seed, the count);
every output cites it (``held_out``; a result's ``rows`` entry is ``HeldOut.record()``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from fairaudit.base.progress import OnProgress
from fairaudit.models.base import Model
from fairaudit.models.training import HELD_OUT_SHARE, check_kind


@dataclass(frozen=True)
class Recipe:
    """What decides a model trained here besides the data: its ``kind``, the ``features`` it reads, the share of the
    rows held out from training (``held_out_share``) and the ``seed`` of the split and of the learner."""

    kind: str
    features: tuple[str, ...]
    held_out_share: float = HELD_OUT_SHARE
    seed: int = 0


def recipe(dataset, kind: str, *, seed: int = 0, held_out_share: float = HELD_OUT_SHARE,
           features: Sequence[str] | None = None, include_protected: bool = False) -> Recipe:
    """The ``Recipe`` of a model of ``kind`` trained on ``dataset`` (module doc): ``features`` when given, else the
    default features of the dataset's roles (its protected attributes only with ``include_protected``)."""
    from fairaudit.models.features import default_features

    chosen = default_features(dataset, include_protected=include_protected) if features is None else features
    return Recipe(check_kind(kind), tuple(chosen), float(held_out_share), int(seed))


def train_model(dataset, kind: str, *, seed: int = 0, held_out_share: float = HELD_OUT_SHARE,
                features: Sequence[str] | None = None, include_protected: bool = False, exclude: Sequence[str] = (),
                use_cache: bool = False, on_progress: OnProgress = None, **params) -> Model:
    """Train a model of ``kind`` on ``dataset`` by the one rule (module doc; ``recipe``): the only way a route
    trains a model. ``exclude``: columns removed from the features (``fairaudit train --exclude``); ``params`` go
    to the learner; ``on_progress`` as ``fairaudit.models.train``'s. ``use_cache``: read the same training back
    from the model cache (and store it there), the very model a fit gives."""
    from fairaudit.models.cache import cached_train

    chosen = recipe(dataset, kind, seed=seed, held_out_share=held_out_share, features=features,
                    include_protected=include_protected)
    if exclude:
        params["exclude"] = list(exclude)
    return cached_train(dataset, chosen.kind, use_cache=use_cache, seed=chosen.seed,
                        test_size=chosen.held_out_share, features=list(chosen.features), on_progress=on_progress,
                        **params)


@dataclass(frozen=True)
class HeldOut:
    """The rows a model trained here is audited on: the held-out part of its split of a dataset — ``count`` of the
    ``total`` rows of ``dataset`` (its data hash ``content_hash``), a share ``share`` held out, split with ``seed``.
    The one record every output cites: ``text`` in words, ``record()`` as a result's ``rows`` entry."""

    dataset: str
    total: int
    share: float
    seed: int
    count: int
    content_hash: str | None = None

    @property
    def text(self) -> str:
        return (f"{self.count:,} held-out rows of {self.dataset} (held-out share {self.share * 100:g}% of its "
                f"{self.total:,} rows, split seed {self.seed}: the rows the model was not trained on)")

    def record(self) -> dict:
        """The ``rows`` entry of a result (``fairaudit.core.inputs.audited_rows``) for these rows."""
        return {"policy": "held-out", "audited": self.count, "total": self.total, "held_out_share": self.share,
                "split_seed": self.seed, "text": self.text}


def held_out(model, dataset) -> HeldOut | None:
    """The ``HeldOut`` record of ``model`` on ``dataset``: the rows it was not trained on; None when fairaudit did
    not train it on this very dataset (``fairaudit.models.training.held_out_positions``) or it is a threshold
    repair (whose audited rows are the certification part of its own split)."""
    from fairaudit.models.training import chosen_on_matches, held_out_positions

    params = getattr(model, "params", None) or {}
    if chosen_on_matches(params.get("chosen_on"), dataset):
        return None
    positions = held_out_positions(model, dataset)
    if positions is None:
        return None
    return HeldOut(dataset.name, len(dataset), float(params["test_size"]), int(params["seed"]), int(len(positions)),
                   dataset.content_hash)
