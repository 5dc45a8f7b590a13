"""Page switches to the dashboard's "Groups" page with its scan cached (issue 30's target: ≤ 1.5 s), beside a switch
to the Report page measured in the same run (the reference), in a real browser (Debian's chromium, Playwright).

    python bench/groups_page.py [--repeat 5]

Prints one table: the median seconds from the sidebar click until the page's chart is drawn and the script run is
over, and the ratio Groups / Report. No assertion: the machine is shared and noisy.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.server import browser_page, goto, serve, wait_idle  # noqa: E402

CHART = "[data-testid='stVegaLiteChart']"
IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def switch(page, title: str, ready: str) -> float:
    goto(page, "Audit")
    wait_idle(page)
    start = time.monotonic()
    page.locator("[data-testid='stSidebarNav']").get_by_role("link", name=title, exact=True).click()
    page.locator(ready).first.wait_for()
    page.wait_for_function(IDLE)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with serve() as url, browser_page(1400, 1800) as page:
        page.goto(url)
        page.get_by_role("button", name="Load demo audit").click()
        page.get_by_text("violated with probability").first.wait_for(timeout=180_000)
        wait_idle(page)
        goto(page, "Groups")
        wait_idle(page)
        page.get_by_role("button", name="Run the scan").click()
        page.get_by_text("Guarantee.").first.wait_for(timeout=180_000)
        wait_idle(page)
        groups = [switch(page, "Groups", CHART) for _ in range(args.repeat)]
        report = [switch(page, "Report", "[data-testid='stDownloadButton']") for _ in range(args.repeat)]
    g, r = statistics.median(groups), statistics.median(report)
    print(f"{'switch to':<12}{'median s':>10}{'max s':>8}")
    print(f"{'Report':<12}{r:>10.2f}{max(report):>8.2f}  (reference)")
    print(f"{'Groups':<12}{g:>10.2f}{max(groups):>8.2f}  ratio {g / r:.2f} · target ≤ 1.5 s")


if __name__ == "__main__":
    main()
