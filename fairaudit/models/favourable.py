"""A decision among several classes read as yes/no: favourable when the class is one of the favourable classes.

``with_favourable(model, ["approve", "refer"])`` (``--favourable-class approve --favourable-class refer``) turns a model
with ``classes`` (an imported multi-class classifier) into a yes/no model whose ``pred`` is 1 where the model's class
is one of them — the role the favourable value plays for a label. Every yes/no tool then applies: the templates
(``E[pred | g]``), the scan, the verification engines' refusals stay theirs. Its score, where the model has class
probabilities, is the probability the model gives the favourable classes together (the decision stays the class the
model predicts, so it is not always "score > 0.5"; a threshold repair checks that, ``fairaudit.repairs``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError
from fairaudit.models.base import Model, sha256


def match_classes(classes, given) -> tuple:
    """The model's classes named by ``given`` (each a class or its text: "2" finds 2), in the model's order; an
    unknown or repeated one is a ``ModelError`` (with the classes listed, and a close match)."""
    from fairaudit.base.text import listing, suggestion

    given = [given] if isinstance(given, (str, int, float)) else list(given or ())
    if not given:
        raise ModelError("name at least one favourable class")
    found = []
    texts = {str(c): c for c in classes}
    for g in given:
        hit = next((c for c in classes if type(c) is type(g) and c == g), None)
        if hit is None:
            hit = texts.get(str(g).strip())
        if hit is None:
            hint = suggestion(str(g), list(texts)) or ""
            raise ModelError(f"favourable class {g!r} is not a class of the model{hint} (classes: "
                             f"{listing(repr(c) for c in classes)})")
        found.append(hit)
    return tuple(c for c in classes if c in found)


def with_favourable(model, classes) -> "FavourableClasses":
    """``model``, deciding among several classes, read as yes/no: favourable where its class is one of ``classes``
    (``fairaudit.models.with_favourable``; ``ModelError`` for a yes/no model or a class it does not have)."""
    return FavourableClasses(model, classes)


class FavourableClasses(Model):
    """``model`` (with ``classes``) read as yes/no: 1 where its class is one of ``favourable`` (module doc)."""

    def __init__(self, model, favourable):
        inner = getattr(model, "classes", None)
        if inner is None:
            raise ModelError(f"{model.describe()} decides yes/no already: favourable classes name the favourable ones "
                             "of a model with several classes")
        self.model = model
        self.favourable = match_classes(inner, favourable)
        self.kind = model.kind
        self.feature_names = list(model.feature_names)
        self.params = {**dict(getattr(model, "params", {}) or {}),
                       "favourable classes": [str(c) for c in self.favourable]}
        self.metrics = {}

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return pd.Series(np.asarray(self.model.predict(frame), dtype=object)).isin(
            list(self.favourable)).to_numpy().astype(np.int8)

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        proba = getattr(self.model, "class_probabilities", None)
        if proba is None:
            raise ModelError(f"{self.model.describe()} has no class probabilities, so no score")
        chosen = [list(self.model.classes).index(c) for c in self.favourable]
        return np.asarray(proba(frame), dtype=np.float64)[:, chosen].sum(axis=1)

    @property
    def content_hash(self) -> str:
        return sha256((self.model.content_hash + "|favourable:" + "|".join(map(repr, self.favourable))).encode())

    def describe(self) -> str:
        return f"{self.model.describe()}, favourable: {', '.join(str(c) for c in self.favourable)}"

    def save(self, path) -> None:
        raise ModelError("save the model itself; name its favourable classes again (--favourable-class)")
