"""An engine's findings (``fairaudit.core.findings.Findings``) as tables and lines of text, the same for the dashboard,
the PDF and the CLI; every number printed by ``fairaudit.core.guarantee.format_interval`` (a point as its value).

Nothing here knows which engine made the findings: the words about what the numbers mean are the findings' own
(``groups_about``, ``ci_about``, ``influence_about``, ``graph_about``, each metric's ``about``).
"""
from __future__ import annotations

import math

from fairaudit.core.guarantee import format_interval

GROUP = "group"
RATE = "favourable rate"
SHARE = "share"
CI = "confidence interval"
ON_ROWS = "on the audited rows"
MARK = "mark"
DIGITS = 4


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def interval(lo, hi, digits: int = DIGITS) -> str:
    """``[lo, hi]`` (a point as its value); ``–`` when both ends are missing."""
    if _missing(lo) and _missing(hi):
        return "–"
    return format_interval(math.nan if _missing(lo) else float(lo), math.nan if _missing(hi) else float(hi), digits)


def share_text(x) -> str:
    return "–" if _missing(x) else f"{float(x):.1%}"


def has_ci(findings) -> bool:
    return any(not _missing(g.ci_lo) or not _missing(g.ci_hi) for g in findings.groups)


def has_metric_ci(findings) -> bool:
    return any(not _missing(m.ci_lo) or not _missing(m.ci_hi) for m in findings.metrics)


def group_table(findings) -> list[dict]:
    """One row per group, the highest rate first: group, favourable rate, share (when known), confidence interval
    (when given), mark (most / least favoured)."""
    show_share = any(not _missing(g.share) for g in findings.groups)
    show_ci = has_ci(findings)
    show_rows = any(not _missing(g.observed) for g in findings.groups)
    rows = []
    for r in findings.group_rows():
        row = {GROUP: r["group"], RATE: interval(r["lo"], r["hi"])}
        if show_share:
            row[SHARE] = share_text(r["share"])
        if show_ci:
            row[CI] = interval(r["ci_lo"], r["ci_hi"])
        if show_rows:
            row[ON_ROWS] = "–" if _missing(r["observed"]) else f"{interval(r['observed'], r['observed'])} " \
                                                                 f"({r['rows']:,} rows)"
        row[MARK] = r["mark"]
        rows.append(row)
    return rows


def metric_table(findings) -> list[dict]:
    """One row per metric: metric, value, confidence interval (when any metric has one), about."""
    show_ci = has_metric_ci(findings)
    rows = []
    for m in findings.metrics:
        row = {"metric": m.name, "value": interval(m.lo, m.hi)}
        if show_ci:
            row[CI] = interval(m.ci_lo, m.ci_hi)
        row["about"] = m.about
        rows.append(row)
    return rows


def influence_table(findings) -> list[dict]:
    """One row per feature, the largest influence (in absolute value) first."""
    ranked = sorted(findings.influence, key=lambda i: -abs(i.estimate))
    return [{"feature": i.feature, "influence": interval(i.lo, i.hi)} for i in ranked]


def edge_table(findings) -> list[dict]:
    return [{"parent": str(a), "child": str(b)} for a, b in findings.edges]


def groups_caption(findings) -> str:
    """What the group rates are (the findings' words) and, when given, what the confidence interval is."""
    parts = []
    if findings.groups_about:
        parts.append(_sentence(findings.groups_about))
    if has_ci(findings) and findings.ci_about:
        parts.append(_sentence(f"Confidence interval: {findings.ci_about}"))
    if findings.unmarked_note():
        parts.append(_sentence(findings.unmarked_note()))
    if not findings.complete_groups:
        parts.append("Only some groups are listed (the most and least favoured the run found), not every group.")
    return " ".join(parts)


def _sentence(text: str) -> str:
    text = str(text).strip()
    if not text:
        return ""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def caption(text: str) -> str:
    """One of the findings' ``*_about`` texts as a caption sentence."""
    return _sentence(text)


def summary_lines(findings, max_groups: int = 8) -> list[str]:
    """A few lines for a terminal: the groups with their marks (at most ``max_groups``: the highest and lowest
    rates when there are more), the metrics, the largest influences, the graph's size."""
    lines = []
    groups = group_table(findings)
    if groups:
        width = min(44, max(len(r[GROUP]) for r in groups))
        shown = groups if len(groups) <= max_groups else groups[: max_groups // 2] + [None] + groups[-(
            max_groups - max_groups // 2):]
        about = findings.groups_about or "favourable rate in each group"
        lines.append(f"groups:    {len(groups)} group{'s' if len(groups) != 1 else ''}: {about}")
        for row in shown:
            if row is None:
                lines.append(f"             … {len(groups) - max_groups} more")
                continue
            extra = [f"share {row[SHARE]:<6}"] if SHARE in row else []
            if CI in row:
                extra.append(f"CI {row[CI]:<18}")
            if ON_ROWS in row:
                extra.append(f"on rows {row[ON_ROWS]:<16}")
            if row[MARK]:
                extra.append(row[MARK])
            lines.append((f"  {row[GROUP][:width]:<{width}}  {row[RATE]:<18}  " + "  ".join(extra)).rstrip())
        unmarked = findings.unmarked_note()
        if unmarked:
            lines.append(f"note:      {unmarked}")
    for row in metric_table(findings):
        extra = f"  (CI {row[CI]})" if row.get(CI, "–") != "–" else ""
        lines.append(f"metric:    {row['metric']} {row['value']}{extra}")
    influence = influence_table(findings)
    if influence:
        top = ", ".join(f"{r['feature']} {r['influence']}" for r in influence[:5])
        more = f" (+{len(influence) - 5} more)" if len(influence) > 5 else ""
        lines.append(f"influence: {top}{more}")
    if findings.edges:
        nodes = set(findings.nodes) | {n for e in findings.edges for n in e}
        lines.append(f"graph:     {len(findings.edges)} edges over {len(nodes)} variables"
                     + (f" ({findings.graph_about})" if findings.graph_about else ""))
    for note in findings.notes:
        lines.append(f"note:      {note}")
    return lines
