"""Issue 30: the ``fairaudit`` process ends with its command's exit code as soon as the command is done
(``fairaudit.cli.console`` → ``exit_now``: threads joined, atexit handlers run, stdout/stderr flushed, then
``os._exit``), so that pyarrow's thread-pool teardown at interpreter exit (apache/arrow#34314) cannot turn a finished
command into a SIGABRT. ``main`` itself still returns the code (for Python callers and the tests)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import fairaudit.cli as cli

ROOT = Path(__file__).resolve().parents[1]


class Exited(Exception):
    def __init__(self, code):
        self.code = code


@pytest.fixture
def exits(monkeypatch):
    """``console(argv)`` in process, returning the code it would have ended the process with."""
    def fake_exit(code):
        raise Exited(code)

    monkeypatch.setattr(cli.os, "_exit", fake_exit)

    def run(argv):
        with pytest.raises(Exited) as done:
            cli.console(argv)
        return done.value.code

    return run


@pytest.mark.parametrize("argv,code", [
    (["check", "E[pred] > 0.1"], 0),
    (["check", "E[pred] >"], 2),  # bad input
    (["nonsense"], 2),  # argparse's usage error
    (["--help"], 0),  # argparse's SystemExit(0)
    (["audit", "--data", "ricci", "--pred", "promoted == 1", "--spec", "E[pred] > 0.9", "--engine", "dataset"], 1),
    (["audit", "--data", "ricci", "--pred", "promoted == 1", "--spec", "E[pred] > 0.1", "--engine", "dataset"], 0),
])
def test_console_ends_with_the_command_s_exit_code(exits, capsys, argv, code):
    assert exits(argv) == code


def test_console_runs_the_atexit_handlers_and_flushes_the_output(tmp_path):
    script = ("import atexit, sys\nimport fairaudit.cli as cli\n"
              "atexit.register(lambda: print('atexit ran'))\n"
              "sys.stdout.write('x' * 100000)\n"  # buffered output must come out whole
              "cli.console(['check', 'E[pred] > 0.1', '--data', 'ricci'])\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("x" * 100000)
    assert "ok: 3 nodes (validated against ricci)\n" in done.stdout and done.stdout.endswith("atexit ran\n")


@pytest.mark.parametrize("argv,code", [
    (["check", "E[pred] >"], 2),
    (["audit", "--data", "ricci", "--pred", "promoted == 1", "--spec", "E[pred] > 0.9", "--engine", "dataset"], 1),
])
def test_python_m_fairaudit_keeps_the_exit_code(argv, code):
    done = subprocess.run([sys.executable, "-m", "fairaudit", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == code, done.stderr
    assert done.stdout or done.stderr  # what it printed came out before the process ended
