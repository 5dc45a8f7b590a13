"""Start the dashboard on a free port and drive it with Debian's chromium (Python Playwright)."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(timeout: float = 60.0):
    """Yield the base URL of a fresh ``streamlit run app.py``; the server is stopped afterwards."""
    port = free_port()
    log = open(SHOTS.parent / f".server-{port}.log", "w") if SHOTS.parent.exists() else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {proc.returncode}")
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("streamlit did not answer its health check")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if log is not subprocess.DEVNULL:
            log.close()
            Path(log.name).unlink(missing_ok=True)


def chromium() -> str | None:
    return shutil.which("chromium")


@contextlib.contextmanager
def browser_page(width: int = 1400, height: int = 900):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = b.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(60_000)
            page.add_init_script(_COUNT_SCRIPT_RUNS)
            yield page
        finally:
            b.close()


# Streamlit marks its root element with the state of the script run (data-test-script-state: "running" while the
# script runs, "notRunning" once it has finished). This script, run in every document the page loads, counts the
# runs that have finished (the attribute leaving "running"); ``wait_idle`` compares that count with the one it saw
# last, so it waits for the run that the action before it started instead of sleeping a fixed time.
_COUNT_SCRIPT_RUNS = """
window.__faRunsDone = 0;
window.__faRunsSeen = 0;
new MutationObserver((records) => {
  for (const r of records) {
    if (r.oldValue === 'running' && r.target.getAttribute('data-test-script-state') !== 'running') {
      window.__faRunsDone += 1;
    }
  }
}).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                      attributeFilter: ['data-test-script-state']});
"""
_SCRIPT_STATE = "(document.querySelector('[data-testid=\"stApp\"]') || {getAttribute: () => 'initial'})" \
    ".getAttribute('data-test-script-state')"
_RUN_STARTED_OR_DONE = ("() => window.__faRunsDone > window.__faRunsSeen"
                        f" || ['running', 'rerunRequested'].includes({_SCRIPT_STATE})")
_IDLE = f"() => ['notRunning', 'compilationError'].includes({_SCRIPT_STATE})"
# how long an action may take to reach the server and start a script run (an action that starts none costs this)
RUN_START_GRACE_MS = 1_500
# before a screenshot: the page has already shown what the test waited for; only a run still starting is waited for
SHOT_GRACE_MS = 400
# after the run: the browser draws what the run sent (Vega charts draw asynchronously)
SETTLE_MS = 200


def wait_idle(page, timeout: float = 120_000, grace_ms: float = RUN_START_GRACE_MS) -> None:
    """Wait until Streamlit has finished the script run that the last action started (or, if the action started
    none within ``grace_ms``, until no run is going on). Before a screenshot that follows no action, a short
    ``grace_ms`` keeps the wait short."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(_RUN_STARTED_OR_DONE, timeout=grace_ms, polling=50)
    except PlaywrightTimeout:
        pass  # the action started no run: wait only for none to be going on
    page.wait_for_function(_IDLE, timeout=timeout, polling=50)
    page.evaluate("() => { window.__faRunsSeen = window.__faRunsDone; }")
    page.wait_for_timeout(SETTLE_MS)


def goto(page, title: str) -> None:
    """Open a page from the sidebar and wait for its heading."""
    page.locator("[data-testid='stSidebarNav']").get_by_role("link", name=title, exact=True).click()
    page.get_by_role("heading", name=title if title != "Overview" else "fairaudit", exact=True).first.wait_for()
