"""One way for a long operation to say how far it is: an engine run, training a model, building a PDF.

The operation calls ``progress(done, total)`` (or ``progress.advance()``) as it goes; a ``Progress`` keeps the
start time and turns that into a fraction, a rate and an estimate of the time left. Whoever started the
operation passes a callback ``on_progress(Progress)`` that draws it (a bar in the dashboard, nothing or a line in
the CLI); the callback returning ``False`` asks the operation to stop (``Progress.cancelled``), which the
operation honours at its next report. The library never imports Streamlit for this.
"""
from __future__ import annotations

import math
import shutil
import time
from typing import Callable, Optional

OnProgress = Optional[Callable[["Progress"], object]]


class Progress:
    """``done`` of ``total`` ``unit`` of the operation ``what``, started at ``started`` (``time.perf_counter``)."""

    def __init__(self, what: str, total: float | None = None, unit: str = "steps", on_progress: OnProgress = None,
                 clock=time.perf_counter):
        self.what, self.total, self.unit = what, total, unit
        self.done = 0.0
        self.cancelled = False
        self._on_progress = on_progress
        self._clock = clock
        self.started = clock()
        self.message: str | None = None

    def __call__(self, done: float, total: float | None = None, message: str | None = None) -> bool:
        """Report ``done`` (of ``total``, if it changed); returns False once the receiver asked to stop."""
        self.done = float(done)
        if total is not None:
            self.total = float(total)
        if message is not None:
            self.message = message
        if self._on_progress is not None and self._on_progress(self) is False:
            self.cancelled = True
        return not self.cancelled

    def advance(self, amount: float = 1.0, message: str | None = None) -> bool:
        return self(self.done + amount, message=message)

    @property
    def elapsed(self) -> float:
        return self._clock() - self.started

    @property
    def fraction(self) -> float | None:
        """``done / total`` in [0, 1], or None while the total is unknown."""
        if not self.total or self.total <= 0:
            return None
        return min(1.0, max(0.0, self.done / self.total))

    @property
    def seconds_left(self) -> float | None:
        """Time left at the rate so far (None until there is a rate to go by)."""
        fraction = self.fraction
        if fraction is None or fraction <= 0 or self.elapsed < 0.2:
            return None
        return max(0.0, self.elapsed * (1 - fraction) / fraction)

    def text(self) -> str:
        """"Training gbm: 40 % — about 12 s left" (the line a bar is labelled with)."""
        parts = [self.what + (f" ({self.message})" if self.message else "")]
        fraction = self.fraction
        if fraction is not None:
            parts.append(f"{fraction:.0%}")
        left = self.seconds_left
        if left is not None and fraction is not None and fraction < 1:
            parts.append("under a second left" if left < 1 else f"about {format_seconds(left)} left")
        return ": ".join(parts[:2]) + (f" — {parts[2]}" if len(parts) > 2 else "")


def format_seconds(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    if seconds < 10:
        return f"{seconds:.0f} s" if seconds >= 1 else "under a second"
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def report(on_progress: OnProgress, what: str, total: float | None = None, unit: str = "steps") -> Progress:
    """A ``Progress`` for an operation that may be given no receiver (then reporting costs nothing)."""
    return Progress(what, total, unit, on_progress)


class TerminalLine:
    """``on_progress`` that keeps one line updated on a terminal (at most every ``every`` seconds, and at the
    end); ``close()`` erases it."""

    def __init__(self, stream, every: float = 0.2):
        self.stream, self.every = stream, every
        self._last, self._shown = float("-inf"), 0

    def __call__(self, progress) -> bool:
        now = time.monotonic()
        if now - self._last >= self.every or (progress.fraction or 0) >= 1:
            self._last = now
            text = progress.text()[:max(20, shutil.get_terminal_size().columns - 1)]
            self.stream.write("\r" + text.ljust(self._shown))
            self.stream.flush()
            self._shown = len(text)
        return True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0


def terminal_line(stream) -> "TerminalLine | None":
    """A ``TerminalLine`` on ``stream`` when it is a terminal; None otherwise (pipelines and logs stay clean)."""
    isatty = getattr(stream, "isatty", None)
    return TerminalLine(stream) if isatty is not None and isatty() else None
