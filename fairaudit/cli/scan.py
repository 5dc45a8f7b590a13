"""``fairaudit scan``: every intersection of the protected attributes at once — each cell's rate and impact ratio
with intervals that all hold together (``fairaudit.subgroups``; the mathematics: ``docs/methods/scan.md``).

Prints the cells ranked by the upper end of their impact ratio's interval (rows, share, rate [lo, hi], impact ratio
[lo, hi], flag), the guarantee in one sentence, and the cells certified below and above the threshold; writes the
JSON (``--json``), a regulatory table (``--csv OUT --template ll144|eeoc``) and its PDF report (``--pdf OUT``,
``fairaudit.report.scan``). Exit code: 1 some cell certified
below the threshold, 3 none but some undecided, 0 every cell (not excluded) certified above, 2 bad input.

``--follow PATH`` (instead of ``--data``) scans a live decision log as its rows arrive (a CSV being appended to, a
folder of Parquet files, ``-`` for JSON lines; read by the live-log reader ``fairaudit.sources.live``)
with ``fairaudit.subgroups.scan.ScanStream``: the first look (which fixes how the failure probability is shared
among the cells) after ``--burn-in`` rows, then a line whenever a cell's flag changes; the scan ends when the log ends, the
idle timeout passes or on Ctrl-C, and prints the final table.
"""
from __future__ import annotations

import argparse

from fairaudit.base.errors import FairauditError

