"""Per-group counts, base rates and model metrics, each with a binomial confidence interval.

Pure pandas/scipy; the Data and Model pages draw what these functions return
(``fairaudit.viz.group_bars`` / ``fairaudit.viz.group_metrics_chart``).

Every function returns one tidy ``DataFrame`` with a fixed set of columns, one row per (attribute, group[, metric]).
Intervals are Wilson score intervals by default (``method="wilson"``) or exact Clopper–Pearson
(``method="clopper-pearson"``); both are two-sided at confidence ``level``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

#: groups with fewer rows than this get ``small=True`` (the pages show a warning)
SMALL_GROUP = 30

METRICS = ("accuracy", "selection rate", "TPR", "FPR")

GROUP_COLUMNS = ["attribute", "group", "n", "positives", "rate", "lo", "hi", "share", "small"]
METRIC_COLUMNS = ["attribute", "group", "metric", "value", "lo", "hi", "k", "n", "small"]


def proportion_ci(k: np.ndarray | int, n: np.ndarray | int, level: float = 0.95,
                  method: str = "wilson") -> tuple[np.ndarray, np.ndarray]:
    """Two-sided confidence interval for a binomial proportion ``k / n`` (vectorised). ``n == 0`` gives ``[0, 1]``."""
    from scipy import stats  # here, not at import: scipy.stats takes ~0.4 s to import

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "wilson":
            z = stats.norm.ppf(1 - alpha / 2)
            p = np.where(n > 0, k / np.where(n > 0, n, 1), 0.0)
            denom = 1 + z**2 / n
            centre = (p + z**2 / (2 * n)) / denom
            half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
            lo, hi = centre - half, centre + half
        elif method in ("clopper-pearson", "exact"):
            lo = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
            hi = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
        else:
            raise ValueError(f"unknown interval method {method!r} (use 'wilson' or 'clopper-pearson')")
    lo = np.where(n > 0, np.clip(lo, 0.0, 1.0), 0.0)
    hi = np.where(n > 0, np.clip(hi, 0.0, 1.0), 1.0)
    return lo, hi


def _binary(values: pd.Series | np.ndarray, favourable=1) -> np.ndarray:
    arr = pd.Series(values).reset_index(drop=True)
    return (arr == favourable).to_numpy(dtype=np.int64)


#: a numeric protected column with more distinct values than this is split at its median (as ``fairaudit.models``)
MAX_GROUP_VALUES = 20


def _groups(frame: pd.DataFrame, attributes: Sequence[str]):
    for attr in attributes:
        if attr not in frame:
            raise KeyError(f"no column {attr!r}")
        col = frame[attr].reset_index(drop=True)
        distinct = col.dropna().unique()
        if len(distinct) > MAX_GROUP_VALUES and pd.api.types.is_numeric_dtype(col):
            cut = float(np.median(col.dropna()))
            yield attr, f"< {cut:g}", (col < cut).to_numpy()
            yield attr, f">= {cut:g}", (col >= cut).to_numpy()
            if col.isna().any():
                yield attr, "(missing)", col.isna().to_numpy()
            continue
        for value in sorted(distinct, key=str):
            yield attr, str(value), (col == value).to_numpy()
        if col.isna().any():
            yield attr, "(missing)", col.isna().to_numpy()


def group_base_rates(frame: pd.DataFrame, protected: Sequence[str], label: str | None = None, favourable=1,
                     level: float = 0.95, method: str = "wilson", small: int = SMALL_GROUP,
                     intersectional: bool = False) -> pd.DataFrame:
    """Per-group row counts and the rate of the favourable label (with CI); without a label only counts.

    With ``intersectional=True`` and several attributes, one extra block ``a × b`` holds every combination.
    """
    frame = frame.reset_index(drop=True)
    attrs = list(protected)
    if intersectional and len(attrs) > 1:
        key = " × ".join(attrs)
        frame = frame.assign(**{key: frame[attrs].astype(str).agg(" · ".join, axis=1)})
        attrs = attrs + [key]
    y = _binary(frame[label], favourable) if label is not None else None
    rows = []
    total = len(frame)
    for attr, group, mask in _groups(frame, attrs):
        n = int(mask.sum())
        pos = int(y[mask].sum()) if y is not None else 0
        rows.append({"attribute": attr, "group": group, "n": n, "positives": pos,
                     "share": n / total if total else 0.0, "small": n < small})
    out = pd.DataFrame(rows, columns=["attribute", "group", "n", "positives", "share", "small"])
    if y is not None and len(out):
        out["rate"] = np.where(out["n"] > 0, out["positives"] / out["n"].where(out["n"] > 0, 1), np.nan)
        out["lo"], out["hi"] = proportion_ci(out["positives"].to_numpy(), out["n"].to_numpy(), level, method)
    else:
        out["rate"] = np.nan
        out["lo"] = np.nan
        out["hi"] = np.nan
    return out[GROUP_COLUMNS]


def group_model_metrics(frame: pd.DataFrame, protected: Sequence[str], y_pred, y_true=None, level: float = 0.95,
                        method: str = "wilson", small: int = SMALL_GROUP) -> pd.DataFrame:
    """Accuracy, selection rate, TPR and FPR per group, each ``k / n`` with a CI (``y_true`` optional: then only
    the selection rate). ``y_pred`` and ``y_true`` are 0/1 arrays aligned with ``frame``'s rows."""
    frame = frame.reset_index(drop=True)
    p = np.asarray(y_pred).astype(int).ravel()
    if len(p) != len(frame):
        raise ValueError(f"y_pred has {len(p)} values for {len(frame)} rows")
    t = None if y_true is None else np.asarray(y_true).astype(int).ravel()
    if t is not None and len(t) != len(frame):
        raise ValueError(f"y_true has {len(t)} values for {len(frame)} rows")
    rows = []
    for attr, group, mask in _groups(frame, protected):
        pm = p[mask]
        parts = {"selection rate": (int(pm.sum()), int(mask.sum()))}
        if t is not None:
            tm = t[mask]
            parts["accuracy"] = (int((pm == tm).sum()), int(mask.sum()))
            parts["TPR"] = (int((pm[tm == 1] == 1).sum()), int((tm == 1).sum()))
            parts["FPR"] = (int((pm[tm == 0] == 1).sum()), int((tm == 0).sum()))
        for metric in METRICS:
            if metric in parts:
                k, n = parts[metric]
                rows.append({"attribute": attr, "group": group, "metric": metric, "k": k, "n": n,
                             "value": k / n if n else np.nan, "small": n < small})
    out = pd.DataFrame(rows, columns=["attribute", "group", "metric", "k", "n", "value", "small"])
    out["lo"], out["hi"] = proportion_ci(out["k"].to_numpy(), out["n"].to_numpy(), level, method) if len(out) else (
        np.array([]), np.array([]))
    return out[METRIC_COLUMNS]


