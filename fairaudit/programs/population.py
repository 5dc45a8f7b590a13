"""A population program as an audit's input: the parsed program, what identifies it, and the spec over its individuals.

``load(program_or_path)`` gives the parsed program with what identifies it (file name, sha256 of its text);
``ratio_spec(epsilon)`` is the group-fairness ratio property of a ``.fr`` file written in fairaudit's spec
language, over the columns every sampled individual has: ``sensitive`` and ``qualified`` (bool, the program's
annotations; ``qualified`` is true for everyone when the program has none) and ``pred`` (the fairness target,
0/1); the program's variables are columns too, so a user's spec may read them. ``frame_of`` turns
sampled individuals into those columns; the monitor draws them lazily, chunk by chunk
(``fairaudit.engines.monitor.population.PopulationObservations``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairaudit.base.errors import FairauditError
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
