"""``make app`` serves the dashboard on 127.0.0.1 only: Streamlit's health endpoint answers ``ok``, the entry page
loads, and the only listening socket on the port is bound to the loopback address (the dashboard has no login)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.server import free_port

ROOT = Path(__file__).resolve().parents[1]
# a port chosen free, then bound by another process: alone, after the tests that run side by side
pytestmark = pytest.mark.serial


def _make_vars(tmp_path: Path) -> list[str]:
    """Run with the venv ``make test`` built, or else with this interpreter (its install step skipped)."""
    if (ROOT / ".venv" / ".installed").exists():
        return []
    stamp = tmp_path / "installed"
    stamp.touch()
    return [f"PY={sys.executable}", f"STAMP={stamp}"]


def _listening(port: int) -> list[str]:
    """Local addresses of the LISTEN sockets on ``port`` (from /proc/net/tcp and tcp6), as hex strings."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, state = fields[1], fields[3]
            host, _, hex_port = address.rpartition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.append(host)
    return found


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_app_binds_to_localhost_by_default_and_address_is_overridable(tmp_path):
    dry = subprocess.run(["make", "-n", "app", *_make_vars(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert "--server.address 127.0.0.1" in dry.stdout, dry.stdout + dry.stderr
    dry = subprocess.run(["make", "-n", "app", "ADDRESS=0.0.0.0", "PORT=9999", *_make_vars(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True)
    assert "--server.address 0.0.0.0" in dry.stdout and "--server.port 9999" in dry.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_app_serves_the_entry_page_on_localhost_only(tmp_path):
    port = free_port()
    proc = subprocess.Popen(["make", "-s", "app", f"PORT={port}", *_make_vars(tmp_path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "STREAMLIT_SERVER_HEADLESS": "true",
                                 "FAIRAUDIT_WORKSPACE": str(tmp_path / "workspace")})
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
        hosts = _listening(port)
        if not hosts:
            pytest.skip("/proc/net/tcp is not readable here")
        # 0100007F is 127.0.0.1 (little-endian hex); 0.0.0.0 or :: would be every interface
        assert set(hosts) == {"0100007F"}, hosts
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
