"""A threshold repair saved as a model: the decision is ``score ≥ t[group of the row]`` over a base model's score.

``ThresholdModel`` wraps a base ``Model`` (which must have a score): its ``score`` is the base model's, its
``predict`` compares that score with the threshold of the row's group (the values of the ``group_by`` columns);
a row whose group value is missing (NaN, or the category ``"?"``) or was not given a threshold is decided by the
``default`` threshold. ``fairaudit repair`` (``fairaudit.repair``) makes one; it is audited or compared like any model.

**The file** is JSON (nothing in it can run code): ``format`` (fairaudit's model marker), ``kind: "thresholds"``,
the base model's file as a path relative to the JSON file (in its folder or below: a path that leads elsewhere is
refused, so a file from someone else cannot make the loader read arbitrary files) and the sha256 of its bytes,
``group_by``, one ``{"values": [...], "threshold": t}`` per group (the values as text, one per ``group_by`` column)
and the ``default`` threshold. Loading it (``fairaudit.models.load``) reads the base model file from beside it, with
the same trust, and refuses it when its hash differs from the recorded one (the thresholds were chosen for that very
model) or when it is itself a thresholds file — decided from its bytes before it is loaded, so that a chain of
repairs, each naming the next, is refused at its first link, never followed.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from fairaudit.base.errors import ModelError
from fairaudit.models.base import FORMAT, FORMAT_VERSION, Model, canonical_json, sha256, write_atomic

KIND = "thresholds"
MISSING_VALUES = ("?",)  # a categorical column's missing value (``fairaudit.data.MISSING``), besides NaN
MAX_FILE_BYTES = 4 * 1024 * 1024  # a thresholds file is a few hundred bytes; more is not one
MAX_GROUPS = 10_000


def group_label(values) -> str:
    """The name of a group: its value of each ``group_by`` column, as text, joined by ", "."""
    return ", ".join(str(v) for v in values)


def value_text(value) -> str | None:
    """A group value as the file stores it (text), or None when it is missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT:
        return None
    text = str(value)
    return None if text in MISSING_VALUES else text


def group_labels(frame: pd.DataFrame, group_by) -> np.ndarray:
    """Each row's group name (``group_label`` of its values of the ``group_by`` columns), None where a value is
    missing (object array)."""
    out = None
    for name in group_by:
        if name not in frame.columns:
            raise ModelError(f"the group column {name!r} is not in the data")
        codes, uniques = pd.factorize(frame[name], use_na_sentinel=True)
        names = np.array([value_text(u) for u in uniques] + [None], dtype=object)
        part = names[codes]  # code -1 (NaN) takes the last entry: None
        if out is None:
            out = part
        else:
            gone = pd.isna(out) | pd.isna(part)
            out = np.array([None if g else f"{a}, {b}" for a, b, g in zip(out, part, gone)], dtype=object)
    return np.full(len(frame), None, dtype=object) if out is None else out


def row_thresholds(labels: np.ndarray, thresholds: dict, default: float) -> np.ndarray:
    """Each row's threshold: its group's (``thresholds``: group name → threshold), else ``default``."""
    out = np.full(len(labels), float(default))
    for name, value in thresholds.items():
        out[labels == name] = float(value)
    return out


