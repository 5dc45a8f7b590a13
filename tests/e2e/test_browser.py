"""The dashboard in a real browser: load the demo, run an audit, click tree nodes, see convergence plots.

Drives Debian's chromium with Python Playwright. Skips only when chromium is missing *and* ``CI`` is unset;
in CI a missing chromium fails the test. Screenshots go to ``tests/e2e/screenshots/`` (gitignored).
"""
from __future__ import annotations

import os

import pytest

from tests.e2e.server import SHOTS, browser_page, chromium, serve, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CHART = "[data-testid='stVegaLiteChart']"


@pytest.fixture(scope="module")
def browser_ready():
    if chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install -y chromium); required in CI")
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else __import__("playwright.sync_api")
    SHOTS.mkdir(exist_ok=True)


def _node(page, node_id: str):
    # the operator symbol drawn on top of each node circle (what a user's click lands on); Vega's SVG marks
    # carry aria-labels listing their fields, e.g. "x: 4.25; depth: 1; symbol: <; id: n6; ..."
    return page.locator(f"{CHART} .mark-text text[aria-label*='symbol: '][aria-label*='id: {node_id};']").first


def test_demo_audit_click_nodes(browser_ready):
    with serve() as url, browser_page(1400, 900) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        page.get_by_role("button", name="Load demo audit").click()
        page.get_by_text("held-out accuracy").first.wait_for(timeout=180_000)
        wait_idle(page)
        assert page.get_by_text("violated with probability").count() + page.get_by_text(
            "certified true with probability").count() + page.get_by_text("undecided after").count() >= 1
        page.screenshot(path=str(SHOTS / "e2e_0_home.png"))

        page.get_by_role("link", name="Audit", exact=True).first.click()
        page.get_by_role("heading", name="Audit").first.wait_for()
        wait_idle(page)
        # run the audit again from the Audit page (live progress, then the interactive tree)
        page.get_by_role("button", name="Run", exact=True).click()
        page.wait_for_timeout(500)
        wait_idle(page, timeout=180_000)
        page.get_by_text("Verdict:").first.wait_for()
        page.screenshot(path=str(SHOTS / "e2e_1_audit.png"))

        # click the race-parity comparison: its convergence plot replaces the default one
        _node(page, "n6").click()
        page.get_by_text("race_parity").first.wait_for()
        page.locator(f"{CHART} >> text=/plotted: E\\[pred \\| race == \"White\"\\]/").first.wait_for(timeout=60_000)
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "e2e_2_node.png"))

        # shift-click a second node: two stacked plots with a shared x axis
        _node(page, "n1").click(modifiers=["Shift"])
        page.locator(f"{CHART} >> text=/plotted: E\\[pred \\| sex == \"Male\"\\]/").first.wait_for(timeout=60_000)
        page.locator(f"{CHART} >> text=/plotted: E\\[pred \\| race == \"White\"\\]/").first.wait_for(timeout=60_000)
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "e2e_3_compare.png"))

        # a leaf: its own estimate and bounds
        _node(page, "n3").click()
        page.locator(f"{CHART} >> text='E[pred | sex == \"Male\"]'").first.wait_for(timeout=60_000)
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "e2e_4_leaf.png"))
        assert not errors, errors
