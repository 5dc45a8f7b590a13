"""Column roles: check the user's label / protected / favourable choice against a frame and build the ``Schema``.

Rules (shared by built-in datasets and CSV files):

* ``label`` and every ``protected`` name must be columns; an unknown name is a ``DataError`` with a
  "did you mean" suggestion. A column cannot be both the label and protected.
* The label must be binary: exactly two distinct values and none missing. The label column is always
  categorical, whatever its dtype.
* The favourable value is the one given (matched against the label's values, so the CLI's text ``"1"`` finds the
  integer ``1``), or, when none is given, inferred only when obvious: 1 of 0/1, True of True/False, and
  yes / y / true of yes/no, y/n, true/false (any case). Anything else asks for ``--favourable``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from fairaudit.data.dataset import Column, Dataset, Schema
from fairaudit.base.errors import DataError
from fairaudit.base.text import listing, suggestion  # noqa: F401 — fairaudit.data.suggestion, .listing

# lower-cased (favourable, unfavourable) pairs of text labels whose favourable value is obvious
_OBVIOUS_TEXT = [("yes", "no"), ("y", "n"), ("true", "false"), ("1", "0")]


def unknown_column(name: str, columns: Iterable[str], role: str) -> DataError:
    columns = list(columns)
    hint = suggestion(name, columns) or f" (columns: {listing(columns)})"
    return DataError(f"unknown {role} column '{name}'{hint}")


def as_names(names: str | Iterable[str] | None) -> tuple[str, ...]:
    """``None`` -> (); one name -> (name,); several -> a tuple in the given order, duplicates dropped."""
    if names is None:
        return ()
    if isinstance(names, str):
        names = [names]
    return tuple(dict.fromkeys(names))


def check_protected(protected: str | Iterable[str] | None, columns: Iterable[str],
                    label: str | None = None) -> tuple[str, ...]:
    """The protected attributes (``as_names``), each one of ``columns`` and none the label; ``DataError`` (one line)
    otherwise. Every route checks a log's ``--protected`` by this, whether or not it keeps a schema."""
    columns = list(columns)
    protected = as_names(protected)
    for name in protected:
        if name not in columns:
            raise unknown_column(name, columns, "protected")
        if name == label:
            raise DataError(f"column '{name}' cannot be both the label and a protected attribute")
    return protected


def plain(value: Any) -> Any:
    """A numpy scalar as the equal plain Python value (``np.int64(1)`` -> ``1``)."""
    return value.item() if hasattr(value, "item") else value


def distinct_values(series: pd.Series) -> tuple[Any, ...]:
    """Sorted distinct non-missing values of a column, as plain Python values."""
    values = [plain(v) for v in series.dropna().unique()]
    try:
        return tuple(sorted(values))
    except TypeError:  # mixed types: order by text, deterministically
        return tuple(sorted(values, key=lambda v: (type(v).__name__, str(v))))


def label_values(frame: pd.DataFrame, label: str) -> tuple[Any, Any]:
    """The two values of a binary label column; ``DataError`` otherwise."""
    series = frame[label]
    missing = int(series.isna().sum())
    if missing:
        raise missing_labels(label, missing)
    values = distinct_values(series)
    if len(values) != 2:
        shown = listing((repr(v) for v in values), limit=5)
        raise DataError(f"label column '{label}' has {len(values)} value{'s' if len(values) != 1 else ''} "
                        f"({shown}); a label must be binary (exactly two distinct values)")
    return values  # type: ignore[return-value]


def missing_labels(label: str, missing: int) -> DataError:
    return DataError(f"label column '{label}' has {missing:,} missing value{'s' if missing > 1 else ''}; "
                     "a label needs a value in every row")


def obvious_favourable(values: tuple[Any, Any]) -> Any:
    """The favourable one of two label values when it is obvious (see the module docstring), else ``None``."""
    values = tuple(plain(v) for v in values)  # numpy scalars as plain values: np.int64(1) is 1
    if all(isinstance(v, bool) for v in values):
        return True
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) and set(values) == {0, 1}:
        return next(v for v in values if v == 1)
    if all(isinstance(v, str) for v in values):
        lowered = {v.lower(): v for v in values}
        for good, bad in _OBVIOUS_TEXT:
            if set(lowered) == {good, bad}:
                return lowered[good]
    return None


def default_favourable(values, current: Any = None) -> Any:
    """The favourable value a front end proposes (shown, editable) among a label's ``values``: ``current`` (the
    user's earlier choice) when it is one of them, else the obvious one — yes, true, 1 (``obvious_favourable``, the
    value the command line infers) — else the first. None when there are no values."""
    values = [plain(v) for v in values]
    if current is not None and plain(current) in values:
        return plain(current)
    obvious = obvious_favourable(tuple(values)) if len(values) == 2 else None
    if obvious is not None:
        return obvious
    return values[0] if values else None


def match_favourable(label: str, values: tuple[Any, Any], given: Any) -> Any:
    """The label value equal to ``given``, which may be the value itself or its text (from the command line)."""
    for v in values:
        if type(v) is type(given) and v == given:
            return v
    text = str(given).strip()
    for v in values:
        if str(v) == text or (isinstance(v, bool) and str(v).lower() == text.lower()):
            return v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            try:
                if float(text) == v:
                    return v
            except ValueError:
                pass
    raise DataError(f"favourable value '{given}' is not a value of label column '{label}' "
                    f"(values: {listing(repr(v) for v in values)})")


def resolve_favourable(label: str, values: tuple[Any, Any], given: Any) -> Any:
    if given is not None:
        return match_favourable(label, values, given)
    inferred = obvious_favourable(values)
    if inferred is None:
        raise DataError(f"cannot tell which value of label column '{label}' is favourable ({values[0]!r} or "
                        f"{values[1]!r}); name it with --favourable VALUE (favourable= in Python)")
    return inferred


