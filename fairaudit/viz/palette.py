"""Verdict colours and labels shared by every chart (Okabe–Ito, colour-blind safe)."""
from __future__ import annotations

from typing import Any

TRUE, FALSE, UNKNOWN, TERM = "true", "false", "unknown", "term"
EXPLORATORY = "exploratory"  # a verdict on a threshold chosen from the audited data (``fairaudit.core.claim``)

#: verdict key -> (legend label, colour)
VERDICTS: dict[str, tuple[str, str]] = {
    TRUE: ("certified true", "#0072B2"),     # blue
    FALSE: ("violated", "#D55E00"),          # vermillion
    UNKNOWN: ("undecided", "#E69F00"),       # orange
    TERM: ("term (no verdict)", "#BBBBBB"),  # neutral grey
    EXPLORATORY: ("exploratory", "#CC79A7"),  # reddish purple: never the certified colour
}

#: rate name -> colour, for ``Fair[...]`` nodes (certified / unfair / undecided fractions)
RATES: dict[str, str] = {
    "certified": "#0072B2",
    "unfair": "#D55E00",
    "undecided": "#BBBBBB",
}

#: a group's mark in an engine's findings -> colour (``fairaudit.core.findings.MOST`` / ``LEAST``); other groups grey
FAVOURED: dict[str, str] = {
    "most favoured": "#0072B2",   # blue
    "least favoured": "#D55E00",  # vermillion
}
FAVOURED_OTHER = "#777777"

NEUTRAL = "#555555"
SELECTED_STROKE = "#000000"


def normalise_verdict(value: Any) -> str:
    """Map the contract's verdict values (``"true"|"false"|"unknown"|None``, also booleans) to a key of VERDICTS."""
    if value is None:
        return TERM
    if isinstance(value, bool):
        return TRUE if value else FALSE
    if isinstance(value, float) and value != value:  # NaN
        return TERM
    text = str(value).strip().lower()
    if text == EXPLORATORY:
        return EXPLORATORY
    if text in ("true", "1", "certified", "certified true"):
        return TRUE
    if text in ("false", "0", "violated"):
        return FALSE
    if text in ("unknown", "undecided", "none?"):
        return UNKNOWN
    if text in ("", "none", "null", "nan", "term"):
        return TERM
    raise ValueError(f"unknown verdict {value!r}")


def verdict_label(value: Any) -> str:
    return VERDICTS[normalise_verdict(value)][0]


def verdict_scale(keys: tuple[str, ...] = (TRUE, FALSE, UNKNOWN, TERM)):
    """An Altair colour scale over verdict *labels* with the fixed palette (same colours in every chart)."""
    import altair as alt

    return alt.Scale(domain=[VERDICTS[k][0] for k in keys], range=[VERDICTS[k][1] for k in keys])

#: a scan cell's flag (``fairaudit.subgroups``) -> (what a reader sees, colour): the Groups heatmap and the scan PDF
SCAN_FLAGS: dict[str, tuple[str, str]] = {
    "certified_below": ("certified below", "#D55E00"),  # vermillion, as a violation
    "undecided": ("undecided", "#E69F00"),              # orange
    "certified_above": ("certified above", "#0072B2"),  # blue, as certified
    "excluded": ("excluded (< min. share)", "#AAAAAA"),  # grey: rate only, no ratio
}

#: one colour per compared model, in the order the models are named (A, B, C …): the same model has the same colour
#: in every chart of a comparison (``fairaudit.viz.compare``), on the dashboard and in the PDF. Okabe–Ito colours
#: chosen so that no model wears the "violated" vermillion or the "undecided" orange of the verdicts.
MODELS: tuple[str, ...] = ("#0072B2", "#009E73", "#CC79A7", "#000000", "#56B4E9", "#8C6D31", "#7F7F7F", "#F0E442")
#: a difference that is not decided (its interval still contains 0)
DIFFERENCE_UNDECIDED = "#999999"


def model_colours(names) -> dict[str, str]:
    """``{name: colour}`` for the compared models in the order given (colours repeat past ``len(MODELS)``)."""
    return {name: MODELS[i % len(MODELS)] for i, name in enumerate(names)}


INK_DARK, INK_LIGHT = "#1A1A1A", "#FFFFFF"


def _luminance(hex_colour: str, opacity: float = 1.0) -> float:
    """WCAG relative luminance of ``hex_colour`` drawn at ``opacity`` over white."""
    h = hex_colour.lstrip("#")
    channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    channels = [opacity * c + (1 - opacity) for c in channels]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str, opacity_a: float = 1.0) -> float:
    """The WCAG contrast ratio of text ``b`` on ``a`` (``a`` drawn at ``opacity_a`` over white): 1 to 21."""
    la, lb = _luminance(a, opacity_a), _luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def ink_on(fill: str, opacities: tuple[float, ...] = (1.0,)) -> str:
    """The text colour (near-black or white) that reads best on ``fill``, at every opacity the fill is drawn with
    (the one with the larger worst-case contrast): white on blue, dark on orange and light colours."""
    return max((INK_DARK, INK_LIGHT), key=lambda ink: min(contrast(fill, ink, o) for o in opacities))
