"""Which columns a model is trained on by default, and which columns give the label away.

One place decides the default features of every front end (the dashboard's Model page, ``fairaudit train``, the
demo): every column except

* the label;
* the protected attributes, unless asked for (``include_protected=True``);
* the dataset's own non-features (``Schema.excluded``: logged decisions, outcomes recorded afterwards) and columns
  named like a logged decision (``decision``, ``pred``, ``prediction``, ``*_decision`` ...);
* identifier-like columns (``id_like``): one value per row, or an ``id`` name with nearly all values distinct.

``leak_warnings`` says, one sentence per column, when a single feature predicts the label almost perfectly (an
outcome in another form, or the decision being audited): a model trained on it learns the label, not the task.
The library's ``train`` itself reads whatever it is given (``features=``; by default every feature column).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

import numpy as np
import pandas as pd

ID_MIN_ROWS = 20  # fewer rows: every column may be distinct by chance, nothing is called an identifier
ID_NAMED_DISTINCT = 0.95  # a column named like an identifier is one when at least this share of values is distinct
LEAK_AGREEMENT = 0.98  # a single feature agreeing this often with the label (or its negation) gives it away
LEAK_MAX_VALUES = 20  # a categorical feature with more values is not checked value by value (see id_like)

_ID_WORDS = {"id", "ids", "uuid", "guid", "key", "index", "idx"}
_DECISION_NAME = re.compile(r"(^|_)(decision|decisions|decided|pred|preds|prediction|predictions|predicted|yhat|"
                            r"y_hat|y_pred)$", re.IGNORECASE)

REASONS = {"label": "the label", "protected": "a protected attribute",
           "excluded": "declared not a feature by the dataset: an outcome or a logged decision",
           "decision": "named like a logged decision", "id": "an identifier: a different value in nearly every row"}


def _id_name(name: str) -> bool:
    """Whether one of the name's words (split at ``_``, ``-``, spaces, dots and camelCase) is ``id``, ``key`` ..."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    return any(w.lower() in _ID_WORDS for w in re.split(r"[\s_\-.:/]+", words))


def id_like(data: pd.DataFrame | pd.Series, column: str | None = None) -> bool | list[str]:
    """Whether a column identifies rows rather than describes them; given a frame and no ``column``, the names of
    its identifier-like columns.

    A column is identifier-like when it has at least ``ID_MIN_ROWS`` non-missing values and either

    * its name says so (``id``, ``ID``, ``*_id``, ``customerId``, ``key``, ``uuid``, ``index``) and at least 95 % of
      its values are distinct; or
    * every value is distinct and it is text (a name, a code), or whole numbers that count rows (a dense run such as
      1..n or 1000..1000+n, or numbers rising with the row order).

    A float measurement that happens to be distinct in every row (an income, a score) is not an identifier.
    """
    if isinstance(data, pd.DataFrame):
        if column is not None:
            return id_like(data[column])
        return [str(c) for c in data.columns if id_like(data[c])]
    series = data.dropna()
    n = len(series)
    if n < ID_MIN_ROWS or pd.api.types.is_bool_dtype(series) or pd.api.types.is_float_dtype(series):
        return False
    distinct = series.nunique()
    if _id_name(str(data.name)) and distinct >= ID_NAMED_DISTINCT * n:
        return True
    if distinct < n:
        return False
    if pd.api.types.is_integer_dtype(series):
        values = series.to_numpy()
        span = int(values.max()) - int(values.min()) + 1
        return span <= 2 * n or bool(np.all(np.diff(values) > 0))
    return not pd.api.types.is_numeric_dtype(series)  # text (or dates as text), distinct in every row


def decision_named(name: str) -> bool:
    """Whether a column is named like a logged decision or a prediction (``decision``, ``pred``, ``y_pred`` ...)."""
    return bool(_DECISION_NAME.search(str(name)))


def left_out(dataset, include_protected: bool = False) -> dict[str, str]:
    """The columns that are not default features, each with its reason (``REASONS``'s words), in column order."""
    schema = dataset.schema
    out: dict[str, str] = {}
    for name in schema.names:
        if name == schema.label:
            out[name] = REASONS["label"]
        elif name in schema.protected and not include_protected:
            out[name] = REASONS["protected"]
        elif name in schema.excluded:
            out[name] = REASONS["excluded"]
        elif name in schema.protected:
            continue  # asked for
        elif decision_named(name):
            out[name] = REASONS["decision"]
        elif id_like(dataset.frame[name]):
            out[name] = REASONS["id"]
    return out


def default_features(dataset, include_protected: bool = False) -> list[str]:
    """What a model is trained on unless the user chooses: every column but those in ``left_out``."""
    skip = left_out(dataset, include_protected)
    return [name for name in dataset.schema.names if name not in skip]


