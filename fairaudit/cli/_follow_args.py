"""``fairaudit audit --follow PATH [--watch]``: audit a live decision log as its rows arrive (online auditing).

    --follow PATH      a CSV file being appended to, a directory that Parquet files are added to, or - for JSON
                       lines on standard input (``fairaudit.engines.monitor.livelog``)
    --watch            keep watching after the decision, printing each change of the verdict, until interrupted
                       (Ctrl-C, SIGTERM), the input ends or the idle timeout passes; then the final report
    --poll SECONDS     how often the log is looked at (``POLL``)
    --idle-timeout S   end the watch when no row arrived for this long (``IDLE_TIMEOUT``; default: never)

The decision is a condition over the log's columns (``--pred`` or the spec file's ``# decision:``), or a saved
model file (``--model PATH``, loaded safely) that reads its feature columns from the log (and re-predicts for
``Fair[...]``, flipping the attribute over the values of the log's first rows: ``fairaudit.engines.monitor.livelog.prepare``). Without
``--watch`` the audit ends as soon as the specification is decided and exits with the verdict's code (0/1/3, as
``fairaudit audit``). Every change of the verdict is printed as one line (rows so far, the verdict, its guarantee),
and so is every warning the drift checks raise as it fires. Validation before any work: the spec, the decision and
the row filter against the log's columns (checked on the CSV header, then on the first rows); a problem exits 2.
The log is read by the pipeline of a file at rest (``fairaudit.engines.monitor.livelog``: the schema fixed by the first poll, every
later poll checked against it; ``--column-type`` and ``--na-values`` apply as with ``--data``): a value that does not fit its column in a later row, a last line cut short, a log
truncated, ... ends the watch with one line naming the file and row, exit 2; the verdict so far is printed as
``stopped:`` (incomplete, not the log's answer) and no report or JSON is written.
"""
from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

from fairaudit.core.options import Option
from fairaudit.base.errors import FairauditError
from fairaudit.sources.live import POLL_SECONDS

# the longest waits: a poll of an hour at most, an idle timeout of some thirty years (a longer one is no timeout, and
# past the clock's own limit a wait is an overflow, not a wait)
POLL = Option("poll", float, POLL_SECONDS, "with --follow: look at the log for new rows every this many seconds",
              min=0, max=3600, exclusive=True, metavar="SECONDS", label="Poll every (s)")
IDLE_TIMEOUT = Option("idle_timeout", float, None, "with --follow: end the watch when no new row arrived for this "
                      "many seconds (default: wait for rows until interrupted or the input ends)", min=0, max=1e9,
                      exclusive=True, metavar="SECONDS", label="Idle timeout (s)")
FOLLOW_OPTIONS = (POLL, IDLE_TIMEOUT)

# what a live log cannot take: its rows and decisions come from the log itself
_NOT_WITH_FOLLOW = (("data", "--data"), ("population", "--population"), ("rows", "--rows"),
                    ("full_trace", "--full-trace"), ("label", "--label"), ("favourable", "--favourable"),
                    ("epsilon", "--epsilon"))


def add_follow_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("live log (instead of --data)")
    group.add_argument("--follow", metavar="PATH",
                       help="audit a live decision log as rows arrive: a CSV file being appended to, a directory "
                            "of Parquet files (read once each, in name order) or - for JSON lines on standard input; "
                            "exits with the verdict's code as soon as it is decided")
    group.add_argument("--watch", action="store_true",
                       help="with --follow: keep watching after the decision, printing each change of the verdict, "
                            "until interrupted (Ctrl-C), the input ends or the idle timeout passes; then the final "
                            "report")
    from fairaudit.cli._values import typed

    for option in FOLLOW_OPTIONS:  # read by their declarations when the command line is read (``scan`` reads them too)
        group.add_argument(option.flag, dest=f"follow_{option.name}", metavar=option.metavar, default=None,
                           type=typed(option), help=option.help + (f" (default {option.show(option.default)})"
                                                                   if option.default is not None else ""))


def wants_follow(args: argparse.Namespace) -> bool:
    return getattr(args, "follow", None) is not None or bool(getattr(args, "watch", False)) or any(
        getattr(args, f"follow_{o.name}", None) is not None for o in FOLLOW_OPTIONS)


