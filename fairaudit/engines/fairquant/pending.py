"""The partitions FairQuant's refinement still has to analyse, as columns in arrays that grow by doubling.

Each partition is a row: its box ``lb, ub`` (``[N, F]`` float64), its depth, the halvings of its real-valued
features and the individuals already proven fair in it (``credit``; all ``[N]`` int64). The refinement pops a batch
from either end (the last pushed: depth-first; the first: breadth-first) and pushes the children of what it could
not decide. Both cost in proportion to the rows popped or pushed, never to the rows waiting: the live rows are a
window ``[start, end)`` of buffers that are compacted or doubled only when a push reaches their end (amortised
O(1) per row). Reordering (``reorder``) costs in proportion to the rows waiting, as a sort must.
"""
from __future__ import annotations

import numpy as np

FIELDS = ("lb", "ub", "depth", "halvings", "credit")


class Pending:
    """The waiting partitions; ``lb``, ``ub``, ``depth``, ``halvings``, ``credit`` are views of the live rows, in
    push order (read them, do not write them)."""

    def __init__(self, lb: np.ndarray, ub: np.ndarray, depth: np.ndarray, halvings: np.ndarray,
                 credit: np.ndarray):
        rows = (lb, ub, depth, halvings, credit)
        n = len(lb)
        capacity = max(16, 2 * n)
        self._buf = {}
        for name, x in zip(FIELDS, rows):
            buf = np.empty((capacity,) + x.shape[1:], dtype=x.dtype)
            buf[:n] = x
            self._buf[name] = buf
        self._start, self._end = 0, n

    def __len__(self) -> int:
        return self._end - self._start

    def _view(self, name: str) -> np.ndarray:
        return self._buf[name][self._start:self._end]

    lb = property(lambda self: self._view("lb"))
    ub = property(lambda self: self._view("ub"))
    depth = property(lambda self: self._view("depth"))
    halvings = property(lambda self: self._view("halvings"))
    credit = property(lambda self: self._view("credit"))

    def pop(self, n: int, first: bool) -> tuple:
        """Remove ``n`` rows — the first pushed (``first``) or the last — and return copies of them, in push order:
        ``(lb, ub, depth, halvings, credit)``."""
        n = min(n, len(self))
        if first:
            part = slice(self._start, self._start + n)
            self._start += n
        else:
            part = slice(self._end - n, self._end)
            self._end -= n
        out = tuple(self._buf[name][part].copy() for name in FIELDS)
        if not len(self):
            self._start = self._end = 0
        return out

    def push(self, lb: np.ndarray, ub: np.ndarray, depth: np.ndarray, halvings: np.ndarray,
             credit: np.ndarray) -> None:
        """Append rows after the last."""
        m = len(lb)
        if not m:
            return
        capacity = len(self._buf["lb"])
        if self._end + m > capacity:
            live = len(self)
            grown = capacity if 2 * (live + m) <= capacity else max(2 * capacity, 2 * (live + m))
            for name in FIELDS:
                old = self._buf[name]
                buf = old if grown == capacity else np.empty((grown,) + old.shape[1:], dtype=old.dtype)
                buf[:live] = old[self._start:self._end]  # numpy copies overlapping ranges correctly
                self._buf[name] = buf
            self._start, self._end = 0, live
        for name, x in zip(FIELDS, (lb, ub, depth, halvings, credit)):
            self._buf[name][self._end:self._end + m] = x
        self._end += m

    def reorder(self, order: np.ndarray) -> None:
        """Permute the live rows: row ``i`` becomes the former row ``order[i]``."""
        for name in FIELDS:
            view = self._view(name)
            view[...] = view[order]
