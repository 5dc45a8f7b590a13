"""``make app`` serves the dashboard: Streamlit's health endpoint answers ``ok`` and the entry page loads.
(Uses the venv ``make test`` has just built: the install step is skipped when nothing changed.)"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.server import free_port

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_app_serves_the_entry_page():
    if not (ROOT / ".venv" / ".installed").exists():
        pytest.skip("no venv built by make here (run `make test`)")
    port = free_port()
    proc = subprocess.Popen(["make", "-s", "app", f"PORT={port}"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "STREAMLIT_SERVER_HEADLESS": "true"})
    try:
        deadline, answer = time.monotonic() + 90, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                answer = urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read()
                break
            except OSError:
                time.sleep(0.5)
        assert answer == b"ok", proc.stdout.read().decode() if proc.poll() is not None else "no answer"
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
        assert "<div id=\"root\">" in page or "streamlit" in page.lower()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