def follow_options(args: argparse.Namespace) -> dict:
    """``poll`` and ``idle_timeout`` from their flags (read by their declarations: ``add_follow_arguments``), else
    their defaults."""
    out = {}
    for option in FOLLOW_OPTIONS:
        value = getattr(args, f"follow_{option.name}", None)
        out[option.name] = option.default if value is None else option.validate(value)
    return out


def run_follow(args: argparse.Namespace, request=None) -> int:
    """The live-log route of ``fairaudit audit`` (module doc); it reads its own spec file (``request`` is None)."""
    from fairaudit.cli._common import check_outputs, engine_options, finish, other_engines_headers, trace_args
    from fairaudit.cli._spec_args import spec_from_args
    from fairaudit.core import registry as engines
    from fairaudit.core.preflight import check_headers, check_options, file_source, header_engine, option_source
    from fairaudit.cli._data_args import protected_names
    from fairaudit.data.roles import check_protected
    from fairaudit.engines.monitor.livelog import live_audit, prepare
    from fairaudit.sources.live import follow, open_log

    if getattr(args, "follow", None) is None:
        raise FairauditError("--watch, --poll and --idle-timeout watch a live log: give --follow PATH")
    for name, flag in _NOT_WITH_FOLLOW:
        if getattr(args, name, None) is not None:
            raise FairauditError(f"--follow reads its rows from the live log: {flag} does not apply")
    if getattr(args, "missing", "keep") == "drop":  # as on Dask: every row of a log is audited
        raise FairauditError("--follow reads its rows from the live log: --missing drop does not apply (every row "
                             "is audited; filter rows with --where)")
    watch = bool(args.watch)
    timing = follow_options(args)
    if args.spec is None:
        raise FairauditError("no specification: give --spec TEXT|@FILE")
    spec_file = spec_from_args(argparse.Namespace(spec=args.spec, range=getattr(args, "range", None)))
    check_headers(spec_file)
    engine_name = args.engine or header_engine(spec_file) or engines.DEFAULT
    if engine_name != engines.STREAMING:
        raise FairauditError(f"--follow audits a live log with the {engines.STREAMING} engine; the {engine_name} "
                             "engine audits data at rest (drop --engine, or audit a file with --data)")
    engine = engines.get(engines.STREAMING)
    if getattr(args, "opt_order", None) is not None and engine.option("order").parse(args.opt_order) != "given":
        raise FairauditError("a live log is audited in the order its rows arrive: --order shuffle applies to a file "
                             "at rest (--data)")
    given, from_file = engine_options(args, engine, spec_file)
    notes = other_engines_headers(spec_file, engine)
    if given.get("order") == "shuffle":  # from the spec file's header: said, not applied
        from_file = [f for f in from_file if not f.startswith("--order")]
        notes.append("the spec file's '# order: shuffle' header is not applied: a live log is audited in arrival "
                     "order")
    given["order"] = "given"
    given["stop"] = not watch
    _, options = check_options(engine.name, **given)
    pred, decision, model = args.pred, None, None
    if getattr(args, "model", None) is not None:
        model = _saved_model(args)
    elif pred is None and spec_file.decision is not None:
        if spec_file.uses_model:
            raise FairauditError("the spec file says '# decision: model': give the saved model as --model PATH, or "
                                 "the logged decision as --pred CONDITION")
        pred = spec_file.decision
        decision = option_source(pred, "--pred", spec_file.headers["decision"], spec_file)
    elif pred is not None:
        decision = option_source(pred, "--pred")
    from fairaudit.core.observations import uses_decisions

    if pred is None and model is None and uses_decisions(spec_file.spec):  # (one that reads none needs none, as at rest)
        raise FairauditError("no decision: give --pred CONDITION over the log's columns (true = favourable), a saved "
                             "model (--model PATH) or a '# decision:' header in the spec file")
    where_text, where = args.where, None
    if where_text is None and spec_file.where is not None:
        where_text = spec_file.where
        where = option_source(where_text, "--where", spec_file.headers["where"], spec_file)
        from_file.append(f"--where '{where_text}'")
    elif where_text is not None:
        where = option_source(where_text, "--where")
    log_path = args.follow
    check_outputs(args, [spec_file.path, getattr(args, "model", None)] + ([] if log_path == "-" else [log_path]))
    spec = spec_file.spec
    name = "standard input" if log_path == "-" else Path(log_path).name

    from fairaudit.engines.monitor.outofcore import run_columns

    # only the columns the run reads are typed and read, as at rest
    wanted = run_columns(spec, pred, where_text, protected=protected_names(getattr(args, "protected", None)),
                         model=model)
    source = open_log(log_path, declared=getattr(args, "column_type", None),
                      na_values=tuple(getattr(args, "na_values", None) or ()), columns=wanted)
    stop = threading.Event()
    previous = _on_signals(stop)
    why: dict = {}
    final = None
    try:
        first, decider, where_event, warnings, domains = prepare(
            spec, source, pred=pred, model=model, where=where_text, name=name, stop=stop, poll=timing["poll"],
            idle_timeout=timing["idle_timeout"], why=why, spec_source=file_source(spec_file), decision=decision,
            where_source=where)
        # --protected names protected columns, as on every route: each one a column of the log
        check_protected(protected_names(getattr(args, "protected", None)), first.columns)
        frames = follow(source, stop=stop, poll=timing["poll"], idle_timeout=timing["idle_timeout"], first=first,
                        why=why)
        results = live_audit(spec, frames, decide=None if decider is None else decider.decisions_for, where=where_event,
                             options=options,
                             describe={"dataset": name, "follow": log_path, "pred": pred, "where": where_text,
                                       "model": model.describe() if model is not None else None},
                             trace_points=trace_args(args)["trace_points"], warnings=warnings,
                             score=model.score if model is not None else None, model=model, domains=domains)
        shown_verdict, said = None, set(warnings)
        try:
            for result in results:
                final = result
                if result.verdict != shown_verdict and (len(result.trace_table) or result.complete):
                    shown_verdict = result.verdict
                    print(change_line(result), flush=True)
                for warning in result.warnings:
                    if warning not in said:
                        said.add(warning)
                        print(f"warning:   {warning}", flush=True)
        except FairauditError as err:  # the log failed after rows were audited: the verdict so far is no answer
            if final is not None:
                rows = int((final.info or {}).get("stream_length", final.steps))
                print(f"stopped:   the log could not be read on after {rows:,} rows (the error below): the verdict "
                      f"so far, {final.claim.word}, covers only those rows and is not the log's final answer", flush=True)
            raise  # one line on stderr, exit 2; no report or JSON is written
    finally:
        _restore(previous)
        source.close()
    if why.get("end") is not None and (watch or final.stop_step is None):
        print(f"ended:     {_end_text(why, timing)}", flush=True)
    return finish(args, final, from_file, notes=notes)


