"""`fairaudit parse SPEC|@FILE [--json]`: print the syntax tree of a specification.

Without ``--json``: one indented line per node, ``id kind: text``. With ``--json``:
``{"nodes": [{"id", "parent", "kind", "text", "name"}, ...]}`` (``name`` only on named parts).
"""
from __future__ import annotations

import argparse
import json
import sys

from fairaudit.cli._spec_args import add_spec_argument, spec_from_args
from fairaudit.spec.ast import Spec
from fairaudit.spec.errors import SpecError

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_spec_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the nodes as JSON")


def tree_json(spec: Spec) -> dict:
    nodes = []
    for tn in spec.nodes:
        record = {"id": tn.id, "parent": tn.parent, "kind": tn.kind, "text": tn.text}
        if tn.name is not None:
            record["name"] = tn.name
        nodes.append(record)
    return {"nodes": nodes}


def tree_lines(spec: Spec) -> list[str]:
    lines = []
    for tn in spec.nodes:
        name = f" [{tn.name}]" if tn.name else ""
        lines.append(f"{'  ' * tn.depth}{tn.id} {tn.kind}{name}: {tn.text}")
    return lines


def run(args: argparse.Namespace) -> int:
    try:
        spec = spec_from_args(args).spec
    except SpecError as err:
        print(err.pretty(), file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(tree_json(spec), indent=2, ensure_ascii=False))
    else:
        print("\n".join(tree_lines(spec)))
    return EXIT_OK