def build_schema(frame: pd.DataFrame, kinds: Mapping[str, str], label: str | None = None,
                 protected: str | Iterable[str] | None = None, favourable: Any = None,
                 excluded: Iterable[str] = (), known_values: Mapping[str, tuple] | None = None) -> Schema:
    """Check the roles against ``frame`` and return its ``Schema``.

    ``kinds`` maps every column to "numeric" or "categorical"; the label becomes categorical. ``known_values``
    gives the categorical values of columns when already known (otherwise they are read from the frame).
    """
    columns = list(frame.columns)
    if label is not None and label not in frame.columns:
        raise unknown_column(label, columns, "label")
    protected = check_protected(protected, columns, label)
    if label is None:
        if favourable is not None:
            raise DataError("a favourable value needs a label column; name it with --label COLUMN")
    else:
        favourable = resolve_favourable(label, label_values(frame, label), favourable)
    known_values = known_values or {}
    schema_columns = []
    for name in columns:
        kind = "categorical" if name == label else kinds[name]
        values = ()
        if kind == "categorical":
            values = tuple(known_values.get(name) or distinct_values(frame[name]))
        schema_columns.append(Column(name, kind, values))  # type: ignore[arg-type]
    excluded = tuple(name for name in as_names(excluded) if name != label and name in frame.columns)
    return Schema(tuple(schema_columns), label, favourable, protected, excluded)


def with_roles(dataset: Dataset, label: str | None = None, protected: str | Iterable[str] | None = None,
               favourable: Any = None) -> Dataset:
    """The same rows with another label, protected set or favourable value (``None`` keeps the current one).

    A label that is replaced becomes an excluded column (it is an outcome, not a feature); a protected column
    that becomes the label leaves the kept protected set. Giving only ``favourable`` re-chooses the favourable
    value of the current label.
    """
    schema = dataset.schema
    if label is None and protected is None and favourable is None:
        return dataset
    new_label = schema.label if label is None else label
    if favourable is None and new_label == schema.label:
        favourable = schema.favourable
    excluded = list(schema.excluded)
    if schema.label is not None and new_label != schema.label:
        excluded.append(schema.label)
    if protected is None:  # keep the current protected set, less a column that has become the label
        protected = tuple(p for p in schema.protected if p != new_label)
    kinds = {c.name: c.kind for c in schema.columns}
    known = {c.name: c.values for c in schema.columns if c.kind == "categorical"}
    new_schema = build_schema(dataset.frame, kinds, new_label, protected, favourable, excluded, known)
    return Dataset(dataset.name, dataset.frame, new_schema, dataset.source, dataset.description,
                   _hash=dataset._hash, hash_of=dataset.hash_of)  # (the same rows: the same data)


# ------------------------------------------------------------------------------------------------------------------
# guesses for a file that names no roles (the dashboard's starting choices after an upload; the user can change them)

#: column names that usually hold the outcome, in order of preference (compared lower-cased, without _ - and spaces)
LABEL_NAMES = ("label", "target", "outcome", "decision", "hired", "hire", "selected", "approved", "approval",
               "accepted", "admitted", "promoted", "granted", "passed", "success", "y", "class", "result",
               "defaulted", "default", "recidivism", "twoyearrecid", "income")
#: column names (or their start) that usually hold a protected attribute (US and EU anti-discrimination law)
PROTECTED_NAMES = ("sex", "gender", "race", "ethnicity", "ethnic", "age", "religion", "nationalorigin", "national",
                   "nationality", "citizenship", "disability", "disabled", "maritalstatus", "marital", "pregnancy",
                   "veteran", "sexualorientation", "colour", "color", "skin")


def _key(name: str) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


def _binary(series: pd.Series) -> bool:
    return not series.isna().any() and len(distinct_values(series)) == 2


def guess_label(frame: pd.DataFrame, exclude: Iterable[str] = ()) -> str | None:
    """The column that is most likely the outcome: a binary column (two values, none missing) named like one
    (``LABEL_NAMES``: ``hired``, ``approved``, ``outcome``, ``y`` …), else the only 0/1 column; None when unsure."""
    skip = set(exclude)
    binary = [c for c in frame.columns if c not in skip and _binary(frame[c])]
    by_key = {_key(c): c for c in binary}
    for name in LABEL_NAMES:
        if name in by_key:
            return by_key[name]
    zero_one = [c for c in binary if set(map(str, distinct_values(frame[c]))) in ({"0", "1"}, {"False", "True"})
                and _key(c) not in PROTECTED_NAMES]
    return zero_one[0] if len(zero_one) == 1 else None


def guess_protected(frame: pd.DataFrame, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """The columns named like a protected attribute (``PROTECTED_NAMES``: ``sex``, ``gender``, ``race``,
    ``ethnicity``, ``age``, ``religion``, ``national_origin``, ``disability`` …), in the file's order."""
    skip = set(exclude)
    out = []
    for c in frame.columns:
        key = _key(c)
        if c not in skip and any(key == n or (len(n) > 3 and key.startswith(n)) for n in PROTECTED_NAMES):
            out.append(c)
    return tuple(out)


def guess_roles(frame: pd.DataFrame) -> tuple[str | None, tuple[str, ...]]:
    """``(label, protected)`` guessed from the column names and values of a file that names no roles (an upload):
    the dashboard's starting choices, shown for the user to check (``guess_label``, ``guess_protected``)."""
    label = guess_label(frame)
    return label, guess_protected(frame, exclude=[label] if label else [])
