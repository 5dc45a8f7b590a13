"""`fairaudit check SPEC|@FILE [--data NAME|CSV]`: is the specification well-formed (and valid for a dataset)?

Prints ``ok`` (then any warnings) and exits 0; otherwise prints ``LINE:COL: message`` (``FILE:LINE:COL``
for a file) with the source line and a caret, and exits 2. Without ``--data``, a file's ``# dataset:``
header names the dataset to validate against; its ``# decision:``, ``# where:`` and ``# delta:`` headers
are checked too.
"""
from __future__ import annotations

import argparse
import sys

from fairaudit.commands._data_args import add_data_arguments, dataset_from_args
from fairaudit.commands._spec_args import add_spec_argument, spec_from_args
from fairaudit.spec.errors import SpecError
from fairaudit.spec.validate import validate, validate_event

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_spec_argument(parser)
    add_data_arguments(parser, required=False)
    parser.add_argument("--no-header-data", action="store_true",
                        help="ignore a file's '# dataset:' header (check the syntax only unless --data is given)")


def _dataset(args: argparse.Namespace, spec_file):
    if args.data is None and spec_file.dataset and not args.no_header_data:
        args.data = spec_file.dataset
    return dataset_from_args(args)


def run(args: argparse.Namespace) -> int:
    try:
        spec_file = spec_from_args(args)
        dataset = _dataset(args, spec_file)
        findings = []
        if dataset is not None:
            findings = validate(spec_file.spec, dataset.schema, dataset.frame)
            for key, event in (("decision", spec_file.decision_event()), ("where", spec_file.where_event())):
                if event is None:
                    continue
                header = spec_file.headers[key]
                what = "the decision" if key == "decision" else "the row filter"
                for d in validate_event(event, dataset.schema):
                    findings.append(type(d)(d.severity, d.line + header.line - 1,
                                            d.column + header.column - 1 if d.line == 1 else d.column,
                                            f"in {what}: {d.message}", d.length))
        else:
            spec_file.decision_event()  # syntax of the # decision: and # where: headers
            spec_file.where_event()
        spec_file.delta  # noqa: B018 -- a # delta: header must be a number in (0, 1)
    except SpecError as err:
        print(err.pretty(), file=sys.stderr)
        return EXIT_BAD_INPUT
    errors = [d for d in findings if d.severity == "error"]
    if errors:
        for d in errors:
            print(d.to_error(spec_file.text, spec_file.path).pretty(), file=sys.stderr)
        return EXIT_BAD_INPUT
    where = f" (validated against {dataset.name})" if dataset is not None else ""
    print(f"ok: {len(spec_file.spec)} nodes{where}")
    for d in findings:  # only warnings are left
        err = d.to_error(spec_file.text, spec_file.path)
        err.message = f"warning: {err.message}"
        print(err.pretty())
    return EXIT_OK