class ThresholdModel(Model):
    """``score`` = the base model's score; ``predict`` = ``score ≥`` the threshold of the row's group (module doc)."""

    kind = KIND

    def __init__(self, base: Model, group_by, thresholds: dict, default: float, *, base_path=None,
                 base_sha256: str | None = None, note: str = "", chosen_on: dict | None = None):
        if not hasattr(base, "score"):
            raise ModelError(f"a threshold repair needs a model with scores; {base.describe()} has none")
        self.base = base
        self.group_by = [str(c) for c in group_by]
        self.thresholds = {str(k): float(v) for k, v in thresholds.items()}
        self.default = float(default)
        self.base_path = None if base_path is None else str(base_path)
        self.base_sha256 = base_sha256
        self.note = note
        self.feature_names = list(base.feature_names) + [c for c in self.group_by if c not in base.feature_names]
        self.metrics = {}
        # the base model's params (its training record: which rows it did not train on) plus the thresholds
        # the rows its thresholds were chosen on (``fairaudit.models.training.held_out_positions`` leaves them out of
        # an audit of the same dataset): the dataset's content hash and size, the split's share and seed, and
        # whether the split was of all rows ("all") or of the base model's held-out rows ("held-out")
        self.chosen_on = dict(chosen_on) if chosen_on else None
        self.params = {**(getattr(base, "params", None) or {}),
                       "thresholds": {"group_by": self.group_by, "groups": self.thresholds, "default": self.default,
                                      "base": base.content_hash},
                       **({"chosen_on": self.chosen_on} if self.chosen_on else {})}

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.base.score(frame), dtype=np.float64)

    def decide(self, frame: pd.DataFrame, scores: np.ndarray) -> np.ndarray:
        """The decisions on ``frame``'s rows given their ``scores``."""
        labels = group_labels(frame, self.group_by)
        return (np.asarray(scores, dtype=float) >= row_thresholds(labels, self.thresholds, self.default)) \
            .astype(np.int8)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.decide(frame, self.score(frame))

    def score_and_predict(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        scores = self.score(frame)
        return scores, self.decide(frame, scores)

    @property
    def content_hash(self) -> str:
        return sha256(canonical_json({"kind": KIND, "base": self.base.content_hash, "group_by": self.group_by,
                                      "thresholds": self.thresholds, "default": self.default}))

    def threshold_text(self) -> str:
        shown = ", ".join(f"{name} ≥ {t:.3g}" for name, t in sorted(self.thresholds.items()))
        if not self.thresholds:
            return f"one threshold ≥ {self.default:.3g} for every row"
        return f"thresholds by {', '.join(self.group_by)}: {shown}; other rows ≥ {self.default:.3g}"

    def describe(self) -> str:
        # the base's held-out accuracy is not this model's: it is left out (the repair reports its own)
        base = self.base.describe()
        accuracy = (getattr(self.base, "metrics", None) or {}).get("accuracy")
        if accuracy is not None:
            base = base.replace(f", held-out accuracy {accuracy:.3f}", "")
        return f"threshold repair of {base} ({self.threshold_text()}; sha256 {self.content_hash[:12]})"

    def payload(self, path) -> dict:
        """The JSON written to ``path``: the base model file relative to ``path``'s folder."""
        if self.base_path is None or self.base_sha256 is None:
            raise ModelError("this threshold repair's base model has no file: save the base model first")
        folder = Path(os.path.abspath(path)).parent
        relative = os.path.relpath(os.path.abspath(self.base_path), folder)
        groups = [{"values": name.split(", ") if len(self.group_by) > 1 else [name], "threshold": t}
                  for name, t in sorted(self.thresholds.items())]
        return {"format": FORMAT, "version": FORMAT_VERSION, "kind": KIND,
                "base": {"path": Path(relative).as_posix(), "sha256": self.base_sha256,
                         "model": self.base.describe()},
                "group_by": self.group_by, "groups": groups, "default": self.default, "note": self.note,
                **({"chosen_on": self.chosen_on} if self.chosen_on else {})}

    def save(self, path) -> None:
        text = json.dumps(self.payload(path), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        write_atomic(path, text.encode("utf-8"))


def inside(path, folder) -> bool:
    """Whether ``path`` (links resolved) lies in ``folder`` or below."""
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return True


def file_sha256(path) -> str:
    """The sha256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_payload(data: bytes) -> dict | None:
    """The decoded thresholds file, or None when ``data`` is not one (any other content)."""
    if len(data) > MAX_FILE_BYTES or not data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return None
    try:
        payload = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None
    if isinstance(payload, dict) and payload.get("format") == FORMAT and payload.get("kind") == KIND:
        return payload
    return None


def is_thresholds_file(path) -> bool:
    """Whether the file at ``path`` is a thresholds file (``read_payload`` of at most ``MAX_FILE_BYTES`` + 1 bytes: a
    longer file is not one)."""
    with open(path, "rb") as fh:
        return read_payload(fh.read(MAX_FILE_BYTES + 1)) is not None


def from_payload(payload: dict, path, load_base) -> ThresholdModel:
    """The ``ThresholdModel`` of a thresholds file at ``path``; ``load_base(path)`` loads its base model file."""
    name = Path(path).name
    try:
        base = payload["base"]
        relative, recorded = str(base["path"]), str(base["sha256"])
        group_by = [str(c) for c in payload["group_by"]]
        groups = payload["groups"]
        default = float(payload["default"])
        if not isinstance(groups, list) or len(groups) > MAX_GROUPS:
            raise ValueError("groups")
        thresholds = {}
        for entry in groups:
            values = [str(v) for v in entry["values"]]
            if len(values) != len(group_by):
                raise ValueError("a group's values do not match group_by")
            thresholds[group_label(values)] = float(entry["threshold"])
    except (KeyError, TypeError, ValueError) as err:
        raise ModelError(f"{name} is a damaged threshold repair file ({err})") from None
    if not all(math.isfinite(t) for t in [default, *thresholds.values()]):
        raise ModelError(f"{name} is a damaged threshold repair file (a threshold is not a finite number)")
    folder = Path(os.path.abspath(path)).parent
    base_file = folder / relative
    if Path(relative).is_absolute() or not inside(base_file, folder):
        raise ModelError(f"{name}: its base model path {relative} leads outside its folder; a threshold repair names a "
                         "base model file in its own folder or below")
    if not base_file.is_file():
        raise ModelError(f"{name}: its base model file {relative} is not beside it ({base_file})")
    found = file_sha256(base_file)
    if found != recorded:
        raise ModelError(f"{name}: its base model file {relative} has changed since the thresholds were chosen "
                         f"(sha256 {found[:12]}, recorded {recorded[:12]}); repair the new model again")
    if is_thresholds_file(base_file):  # refused here, before it is loaded: a chain of repairs is never followed
        raise ModelError(f"{name}: its base model {relative} is itself a threshold repair; repair the original model")
    base_model = load_base(base_file)
    if isinstance(base_model, ThresholdModel):
        raise ModelError(f"{name}: its base model {relative} is itself a threshold repair; repair the original model")
    chosen = payload.get("chosen_on")
    if chosen is not None:
        try:
            chosen = {"content_hash": str(chosen["content_hash"]), "rows": int(chosen["rows"]),
                      "share": float(chosen["share"]), "seed": int(chosen["seed"]),
                      "base_rows": str(chosen.get("base_rows", "held-out"))}
        except (KeyError, TypeError, ValueError) as err:
            raise ModelError(f"{name} is a damaged threshold repair file (chosen_on: {err})") from None
        if not 0 < chosen["share"] < 1:
            raise ModelError(f"{name} is a damaged threshold repair file (chosen_on: share)")
    return ThresholdModel(base_model, group_by, thresholds, default, base_path=str(base_file), base_sha256=found,
                          note=str(payload.get("note") or ""), chosen_on=chosen)
