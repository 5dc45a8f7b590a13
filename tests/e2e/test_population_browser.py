"""A population program on the Audit page, in a real browser: pick FairSquare's Fig. 1 example, see a parse error
while it is broken, run the sound engine, click the ratio node of the tree and read, from its convergence plot, that
its bounds narrowed from round to round; the Report page and back keep everything.

Drives Debian's chromium with Python Playwright (see ``test_browser.py``); screenshots go to
``tests/e2e/screenshots/pop_*.png``.
"""
from __future__ import annotations

import re

import pytest

from fairaudit import engines
from tests.e2e.server import ROOT, SHOTS, browser_page, goto, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]

CHART = "[data-testid='stVegaLiteChart']"
LONG = 180_000
INTERVAL = re.compile(r"(?P<unit>[^:;]+): (?P<step>[\d,]+);.*interval: \[(?P<lo>[-\d.e]+), (?P<hi>[-\d.e]+)\]")


def _node(page, node_id: str):
    return page.locator(f"{CHART} .mark-text text[aria-label*='symbol: '][aria-label*='id: {node_id};']").first


def _click_when_still(page, locator, tries: int = 50) -> None:
    """Click ``locator`` once it stops moving: the charts above it lay themselves out after the script has run."""
    before = None
    for _ in range(tries):
        box = locator.bounding_box()
        if box is not None and box == before:
            break
        before = box
        page.wait_for_timeout(300)
    locator.click()


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label`` (typed, as a user would)."""
    box = page.locator("[data-testid='stSelectbox']").filter(has_text=label).first
    box.click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")
    wait_idle(page)


def _intervals(page) -> dict[int, tuple[float, float]]:
    """Step -> (lo, hi) of the plotted node, read from the convergence plot's hover points (Vega writes each mark's
    tooltip fields into its aria-label)."""
    labels = page.eval_on_selector_all(f"{CHART} path[aria-label*='interval: [']",
                                       "els => els.map(e => e.getAttribute('aria-label'))")
    out = {}
    for label in labels:
        m = INTERVAL.search(label)
        if m:
            out[int(m["step"].replace(",", ""))] = (float(m["lo"]), float(m["hi"]))
    return out


def test_fig1_converges_node_by_node(browser_ready, app_url):
    fairsquare = engines.get("fairsquare")
    with browser_page(1400, 1800) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(app_url)
        page.get_by_role("button", name="Load demo audit").wait_for()
        goto(page, "Audit")
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "pop_0_audit_empty.png"))

        # 1. a population program: pick another example, then FairSquare's Fig. 1
        page.get_by_text("Population program (.fr)").first.click()
        editor = page.locator("textarea[aria-label='Population program']")
        editor.wait_for()
        wait_idle(page)
        # an upload: its text goes into the editor; one too large is refused with a sentence
        dropzone = page.locator("[data-testid='stFileUploaderDropzoneInput']").first
        mine = "# my program\n" + (ROOT / "fairaudit/programs/examples/toy_t1.fr").read_text(encoding="utf-8")
        dropzone.set_input_files(files=[{"name": "mine.fr", "mimeType": "text/plain", "buffer": mine.encode()}])
        page.get_by_text("mine.fr parses").first.wait_for()
        wait_idle(page)
        assert editor.input_value().startswith("# my program")
        big = "#" + "x" * (80 * 1024) + "\n"
        dropzone = page.locator("[data-testid='stFileUploaderDropzoneInput']").first
        dropzone.set_input_files(files=[{"name": "big.fr", "mimeType": "text/plain", "buffer": big.encode()}])
        page.get_by_text("a population program is a short text file").first.wait_for()
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "pop_0b_upload_too_large.png"))
        _pick(page, "Example program", "toy_t3")
        page.get_by_text("Toy T3: box-representable").first.wait_for()
        _pick(page, "Example program", "fig1_original")
        page.get_by_text("FairSquare Fig. 1: hiring").first.wait_for()
        assert "fairnessTarget(hire > 0.5)" in editor.input_value()

        # 2. a typo: its line and column, and Run is disabled until it is fixed
        good = editor.input_value()
        editor.fill(good.replace("gaussian(25, 100)", "gaussian(25, 100"))
        editor.press("Control+Enter")
        page.get_by_text("The program does not parse").first.wait_for()
        wait_idle(page)
        assert page.get_by_role("button", name="Run", exact=True).is_disabled()
        page.screenshot(path=str(SHOTS / "pop_1_parse_error.png"))
        editor.fill(good)
        editor.press("Control+Enter")
        page.get_by_text("fig1_original.fr parses").first.wait_for()
        wait_idle(page)

        # 3. the sound engine, with its own defaults
        _pick(page, "Engine", "FairSquare")
        page.get_by_text(fairsquare.summary[1:40]).first.wait_for()
        budget = page.get_by_role("spinbutton", name=fairsquare.option("time_budget").title, exact=True)
        assert float(budget.input_value()) == fairsquare.option("time_budget").default
        assert page.get_by_role("checkbox", name=fairsquare.option("stop").title, exact=True).is_checked()
        page.screenshot(path=str(SHOTS / "pop_2_ready.png"))

        # 4. run: a decided verdict (Fig. 1 is unfair at ε = 0.15)
        page.get_by_role("button", name="Run", exact=True).click()
        page.get_by_text("Verdict:").first.wait_for(timeout=LONG)
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "pop_3_result.png"))

        # 5. click the ratio node: its plot shows the bounds narrowing round by round
        # (a click that lands before Vega has bound its selection handlers is lost: click again if nothing came)
        term = page.locator(".st-key-node_panel").get_by_text("A term, not a claim").first
        for _ in range(4):
            _click_when_still(page, _node(page, "n1"))
            try:
                term.wait_for(timeout=8_000)
                break
            except Exception:  # noqa: BLE001 - playwright's TimeoutError: try once more
                continue
        term.wait_for()
        page.wait_for_function(
            f"() => document.querySelectorAll(\"{CHART} path[aria-label*='interval: [']\").length >= 2")
        wait_idle(page)
        seen = _intervals(page)
        assert len(seen) >= 2, seen
        first, last = seen[min(seen)], seen[max(seen)]
        assert last[1] - last[0] < first[1] - first[0], seen
        assert last[0] <= 0.48412 <= last[1], seen
        page.screenshot(path=str(SHOTS / "pop_4_ratio_node.png"))

        # 6. the Report and back: the program, the engine and the result are all still there
        goto(page, "Report")
        page.get_by_role("button", name="Download the report (PDF)").wait_for(timeout=LONG)
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "pop_5_report.png"))
        goto(page, "Audit")
        wait_idle(page)
        page.get_by_text("Verdict:").first.wait_for()
        assert page.locator("textarea[aria-label='Population program']").count() == 1
        page.screenshot(path=str(SHOTS / "pop_6_back.png"))
        assert not errors, errors