def left_out_text(dataset, features: Iterable[str], include_protected: bool = False) -> str:
    """``"applicant_id (an identifier: …); sex (a protected attribute)"``: the columns the model does not read, with
    why (``"not chosen"`` for a default feature left out); the label is not named; ``""`` when none."""
    features = set(features)
    reasons = left_out(dataset, include_protected)
    parts = [f"{name} ({reasons.get(name, 'not chosen')})" for name in dataset.schema.names
             if name not in features and name != dataset.schema.label]
    return "; ".join(parts)


def _agreement(values: pd.Series, y: np.ndarray) -> tuple[float, str] | None:
    """The best share of rows on which a rule over this one column agrees with the 0/1 label ``y``, and the rule in
    words; None when the column is not checked (too many categories, fewer than 2 values)."""
    known = values.notna().to_numpy()
    if known.sum() < 2:
        return None
    v, y = values[known], y[known]
    n = len(v)
    if pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v) and v.nunique() > 2:
        order = np.argsort(v.to_numpy(dtype=float), kind="stable")
        sv, sy = v.to_numpy(dtype=float)[order], y[order]
        pos_left = np.cumsum(sy)[:-1]  # favourable rows at or below each cut
        left = np.arange(1, n)
        cut = np.flatnonzero(sv[1:] != sv[:-1])  # cut between distinct values only
        if not len(cut):
            return None
        pos_total = sy.sum()
        low_fav = pos_left[cut] + (n - left[cut] - (pos_total - pos_left[cut]))  # favourable at or below the cut
        high_fav = (left[cut] - pos_left[cut]) + (pos_total - pos_left[cut])  # favourable above it
        i_low, i_high = int(np.argmax(low_fav)), int(np.argmax(high_fav))
        if low_fav[i_low] >= high_fav[i_high]:
            at, best, side = i_low, low_fav[i_low], "<="
        else:
            at, best, side = i_high, high_fav[i_high], ">"
        threshold = sv[cut[at]]
        return best / n, f"`{values.name} {side} {threshold:g}`"
    counts = pd.crosstab(v.astype(str).to_numpy(), y)
    if len(counts) < 2 or len(counts) > LEAK_MAX_VALUES:
        return None
    return counts.max(axis=1).sum() / n, "its value"


def leak_warnings(dataset, features: Iterable[str] | None = None) -> list[str]:
    """One sentence per feature (default: every column but the label) that predicts the label almost perfectly
    on its own: a rule over that column alone (its value for a categorical or binary column, one threshold for a
    numeric one) agrees with the label, or with its negation, on at least ``LEAK_AGREEMENT`` of the rows — and
    halves the errors of always guessing the commoner outcome (an imbalanced label is no leak). Empty without a
    label."""
    schema = dataset.schema
    if schema.label is None:
        return []
    y = dataset.labels.astype(np.int64)
    commoner = max(y.mean(), 1 - y.mean()) if len(y) else 1.0
    names = [n for n in (schema.names if features is None else features) if n != schema.label]
    out = []
    for name in names:
        found = _agreement(dataset.frame[name], y)
        if found is None:
            continue
        share, rule = found
        if share >= LEAK_AGREEMENT and (1 - share) <= (1 - commoner) / 2:
            out.append(leak_sentence(name, share, rule, schema.label, schema.favourable))
    return out


def leak_sentence(name: str, share: float, rule: str, label: str, favourable: Any) -> str:
    how = "its value alone" if rule == "its value" else f"the rule {rule}"
    return (f"column '{name}' predicts the label almost perfectly: {how} agrees with {label} == {favourable!r} (or "
            f"its opposite) on {share:.1%} of the rows. It is probably the outcome in another form or a logged "
            f"decision; a model trained on it learns the label, not the task: leave it out unless it is known "
            f"before the decision")


def unread_warnings(spec, model) -> list[str]:
    """A warning for each ``Fair[column]`` of ``spec`` whose column ``model`` does not read: flipping it cannot change
    a decision, so the rate is 1 by construction — an audit of nothing (train with the protected attributes to
    audit a model that reads them)."""
    names = set(getattr(model, "feature_names", None) or ())
    if model is None or not names:
        return []
    out = []
    for node in getattr(spec, "nodes", ()):
        if node.kind == "fair" and node.node.column not in names and node.node.column not in (
                getattr(getattr(model, "encoding", None), "names", None) or ()):
            out.append(f"{node.text}: the model does not read {node.node.column!r}, so no decision can change when "
                       f"only it changes and the rate is 1 by construction (a model trained here leaves the protected "
                       f"attributes out unless asked: --include-protected, include_protected=True, or the Model "
                       f"page's checkbox)")
    return list(dict.fromkeys(out))

