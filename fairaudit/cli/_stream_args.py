"""``fairaudit audit``'s out-of-core route: the ``--out-of-core`` flag and the run of a big CSV / Parquet decision log
read in chunks (``fairaudit.engines.monitor.outofcore``), memory bounded whatever the file's length.

When it applies (``out_of_core``, asked by ``fairaudit.cli.audit.route``): ``--out-of-core on`` always (or a one-line error saying why it cannot), ``off``
never, ``auto`` (the default) for a Parquet file, a folder or glob of parts, and a CSV file of at least
``AUTO_BYTES`` — when the run is
one the out-of-core reader can do: the streaming engine (``engines.STREAMING``), decisions from an expression (``--pred`` or a ``#
decision:`` header) or a saved model file (``--model PATH``, scored chunk by chunk; every row audited, so a model
fairaudit trained needs ``--rows all``: its held-out rows are found only in memory; ``Fair[...]`` needs the model),
no ``--missing drop``. Otherwise the log is loaded whole, by the same pipeline (``fairaudit.sources``).
"""
from __future__ import annotations

import argparse
import sys

from fairaudit.base.errors import FairauditError

MODES = ("auto", "on", "off")


def add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    from fairaudit.engines import STREAMING
    from fairaudit.engines.monitor.outofcore import AUTO_BYTES

    parser.add_argument("--out-of-core", choices=MODES, default="auto", dest="out_of_core",
                        help="read the --data file in chunks, memory bounded whatever its length (the "
                             f"{STREAMING} engine; "
                             "--pred or a saved --model PATH; CSV or Parquet): on, off, or auto (default: Parquet "
                             f"files and CSV files of {AUTO_BYTES >> 20} MB or more)")


def _why_not(args, engine, spec_file, uses_model: bool) -> str | None:
    """Why this run cannot go out of core (None if it can)."""
    from fairaudit import engines

    if engine.name != engines.STREAMING:
        return f"the {engine.name} engine reads the whole dataset; out of core is the {engines.STREAMING} engine's"
    if uses_model:
        from pathlib import Path

        from fairaudit.models import KINDS

        if args.model in KINDS or not Path(args.model).is_file():
            return "--model KIND trains a model on the data, in memory; a saved model file (--model PATH) or a " \
                   "decision expression (--pred) is audited out of core"
        if args.rows != "all" and "trained_on" in (getattr(_load(args), "params", None) or {}):
            return "the model was trained by fairaudit, and its held-out rows are found only in memory; give " \
                   "--rows all to audit every row out of core"
    if getattr(args, "missing", "keep") == "drop":
        return "--missing drop is applied in memory"
    if getattr(args, "confirm", None):
        return "--confirm splits the audited rows at random, in memory"
    if args.rows == "held-out":
        return "--rows held-out needs a model trained here"
    return None


def _load(args):
    from fairaudit.cli._model_args import model_from_args

    return model_from_args(argparse.Namespace(model=args.model, pred=None, trust_pickle=args.trust_pickle,
                                              trust_type=args.trust_type,
                                              favourable_class=getattr(args, "favourable_class", None)), None)


def out_of_core(args, engine, spec_file) -> bool:
    """Whether this ``fairaudit audit`` run goes out of core (module doc); a one-line ``FairauditError`` when
    ``--out-of-core on`` asks for what cannot be done."""
    from pathlib import Path

    from fairaudit.engines.monitor.outofcore import AUTO_BYTES, is_parquet, readable, size

    mode = getattr(args, "out_of_core", None) or "auto"
    if mode == "off":  # read whole into memory, by the same pipeline
        return False
    path = str(args.data)
    if not readable(path):
        if mode == "on":
            raise FairauditError(f"--out-of-core on reads a .csv or .parquet file, or a folder of them; {path} is "
                                 "not one")
        return False
    several = not Path(path).is_file()  # a folder or glob of parts: read as one log
    uses_model = getattr(args, "model", None) is not None
    why = _why_not(args, engine, spec_file, uses_model)
    if why is not None:
        if mode == "on":
            raise FairauditError(f"{path} cannot be audited out of core: {why}")
        return False
    return mode == "on" or several or is_parquet(path) or size(path) >= AUTO_BYTES


def run_out_of_core(args, request) -> int:
    """The out-of-core audit of ``args.data`` (``out_of_core`` said yes; ``request``:
    ``fairaudit.cli._common.Request``): validated first (``fairaudit.core.preflight`` against the file's schema), then
    ``fairaudit.engines.monitor.outofcore.audit_file``; ``finish`` prints, writes and exits as every route does."""
    from fairaudit.cli._common import decision_sources, finish, other_engines_headers, trace_args
    from fairaudit.cli._data_args import protected_names
    from fairaudit.engines.monitor.outofcore import (audit_file, file_dataset, log_of, run_columns, used_columns,
                                                     written_values)
    from fairaudit.core.preflight import check_decisions, file_source, preflight
    from fairaudit.base.progress import terminal_line

    engine, spec_file, options, from_file = request.engine, request.spec_file, request.options, request.from_file
    decision, where = decision_sources(args, spec_file, request.where_header)
    uses_model = getattr(args, "model", None) is not None
    model = _load(args) if uses_model else None
    # only the columns the run reads are typed and read (a log of 100,000 columns audited on two)
    wanted = run_columns(spec_file.spec, args.pred, args.where, label=args.label,
                         protected=protected_names(args.protected), model=model)
    log = log_of(args.data, getattr(args, "column_type", None), tuple(getattr(args, "na_values", None) or ()),
                 wanted)
    columns = list(log.schema.names)
    try:
        used = used_columns(spec_file.spec, args.pred, args.where, columns)
    except FairauditError:
        used = []  # a syntax error: preflight positions it
    from pathlib import Path

    dataset = file_dataset(log, used, label=args.label, protected=protected_names(args.protected),
                           favourable=args.favourable,
                           literals=written_values(spec_file.spec, args.pred, args.where))
    if model is not None:
        missing = [c for c in model.feature_names if c not in columns]
        if missing:
            raise FairauditError(f"the model {Path(args.model).name} reads column(s) {', '.join(missing[:5])} that "
                                 f"{Path(log.name).name} does not have")
    preflight(dataset, spec_file.spec, spec_source=file_source(spec_file), decision=decision, where=where,
              uses_model=uses_model)
    check_decisions(spec_file.spec, model, file_source(spec_file))  # ``pred`` against the model's decisions
    line = terminal_line(sys.stderr)
    try:
        result = audit_file(log, spec_file.spec, pred=args.pred, model=model, where=args.where,
                            dataset=dataset, on_progress=line, **trace_args(args), **options)
    finally:
        if line is not None:
            line.close()
    return finish(args, result, from_file, notes=other_engines_headers(spec_file, engine), dataset=None,
                  model=model)