BURN_IN = 1000  # --follow: the rows before the first look, by default
EXIT_HELP = ("exit codes: 0 = every cell (not excluded) certified above the threshold, 1 = some cell certified "
             "below, 3 = none below but some undecided, 2 = bad input, 4 = internal error")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from fairaudit.cli._data_args import add_reading_arguments
    from fairaudit.cli._follow_args import IDLE_TIMEOUT, POLL
    from fairaudit.cli._model_args import add_model_arguments
    from fairaudit.cli._values import Names, count, output, probability, typed
    from fairaudit.subgroups.options import ALLOCATIONS, BOUNDS, HELP, MODES

    parser.epilog = EXIT_HELP
    group = parser.add_argument_group("data")
    group.add_argument("--data", metavar="NAME|CSV",
                       help="built-in dataset name (see `fairaudit datasets`) or a CSV / Parquet file")
    group.add_argument("--table", metavar="NAME",
                       help="with --data DATABASE (a DuckDB or SQLite file): the table or view to scan; counted by "
                            "the database as one GROUP BY where the scan allows (--pred, no --json looks), else its "
                            "rows read in batches")
    group.add_argument("--follow", metavar="PATH",
                       help="instead of --data: scan a live decision log as rows arrive (a CSV being appended to, a "
                            "folder of Parquet files, or - for JSON lines on standard input); --pred decides")
    group.add_argument("--burn-in", type=typed(count("burn_in", BURN_IN)), default=None, dest="burn_in",
                       metavar="ROWS", help=HELP["burn_in"])
    # --follow's timing: the declarations ``fairaudit audit --follow`` reads, so both commands take the same values
    group.add_argument("--idle-timeout", type=typed(IDLE_TIMEOUT), default=None, dest="idle_timeout",
                       metavar="SECONDS", help=IDLE_TIMEOUT.help)
    group.add_argument("--poll", type=typed(POLL), default=None, metavar="SECONDS", help=POLL.help)
    group.add_argument("--protected", metavar="COL", action=Names,
                       help="the attributes to scan (space- or comma-separated; default: the dataset's protected "
                            "attributes)")
    group.add_argument("--bins", metavar="COL=Q|COL=E1,E2,...", action="append", default=[],
                       help="also scan a numeric column cut into Q quantile bins (age=4) or at the given edges "
                            "(age=18,25,40,65); repeatable")
    group.add_argument("--label", metavar="COL", help="a binary outcome column: adds each cell's TPR and FPR")
    group.add_argument("--favourable", metavar="VALUE", help="the label's favourable value (when not obvious)")
    group.add_argument("--where", metavar="EXPR", help="scan only the rows matching this condition")
    add_reading_arguments(group)  # --column-type, --na-values: as every command that reads a file
    from fairaudit.cli._stream_args import MODES as READING
    from fairaudit.engines.monitor.outofcore import AUTO_BYTES

    group.add_argument("--out-of-core", choices=READING, default="auto", dest="out_of_core",
                       help="read --data in batches, memory bounded by the cells whatever the rows (--pred or a "
                            "saved --model PATH; CSV or Parquet, a folder or glob of parts): on, off, or auto "
                            f"(default: Parquet, folders, globs and CSV files of {AUTO_BYTES >> 20} MB or more)")
    group.add_argument("--rows", choices=["held-out", "all"],
                       help="with a --model KIND trained here: the held-out rows (default) or all")
    add_model_arguments(parser, required=True, seed_help="seed of the row order and of training a --model KIND "
                                                          "(default 0)")
    scan = parser.add_argument_group("scan")
    scan.add_argument("--depth", type=typed(count("depth", 2)), default=2,
                      help="intersections of up to this many attributes (default 2)")
    scan.add_argument("--delta", type=typed(probability("delta", 0.05)), default=0.05, help=HELP["delta"])
    scan.add_argument("--mode", choices=MODES, default=MODES[0], help=HELP["mode"])
    scan.add_argument("--threshold", type=float, default=0.8, help="the impact-ratio threshold (default 0.8: 4/5)")
    scan.add_argument("--min-share", type=float, default=0.02, dest="min_share",
                      help="cells under this share of the rows get a rate but no impact ratio (default 0.02: LL144)")
    scan.add_argument("--rate", choices=["selection", "scoring"], default="selection",
                      help="selection (the decision) or scoring (the model's score above the median of all rows)")
    scan.add_argument("--bound", choices=BOUNDS, default=BOUNDS[0], help=HELP["bound"])
    scan.add_argument("--order", choices=["shuffle", "given"], default="shuffle", help=HELP["order"])
    scan.add_argument("--allocation", choices=ALLOCATIONS, default=ALLOCATIONS[0], help=HELP["allocation"])
    from fairaudit.cli._dask_args import add_dask_arguments

    add_dask_arguments(parser, verb="scan")
    out = parser.add_argument_group("output")
    out.add_argument("--json", metavar="OUT", type=output, help="write the scan result as JSON")
    out.add_argument("--csv", metavar="OUT", type=output, help="write a regulatory table as CSV (see --template)")
    out.add_argument("--pdf", metavar="OUT", type=output, help="write the regulatory report as PDF (see --template)")
    out.add_argument("--template", "--pack", choices=["ll144", "eeoc"], default="ll144", dest="template",
                     help="the pack of --csv and --pdf: ll144 (NYC Local Law 144 bias audit: rates and impact "
                          "ratios, no threshold; default) or eeoc (the four-fifths rule with Fisher's exact test and "
                          "the flip count)")
    out.add_argument("--data-kind", choices=["historical", "test"], default=None, dest="data_kind",
                     help="the pack states whether the rows are historical data (the tool's decisions on real "
                          "applicants) or test data (6 RCNY §5-302); with test, give --test-data-reason")
    out.add_argument("--test-data-reason", metavar="TEXT", default=None, dest="test_data_reason",
                     help="with --data-kind test: why historical data was not used and how the test data was made")
    out.add_argument("--distribution-date", metavar="DATE", default=None, dest="distribution_date",
                     help="the date the tool was first distributed (stated in the pack as given)")
    out.add_argument("--exclusion-reason", metavar="TEXT", default=None, dest="exclusion_reason",
                     help="why the categories under the minimum share are left out of the impact ratios (default: "
                          "too few for a stable ratio, as 6 RCNY §5-301(d) allows)")
    out.add_argument("--force", action="store_true", help="replace an existing output file of another kind")


def attribute_names(values) -> list[str] | None:
    """``["sex", "race"]`` from ``--protected sex race`` or ``--protected sex,race`` (``fairaudit.cli._values.names``);
    a scan needs at least one."""
    from fairaudit.cli._values import names

    found = names(values)
    if found is not None and not found:
        raise FairauditError("--protected: give at least one column")
    return found


