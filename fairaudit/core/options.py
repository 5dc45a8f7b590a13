"""Engine options: one declaration (``Option``) per option of an engine, and the options of every run.

The keyword argument, the JSON ``options``, the CLI flag, the dashboard widget, the report's parameter table and
the spec-file header (``# name: value`` when ``header=True``) are all derived from an ``Option``. This module
imports nothing of the engines' machinery, so that an engine's options (``fairaudit/engines/<name>/options.py``)
can be listed — the command line's help, the spec-file headers ``fairaudit check`` reads — without importing
the engine.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairaudit.base.errors import FairauditError

__all__ = ["Option", "COMMON_OPTIONS", "ROUNDS", "common_option", "with_common"]

_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
MAX_INT = 2 ** 63 - 1  # the largest whole number an option takes without a ``max`` of its own (a 64-bit integer)


@dataclass(frozen=True)
class Option:
    """One option of an engine (or of every run: ``COMMON_OPTIONS``).

    ``type`` is ``float``, ``int``, ``str`` or ``bool``; ``default`` None makes the option optional (unset).
    ``min``/``max`` bound a number (``exclusive`` makes both bounds strict); ``choices`` list a string's
    values. ``label`` names the dashboard widget, ``help`` is one sentence (the CLI help, the widget's tooltip,
    the report's parameter table). ``header=True``: a spec file may set it with ``# name: value``.
    ``advanced``: the dashboard tucks it away. ``step``: the widget's increment for a number."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple | None = None
    min: float | None = None
    max: float | None = None
    header: bool = False
    advanced: bool = False
    label: str | None = None
    exclusive: bool = False
    step: float | None = None
    metavar: str | None = None  # the CLI's placeholder for the value (default: the name in capitals)
    aliases: tuple[str, ...] = ()  # other CLI flags for the same option (e.g. ``--timeout``)
    population_only: bool = False  # used only on a population program: not recorded for a run on rows

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    def _range(self) -> str:
        def show(bound) -> str:
            return f"{int(bound):,}" if self.type is int else f"{bound:g}"

        lo = "" if self.min is None else show(self.min)
        hi = "" if self.max is None else show(self.max)
        if self.min is not None and self.max is not None:
            return f"in ({lo}, {hi})" if self.exclusive else f"from {lo} to {hi}"
        if self.min is not None:
            return f"{'>' if self.exclusive else '≥'} {lo}"
        return f"{'<' if self.exclusive else '≤'} {hi}"

    def describe(self) -> str:
        """What values it takes, for an error message: "a number in (0, 1)", "one of: equal, optimized"."""
        if self.choices:
            return "one of: " + ", ".join(map(str, self.choices))
        kind = {float: "a number", int: "a whole number", bool: "true or false", str: "text"}[self.type]
        if self.min is not None or self.max is not None:
            kind += " " + self._range()
        return kind

    def validate(self, value):
        """``value`` converted to the option's type, or ``FairauditError`` (one line naming the option)."""
        if value is None:
            if self.default is None:
                return None
            raise FairauditError(f"{self.name} must be {self.describe()}, not empty")
        example = f", e.g. {self.show(self.default)}" if self.default is not None and self.type is not bool else ""
        wrong = FairauditError(f"{self.name} must be {self.describe()}{example}; got {value!r}")
        if self.type is bool:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise wrong
        if self.type is int:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise wrong
            value = int(value)
        elif self.type is float:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise wrong
            value = float(value)
            if not math.isfinite(value):
                raise wrong
        elif self.type is str:
            if not isinstance(value, str):
                raise wrong
        if self.choices is not None and value not in self.choices:
            import difflib

            close = difflib.get_close_matches(str(value).lower(), [str(c) for c in self.choices], n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise FairauditError(f"{self.name} must be one of {', '.join(map(str, self.choices))}; got {value!r}"
                                 f"{hint}")
        if self.type in (int, float):
            low = self.min is not None and (value <= self.min if self.exclusive else value < self.min)
            high = self.max is not None and (value >= self.max if self.exclusive else value > self.max)
            if low or high:
                raise wrong
            if self.type is int and self.max is None and value > MAX_INT:  # every count is a 64-bit integer
                raise FairauditError(f"{self.name} must be {self.describe()} and at most {MAX_INT:,}; got {value!r}")
        return value

    def parse(self, text: str):
        """From text (a CLI argument, a spec-file header): converted, then ``validate``d."""
        raw = str(text).strip()
        if self.type is bool:
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            raise FairauditError(f"{self.name} must be true or false; got {raw!r}")
        if self.type in (int, float):
            example = f", e.g. {self.show(self.default)}" if self.default is not None else ""
            wrong = FairauditError(f"{self.name} must be {self.describe()}{example}; got {raw!r}")
            try:
                number = float(raw) if self.type is float else int(raw)
            except ValueError:  # say what was written, not what it was read as
                raise wrong from None
            if self.type is int and self.max is None and number > MAX_INT:
                raise FairauditError(f"{self.name} must be {self.describe()} and at most {MAX_INT:,}; got {raw!r}")
            try:
                return self.validate(number)
            except FairauditError:
                raise wrong from None
        if self.choices is not None:
            lowered = {str(c).lower(): c for c in self.choices}
            return self.validate(lowered.get(raw.lower(), raw))
        return self.validate(raw)

    def show(self, value) -> str:
        """A value as the report's parameter table and the CLI summary print it (``base.numbers.option_value``)."""
        from fairaudit.base.numbers import option_value

        return option_value(value)

    def token(self, value) -> str:
        """A value as the command line takes it after the option's flag (no thousands separators): ``1000000``."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)


# options of every run, whichever the engine (the driver applies them)
COMMON_OPTIONS = (
    Option("seed", int, 0, "seed for everything random in the run (the row shuffle, sampling); the same seed "
           "gives the same result", min=0, max=2**63 - 1, label="Seed"),
    Option("stop", bool, False, "stop at the first step at which the whole specification is decided, instead of "
           "running to the end", label="Stop when decided"),
    Option("time_budget", float, None, "stop the run after this many seconds; the result then says it is "
           "incomplete (the verdict so far keeps its guarantee)", min=0, exclusive=True, label="Time budget (s)",
           step=5.0, metavar="SECONDS", aliases=("--timeout",)),
)

# the option of every refinement engine (fairsquare, fairquant, fvgm, justicia): a run is deterministic given its
# number of rounds, and a run cut by the time budget records the rounds it reached (``info["rounds"]``, the bounds
# of its last complete round), so that ``--rounds N`` reproduces its bounds exactly
ROUNDS = Option("rounds", int, None, "stop after exactly this many refinement rounds (a round cut by the time budget "
                "is dropped: a run cut short records the rounds it reached, and rounds=N reproduces its bounds "
                "exactly)", min=0, label="Refinement rounds", advanced=True, metavar="N")


def with_common(options: tuple[Option, ...]) -> tuple[Option, ...]:
    """An engine's ``options``, then the common ones it does not redeclare (an engine may redeclare a common
    option to change its default, e.g. a sound engine stops at the decision by default)."""
    own = {o.name for o in options}
    return tuple(options) + tuple(o for o in COMMON_OPTIONS if o.name not in own)


def common_option(name: str, **changes) -> Option:
    """The common option ``name`` with ``changes`` (an engine's own default or help for it)."""
    import dataclasses

    base = next(o for o in COMMON_OPTIONS if o.name == name)
    return dataclasses.replace(base, **changes)
