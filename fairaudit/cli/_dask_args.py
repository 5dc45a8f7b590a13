"""``fairaudit audit --dask`` / ``--scheduler ADDRESS``: an audit of a log in parts on a Dask cluster.

    --dask                 start a local Dask cluster (``--dask-workers`` processes × ``--dask-threads`` threads)
                           for the run and audit the log ``--data`` (a CSV or Parquet file, a folder of parts, a
                           glob, or an s3:// URL of Parquet files; one part a partition) on it; the cluster is shut
                           down when the run ends (also on an error or Ctrl-C)
    --scheduler ADDRESS    attach to an existing Dask cluster instead (e.g. tcp://10.0.0.5:8786); command line
                           only: the dashboard never lets a browser point the server at an address

The knobs are declared once in ``fairaudit.engines.monitor.options.DASK_OPTIONS``; the route itself is
``fairaudit.engines.monitor.distributed.audit_parquet``. The result is printed and written (--json, --pdf, --full-trace)
like any other audit's (``fairaudit.cli._common.finish``). The log is read by the pipeline every route shares
(``fairaudit.sources``: ``--column-type``, ``--na-values``); its schema is fixed before a cluster starts, and a value
that does not fit, a renamed column or a part of another type is refused with the out-of-core route's message
(exit 2).
"""
from __future__ import annotations

import argparse
import logging
import sys

from fairaudit.engines.monitor.options import DASK_OPTIONS
from fairaudit.base.errors import FairauditError


def add_dask_arguments(parser: argparse.ArgumentParser, verb: str = "audit") -> None:
    from fairaudit.engines import STREAMING

    what = f"the {STREAMING} engine" if verb == "audit" else "every partition counted where it is read"
    group = parser.add_argument_group(f"Dask (a log in parts, {verb}ed on a cluster; {what})")
    group.add_argument("--dask", action="store_true",
                       help=f"{verb} the log --data (a CSV or Parquet file, a folder of parts or a glob: one part a "
                            "partition, in natural file-name order) on a local Dask cluster started for the run")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help=f"{verb} the log --data on the existing Dask cluster whose scheduler is at "
                            "ADDRESS (e.g. tcp://10.0.0.5:8786) instead of a local one")
    from fairaudit.cli._values import typed

    for option in DASK_OPTIONS:  # read by their declarations when the command line is read
        group.add_argument(option.flag, dest=option.name, default=None, metavar=option.metavar, type=typed(option),
                           help=f"{option.help} (default {option.show(option.default)})")


def wants_dask(args: argparse.Namespace) -> bool:
    """Whether the command line asks for the Dask route (a Dask knob alone is refused: it would be ignored)."""
    if getattr(args, "dask", False) or getattr(args, "scheduler", None):
        return True
    given = [o.flag for o in DASK_OPTIONS if getattr(args, o.name, None) is not None]
    if given:
        raise FairauditError(f"{given[0]} sets up a Dask cluster: give --dask (or --scheduler ADDRESS) too")
    return False


def dask_settings(args: argparse.Namespace) -> dict:
    """``workers``, ``threads``, ``timeout`` from the flags (read by their declarations: ``add_dask_arguments``) or
    the defaults."""
    values = {o.name: o.default if getattr(args, o.name, None) is None else o.validate(getattr(args, o.name))
              for o in DASK_OPTIONS}
    if args.scheduler and (getattr(args, "dask_workers", None) or getattr(args, "dask_threads", None)):
        raise FairauditError("--dask-workers and --dask-threads size a local cluster; with --scheduler the "
                             "cluster is already there: drop them")
    return {"workers": values["dask_workers"], "threads": values["dask_threads"], "timeout": values["dask_timeout"]}


def run_dask(args: argparse.Namespace, request) -> int:
    """The Dask route of ``fairaudit audit`` (module doc; ``request``: ``fairaudit.cli._common.Request``); everything
    is checked before a cluster starts."""
    from fairaudit.cli._common import check_outputs, finish, trace_args
    from fairaudit.engines.monitor.distributed import audit_parquet, dask_log
    from fairaudit.base.progress import terminal_line

    engine, spec_file, options, from_file = request.engine, request.spec_file, request.options, request.from_file
    if args.dask and args.scheduler:
        raise FairauditError("give --dask (a local cluster) or --scheduler ADDRESS (an existing one), not both")
    from fairaudit.engines.monitor.distributed import ENGINE, runs_on_dask

    if not runs_on_dask(engine):
        raise FairauditError(f"--dask runs the {ENGINE} engine over a log, not {engine.name}")
    settings = dask_settings(args)
    data = args.data
    if data is None:
        raise FairauditError("--dask audits a log: give --data FILE|FOLDER|GLOB (CSV or Parquet parts)")
    for flag, value in (("--rows held-out", args.rows == "held-out"), ("--missing drop", args.missing == "drop")):
        if value:
            raise FairauditError(f"{flag} does not apply to a log audited on Dask (every row is audited; "
                                 "filter rows with --where)")
    model = None
    pred = args.pred
    if getattr(args, "model", None) is not None:
        from pathlib import Path

        from fairaudit import models

        if not Path(args.model).is_file():
            raise FairauditError("with --dask, --model must be a saved model file (a model is trained on a dataset "
                                 "in memory, not on a log on a cluster)")
        model = models.load(args.model, trust_pickle=bool(getattr(args, "trust_pickle", False)),
                            trusted_types=tuple(getattr(args, "trust_type", None) or ()))
        from fairaudit.cli._model_args import favourable_classes
        from fairaudit.core.preflight import check_decisions, file_source

        model = favourable_classes(args, model)

        check_decisions(spec_file.spec, model, file_source(spec_file))  # ``pred`` against the model's decisions
    elif pred is None and spec_file.decision is not None:
        if spec_file.uses_model:
            raise FairauditError("the spec file says '# decision: model': give --model PATH")
        pred = spec_file.decision
        from_file.append(f"--pred '{pred}'")
    # the parts listed and the schema fixed before a cluster starts (no part, an unreadable first part: one line)
    from fairaudit.cli._data_args import protected_names
    from fairaudit.data.roles import check_protected
    from fairaudit.engines.monitor.outofcore import run_columns

    # only the columns the run reads are typed and read (a log of 100,000 columns audited on two)
    wanted = run_columns(spec_file.spec, pred, args.where, label=args.label, protected=protected_names(args.protected),
                         model=model)
    log = dask_log(data, getattr(args, "column_type", None), tuple(getattr(args, "na_values", None) or ()), wanted)

    # --protected names protected columns, as on every route: each one a column of the log, none the label
    check_protected(protected_names(args.protected), log.schema.names, args.label)
    check_outputs(args, [spec_file.path, getattr(args, "model", None), *log.parts])
    line = terminal_line(sys.stderr)
    chatter = logging.getLogger("distributed")  # e.g. "event loop was unresponsive" on a loaded machine: not news
    level = chatter.level
    chatter.setLevel(logging.ERROR)
    try:
        from fairaudit.core.preflight import option_source

        sources = (option_source(pred, "--pred") if pred is not None else None,
                   option_source(args.where, "--where") if args.where else None)
        result = audit_parquet(log, spec_file.spec, pred=pred, model=model, where=args.where, label=args.label,
                               favourable=args.favourable, scheduler=args.scheduler or None, on_progress=line,
                               sources=sources,
                               **settings, **trace_args(args), **options)
    finally:
        chatter.setLevel(level)
        if line is not None:
            line.close()
    return finish(args, result, from_file, model=model)