def parse_bins(values) -> dict:
    """``{"age": 4}`` from ``age=4``; ``{"age": [18.0, 25.0, 65.0]}`` from ``age=18,25,65``."""
    out = {}
    for value in values or []:
        name, sep, rest = value.partition("=")
        name, rest = name.strip(), rest.strip()
        if not sep or not name or not rest:
            raise FairauditError(f"--bins {value!r}: write COL=Q (quantile bins) or COL=E1,E2,... (edges)")
        if name in out:
            raise FairauditError(f"--bins: {name} is given twice")
        parts = [p.strip() for p in rest.split(",")]
        try:
            if len(parts) == 1:
                out[name] = int(parts[0])
            else:
                out[name] = [float(p) for p in parts]
        except ValueError:
            raise FairauditError(f"--bins {value!r}: Q must be a whole number, edges numbers (COL=4 or "
                                 "COL=18,25,65)") from None
    return out


def run(args: argparse.Namespace) -> int:
    from fairaudit import data
    from fairaudit.cli._model_args import model_from_args
    from fairaudit.core.outputs import check_output
    from fairaudit.resolve import with_protected
    from fairaudit.subgroups.scan import LOOKS, scan, settings

    protected = attribute_names(args.protected)
    bins = parse_bins(args.bins)
    about(args)  # --data-kind test without a reason: one line, before any work
    settings(args.depth, args.delta, args.mode, args.bound, args.threshold, args.min_share, args.rate,
             args.allocation)  # a bad option: one line, before any work
    if (args.data is None) == (args.follow is None):
        raise FairauditError("give --data (rows at rest) or --follow PATH (a live log), one of them")
    if args.follow is None:
        given = [flag for flag, value in (("--poll", args.poll), ("--idle-timeout", args.idle_timeout),
                                          ("--burn-in", args.burn_in)) if value is not None]
        if given:
            raise FairauditError(f"{given[0]} watches a live log: give --follow PATH (or drop it)")
    inputs = [p for p in (args.data, args.follow, args.model) if p and p != "-"]
    if args.json:
        check_output(args.json, "scan", inputs=inputs, force=args.force, what="scan result")
    if args.csv:
        check_output(args.csv, "scan-table", inputs=inputs, force=args.force, what="scan table")
    if args.pdf:
        check_output(args.pdf, "pdf", inputs=inputs, force=args.force, what="report")
    outputs = [p for p in (args.json, args.csv, args.pdf) if p]
    if any(_same(a, b) for i, a in enumerate(outputs) for b in outputs[i + 1:]):
        raise FairauditError("--json, --csv and --pdf must name different files")
    if args.follow is not None:
        if args.table is not None:
            raise FairauditError("--table names a table of a database given with --data, not a live log")
        return run_follow(args, protected, bins)
    from fairaudit.cli._dask_args import wants_dask
    from fairaudit.sources.database import is_database

    if args.table is not None or is_database(args.data):
        if args.table is None:
            raise FairauditError(f"{args.data} is a database: name the table to scan with --table NAME")
        if wants_dask(args):
            raise FairauditError("--table scans a database table in this process, not on Dask: drop --dask / "
                                 "--scheduler")
        return run_out_of_core(args, protected, bins, table=args.table)
    if wants_dask(args):
        return run_out_of_core(args, protected, bins, dask=True)
    if out_of_core(args, bins):
        return run_out_of_core(args, protected, bins)
    dataset = data.resolve(args.data, label=args.label, favourable=args.favourable, column_types=args.column_type,
                           na_values=tuple(args.na_values or ()), columns=read_columns(args, protected, bins))
    model = None
    if args.model is not None:  # the scanned attributes are the protected ones a model trained here does not read
        model = model_from_args(args, with_protected(dataset, protected))
    result = scan(dataset, protected, depth=args.depth, bins=bins, pred=args.pred, model=model, label=args.label,
                  where=args.where, rows=args.rows, delta=args.delta, mode=args.mode, threshold=args.threshold,
                  min_share=args.min_share, bound=args.bound, order=args.order, seed=args.seed, rate=args.rate,
                  allocation=args.allocation, looks=LOOKS if args.json else 0)  # the looks only go into the JSON
    print_result(result)
    write_outputs(args, result)
    return result.exit_code


