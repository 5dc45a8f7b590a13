"""A population program as the monitor's stream: individuals drawn lazily, chunk by chunk, evaluated on a spec.

``PopulationObservations`` is an ``Observations`` whose rows are drawn only when the monitor asks for the checks
that need them (``CHUNK`` individuals at a time, from one generator seeded with the run's seed: the same seed gives
the same stream whatever the chunking of the requests). The program, its columns and its ratio spec are
``fairaudit.programs.population``'s.
"""
from __future__ import annotations

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.programs import ir
from fairaudit.programs.population import CHUNK, frame_of


class _LazyStats:
    """A leaf's (successes, n) at the checks, filled on demand (``LeafStats.at``'s interface)."""

    def __init__(self, owner: "PopulationObservations", key: str):
        self.owner, self.key = owner, key

    def at(self, index):
        from fairaudit.core.allocation import LeafStats

        need = _last_index(index, self.owner.n_checks)
        if need is not None:
            self.owner.fill(need)
        s, n = self.owner.cum[self.key]
        return LeafStats(s[index].astype(float), n[index].astype(float))


def _last_index(index, size: int):
    if isinstance(index, slice):
        positions = range(size)[index]
        return max(positions) if len(positions) else None
    arr = np.asarray(index)
    if arr.size == 0:
        return None
    top = int(arr.max())
    return top if top >= 0 else size - 1


class PopulationObservations:
    """The monitor's ``Observations`` for individuals drawn from a program (see the module doc)."""

    def __init__(self, spec, program: ir.Program, length: int, seed: int = 0, chunk: int = CHUNK, expired=None):
        from fairaudit.core.evaluate import compile_spec
        from fairaudit.base.limits import Deadline

        self.spec, self.program, self.length, self.chunk = spec, program, int(length), int(chunk)
        # the run's time budget, asked before each chunk and between the program's statements: ``fill`` raises
        # ``fairaudit.base.limits.OutOfTime`` when it runs out (the monitor then ends with the checks filled so far)
        self.expired = expired
        self.deadline = Deadline(expired) if expired is not None else None
        self.names = _spec_names(spec)
        self.rng = np.random.default_rng(seed)
        self.keys = list(compile_spec(spec).leaf_keys)
        self.drawn = 0  # individuals drawn so far
        self.carry = None  # the ``Counts`` of the individuals drawn so far (``fairaudit.core.counting``)
        self.ends = np.zeros(0, dtype=np.int64)
        self.cum: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.filled = 0  # checks whose statistics are known

    @property
    def n_checks(self) -> int:
        return len(self.ends)

    def stats(self, ends: np.ndarray) -> dict:
        self.ends = np.asarray(ends, dtype=np.int64)
        # successes as float64: a mean of an amount sums multiples of 2**-22 (``fairaudit.core.counting``), exactly
        self.cum = {k: (np.zeros(len(self.ends), np.float64), np.zeros(len(self.ends), np.int64)) for k in self.keys}
        self.filled = 0
        return {k: _LazyStats(self, k) for k in self.keys}

    def draw(self, size: int):
        """The next ``size`` individuals' observations: ``{key: (values, mask)}``."""
        from fairaudit.core.observations import observe
        from fairaudit.programs.sample import sample

        s = sample(self.program, size, rng=self.rng, keep_values=True, deadline=self.deadline)
        frame, pred = frame_of(s, self.names)
        obs = observe(self.spec, frame, pred=pred)
        self.drawn += size
        return obs

    def fill(self, check: int) -> None:
        """Draw individuals until the statistics of check ``check`` are known."""
        from fairaudit.core.counting import Counts, count_rows, shift

        while self.filled <= check:
            if self.expired is not None and self.expired():
                from fairaudit.base.limits import OutOfTime

                raise OutOfTime()
            start = self.drawn
            size = min(self.chunk, self.length - start)
            if size <= 0:
                raise FairauditError("internal: the monitor asked for more individuals than it may draw")
            obs = self.draw(size)
            stop = int(np.searchsorted(self.ends, start + size - 1, side="right"))
            local = self.ends[self.filled:stop] - start
            at, total = count_rows(obs, self.keys, local)  # the one counting kernel, as every route counts
            if self.carry is None:
                self.carry = Counts.zero(self.keys)
            for k, (s, n) in shift(at, self.carry).items():
                self.cum[k][0][self.filled:stop] = s
                self.cum[k][1][self.filled:stop] = n
            self.carry = self.carry + total
            self.filled = stop


def _spec_names(spec) -> set[str]:
    """The names the spec's events read (the variables a sampled frame needs)."""
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.spec.ast import event_names

    cs = compile_spec(spec)
    names = set()
    for key in cs.leaf_keys:
        node = cs.leaf_node[key].node
        for event in (getattr(node, "event", None), getattr(node, "given", None)):
            if event is not None:
                names.update(n.name for n in event_names(event))
    return names
