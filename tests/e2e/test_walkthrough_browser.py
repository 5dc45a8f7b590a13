"""A newcomer's misstep in a real browser, answered with a sentence (found walking the dashboard): an unquoted group
name with a hyphen in the Specification editor used to be called "arithmetic inside E[...]".

Drives Debian's chromium with Python Playwright (see ``test_browser.py``); screenshots go to
``tests/e2e/screenshots/wk_*.png``.
"""
from __future__ import annotations

import pytest

from tests.e2e.server import SHOTS, browser_page, goto, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]

LONG = 180_000


def test_an_unquoted_value_is_told_to_be_quoted(browser_ready, app_url):
    with browser_page(1400, 1200) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(app_url)
        page.get_by_role("button", name="Load demo audit").wait_for()
        goto(page, "Data")  # the default dataset (adult) is loaded by opening the page
        wait_idle(page)
        goto(page, "Specification")
        editor = page.locator("textarea[aria-label^='Specification (press']")
        editor.wait_for()
        editor.fill('E[pred | race == Asian-Pac-Islander] - E[pred | race == "White"] < 0.1\n')
        editor.press("Control+Enter")
        page.get_by_text('write the value in quotes: race == "Asian-Pac-Islander"', exact=False).first.wait_for()
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "wk_1_unquoted_value.png"))
        assert not errors, errors