def out_of_core(args: argparse.Namespace, bins: dict) -> bool:
    """Whether this scan reads ``--data`` in batches (``fairaudit.subgroups.reading``): ``--out-of-core on``
    always (or one line saying why it cannot), ``off`` never, ``auto`` for a Parquet file, a folder or glob of parts
    and a big CSV file, when the scan is one that can be read in batches."""
    from pathlib import Path

    from fairaudit.engines.monitor.outofcore import AUTO_BYTES, is_parquet, readable, size

    if args.out_of_core == "off":
        return False
    path = str(args.data)
    if not readable(path):
        if args.out_of_core == "on":
            raise FairauditError(f"--out-of-core on reads a .csv or .parquet file, or a folder of them; {path} is "
                                 "not one")
        return False
    why = why_not_batches(args, bins)
    if why is not None:
        if args.out_of_core == "on":
            raise FairauditError(f"{path} cannot be scanned in batches: {why}")
        return False
    several = not Path(path).is_file()
    return args.out_of_core == "on" or several or is_parquet(path) or size(path) >= AUTO_BYTES


def why_not_batches(args: argparse.Namespace, bins: dict) -> str | None:
    """Why this scan cannot read its log in batches or parts (None if it can)."""
    from fairaudit.subgroups.reading import why_not_out_of_core

    why = why_not_out_of_core(model=args.model if _trains(args.model) else None, rate=args.rate, bins=bins,
                              rows=args.rows)
    if why is None and args.model is not None and args.rows != "all" and _trained_here(args):
        why = ("the model was trained by fairaudit, and its held-out rows are found only in memory; give --rows all "
               "to scan every row in batches")
    return why


def read_columns(args: argparse.Namespace, protected, bins) -> tuple | None:
    """The only columns a scan with ``--pred`` reads (as read in batches: the same columns typed and checked on
    every route); None (every column) with a model or without named attributes."""
    if args.model is not None or not (protected or bins):
        return None
    from fairaudit.subgroups.reading import _read_columns

    return _read_columns(protected or [], bins, args.pred, args.where, args.label, None)


def _trains(model) -> bool:
    """Whether ``--model`` names a kind to train (not a saved model file)."""
    from pathlib import Path

    from fairaudit.models import KINDS

    return model is not None and (model in KINDS or not Path(model).is_file())


def _trained_here(args) -> bool:
    from fairaudit.cli._stream_args import _load

    return "trained_on" in (getattr(_load(args), "params", None) or {})


def run_out_of_core(args: argparse.Namespace, protected, bins, dask: bool = False, table: str | None = None) -> int:
    """The scan of ``--data`` read in batches (``fairaudit.subgroups.reading.scan_log``) or on a Dask cluster
    (``dask``: ``fairaudit.subgroups.distributed.scan_on_dask``): the same cells as in memory, memory bounded by
    the cells; ``table``: a database's table (``fairaudit.subgroups.database.scan_table``)."""
    if dask or table is not None:
        why = why_not_batches(args, bins)
        if why is not None:
            raise FairauditError(f"a scan {'on Dask' if dask else 'of a table'} reads the rows in parts: {why}")
    model = None
    if args.model is not None:
        from fairaudit.cli._stream_args import _load

        model = _load(args)
    if not protected and not bins:
        raise FairauditError("name the attributes to scan with --protected (a log read in batches has no declared "
                             "protected attributes)")
    options = {}
    if dask:
        from fairaudit.cli._dask_args import dask_settings
        from fairaudit.subgroups.distributed import scan_on_dask as run_scan

        options = dict(scheduler=args.scheduler, **dask_settings(args))
    elif table is not None:
        from fairaudit.subgroups.database import scan_table

        def run_scan(database, attributes, **rest):
            return scan_table(database, table, attributes, **rest)
    else:
        from fairaudit.subgroups.reading import scan_log as run_scan
    result = run_scan(args.data, protected, **options, depth=args.depth, bins=bins, pred=args.pred, model=model,
                      label=args.label, favourable=args.favourable, where=args.where, delta=args.delta,
                      mode=args.mode, threshold=args.threshold, min_share=args.min_share, bound=args.bound,
                      order=args.order, seed=args.seed, rate=args.rate, allocation=args.allocation,
                      looks=1 if args.json else 0, declared=args.column_type,
                      na_values=tuple(args.na_values or ()))
    print_result(result)
    write_outputs(args, result)
    return result.exit_code


