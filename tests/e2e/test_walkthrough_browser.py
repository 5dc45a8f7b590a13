"""A newcomer's missteps in a real browser, each answered with a sentence (found walking the dashboard): a pickle
uploaded as a model (Streamlit's type filter used to refuse it with a bare red icon), and an unquoted group name
with a hyphen in the Specification editor.

Drives Debian's chromium with Python Playwright (see ``test_browser.py``); screenshots go to
``tests/e2e/screenshots/wk_*.png``.
"""
from __future__ import annotations

import pickle

import pytest

from tests.e2e.server import SHOTS, browser_page, goto, serve, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LONG = 180_000


def test_a_pickle_and_an_unquoted_value_are_told_why(browser_ready, tmp_path):
    model_file = tmp_path / "model.pkl"
    model_file.write_bytes(pickle.dumps({"not": "a model"}))
    with serve() as url, browser_page(1400, 1200) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        page.get_by_role("button", name="Load demo audit").wait_for()
        goto(page, "Data")  # the default dataset (adult) is loaded by opening the page
        wait_idle(page)
        goto(page, "Model")
        wait_idle(page)
        page.get_by_text("Load a model file").click()
        wait_idle(page)
        page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(model_file))
        message = page.get_by_text("model.pkl cannot be loaded", exact=False).first
        message.wait_for(timeout=LONG)
        assert "pickle" in message.inner_text()
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "wk_1_pickle_refused.png"))

        goto(page, "Specification")
        editor = page.locator("textarea[aria-label^='Specification (press']")
        editor.wait_for()
        editor.fill('E[pred | race == Asian-Pac-Islander] - E[pred | race == "White"] < 0.1\n')
        editor.press("Control+Enter")
        page.get_by_text('write the value in quotes: race == "Asian-Pac-Islander"', exact=False).first.wait_for()
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "wk_2_unquoted_value.png"))
        assert not errors, errors
