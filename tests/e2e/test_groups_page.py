"""The "Groups" page in a real browser (issue 31): load the demo, open Groups, run the scan, click a cell of the
heatmap (the real Vega click on the cell's rectangle), read its convergence plot and its specification line, add
it with one click, see it in the Audit page's specification editor, then go back and forth between the pages: the
scan (cached) and the chosen cell are still there.

Drives Debian's chromium with Python Playwright (see ``test_browser.py``); screenshots go to
``tests/e2e/screenshots/groups_*.png``.
"""
from __future__ import annotations

import pytest

from tests.e2e.server import SHOTS, browser_page, goto, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]

CHART = "[data-testid='stVegaLiteChart']"
LONG = 180_000
CLICKED = ("Male", "Black")  # (down, across): a cell with a ratio on the demo, not the one shown first


def _cell(page, down: str, across: str):
    """The rectangle of the heatmap's cell (its aria-label lists the encoded fields: across, down, ...)."""
    return page.locator(f"{CHART} .mark-rect path[aria-label^='across: {across}; down: {down};']").first


def _cell_box(page) -> str:
    """The chosen cell's panel: its name and flag first."""
    return page.locator(".st-key-groups_cell_panel").text_content() or ""


def _editor(page):
    editor = page.locator(".st-key-audit_spec_editor textarea")
    if not editor.is_visible():
        page.get_by_text("Specification — edit a threshold here").first.click()
    editor.wait_for()
    return editor


def test_groups_heatmap_click_adds_a_spec(browser_ready, app_url):
    with browser_page(1400, 1800) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            page.goto(app_url)
            page.get_by_role("button", name="Load demo audit").click()
            page.get_by_text("violated with probability").first.wait_for(timeout=LONG)
            wait_idle(page)

            goto(page, "Groups")
            wait_idle(page)
            page.get_by_role("button", name="Run the scan").click()
            page.get_by_text("Guarantee.").first.wait_for(timeout=LONG)
            wait_idle(page)
            # the worst cell (the lowest ratio certified below) is shown first, named as every sentence names it
            assert _cell_box(page).startswith("sex = Female and race = Black")
            page.screenshot(path=str(SHOTS / "groups_scan.png"), full_page=True)

            # the real click, where a user clicks: the middle of the cell, on the ratio written there (the text
            # carries the cell's id too)
            cell = _cell(page, *CLICKED)
            cell.scroll_into_view_if_needed()
            box = cell.bounding_box()
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.wait_for_function(
                "() => (document.querySelector('.st-key-groups_cell_panel')?.textContent || '').startsWith('sex = Male and race = Black')",
                timeout=60_000)
            wait_idle(page)
            panel = page.locator(".st-key-groups_cell_panel")
            assert panel.inner_text().startswith("sex = Male and race = Black — ")  # its flag follows
            assert panel.locator(CHART).count() == 1  # its convergence plot
            line = panel.locator("code").inner_text()
            assert line.startswith("scan_male_black: E[pred | sex == \"Male\" and race == \"Black\"]"), line
            page.screenshot(path=str(SHOTS / "groups_clicked.png"), full_page=True)

            panel.get_by_role("button", name="Add to specification").click()
            page.get_by_text("Added to the specification").first.wait_for()
            wait_idle(page)

            goto(page, "Audit")
            wait_idle(page)
            text = _editor(page).input_value()
            assert "sex_parity:" in text and "scan_male_black: E[pred | sex == \"Male\" and race == \"Black\"]" in text
            page.screenshot(path=str(SHOTS / "groups_audit_spec.png"), full_page=True)

            # back and forth: the cached scan and the chosen cell are kept
            for title in ("Groups", "Report", "Groups"):
                goto(page, title)
                wait_idle(page)
            page.get_by_text("Guarantee.").first.wait_for()
            assert _cell_box(page).startswith("sex = Male and race = Black")
            page.screenshot(path=str(SHOTS / "groups_back.png"), full_page=True)
            assert not errors, errors
        except Exception:
            page.screenshot(path=str(SHOTS / "groups_failure.png"), full_page=True)
            raise
