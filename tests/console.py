"""``fairaudit ARGS`` through ``main`` in the test's own process: what the console script would exit with and print,
without starting Python (and importing torch, pandas, ...) again for each command. For tests of what a command
says or refuses; a test of the process itself (signals, exit at interpreter shutdown, imports, stderr that is not a
terminal, a file read back in another process) starts ``python -m fairaudit``."""
from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

Done = namedtuple("Done", "returncode stdout stderr")  # the fields of subprocess.CompletedProcess the tests read


def run_main(capsys, *args, cwd: str | Path | None = None) -> Done:
    """The exit code, stdout and stderr of ``fairaudit ARGS`` (argparse's usage errors and ``--help`` too), run in
    ``cwd`` when given; ``capsys`` is the test's fixture."""
    from fairaudit.cli import main

    before = os.getcwd()
    capsys.readouterr()
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as done:  # argparse: --help (0), a usage error (2)
            code = done.code
    finally:
        os.chdir(before)
    out, err = capsys.readouterr()
    return Done(code, out, err)
