"""A population program as the monitor's stream: individuals drawn lazily, chunk by chunk, evaluated on a spec.

``load(program_or_path)`` gives the parsed program with what identifies it (file name, sha256 of its text);
``ratio_spec(epsilon)`` is the group-fairness ratio property of a ``.fr`` file written in fairaudit's spec
language, over the columns every sampled individual has: ``sensitive`` and ``qualified`` (bool, the program's
annotations; ``qualified`` is true for everyone when the program has none) and ``pred`` (the fairness target,
0/1); the program's variables are columns too, so a user's spec may read them. ``PopulationObservations`` is
an ``Observations`` whose rows are drawn only when the monitor asks for the checks that need them
(``CHUNK`` individuals at a time, from one generator seeded with the run's seed: the same seed gives the same
stream whatever the chunking of the requests).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairaudit.core.errors import FairauditError
from fairaudit.programs import ir

CHUNK = 50_000
DEFAULT_EPSILON = 0.15
RESERVED = ("sensitive", "qualified")


def ratio_spec(epsilon: float = DEFAULT_EPSILON) -> str:
    """P[target | min ∧ qual] / P[target | ¬min ∧ qual] > 1 − ε, as spec text over the sampled individuals."""
    eps = float(epsilon)
    if not 0 < eps < 1:
        raise FairauditError(f"epsilon must be a number in (0, 1), e.g. 0.15; got {epsilon!r}")
    return f"E[pred | sensitive and qualified] / E[pred | not sensitive and qualified] > {1 - eps:g}"


@dataclass(frozen=True)
class Population:
    """A parsed program and what identifies it for the report."""
    program: ir.Program
    name: str
    sha256: str

    def record(self) -> dict:
        return {"name": self.name, "sha256": self.sha256}


def load(population) -> Population:
    """``population``: a ``Population``, a parsed ``Program`` or a path to a ``.fr`` file (parse errors raise
    ``SpecError`` with line:column and the file's name)."""
    if isinstance(population, Population):
        return population
    if isinstance(population, ir.Program):
        from fairaudit.programs.printer import format_program

        text = format_program(population)
        return Population(population, "program", hashlib.sha256(text.encode("utf-8")).hexdigest())
    from fairaudit.programs.parse import parse_program

    path = Path(str(population))
    if not path.is_file():
        raise FairauditError(f"no population program at {str(population)!r} (a .fr file)")
    from fairaudit.programs.parse import read_text

    text = read_text(path)
    return Population(parse_program(text, filename=path.name), path.name,
                      hashlib.sha256(text.encode("utf-8")).hexdigest())


def from_text(text: str, name: str = "program") -> Population:
    """A ``Population`` of ``.fr`` text (e.g. typed or uploaded on the dashboard): parsed, never run (parse errors
    raise ``SpecError`` with line:column)."""
    from fairaudit.programs.parse import parse_program

    return Population(parse_program(text, filename=name), name, hashlib.sha256(text.encode("utf-8")).hexdigest())


@dataclass(frozen=True)
class Example:
    """A small ``.fr`` program shipped with fairaudit (``fairaudit/programs/examples/``): its file name, what it is
    (the file's first comment line) and its text."""
    name: str
    about: str
    text: str


EXAMPLES = ("fig1_original.fr", "fig1_fixed.fr", "toy_t1.fr", "toy_t2.fr", "toy_t3.fr", "ex3_2.fr", "toy_tie.fr")


def examples() -> list[Example]:
    """The bundled example programs (FairSquare's Fig. 1 and the toys with exact answers), in ``EXAMPLES`` order."""
    from importlib.resources import files

    folder = files("fairaudit.programs") / "examples"
    out = []
    for name in EXAMPLES:
        text = (folder / name).read_text(encoding="utf-8")
        first = text.splitlines()[0] if text else ""
        out.append(Example(name, first.lstrip("# ").strip() if first.startswith("#") else "", text))
    return out


def frame_of(sample, names=None) -> tuple[pd.DataFrame, np.ndarray]:
    """The columns of sampled individuals (the program's variables, ``sensitive``, ``qualified``) and ``pred``;
    ``names``: only these variables (the ones a spec reads; a frame of a long program's every variable took as long
    as sampling it)."""
    columns = {k: v for k, v in (sample.values or {}).items()
               if k not in RESERVED + ("pred",) and (names is None or k in names)}
    columns["sensitive"] = np.asarray(sample.sensitive, dtype=bool)
    columns["qualified"] = np.asarray(sample.qualified, dtype=bool)
    return pd.DataFrame(columns), np.asarray(sample.target).astype(np.int8)


class _LazyStats:
    """A leaf's (successes, n) at the checks, filled on demand (``LeafStats.at``'s interface)."""

    def __init__(self, owner: "PopulationObservations", key: str):
        self.owner, self.key = owner, key

    def at(self, index):
        from fairaudit.bounds.allocation import LeafStats

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
        from fairaudit.core.limits import Deadline

        self.spec, self.program, self.length, self.chunk = spec, program, int(length), int(chunk)
        # the run's time budget, asked before each chunk and between the program's statements: ``fill`` raises
        # ``fairaudit.core.limits.OutOfTime`` when it runs out (the monitor then ends with the checks filled so far)
        self.expired = expired
        self.deadline = Deadline(expired) if expired is not None else None
        self.names = _spec_names(spec)
        self.rng = np.random.default_rng(seed)
        self.keys = list(compile_spec(spec).leaf_keys)
        self.drawn = 0  # individuals drawn so far
        self.carry = {k: (0, 0) for k in self.keys}
        self.ends = np.zeros(0, dtype=np.int64)
        self.cum: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.filled = 0  # checks whose statistics are known

    @property
    def n_checks(self) -> int:
        return len(self.ends)

    def stats(self, ends: np.ndarray) -> dict:
        self.ends = np.asarray(ends, dtype=np.int64)
        self.cum = {k: (np.zeros(len(self.ends), np.int64), np.zeros(len(self.ends), np.int64)) for k in self.keys}
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
        while self.filled <= check:
            if self.expired is not None and self.expired():
                from fairaudit.core.limits import OutOfTime

                raise OutOfTime()
            start = self.drawn
            size = min(self.chunk, self.length - start)
            if size <= 0:
                raise FairauditError("internal: the monitor asked for more individuals than it may draw")
            obs = self.draw(size)
            stop = int(np.searchsorted(self.ends, start + size - 1, side="right"))
            local = self.ends[self.filled:stop] - start
            for k in self.keys:
                v, m = obs.values[k], obs.masks[k]
                s = np.cumsum(v.astype(np.int64) & m.astype(np.int64))
                n = np.cumsum(m.astype(np.int64))
                s0, n0 = self.carry[k]
                self.cum[k][0][self.filled:stop] = s[local] + s0
                self.cum[k][1][self.filled:stop] = n[local] + n0
                self.carry[k] = (s0 + int(s[-1]), n0 + int(n[-1]))
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
