"""The SPEC|@FILE argument shared by `check` and `parse` (and usable by `audit`).

``SPEC`` is specification text; ``@FILE`` (or a path ending in ``.spec`` that exists) reads a file, and
then errors are reported as ``FILE:LINE:COL: message``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from fairaudit.spec.files import SpecFile, load_spec_file, parse_file_text


def add_spec_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC|@FILE",
                        help='specification text, e.g. \'E[pred | sex == "Female"] >= 0.8\', or @FILE to read a file')


def add_range_argument(parser) -> None:
    """``--range NAME=LOW:HIGH`` (repeatable): the declared range of a numeric column the spec averages."""
    parser.add_argument("--range", action="append", metavar="NAME=LOW:HIGH", dest="range",
                        help="the range of a numeric column the specification averages, e.g. amount=0:50000 "
                             "(E[amount | sex == \"Female\"]); repeat it for several columns (a spec file's "
                             "'# range:' header declares them too)")


def spec_from_args(args: argparse.Namespace) -> SpecFile:
    """Parse the SPEC|@FILE argument (``SpecError`` on problems), with the ranges of ``--range`` (``args.range``, when
    the command has it) attached to the spec (``fairaudit.spec.quantities``)."""
    value: str = args.spec
    if value.startswith("@"):
        spec_file = load_spec_file(value[1:])
    elif value.endswith(".spec") and Path(value).is_file():
        spec_file = load_spec_file(value)
    else:
        spec_file = parse_file_text(value)
    flags = getattr(args, "range", None)
    if flags:
        from dataclasses import replace

        from fairaudit.spec.quantities import with_ranges

        spec_file = replace(spec_file, spec=with_ranges(spec_file.spec, flags))
    return spec_file
