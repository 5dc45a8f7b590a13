"""Benchmark (issue 30): how long the dashboard takes to answer a click, in a real browser.

Starts ``streamlit run app.py`` headless on a free port (the browser tests' helpers, ``tests/e2e/server.py``) and
drives Debian's chromium with Playwright as a newcomer would on the demo: open the app, load the demo audit, then
``--repeat`` rounds of visiting every page and coming back, clicking spec-tree nodes on the Audit page, and opening
the Report page. Each action is timed from the click until the page has settled: the expected element is visible
and Streamlit's script is no longer running (the app's ``data-test-script-state``, sampled every 10 ms in the page,
has stayed ``notRunning`` for a quiet period; the settle time is the later of the element's appearance and the end
of the last run, so a rerun the page asks for itself is counted).

The table shows each action's median over the rounds, the issue's target and whether it is met, and the ratio
against the reference measured in the same run: a rerun of the Overview page (the ``R`` key), what a rerun of
the lightest page costs on this machine.

Run: ``.venv/bin/python bench/dashboard.py`` (about 3 minutes; ``--repeat N``, ``--shots DIR`` for a screenshot of
each page). Results: docs/benchmarks/index.md ("Dashboard (issue 30)").
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.server import browser_page, chromium, serve  # noqa: E402  (the browser tests' helpers)

PAGES = ["Overview", "Data", "Model", "Specification", "Audit", "Report"]
TARGETS = {"page switch": 1.5, "node click": 1.0, "Report page, first visit after a change": 3.0,
           "Report page, again": 3.0}  # seconds (issue 30, item 5)
CHART = "[data-testid='stVegaLiteChart']"
QUIET_MS = 700  # the script must stay idle this long to count as settled (a page may ask for a rerun)

# records in the page when the script last ran: window.__busy (performance.now() of the last sample that was not
# idle) and window.__state (the last sample)
_WATCH = """
() => {
  if (window.__watching) return;
  window.__watching = true;
  window.__busy = performance.now();
  setInterval(() => {
    const app = document.querySelector("[data-testid='stApp']");
    const s = app ? app.getAttribute('data-test-script-state') : 'none';
    window.__state = s;
    if (s !== 'notRunning') window.__busy = performance.now();
  }, 10);
}
"""


def _now(page) -> float:
    return page.evaluate("performance.now()")


def settle(page, start: float, expected, timeout_ms: float = 180_000) -> float:
    """Seconds from ``start`` (page time, ms) until ``expected`` (a locator) is visible and the script is idle."""
    expected.wait_for(state="visible", timeout=timeout_ms)
    seen = _now(page)
    page.wait_for_function(f"() => window.__state === 'notRunning' && performance.now() - window.__busy > {QUIET_MS}",
                           timeout=timeout_ms, polling=50)
    expected.wait_for(state="visible", timeout=timeout_ms)  # still there after the last run
    busy = page.evaluate("window.__busy")
    return (max(seen, busy) - start) / 1000


def timed(page, act, expected) -> float:
    page.evaluate(_WATCH)
    start = _now(page)
    act()
    return settle(page, start, expected)


def heading(page, title: str):
    return page.get_by_role("heading", name=title if title != "Overview" else "fairaudit", exact=True).first


def page_ready(page, title: str):
    """What says that a page has been drawn: its heading, and for the Audit page its tree, for the Report page its
    table of final values (the last element of the page)."""
    if title == "Audit":
        return page.locator(f"{CHART} .mark-text text[aria-label*='symbol: ']").first
    if title == "Report":
        return page.get_by_role("heading", name="Final values per node").first
    return heading(page, title)


def open_page(page, title: str) -> float:
    link = page.locator("[data-testid='stSidebarNav']").get_by_role("link", name=title, exact=True)
    return timed(page, link.click, page_ready(page, title))


def node(page, node_id: str):
    return page.locator(f"{CHART} .mark-text text[aria-label*='symbol: '][aria-label*='id: {node_id};']").first


def click_node(page, node_id: str, name: str) -> float:
    return timed(page, node(page, node_id).click,
                 page.locator(".st-key-node_panel").get_by_text(name).first)


def screenshots(page, folder: Path) -> None:
    """Each page, untimed, in a window tall enough for its charts; the Report page with its PDF preview open."""
    page.set_viewport_size({"width": 1400, "height": 2400})
    for title in PAGES:
        open_page(page, title)
        if title == "Report":
            page.get_by_text("Preview: page 1 of the PDF").first.click()
            settle(page, _now(page), page.locator("[data-testid='stImageContainer'] img").first)
        page.screenshot(path=str(folder / f"dash_{title.lower()}.png"))


def run(repeat: int, shots: Path | None) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}

    def note(action: str, seconds: float) -> None:
        times.setdefault(action, []).append(seconds)
        print(f"  {action:<40} {seconds:6.2f} s", flush=True)

    with serve(timeout=120) as url, browser_page(1400, 900) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        start = time.perf_counter()
        page.goto(url)
        page.get_by_role("button", name="Load demo audit").wait_for(timeout=120_000)
        page.evaluate(_WATCH)
        settle(page, 0, page.get_by_role("button", name="Load demo audit"))
        note("open the app", time.perf_counter() - start)
        note("load demo audit (once)", timed(page, page.get_by_role("button", name="Load demo audit").click,
                                             page.get_by_text("Next:", exact=False).first))
        for r in range(repeat):
            note("rerun Overview (reference)", timed(page, lambda: page.keyboard.press("r"),
                                                     heading(page, "Overview")))
            for title in PAGES[1:] + PAGES[-2::-1]:  # Data … Report, then back down to Overview
                if title == "Report":  # the first round: a new result since the last visit
                    label = "Report page, first visit after a change" if r == 0 else "Report page, again"
                    note(label, open_page(page, title))
                else:
                    note("page switch", open_page(page, title))
                    note(f"page switch: {title}", times["page switch"][-1])
            open_page(page, "Audit")
            for node_id, name in (("n6", "race_parity"), ("n1", "sex_parity"), ("n3", "A term, not a claim")):
                note("node click", click_node(page, node_id, name))
            note("Report page, first visit after a change", open_page(page, "Report"))  # the clicks chose other nodes
            note("page switch", open_page(page, "Audit"))
            note("page switch: Audit", times["page switch"][-1])
            open_page(page, "Overview")
        if shots is not None:
            screenshots(page, shots)
        if errors:
            print("browser errors:", errors)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the walk (default 3)")
    parser.add_argument("--shots", type=Path, default=None, help="a folder for a screenshot of each page")
    args = parser.parse_args()
    if chromium() is None:
        print("chromium is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 2
    if args.shots is not None:
        args.shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as workspace:
        os.environ["FAIRAUDIT_WORKSPACE"] = workspace  # never ./workspace of the checkout
        times = run(args.repeat, args.shots)
    reference = statistics.median(times["rerun Overview (reference)"])
    print(f"\n{'action':<40} {'n':>3} {'median':>8} {'max':>8} {'÷ ref':>7}  target")
    every = True
    for action, values in times.items():
        med = statistics.median(values)
        target = TARGETS.get(action)
        met = "" if target is None else f"≤ {target:g} s " + ("met" if med <= target else "NOT met")
        every &= target is None or med <= target
        print(f"{action:<40} {len(values):>3} {med:>7.2f}s {max(values):>7.2f}s {med / reference:>7.2f}  {met}")
    print(f"\nreference: a rerun of the Overview page (R), median {reference:.2f} s; "
          f"{os.cpu_count()} CPUs; " + ("every target met" if every else "NOT every target met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
