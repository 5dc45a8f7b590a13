"""Issue 18 in a real browser: the Audit page attaches to a decision log in the workspace while a writer thread
appends rows; the live view (rows so far, verdict, tree, plot) updates by itself, and Stop makes the final result
the page's result. Screenshots go to ``tests/e2e/screenshots/live_*.png``."""
from __future__ import annotations

import re
import threading
import time

import pytest

import fairaudit
from fairaudit import data
from fairaudit.ui.logic import DEMO_SPEC
from tests.e2e.server import SHOTS, browser_page, goto, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]
LONG = 180_000
PRED = "hours_per_week >= 45"  # on Adult's first 8,000 rows in file order the demo spec is violated


def _rows(page) -> int:
    text = page.locator(".st-key-live_view").inner_text()
    found = re.search(r"([\d,]+) rows so far", text)
    return int(found.group(1).replace(",", "")) if found else 0


TOOLBAR_CLEAR = """(chart) => {
  // the hovered chart's own toolbar (its buttons) against every banner and every line of text of the live view
  const bar = chart.closest('[data-testid="stElementContainer"]').querySelector('[data-testid="stElementToolbar"]');
  if (!bar) return 'no toolbar';
  const boxes = Array.from(bar.querySelectorAll('button')).map(b => b.getBoundingClientRect()).filter(r => r.width);
  const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const view = document.querySelector('.st-key-live_view');
  for (const alert of view.querySelectorAll('[data-testid="stAlert"]'))  // a banner: its whole box
    for (const b of boxes) if (hit(alert.getBoundingClientRect(), b)) return 'overlaps: ' + alert.innerText.slice(0, 80);
  const walker = document.createTreeWalker(view, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    if (!node.textContent.trim() || node.parentElement.closest('[data-testid="stVegaLiteChart"], [data-testid="stElementToolbar"]')) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects())
      for (const b of boxes) if (hit(r, b)) return 'overlaps: ' + node.textContent.slice(0, 80);
  }
  return boxes.length ? 'clear' : 'no buttons';
}"""


ICONS_AS_TEXT = """(names) => {
  // text that is an icon's name (or a ':material/…:' code) but not drawn in the icon font: shown as words
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const t = node.textContent.trim();
    if (!t || !(t.includes(':material/') || names.includes(t))) continue;
    const el = node.parentElement;
    if (el.closest('script, style, textarea, code, pre')) continue;
    if (/Material/i.test(getComputedStyle(el).fontFamily)) continue;
    const r = el.getBoundingClientRect();
    if (r.width && r.height) out.push(t);
  }
  return out;
}"""


def _icon_names() -> list[str]:
    """Every Material icon the dashboard names, and those Streamlit draws itself (expanders, the sidebar)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = set()
    for path in [root / "app.py", *(root / "pages").glob("*.py"), *(root / "fairaudit" / "ui").glob("*.py")]:
        found |= set(re.findall(r":material/([a-z0-9_]+):", path.read_text(encoding="utf-8")))
    return sorted(found | {"keyboard_arrow_down", "keyboard_arrow_right", "keyboard_double_arrow_left", "arrow_back"})


def _no_icon_as_text(page) -> None:
    assert page.evaluate(ICONS_AS_TEXT, _icon_names()) == []


def _toolbars_clear(page) -> None:
    """Hover each chart of the live view: its toolbar covers none of the view's lines or warnings."""
    charts = page.locator(".st-key-live_view [data-testid='stVegaLiteChart']")
    # the view redraws every second while the log grows: a chart being replaced is briefly absent
    from playwright.sync_api import expect

    expect(charts).to_have_count(2, timeout=15_000)
    for i in range(charts.count()):
        charts.nth(i).scroll_into_view_if_needed()
        charts.nth(i).hover()
        page.wait_for_timeout(500)
        assert charts.nth(i).evaluate(TOOLBAR_CLEAR) == "clear", i


