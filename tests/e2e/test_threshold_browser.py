"""The Audit page's decision-threshold slider in a real browser (issue 32): load the demo, open Audit, move the slider
with the keyboard from the model's own 0.50 to 0.70, read the exploratory verdict at that threshold, then compare
with the original threshold in one click (both columns in the table).

Drives Debian's chromium with Python Playwright (see ``test_browser.py``); screenshots go to
``tests/e2e/screenshots/threshold_*.png``.
"""
from __future__ import annotations

import pytest

from tests.e2e.server import SHOTS, browser_page, goto, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]

LONG = 180_000
SLIDER = "Decision threshold: favourable when the model's score is above"


def _shot(page, anchor, name: str) -> None:
    anchor.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(400)
    page.screenshot(path=str(SHOTS / f"threshold_{name}.png"))


def test_the_slider_reaudits_and_compares_with_the_original(browser_ready, app_url):
    with browser_page(1400, 1000) as page:
        page.goto(app_url)
        page.get_by_role("button", name="Load demo audit").click()
        page.get_by_text("violated with probability").first.wait_for(timeout=LONG)
        goto(page, "Audit")
        wait_idle(page)
        heading = page.get_by_role("heading", name="Decision threshold")
        heading.wait_for(timeout=LONG)
        page.get_by_text("At the model's own threshold 0.50").first.wait_for()
        _shot(page, heading, "own")
        thumb = page.get_by_role("slider", name=SLIDER)
        assert thumb.get_attribute("aria-valuetext") == "0.50"
        thumb.focus()
        for _ in range(20):  # 20 steps of 0.01
            page.keyboard.press("ArrowRight")
        wait_idle(page)
        assert thumb.get_attribute("aria-valuetext") == "0.70"
        page.get_by_text("At threshold 0.70").first.wait_for(timeout=LONG)
        line = page.get_by_text("At threshold 0.70").first.text_content() or ""
        assert "exploratory" in line and ("holds" in line or "violated" in line or "undecided" in line), line
        page.get_by_text("Exploratory: a threshold chosen by looking at these rows").first.wait_for()
        _shot(page, heading, "moved")
        page.get_by_text("Compare with the original threshold").click()
        wait_idle(page)
        header = page.locator("[data-testid='stDataFrame'] [role='columnheader']")
        header.filter(has_text="original threshold 0.50").first.wait_for(state="attached", timeout=LONG)
        assert header.filter(has_text="slider threshold 0.70").count() >= 1
        _shot(page, heading, "compare")
