"""Standard output and standard error that a command may lose without losing its work (``guarded_streams``).

A command's exit code is the verdict a pipeline gate relies on, and its ``--json`` / ``--pdf`` are what the gate
keeps; what it prints is for a person. So an error writing to stdout or stderr — the reader of a pipe gone
(``fairaudit audit ... | head -1``: ``BrokenPipeError``), a full disk under ``> out.txt`` — never stops a command,
never changes its exit code and never keeps an output file from being written: the rest of what the command prints
is dropped. Python's documentation on SIGPIPE recommends the same move: the stream's file descriptor is pointed at
``os.devnull``, so that nothing flushed later (``fairaudit.cli.exit_now``, the interpreter's own exit, a child
process sharing the descriptor) meets the closed pipe again. A closed pipe is what ``| head`` is for and is not
said; any other write error is said once on stderr, when stderr still takes it.
"""
from __future__ import annotations

import contextlib
import errno
import os
import sys


class GuardedStream:
    """``stream`` (a text stream: ``sys.stdout``, ``sys.stderr``, a ``StringIO``) whose write errors are swallowed
    (module doc); every other attribute is the stream's own."""

    def __init__(self, stream, name: str):
        self._stream = stream
        self._name = name  # "standard output" / "standard error", for the one line said of an error
        self.lost = False  # True once a write failed: later writes are dropped

    def __getattr__(self, attribute):
        return getattr(self._stream, attribute)

    def write(self, text):
        if not self.lost:
            try:
                return self._stream.write(text)
            except (OSError, ValueError) as err:  # ValueError: the stream was closed under us
                self._lose(err)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        if not self.lost:
            try:
                self._stream.flush()
            except (OSError, ValueError) as err:
                self._lose(err)

    def _lose(self, err: Exception) -> None:
        """Drop what is left: the descriptor pointed at ``os.devnull`` (what is still buffered drains there)."""
        self.lost = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            fd = self._stream.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, fd)
            finally:
                os.close(null)
            self._stream.flush()
        if isinstance(err, OSError) and err.errno not in (errno.EPIPE, errno.ECONNRESET) and self._name != \
                "standard error":
            print(f"fairaudit: could not write to {self._name} ({err.strerror or err}); the rest of what this "
                  "command prints is dropped, its output files and exit code are not affected", file=sys.stderr)


@contextlib.contextmanager
def guarded_streams():
    """``sys.stdout`` and ``sys.stderr`` wrapped in ``GuardedStream`` while the block runs (a guard already in place
    is kept), then given back."""
    saved = sys.stdout, sys.stderr
    if sys.stdout is not None and not isinstance(sys.stdout, GuardedStream):
        sys.stdout = GuardedStream(sys.stdout, "standard output")
    if sys.stderr is not None and not isinstance(sys.stderr, GuardedStream):
        sys.stderr = GuardedStream(sys.stderr, "standard error")
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
