"""Issue 44, item 8: no white text on the light-orange heatmap cells. The ratio written in a cell takes the text
colour that reads best on the cell's colour as drawn (WCAG contrast ≥ 4.5 for every flag)."""
from __future__ import annotations

import pytest

from fairaudit.subgroups.scan import scan
from fairaudit.viz.palette import INK_DARK, INK_LIGHT, SCAN_FLAGS, contrast, ink_on
from fairaudit.viz.scan import scan_frame, scan_heatmap


def test_contrast_is_wcag():
    assert round(contrast("#FFFFFF", "#000000"), 1) == 21.0
    assert contrast("#E69F00", INK_LIGHT) < 3  # the issue: white on orange does not read


@pytest.mark.parametrize("flag", list(SCAN_FLAGS))
@pytest.mark.parametrize("opacity", [1.0, 0.95, 0.55])
def test_every_flag_colour_gets_readable_text(flag, opacity):
    fill = SCAN_FLAGS[flag][1]
    ink = ink_on(fill, (opacity,))
    assert contrast(fill, ink, opacity) >= 4.5, (flag, opacity, ink)
    if flag == "undecided":
        assert ink == INK_DARK


@pytest.fixture(scope="module")
def result():
    return scan("compas", ["sex", "race"], pred="decile_score <= 4", depth=1, mode="one-look")


@pytest.mark.parametrize("selected", [None, "first"])
def test_heatmap_text_colour_follows_the_cell(result, selected):
    frame = scan_frame(result)
    chosen = frame["id"].iloc[0] if selected else None
    spec = scan_heatmap(result, selected=chosen).to_dict()
    rows = spec["datasets"][next(iter(spec["datasets"]))]
    assert rows and all("ink" in r for r in rows)
    for r in rows:
        fill = SCAN_FLAGS[r["flag"]][1]
        opacity = (1.0 if r["id"] == chosen else 0.55) if chosen else 0.95
        assert contrast(fill, r["ink"], opacity) >= 4.5
