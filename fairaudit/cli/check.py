"""`fairaudit check SPEC|@FILE [--data NAME|CSV]`: is the specification well-formed (and valid for a dataset)?

Prints ``ok`` (then any warnings) and exits 0; otherwise prints ``LINE:COL: message`` (``FILE:LINE:COL``
for a file) with the source line and a caret, and exits 2. Without ``--data``, a file's ``# dataset:``
header names the dataset to validate against; its ``# decision:``, ``# where:`` and ``# engine:`` headers and
every engine option's header are checked too.
"""
from __future__ import annotations

import argparse
import sys

from fairaudit.cli._data_args import add_data_arguments, dataset_from_args
from fairaudit.cli._spec_args import add_range_argument, add_spec_argument, spec_from_args
from fairaudit.spec.errors import SpecError

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_spec_argument(parser)
    add_data_arguments(parser, required=False)
    add_range_argument(parser)
    parser.add_argument("--no-header-data", action="store_true",
                        help="ignore a file's '# dataset:' header (check the syntax only unless --data is given)")


def _dataset(args: argparse.Namespace, spec_file, decision: str | None):
    """The dataset to validate against; of a built-in one only the columns the checks read (start-up time)."""
    from fairaudit.core.preflight import columns_read

    if args.data is None and spec_file.dataset and not args.no_header_data:
        args.data = spec_file.dataset_ref()
    return dataset_from_args(args, columns=columns_read(spec_file.spec, decision, spec_file.where))


def run(args: argparse.Namespace) -> int:
    from fairaudit.core.preflight import check_headers, file_source, option_source, preflight

    try:
        spec_file = spec_from_args(args)
        check_headers(spec_file)  # before the header's dataset is read
        decision = where = None
        uses_decision = spec_file.decision is not None and not spec_file.uses_model
        dataset = _dataset(args, spec_file, spec_file.decision if uses_decision else None)
        if uses_decision:
            decision = option_source(spec_file.decision, "--pred", spec_file.headers["decision"], spec_file)
        if spec_file.where is not None:
            where = option_source(spec_file.where, "--where", spec_file.headers["where"], spec_file)
        # the same checks as `fairaudit audit` (and fairaudit.audit, and the dashboard's Run)
        warnings = preflight(dataset, spec_file.spec, spec_source=file_source(spec_file), decision=decision,
                             where=where, uses_model=True)
    except SpecError as err:  # a ValidationError (a SpecError) prints every error it holds
        print(err.pretty(), file=sys.stderr)
        return EXIT_BAD_INPUT
    where_text = f" (validated against {dataset.name})" if dataset is not None else ""
    print(f"ok: {len(spec_file.spec)} nodes{where_text}")
    for warning in warnings:
        warning.message = f"warning: {warning.message}"
        print(warning.pretty())
    return EXIT_OK