def run_follow(args: argparse.Namespace, protected, bins) -> int:
    """``--follow PATH``: the scan of a live log, a line per change of the flags, the final table at the end."""
    import sys
    import threading

    from fairaudit.engines.monitor import livelog
    from fairaudit.sources import live
    from fairaudit.subgroups.scan import ScanStream

    for flag, value in (("--model", args.model), ("--label", args.label), ("--where", args.where),
                        ("--rows", args.rows), ("--favourable", args.favourable)):
        if value is not None:
            raise FairauditError(f"--follow and {flag} cannot be combined: a live log is scanned with --pred")
    if args.mode == "one-look":
        raise FairauditError("--follow looks again and again: use --mode anytime (or exact), not one-look")
    if not protected and not bins:
        raise FairauditError("--follow: name the attributes to scan with --protected")
    from fairaudit.models import from_expression

    source = live.open_log(args.follow, stdin=sys.stdin, declared=args.column_type,
                              na_values=tuple(args.na_values or ()))
    name = "standard input" if args.follow == "-" else str(args.follow)
    stop = threading.Event()
    why: dict = {}
    poll = live.POLL_SECONDS if args.poll is None else float(args.poll)
    first = live.first_rows(source, stop=stop, poll=poll, idle_timeout=args.idle_timeout, why=why)
    if first is None:
        raise FairauditError(f"no row arrived in the log {name}: nothing to scan")
    columns = list(protected or []) + list(bins)
    for column in columns:
        if column not in first.columns:
            raise FairauditError(f"unknown column {column!r} in the log {name}; columns: "
                                 f"{', '.join(map(str, first.columns[:12]))}")
    from fairaudit.spec import parse_event

    model = from_expression(args.pred, livelog.log_dataset(first, name, events=[parse_event(args.pred)],
                                                           schema=getattr(source, "schema", None)))
    from fairaudit.models.expression import require_yes_no

    require_yes_no(model, "the scan")
    stream = ScanStream(protected, depth=args.depth, bins=bins, delta=args.delta, mode=args.mode,
                        threshold=args.threshold, min_share=args.min_share, bound=args.bound, rate="selection",
                        allocation=args.allocation, data=name, decision=f"pred: {args.pred}")
    shown, result = None, None
    try:
        for frame in live.follow(source, stop=stop, poll=poll, idle_timeout=args.idle_timeout, first=first,
                                    why=why):
            stream.update(frame[columns], model.predict(frame))
            if stream.rows >= (BURN_IN if args.burn_in is None else args.burn_in):
                result = stream.result()
                flags = {c.id: c.flag for c in result.cells}
                if flags != shown:
                    below = [c.id for c in result.certified_below()]
                    print(f"rows {stream.rows:,}: {len(below)} certified below ({', '.join(below[:4]) or 'none'}"
                          f"{' ...' if len(below) > 4 else ''}), {len(result.undecided())} undecided, "
                          f"{len(result.certified_above())} certified above", flush=True)
                    shown = flags
    except KeyboardInterrupt:
        stop.set()
    finally:
        source.close()
    if not stream.rows:
        raise FairauditError(f"no row arrived in the log {name}: nothing to scan")
    result = stream.result()
    print_result(result)
    write_outputs(args, result)
    return result.exit_code


def about(args: argparse.Namespace):
    """What the auditor states for the pack (``fairaudit.subgroups.regulatory.About``), checked."""
    from fairaudit.subgroups.regulatory import About

    if args.test_data_reason and args.data_kind != "test":
        raise FairauditError("--test-data-reason goes with --data-kind test")
    return About(data_kind=args.data_kind, test_data_reason=args.test_data_reason,
                 distribution_date=args.distribution_date, exclusion_reason=args.exclusion_reason)