def _saved_model(args: argparse.Namespace):
    """The model file of ``--model PATH`` (loaded safely: ``fairaudit.models.load``); a training kind is refused, since
    there is no data to train on before the rows arrive."""
    from fairaudit import models

    path = Path(args.model)
    if not path.is_file():
        raise FairauditError(f"--follow decides with a saved model file (--model PATH): no file {args.model!r}; "
                             "train one first (fairaudit train), or give the logged decision as --pred CONDITION")
    from fairaudit.cli._model_args import favourable_classes

    return favourable_classes(args, models.load(path, trust_pickle=bool(getattr(args, "trust_pickle", False)),
                                                trusted_types=tuple(getattr(args, "trust_type", None) or ())))


def change_line(result) -> str:
    """One line per change of the verdict: the rows read so far, the verdict, its guarantee."""
    rows = int((result.info or {}).get("stream_length", result.steps))
    return f"live:      {rows:,} rows  verdict {result.claim.word}: {result.headline}"


def _end_text(why: dict, timing: dict) -> str:
    from fairaudit.sources.live import END_TEXT, STOPPED

    return END_TEXT[why.get("end", STOPPED)].format(idle=timing.get("idle_timeout") or 0)


def _on_signals(stop: threading.Event) -> dict:
    """SIGINT and SIGTERM end the watch (the final report is still printed and written). Arrow's own handlers are
    off meanwhile: they would cancel a CSV read under way with an error instead of letting the watch end."""
    import pyarrow as pa

    previous = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, lambda *_: stop.set())
    pa.enable_signal_handlers(False)
    return previous


def _restore(previous: dict) -> None:
    import pyarrow as pa

    if previous:
        pa.enable_signal_handlers(True)
    for sig, handler in previous.items():
        signal.signal(sig, handler)
