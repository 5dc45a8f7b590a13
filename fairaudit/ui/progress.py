"""The one progress bar of the dashboard: every long operation (an audit run, training a model, building the
PDF) reports through ``fairaudit.base.progress.Progress`` and is drawn here — a bar, what is happening, and an
estimate of the time left."""
from __future__ import annotations

import time
from contextlib import contextmanager

import streamlit as st

from fairaudit.base.progress import Progress


class ProgressBar:
    """``on_progress`` for ``fairaudit.base.progress``: draws into a placeholder at most every ``every`` seconds (and
    always at 100 %). Use as ``with progress_bar("Training gbm") as bar: train(..., on_progress=bar)``.
    ``note`` (set by the caller at any time) is added after the operation's own text, e.g. the verdict so far."""

    def __init__(self, what: str, container=None, every: float = 0.25):
        self.what = what
        self.every = every
        self.note: str | None = None
        self.last_text: str | None = None
        self._slot = (container or st).empty()
        self._last = 0.0
        self._slot.progress(0.0, text=f"{what} …")

    def text(self, progress: Progress) -> str:
        return progress.text() + (f" · {self.note}" if self.note else "")

    def __call__(self, progress: Progress):
        now = time.monotonic()
        fraction = progress.fraction
        if now - self._last < self.every and (fraction is None or fraction < 1):
            return True
        self._last = now
        self.last_text = self.text(progress)
        self._slot.progress(fraction if fraction is not None else 0.0, text=self.last_text)
        return True

    def clear(self) -> None:
        self._slot.empty()


@contextmanager
def progress_bar(what: str, container=None):
    """A ``ProgressBar`` that disappears when the operation ends (also when it fails)."""
    bar = ProgressBar(what, container)
    try:
        yield bar
    finally:
        bar.clear()