def held_out_rows(dataset, seed: int = 0, test_size: float | None = None) -> pd.DataFrame:
    """The rows ``fairaudit.models.train(dataset, kind, seed=seed, test_size=test_size)`` held out for testing.

    Uses the split of ``train`` itself (``fairaudit.models.training.split_rows``) so per-group metrics are
    measured on rows the model has not seen.
    """
    from fairaudit.models.training import HELD_OUT_SHARE, split_rows

    test_size = HELD_OUT_SHARE if test_size is None else test_size
    y = dataset.labels
    if y is None:
        raise ValueError("the dataset has no label column")
    _, test_idx = split_rows(y, seed, test_size)
    return dataset.frame.iloc[np.sort(test_idx)].reset_index(drop=True)


SUMMARY_COLUMNS = ["measure", "value", "k", "n"]


def decision_summary(frame: pd.DataFrame, protected: Sequence[str], y_pred, y_true=None) -> pd.DataFrame:
    """What a set of decisions does on these rows, one tidy row per measure (``SUMMARY_COLUMNS``): the share of
    favourable decisions, the accuracy (with ``y_true``), then per group of each ``protected`` attribute its
    selection rate and (with ``y_true``) its TPR, each ``k / n`` exactly (no interval: these rows only). The
    decision-threshold slider shows it at two thresholds side by side."""
    p = np.asarray(y_pred).astype(int).ravel()
    t = None if y_true is None else np.asarray(y_true).astype(int).ravel()
    rows = [{"measure": "favourable decisions (share)", "k": int(p.sum()), "n": len(p)}]
    if t is not None:
        rows.append({"measure": "accuracy", "k": int((p == t).sum()), "n": len(p)})
    per_group = group_model_metrics(frame, protected, p, t) if len(protected) else None
    if per_group is not None:
        for metric in ("selection rate", "TPR"):
            for part in per_group[per_group["metric"] == metric].itertuples():
                rows.append({"measure": f"{metric} · {part.attribute} = {part.group}", "k": int(part.k),
                             "n": int(part.n)})
    out = pd.DataFrame(rows, columns=["measure", "k", "n"])
    out["value"] = np.where(out["n"] > 0, out["k"] / out["n"].where(out["n"] > 0, 1), np.nan)
    return out[SUMMARY_COLUMNS]