def test_attach_a_live_log_and_stop(browser_ready, app_url, workspace_folder, tmp_path):
    lines = data.load("adult").frame.iloc[:8000].to_csv(index=False).splitlines(keepends=True)
    logs = workspace_folder / "logs"
    logs.mkdir(exist_ok=True)
    log = logs / "adult_live.csv"
    log.write_text("".join(lines[:301]))
    rest = tmp_path / "adult_8000.csv"
    rest.write_text("".join(lines))
    stop = threading.Event()

    def append():
        with open(log, "a") as fh:
            for i in range(301, len(lines), 100):
                if stop.is_set():
                    return
                fh.write("".join(lines[i:i + 100]))
                fh.flush()
                time.sleep(0.1)

    with browser_page(1400, 1000) as page:
        page.goto(app_url)
        page.get_by_role("button", name="Load demo audit").click()
        page.get_by_text("violated with probability").first.wait_for(timeout=LONG)
        wait_idle(page, LONG)
        goto(page, "Audit")
        wait_idle(page, LONG)
        page.get_by_text("Live decision log").click()
        page.get_by_label("Decision (a condition over the log's columns; true = favourable)").fill(PRED)
        page.keyboard.press("Enter")
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "live_0_form.png"), full_page=True)
        page.locator(".st-key-live_attach button").click()
        page.get_by_text(re.compile(r"300 rows so far")).wait_for(timeout=LONG)
        page.wait_for_timeout(1500)
        page.locator(".st-key-live_view").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "live_1_attached.png"), full_page=True)
        first = _rows(page)
        writer = threading.Thread(target=append, daemon=True)
        writer.start()
        try:
            page.locator(".st-key-live_view").get_by_text(re.compile(r"violated with probability")).first.wait_for(
                timeout=LONG)
            deadline = time.monotonic() + 60
            while _rows(page) < 4000 and time.monotonic() < deadline:
                page.wait_for_timeout(500)
            later = _rows(page)
            page.locator(".st-key-live_view").scroll_into_view_if_needed()
            assert later > first  # the view followed the log by itself (no click)
            page.screenshot(path=str(SHOTS / "live_2_following.png"), full_page=True)
            _toolbars_clear(page)  # the chart toolbar used to cover the view's last line or warning
            page.locator(".st-key-live_stop button").first.click()
            page.get_by_text(re.compile(r"Live log adult_live\.csv: [\d,]+ rows audited; interrupted")).wait_for(
                timeout=LONG)
        finally:
            stop.set()
            writer.join(5)
        wait_idle(page)
        page.screenshot(path=str(SHOTS / "live_3_stopped.png"), full_page=True)
        body = page.locator("body").inner_text()
        at_rest = fairaudit.audit(str(rest), DEMO_SPEC, pred=PRED, order="given")  # the same rows, at rest
        assert at_rest.verdict == "false"
        assert f"after {at_rest.stop_step:,} observations" in body  # the page's result: decided where the file is


def test_the_chart_toolbar_leaves_the_last_warning_readable(browser_ready, app_url, workspace_folder):
    """COMPAS sorted by decile_score, decided by decile_score <= 4: the rows drift, and the live view ends its
    warnings with the order one, right above the charts; hovering a chart shows its toolbar, which used to cover
    the bottom of that warning."""
    logs = workspace_folder / "logs"
    logs.mkdir(exist_ok=True)
    frame = data.load("compas").frame.sort_values("decile_score", kind="stable").iloc[:6000]
    (logs / "a_sorted.csv").write_text(frame.to_csv(index=False))  # first in the list: chosen by default
    spec = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] >= -0.1 and '
            'E[pred | sex == "Female"] >= 0.3')
    with browser_page(1400, 1000) as page:
        page.goto(app_url)
        page.get_by_role("heading", name="fairaudit", exact=True).first.wait_for()
        wait_idle(page)
        goto(page, "Specification")
        page.locator("textarea").first.fill(spec)
        page.keyboard.press("Control+Enter")
        wait_idle(page)
        goto(page, "Audit")
        page.get_by_text("Live decision log").click()
        page.get_by_label("Decision (a condition over the log's columns; true = favourable)").fill("decile_score <= 4")
        page.keyboard.press("Enter")
        wait_idle(page)
        page.locator(".st-key-live_attach button").click()
        page.locator(".st-key-live_view").get_by_text(re.compile("do not look randomly ordered")).wait_for(timeout=LONG)
        page.wait_for_timeout(1500)
        _toolbars_clear(page)
        page.screenshot(path=str(SHOTS / "live_4_toolbar.png"), full_page=True)
        _no_icon_as_text(page)
        goto(page, "Report")  # while the log is watched: its audit so far
        page.get_by_text("Preview: page 1 of the PDF").wait_for(timeout=LONG)
        assert "a_sorted.csv so far" in page.locator("body").inner_text()
        _no_icon_as_text(page)
        goto(page, "Audit")
        page.locator(".st-key-live_stop button").first.click()
        wait_idle(page)
        _no_icon_as_text(page)
