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


def spec_from_args(args: argparse.Namespace) -> SpecFile:
    """Parse the SPEC|@FILE argument (``SpecError`` on problems)."""
    value: str = args.spec
    if value.startswith("@"):
        return load_spec_file(value[1:])
    if value.endswith(".spec") and Path(value).is_file():
        return load_spec_file(value)
    return parse_file_text(value)
