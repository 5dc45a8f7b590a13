"""Shared by the browser tests: a workspace folder of their own (never ./workspace of the checkout), and the
check that Debian's chromium and Playwright are there (a skip outside CI, a failure in CI)."""
from __future__ import annotations

import os

import pytest

from tests.e2e.server import SHOTS, chromium


@pytest.fixture(scope="session", autouse=True)
def workspace_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workspace")
    old = os.environ.get("FAIRAUDIT_WORKSPACE")
    os.environ["FAIRAUDIT_WORKSPACE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("FAIRAUDIT_WORKSPACE", None)
    else:
        os.environ["FAIRAUDIT_WORKSPACE"] = old


@pytest.fixture(scope="module")
def browser_ready():
    if chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install -y chromium); required in CI")
        pytest.skip("chromium is not installed")
    pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else __import__("playwright.sync_api")
    SHOTS.mkdir(exist_ok=True)


@pytest.fixture(scope="module", autouse=True)
def one_browser_at_a_time(tmp_path_factory):
    """Under pytest-xdist (`make test`), the browser test modules take turns: each holds a lock file shared by the
    workers while it runs (a Streamlit server and a chromium each), so the other worker runs the rest of the suite
    beside one browser, never two. (xdist's own `--dist loadgroup` does not group tests with this pytest.)"""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    import fcntl

    lock = tmp_path_factory.getbasetemp().parent / "browser.lock"  # the workers' temp folders share this parent
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