def write_outputs(args: argparse.Namespace, result) -> None:
    """The outputs asked for (checked before the scan started): the JSON, the regulatory CSV, its PDF."""
    from fairaudit.core.outputs import write_atomically
    from fairaudit.subgroups import regulatory

    if args.json:
        write_atomically(args.json, result.to_json().encode("utf-8"), what="scan result")
        print(f"wrote {args.json}")
    if args.csv:
        write_atomically(args.csv, regulatory.to_csv(result, args.template, about(args)).encode("utf-8"),
                         what="scan table")
        print(f"wrote {args.csv}")
    if args.pdf:
        from fairaudit.report.scan import build_scan_pdf

        write_atomically(args.pdf, build_scan_pdf(result, args.template, about=about(args)), what="report")
        print(f"wrote {args.pdf}")


def _same(a, b) -> bool:
    from pathlib import Path

    return Path(a).resolve() == Path(b).resolve()


def _interval(e, digits: int = 3) -> str:
    import math

    if e is None:
        return "—"
    if math.isnan(e.estimate):
        return "undefined"
    hi = "∞" if math.isinf(e.hi) else f"{e.hi:.{digits}f}"
    if e.lo == e.hi:  # exact mode
        return f"{e.estimate:.{digits}f}"
    return f"{e.estimate:.{digits}f} [{e.lo:.{digits}f}, {hi}]"


def print_result(result) -> None:
    """The ranked table, the guarantee, what it assumes and the certified lists."""
    word = "scoring rate" if result.rate_kind == "scoring" else "rate"
    label = result.label is not None
    head = ["#", "cell", "rows", "share", word, "impact ratio", "flag"] + (["TPR", "FPR"] if label else [])
    lines = []
    for c in result.cells:
        flag = c.flag.replace("_", " ")
        if c.flag == "undecided" and c.more_rows:
            flag += f" (~{c.more_rows:,} more rows)" if c.more_rows > 0 else " (beyond the projection)"
        if c.is_reference:  # the table's most-selected category: its ratio is 1 by definition, nothing to certify
            flag = "reference (ratio 1 by definition)"
        row = [str(c.rank), c.name if len(c.table) > 1 else f"{c.table[0]}={c.name}", f"{c.rows:,}",
               f"{100 * c.share:.1f}%", _interval(c.rate), _interval(c.impact_ratio), flag]
        if label:
            row += [_interval(c.tpr), _interval(c.fpr)]
        lines.append(row)
    widths = [max(len(h), *(len(r[i]) for r in lines)) if lines else len(h) for i, h in enumerate(head)]
    print(f"scan:      {', '.join(result.attributes)} · depth {result.depth} · {result.rows:,} rows · mode "
          f"{result.mode} · failure probability {result.delta:g} · threshold {result.threshold:g}")
    print(f"rows:      {result.rows_line()}" + (f" · data SHA-256 {result.data_hash}" if result.data_hash else ""))
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for row in lines:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    print(f"guarantee: {result.guarantee}")
    print(f"assumes:   {result.assumption}")
    for table in result.tables:
        if table.unknown:
            print(f"unknown:   {table.name}: {table.unknown:,} rows of unknown category (not in the table)")
    below = result.certified_below()
    above = [c for c in result.certified_above() if not c.is_reference]
    print(f"below:     {', '.join(c.id for c in below) or 'none'}")
    print(f"above:     {', '.join(c.id for c in above) or 'none'}")
    print(f"reference: {', '.join(c.id for c in result.cells if c.is_reference) or 'none'} (each table's "
          "most-selected category, ratio 1 by definition)")
    undecided = result.undecided()
    if undecided:
        print(f"undecided: {', '.join(c.id for c in undecided)} (rows to decide: a projection that assumes the "
              "rates stay where they are)")
    excluded = result.excluded()
    if excluded:
        print(f"excluded:  {', '.join(c.id for c in excluded)} (under {100 * result.min_share:g}% of the rows: "
              "rate only)")
    for warning in result.warnings:
        print(f"warning:   {warning}")
