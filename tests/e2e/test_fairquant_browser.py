"""The fairquant engine in a real browser: load a bundled dataset (Ricci), train a small torch MLP on the Model
page (the protected attributes included), write ``Fair[race] >= 0.9`` on the Specification page, choose the fairquant engine on the Audit page and run;
click the Fair node: its certified / unfair / undecided rates chart is drawn, and under it the table of
counterexamples (individuals whose decision changes with race alone). Then to the Report page and back: the result
and the table are still there.

Drives Debian's chromium with Python Playwright (see ``test_browser.py``); screenshots go to
``tests/e2e/screenshots/fq_*.png``.
"""
from __future__ import annotations

import re

import pytest

from fairaudit import engines
from tests.e2e.server import SHOTS, browser_page, goto, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]

CHART = "[data-testid='stVegaLiteChart']"
LONG = 180_000
SPEC = "Fair[race] >= 0.9"


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label`` (typed, as a user would)."""
    box = page.locator("[data-testid='stSelectbox']").filter(has_text=label).first
    box.click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")
    wait_idle(page)


def _fair_node(page):
    """The Fair leaf's symbol in the tree, what a user's click lands on (Vega writes each mark's fields into its
    aria-label: "...; symbol: Fair; id: n1; ...")."""
    return page.locator(f"{CHART} .mark-text text[aria-label*='symbol: Fair;']").first


def _table(page):
    return page.locator("[class*='st-key-counterexamples_']").first


def test_fairquant_rates_and_counterexamples(browser_ready, app_url):
    fairquant = engines.get("fairquant")
    with browser_page(1400, 1600) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(app_url)
        page.get_by_role("button", name="Load demo audit").wait_for()

        # 1. a bundled dataset and a torch MLP trained on it in the app
        goto(page, "Data")
        wait_idle(page)
        _pick(page, "Dataset", "ricci")
        page.get_by_text("Ricci", exact=False).first.wait_for()
        goto(page, "Model")
        wait_idle(page)
        _pick(page, "Kind", "mlp")
        # the default features leave race out (a model that never reads it has Fair[race] = 1 exactly): ask for it
        page.get_by_text("Include the protected attributes").first.click()
        wait_idle(page)
        page.get_by_role("button", name="Train", exact=True).click()
        page.get_by_text("Trained.").first.wait_for(timeout=LONG)
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "fq_0_model.png"))

        # 2. the specification: one Fair node
        goto(page, "Specification")
        editor = page.locator("textarea[aria-label^='Specification (press']")
        editor.wait_for()
        editor.fill(SPEC + "\n")
        editor.press("Control+Enter")
        page.get_by_text("OK —").first.wait_for()
        wait_idle(page)

        # 3. the fairquant engine on the Audit page, run
        goto(page, "Audit")
        wait_idle(page)
        if not page.locator("[data-testid='stSelectbox']").filter(has_text="Engine").first.is_visible():
            page.get_by_text("Engine and options").first.click()  # folded once a result is shown
        _pick(page, "Engine", fairquant.title.split(" (")[0])
        page.get_by_text(fairquant.option("max_depth").label).first.wait_for()
        page.screenshot(path=str(SHOTS / "fq_1_engine.png"))
        page.get_by_role("button", name="Run", exact=True).click()
        page.locator(".st-key-node_panel").wait_for(timeout=LONG)  # drawn once the run has a result
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "fq_1_run.png"))

        # 4. the Fair node: its rates chart, and the counterexample table under it
        _fair_node(page).click()
        page.locator(f"{CHART} >> text=/Fair\\[race\\]: individuals/").first.wait_for(timeout=60_000)
        where = page.locator("[class*='st-key-undecided_where_']").first  # where the undecided are (none left here)
        where.wait_for(timeout=60_000)
        assert "Where the undecided individuals are — Fair[race]" in where.inner_text(), where.inner_text()
        table = _table(page)
        table.wait_for(timeout=60_000)
        assert re.search(r"Counterexamples to Fair\[race\] — [\d,]+ counterexamples? found over the input domain",
                         table.inner_text()), table.inner_text()
        grid = table.locator("[data-testid='stDataFrame']")
        grid.wait_for()
        table.get_by_text("Each row is one individual").first.wait_for()
        wait_idle(page)
        table.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "fq_2_counterexamples.png"))
        page.locator(f"{CHART} >> text=/Fair\\[race\\]: individuals/").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "fq_2_rates.png"))

        # 5. to the Report page and back: the run, the selection and the table are kept
        goto(page, "Report")
        page.get_by_role("button", name="Download the report (PDF)").wait_for(timeout=LONG)
        wait_idle(page)
        goto(page, "Audit")
        wait_idle(page)
        page.locator(".st-key-node_panel").wait_for(timeout=LONG)
        if not _table(page).is_visible():  # the selection may fall back to the critical comparison
            _fair_node(page).click()
        _table(page).wait_for(timeout=60_000)
        page.screenshot(path=str(SHOTS / "fq_3_back.png"))
        assert not errors, errors
