"""Where a ``Fair[...]`` node's undecided individuals are, as the dashboard, the PDF and the CLI show it: the same
frame and the same sentences everywhere. An engine that refines an input domain records, under
``result.info[INFO_KEY][leaf text]``, per feature of the domain the undecided share of the domain in each bin of
the feature's range beside the bin's own share of the domain (``fairaudit.engines.fairquant.where``: every bin
exact, the bins of a feature summing to the undecided rate). Nothing here knows which engine recorded it.

The record (JSON): ``{"undecided": u, "features": [{"name", "kind", "bins": [{"lo", "hi", "value"?, "domain",
"undecided", "counterexample", "limit", "count"}], "unevenness", "top_bin", "top_share", "top_lift"}, ...]}``, the
features ranked by ``unevenness`` (the total variation distance between the undecided individuals' spread over
the bins and the domain's own), the most uneven first.
"""
from __future__ import annotations

import math

import pandas as pd

INFO_KEY = "undecided_where"
#: under the rates-over-time chart: its grey band is how the undecided share shrank
SHRINK = ("The grey band on top is the undecided share: it shrinks as the audit goes on, and what is left of it at "
          "the right edge is what the audit could not settle.")
TOP_FEATURES = 3        # features shown by default: the most unevenly spread
UNDECIDED = "undecided individuals"
DOMAIN = "all individuals"
EVEN = 0.02             # below this unevenness a feature's undecided individuals are spread like the domain
LABEL_CHARS = 18        # a category's label is cut to this many characters
MAX_ROWS = 12           # bins drawn per feature: a group with more categories keeps those holding the most
OTHER = "other values"


def for_node(result, node_id: str) -> dict | None:
    """The record of a ``Fair[...]`` node (``node_id`` or its text), or None when the run recorded none."""
    records = (getattr(result, "info", None) or {}).get(INFO_KEY) or {}
    if not records:
        return None
    text = next((n.text for n in getattr(result, "node_info", ()) if n.id == node_id), node_id)
    record = records.get(text)
    if not record or not record.get("features"):
        return None
    return record


def range_label(feature: dict, b: dict) -> str:
    """A bin as people read it: a category's name, ``"17–24"``, ``"17"``, or a real range ``"0.25 to 0.5"``."""
    if "value" in b:
        v = str(b["value"])
        return v if len(v) <= LABEL_CHARS else v[:LABEL_CHARS - 1] + "…"
    if feature.get("kind") == "real":
        return f"{_g(b['lo'])} to {_g(b['hi'])}"
    return str(b["lo"]) if b["lo"] == b["hi"] else f"{b['lo']}–{b['hi']}"


def _g(x) -> str:
    x = float(x)
    return f"{x:.4g}" if math.isfinite(x) else str(x)


def share_text(x) -> str:
    """A share as a percentage (``"12.5%"``); a tiny one is "<0.1%", not "0.0%"."""
    x = float(x)
    if 0 < x < 0.0005:
        return "<0.1%"
    return f"{x:.1%}"


def frame(record: dict, top: int = TOP_FEATURES) -> pd.DataFrame:
    """Long frame for the chart: one row per (feature, bin, whose share): ``feature`` (``"x9"``), ``range`` (its
    label), ``order`` (the bin's position), ``who`` (``UNDECIDED`` or ``DOMAIN``), ``share`` (of its own total: the
    undecided individuals', or the whole domain's) and ``share_s`` (its text), for the ``top`` most uneven features."""
    rows = []
    total = float(record.get("undecided") or 0.0)
    for rank, feat in enumerate(record["features"][:top]):
        bins = [(range_label(feat, b), float(b["undecided"]) / total if total > 0 else 0.0, float(b["domain"]))
                for b in feat["bins"]]
        if len(bins) > MAX_ROWS:  # the categories holding the most undecided individuals, the rest as one bar
            keep = set(sorted(range(len(bins)), key=lambda i: (-bins[i][1], -bins[i][2], i))[:MAX_ROWS - 1])
            rest = [bins[i] for i in range(len(bins)) if i not in keep]
            bins = [bins[i] for i in sorted(keep)] + [(OTHER, sum(r[1] for r in rest), sum(r[2] for r in rest))]
        for i, (label, und, dom) in enumerate(bins):
            for who, share in ((UNDECIDED, und), (DOMAIN, dom)):
                rows.append({"feature": feat["name"], "rank": rank, "range": label, "order": i, "who": who,
                             "share": share, "share_s": share_text(share)})
    return pd.DataFrame(rows, columns=["feature", "rank", "range", "order", "who", "share", "share_s"])


def top_sentence(feat: dict, total: float) -> str:
    """``"x9 in 16–19 holds 61.2% of them but 20.0% of all individuals"``."""
    b = feat["bins"][int(feat["top_bin"])]
    share = float(b["undecided"]) / total if total > 0 else 0.0
    what = f"{feat['name']} = {range_label(feat, b)}" if "value" in b else \
        f"{feat['name']} in {range_label(feat, b)}"
    return f"{what} holds {share_text(share)} of them but {share_text(b['domain'])} of all individuals"


def split_text(record: dict) -> str:
    """``"2.1% where an individual whose decision changes was already found, 88.2% not settled in the time or
    depth allowed"`` (the bins of any feature sum to both)."""
    bins = record["features"][0]["bins"] if record.get("features") else []
    cex = sum(float(b["counterexample"]) for b in bins)
    limit = sum(float(b["limit"]) for b in bins)
    found, left = "where an individual whose decision changes was already found", \
        "not settled in the time or depth allowed"
    if cex > 0 and limit > 0:
        return f"{share_text(cex)} {found}, {share_text(limit)} {left}"
    if cex > 0:
        return f"all {found}"
    return "the time or depth allowed ran out before they were settled" if limit > 0 else ""


def caption(record: dict, top: int = TOP_FEATURES) -> str:
    """Plain sentences under the chart: how many are undecided and why, and where they concentrate most."""
    total = float(record.get("undecided") or 0.0)
    if total <= 0:
        return "No individual is undecided: each one is proven either to keep its decision or to change it."
    split = split_text(record)
    head = f"{share_text(total)} of all individuals are still undecided" + (f" ({split})" if split else "") + ". "
    feats = record["features"][:top]
    if not feats or feats[0]["unevenness"] < EVEN:
        return head + ("They are spread like the individuals themselves: no range of a feature holds more than its "
                       "size of them.")
    return (head + "Dark bars: where they are; light bars: where all individuals are. The biggest gap: "
            + top_sentence(feats[0], total) + ".")


def summary_lines(result) -> list[str]:
    """A line per ``Fair[...]`` leaf with undecided individuals, for a terminal: how many, and the biggest gap."""
    lines = []
    for leaf, record in sorted(((getattr(result, "info", None) or {}).get(INFO_KEY) or {}).items()):
        total = float((record or {}).get("undecided") or 0.0)
        if total <= 0 or not record.get("features"):
            continue
        split = split_text(record)
        line = f"undecided: {leaf}: {share_text(total)} of all individuals" + (f" ({split})" if split else "")
        top = record["features"][0]
        if top["unevenness"] >= EVEN:
            line += f"; the biggest gap: {top_sentence(top, total)}"
        lines.append(line)
    return lines
