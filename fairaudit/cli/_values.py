"""The values a flag takes, each kind read by one function for every command, before any work.

* **A list of names** (``--protected``, ``--group-by``, ``--features``, ``--exclude``, ``--na-values``): the action
  ``Names`` — the names as separate words, comma-separated, or both (``--protected a b``, ``--protected a,b``,
  ``--protected a,b c``), and a flag given twice adds up; ``''`` names none. ``names`` reads the same forms from
  Python (a string or a list of strings).
* **A number** (a seed, a failure probability, a share of the rows, a count, seconds): ``typed(option)``, an
  argparse ``type`` that reads the text by an ``Option`` declaration (``fairaudit.core.options.Option.parse``: a
  finite number within its bounds), so that a bad value is argparse's one line, exit 2, when the command line is
  read. The kinds every command shares are the functions below (``probability``, ``share``, ``count``) and
  ``SEED``; an option that an engine or a route declares itself (``--poll`` and ``--idle-timeout``,
  ``fairaudit.cli._follow_args``; an engine's ``--delta``) is read by its own declaration through the same
  ``typed``.

* **An output path** (``--json``, ``--pdf``, ``--csv``, ``--full-trace``, ``--save``, ``--out``): ``output``, which
  refuses an empty one (``--json "$OUT"`` with ``OUT`` unset would otherwise write nothing, and say nothing); the
  path itself is checked before any work by ``fairaudit.core.outputs.check_output``, against the run's inputs (and,
  for a path a command changes before it writes, by ``fairaudit.base.files.check_path`` on the path as given).
"""
from __future__ import annotations

import argparse

from fairaudit.base.errors import FairauditError
from fairaudit.core.options import COMMON_OPTIONS, Option

SEED = next(o for o in COMMON_OPTIONS if o.name == "seed")  # a whole number from 0 to 2^63 − 1, every command's


def probability(name: str, default: float) -> Option:
    """A failure probability (``--delta``): a number strictly between 0 and 1."""
    return Option(name, float, default, "a failure probability", min=0, max=1, exclusive=True)


def share(name: str, default: float | None) -> Option:
    """A share of the rows (``--split``, ``--test-size``, ``--confirm-share``): a number strictly between 0 and 1."""
    return Option(name, float, default, "a share of the rows", min=0, max=1, exclusive=True)


MAX_COUNT = 10 ** 12  # the largest count a flag takes: far past any log's length, well inside a 64-bit integer


def count(name: str, default: int | None, least: int = 1) -> Option:
    """A whole number of rows, checks or levels (``--burn-in``, ``--trace-every``, ``--trace-points``): from
    ``least`` to ``MAX_COUNT``."""
    return Option(name, int, default, "a count", min=least, max=MAX_COUNT)


def typed(option: Option):
    """An argparse ``type`` reading a flag's text by ``option``'s declaration (module doc)."""

    def read(text: str):
        try:
            return option.parse(text)
        except FairauditError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    read.__name__ = option.name  # argparse names the type in a few of its own messages
    return read


def output(text: str) -> str:
    """An output flag's path (module doc): any text but an empty or blank one."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path names no file: name the file to write")
    return text


def names(values) -> list[str] | None:
    """``["sex", "race"]`` from ``"sex,race"``, ``["sex", "race"]``, ``["sex,race"]`` or ``["sex", " race,"]``;
    ``[]`` from ``""`` (none); ``None`` from ``None`` (not given: the default)."""
    if values is None:
        return None
    items = [values] if isinstance(values, str) else list(values)
    return [name.strip() for item in items for name in str(item).split(",") if name.strip()]


class Names(argparse.Action):
    """A list-valued flag (module doc): one or more words, each split at commas; repeated flags add up."""

    def __init__(self, option_strings, dest, nargs=None, **kwargs):
        super().__init__(option_strings, dest, nargs="+", **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, (names(getattr(namespace, self.dest, None)) or []) + names(values))
