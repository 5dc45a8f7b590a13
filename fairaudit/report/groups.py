"""Per-group base statistics of the audited dataset for the report (counts, shares, base rates with CIs).

Reuses ``fairaudit.core.group_metrics.group_base_rates`` (the Data page's numbers), adding the model's selection rate
per group when the decisions are known.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairaudit.core.group_metrics import SMALL_GROUP, group_base_rates, proportion_ci


def group_table(dataset, model=None, level: float = 0.95) -> pd.DataFrame | None:
    """``group_base_rates`` over the dataset's protected attributes, plus ``sel``/``sel_lo``/``sel_hi`` (share of
    favourable decisions) when ``model`` is given. None when the dataset declares no protected attribute."""
    protected = list(dataset.schema.protected)
    if not protected:
        return None
    label = dataset.schema.label
    stats = group_base_rates(dataset.frame, protected, label=label, favourable=dataset.schema.favourable,
                             level=level)
    if model is not None and getattr(model, "classes", None) is None:  # (classes: no one favourable share to show)
        from fairaudit.core.group_metrics import _groups

        decisions = np.asarray(model.predict(dataset.frame)).astype(int).ravel()
        frame = dataset.frame.reset_index(drop=True)
        # the groups exactly as the base rates formed them (a numeric attribute split at its median included)
        sel = {(attr, group): (int(decisions[mask].sum()), int(mask.sum()))
               for attr, group, mask in _groups(frame, protected)}
        k = np.array([sel.get((a, str(g)), (0, 0))[0] for a, g in zip(stats["attribute"], stats["group"])])
        n = np.array([sel.get((a, str(g)), (0, 0))[1] for a, g in zip(stats["attribute"], stats["group"])])
        stats = stats.assign(sel=np.where(n > 0, k / np.maximum(n, 1), np.nan))
        stats["sel_lo"], stats["sel_hi"] = proportion_ci(k, n, level)
        stats.loc[n == 0, ["sel", "sel_lo", "sel_hi"]] = np.nan
    return stats


__all__ = ["group_table", "SMALL_GROUP"]
