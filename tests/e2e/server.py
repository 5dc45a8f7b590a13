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
            yield page
        finally:
            b.close()


def wait_idle(page, timeout: float = 120_000) -> None:
    """Wait until Streamlit has finished the current script run (no 'running' status widget)."""
    page.wait_for_timeout(400)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)
    page.wait_for_timeout(600)


def goto(page, title: str) -> None:
    """Open a page from the sidebar and wait for its heading."""
    page.locator("[data-testid='stSidebarNav']").get_by_role("link", name=title, exact=True).click()
    page.get_by_role("heading", name=title if title != "Overview" else "fairaudit", exact=True).first.wait_for()
