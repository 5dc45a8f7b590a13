"""``fairaudit audit``: audit decisions against a specification and write the JSON result / PDF report.

Prints the verdict, the guarantee sentence, the stop step and the worst comparison. Exit code, so that an
audit can gate a deployment pipeline: 0 certified true, 1 violated, 3 undecided, 2 bad input.

The engine's options are flags generated from its declarations (``fairaudit.core.engine.Option``):
``fairaudit audit --engine NAME --help`` lists them. A spec file's ``# dataset:``, ``# decision:``, ``# where:``,
``# engine:`` headers and the engine's header options (``Option(header=True)``) supply the values not
given on the command line.

Everything is validated before any work (``fairaudit.core.preflight``, the same check as ``fairaudit check
--data``): the spec against the data, the decision, the row filter, the options and the output paths;
a problem exits 2 with every error positioned and a caret. An internal error (a bug) exits 4.

The route is chosen in one place (``route``) and each route is one entry point ``(args, request) -> exit code``
(``ROUTES``): a dataset in memory (``run_memory``), a big file out of core (``fairaudit.cli._stream_args``), a live
log (``--follow``: ``fairaudit.cli._follow_args``), a log on Dask (``--dask`` / ``--scheduler``:
``fairaudit.cli._dask_args``), a population program (``--population``) or a model's input domain (``--model`` without
``--data``, for an engine that needs no dataset). What they share (the options, the output checks, ``finish``) is
``fairaudit.cli._common``, below all of them.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from fairaudit.cli._spec_args import add_range_argument
from fairaudit import engines
from fairaudit.cli._common import (EXIT, EXIT_EXPLORATORY, EXIT_HELP, EXIT_UNBACKED, Request,  # noqa: F401
                                   check_outputs, decision_sources, engine_options, finish, other_engines_headers,
                                   print_summary, trace_args, write_report)
from fairaudit.core.options import COMMON_OPTIONS, with_common
from fairaudit.base.errors import FairauditError
from fairaudit.core.inputs import ROWS
from fairaudit.base.progress import terminal_line

# the routes of ``fairaudit audit``: name -> "module:entry point", each called as ``entry(args, request)``
ROUTES = {
    "follow": "fairaudit.cli._follow_args:run_follow",  # a live log, as its rows arrive
    "population": "fairaudit.cli.audit:run_population",  # individuals of a population program
    "dask": "fairaudit.cli._dask_args:run_dask",  # a log in parts on a Dask cluster
    "domain": "fairaudit.cli.audit:run_domain",  # a model over its input domain, no rows
    "out-of-core": "fairaudit.cli._stream_args:run_out_of_core",  # a big file read in chunks
    "memory": "fairaudit.cli.audit:run_memory",  # a dataset in memory
}


def _engine_in(argv) -> str:
    """The engine named by ``--engine NAME`` / ``--engine=NAME`` in ``argv`` (for the help), else the default."""
    argv = list(argv or [])
    for i, arg in enumerate(argv):
        if arg == "--engine" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--engine="):
            return arg.split("=", 1)[1]
    return engines.DEFAULT


def add_arguments(parser: argparse.ArgumentParser, argv=None) -> None:
    from fairaudit.cli._data_args import add_data_arguments
    from fairaudit.cli._follow_args import add_follow_arguments
    from fairaudit.cli._model_args import add_model_arguments
    from fairaudit.cli._values import count, output, share, typed

    parser.epilog = EXIT_HELP
    add_data_arguments(parser, required=False)
    add_follow_arguments(parser)  # --follow PATH [--watch]: a live log instead of --data
    parser.add_argument("--spec", metavar="TEXT|@FILE",
                        help="the specification, or @path to a file (required unless --population is given)")
    group = parser.add_argument_group("population program (instead of --data)")
    group.add_argument("--population", metavar="FILE.fr",
                       help="audit individuals sampled from this population and decision program (FairSquare "
                            ".fr format) instead of a dataset's rows; without --spec the property is the program's "
                            "group-fairness ratio P[target | min ∧ qual] / P[target | ¬min ∧ qual] > 1 − ε")
    group.add_argument("--epsilon", metavar="EPS",
                       help="with --population and no --spec: the ratio property's ε (default 0.15)")
    shown = _engine_in(sys.argv[1:] if argv is None else argv)
    parser.add_argument("--engine", default=None, choices=list(engines.names()),
                        help=f"engine (default: the spec file's '# engine:' header, else {engines.DEFAULT}); "
                             "`--engine NAME --help` lists that engine's options")
    add_model_arguments(parser, required=False,
                        seed_help="seed for training a --model KIND and for everything random in the run (default 0)")
    parser.add_argument("--where", metavar="EXPR", help='audit only the matching rows, e.g. \'workclass == "Federal-gov"\'')
    add_range_argument(parser)
    parser.add_argument("--include-protected", action="store_true",
                        help="with --model KIND: let the model trained here read the protected attributes (the "
                             "default features leave them out, as the dashboard's Model page and fairaudit train do)")
    parser.add_argument("--rows", choices=list(ROWS), default=None,
                        help="which rows to audit: 'held-out' (default when --model KIND trains the model here: "
                             "the rows it was not trained on) or 'all'")
    add_engine_options(parser, shown)
    from fairaudit.cli._stream_args import add_stream_arguments

    add_stream_arguments(parser)  # --out-of-core
    parser.add_argument("--confirm", metavar="NODE[:refute]", default=None,
                        help="choose NODE's suggested threshold (certify, or refute with ':refute') on a random part "
                             "of the audited rows and certify it on the rest: a verdict that is not exploratory "
                             "(the split is recorded; the new specification is printed)")
    parser.add_argument("--confirm-share", type=typed(share("confirm_share", None)), default=None, metavar="P",
                        help="with --confirm: the share of the audited rows that chooses the threshold (default 0.5)")
    parser.add_argument("--json", metavar="PATH", type=output, help="write the audit result (JSON) here")
    parser.add_argument("--pdf", metavar="PATH", type=output, help="write the PDF audit report here")
    parser.add_argument("--force", action="store_true",
                        help="allow --json/--pdf to replace an existing file of another kind (never an input)")
    parser.add_argument("--trace-every", type=typed(count("trace_every", 1)), default=1, metavar="K",
                        help="write every K-th check of the display trace to the JSON (default 1: all it keeps)")
    parser.add_argument("--trace-points", type=typed(count("trace_points", None, least=0)), default=None,
                        metavar="N",
                        help="the display trace (JSON, charts) keeps every verdict change, the stop step, a log grid "
                             "and N evenly spaced checks (default: sized so that the JSON stays under about 1 MB; "
                             "0 keeps every check)")
    parser.add_argument("--full-trace", metavar="PATH", type=output,
                        help="write every check of every node to this Parquet file (the JSON keeps a bounded "
                             "subsample)")
    from fairaudit.cli._dask_args import add_dask_arguments

    add_dask_arguments(parser)  # --dask / --scheduler: a Parquet log on a Dask cluster


def add_engine_options(parser: argparse.ArgumentParser, shown: str) -> None:
    """A flag for every option of every engine (read as text, checked later by the chosen engine's declaration);
    the help lists the options of the engine ``shown`` and those of every run."""
    taken = {flag for action in parser._actions for flag in action.option_strings}
    shown = shown if shown in engines.names() else engines.DEFAULT
    # from the engines' declarations (``declared_options``): no engine is imported for the help
    group = parser.add_argument_group(f"options of the {shown} engine ({engines.declared_title(shown)})",
                                      None if engines.declared_options(shown) else
                                      "this engine has no options of its own")
    common = parser.add_argument_group("options of every run")
    seen = set()
    for name in [shown] + [n for n in engines.names() if n != shown]:
        for option in with_common(engines.declared_options(name)):
            if option.flag in taken or option.name in seen:
                continue
            seen.add(option.name)
            visible = name == shown
            help_text = option.help + (f" (default {option.show(option.default)})" if option.default is not None
                                       else "") + (f"; a spec file's '# {option.name}:' header sets it"
                                                   if option.header else "")
            is_common = option.name in {o.name for o in COMMON_OPTIONS}
            where = common if is_common else group
            kwargs = dict(dest=f"opt_{option.name}", default=None, help=help_text if visible else argparse.SUPPRESS)
            flags = (option.flag, *option.aliases)
            if option.type is bool:  # ``--stop`` alone means true; ``--stop false`` turns a default of true off
                where.add_argument(*flags, nargs="?", const="true", metavar="true|false", **kwargs)
            else:
                metavar = "{" + ",".join(map(str, option.choices)) + "}" if option.choices else (
                    option.metavar or option.name.upper())
                where.add_argument(*flags, metavar=metavar, **kwargs)


def run(args: argparse.Namespace) -> int:
    """``fairaudit audit``: the route chosen (``route``), then its entry point."""
    name, request = route(args)
    module, entry = ROUTES[name].split(":")
    return getattr(importlib.import_module(module), entry)(args, request)


def route(args: argparse.Namespace) -> tuple[str, Request | None]:
    """``(the route's name in ROUTES, the Request it is given)``: the only place that decides how ``fairaudit audit``
    reads its rows. A live log and a population program parse their own spec file (``request`` None); every other
    route gets the spec file, the engine and its options checked here, and an in-memory, out-of-core or domain run
    its output paths checked too (before the out-of-core test, which may load the model file)."""
    from fairaudit.cli._dask_args import wants_dask
    from fairaudit.cli._follow_args import wants_follow
    from fairaudit.cli._stream_args import out_of_core

    if getattr(args, "confirm_share", None) is not None and not getattr(args, "confirm", None):
        raise FairauditError("--confirm-share is the share of the rows that --confirm chooses on: give --confirm "
                             "NODE too (or drop it)")
    if getattr(args, "favourable_class", None) and getattr(args, "model", None) is None:
        from fairaudit.cli._model_args import favourable_classes

        favourable_classes(args, None)  # refused, before any work, with what to write instead
    if wants_follow(args):  # a live log (fairaudit.cli._follow_args)
        return _confirmable("follow", args), None
    if getattr(args, "population", None) is not None:
        return _confirmable("population", args), None
    request = prepare(args)
    if wants_dask(args):
        return _confirmable("dask", args), request
    if args.data is None and request.spec_file.dataset is None and getattr(args, "model", None) is not None \
            and "dataset" not in request.engine.requires:
        return _confirmable("domain", args), request
    if args.data is None:
        if request.spec_file.dataset is None:
            raise FairauditError("no dataset: give --data NAME|CSV (or a '# dataset:' header in the spec file)")
        args.data = request.spec_file.dataset_ref()  # a built-in name, or a file beside the spec (never anywhere)
    # output paths are checked before any work: never an input (the data as resolved, the spec file, the model
    # file), never another kind of file without --force
    check_outputs(args, [request.spec_file.path, args.data, getattr(args, "model", None)])
    if out_of_core(args, request.engine, request.spec_file):  # a big CSV / Parquet log, read in chunks
        return "out-of-core", request
    return "memory", request


# the routes --confirm does not apply to, and why (it splits a dataset's audited rows at random, in memory)
_NO_CONFIRM = {"follow": "a live log is audited once, in arrival order", "population": "a population program has "
               "no audited rows to split", "dask": "a log on Dask is counted where it lies, not split",
               "domain": "a model's input domain has no rows"}


def _confirmable(name: str, args: argparse.Namespace) -> str:
    """``name``, the route, when it can take ``--confirm`` (given or not); ``FairauditError`` saying why not."""
    if getattr(args, "confirm", None) and name in _NO_CONFIRM:
        raise FairauditError(f"--confirm splits a dataset's audited rows in memory: {_NO_CONFIRM[name]} (drop "
                             "--confirm, or audit the rows with --data)")
    return name


def prepare(args: argparse.Namespace) -> Request:
    """The spec file (its headers checked), the engine (``--engine``, else its ``# engine:`` header, else the
    default), its options (flags over headers, validated) and the row filter of a ``# where:`` header: what every
    route over a spec file starts from. ``FairauditError`` / ``SpecError`` before any work."""
    from fairaudit.cli._spec_args import spec_from_args
    from fairaudit.core.preflight import check_headers, check_options, header_engine

    if getattr(args, "epsilon", None) is not None:
        raise FairauditError("--epsilon is the ratio property of a population program: give --population FILE.fr")
    if args.spec is None:
        raise FairauditError("no specification: give --spec TEXT|@FILE (or --population FILE.fr)")
    spec_file = spec_from_args(argparse.Namespace(spec=args.spec, range=getattr(args, "range", None)))
    check_headers(spec_file)  # a misspelt '# where:' would silently audit other rows
    from_file = []
    engine_name = args.engine or header_engine(spec_file) or engines.DEFAULT
    if args.engine is None and "engine" in spec_file.headers:
        from_file.append(f"--engine {engine_name}")
    engine = engines.get(engine_name)
    where_header = None
    if args.where is None and spec_file.where is not None:
        args.where, where_header = spec_file.where, spec_file.headers["where"]
        from_file.append(f"--where '{args.where}'")
    given, header_flags = engine_options(args, engine, spec_file)
    from_file += header_flags
    _, options = check_options(engine.name, **given)
    reasons = engine.check(spec_file.spec, None)
    if reasons:
        raise FairauditError(f"the {engine.name} engine cannot audit this specification: " + "; ".join(reasons))
    return Request(spec_file, engine, options, from_file, where_header)


def run_memory(args: argparse.Namespace, request: Request) -> int:
    """A dataset read whole into memory (``--data NAME|CSV``): validated (``fairaudit.core.preflight``, positioned in
    the spec file and the flags) before a model is trained, then ``fairaudit.audit`` (or ``fairaudit.confirm``)."""
    from fairaudit.api import audit, check_generated
    from fairaudit.cli._data_args import dataset_from_args
    from fairaudit.cli._model_args import model_from_args
    from fairaudit.core.preflight import check_decisions, file_source, preflight

    spec_file, engine, options = request.spec_file, request.engine, request.options
    uses_model = getattr(args, "model", None) is not None
    columns = None  # a decision over the rows, audited by an engine of the rows alone: only the columns it reads
    if not uses_model and tuple(engine.requires) == ("dataset",):
        from fairaudit.cli._data_args import protected_names
        from fairaudit.engines.monitor.outofcore import run_columns

        columns = run_columns(spec_file.spec, args.pred or spec_file.decision, args.where or spec_file.where,
                              label=args.label, protected=protected_names(args.protected))
    dataset = dataset_from_args(args, columns=columns)
    decision, where = decision_sources(args, spec_file, request.where_header)
    check_generated(engine, spec_file.spec, model=getattr(args, "model", None), pred=args.pred, where=args.where,
                    rows=args.rows)
    # everything is validated before a model is trained (a typo costs no time)
    preflight(dataset, spec_file.spec, spec_source=file_source(spec_file), decision=decision, where=where,
              uses_model=uses_model)
    if getattr(args, "confirm", None):
        confirm_target(args, spec_file.spec)
    line = terminal_line(sys.stderr)  # progress of training, the run and the PDF, on a terminal only
    try:
        model = model_from_args(args, dataset, on_progress=line) if uses_model else None
        check_decisions(spec_file.spec, model, file_source(spec_file))  # ``pred`` against the model's decisions
        if getattr(args, "confirm", None):
            result = confirmed_audit(args, dataset, spec_file, engine, model, options, line)
        else:
            result = audit(dataset, spec_file.spec, engine=engine.name, model=model, pred=args.pred,
                           where=args.where, rows=args.rows, on_progress=line, **trace_args(args), **options)
    finally:
        if line is not None:
            line.close()
    return finish(args, result, request.from_file, notes=other_engines_headers(spec_file, engine), dataset=dataset,
                  model=model)


def confirmed_audit(args: argparse.Namespace, dataset, spec_file, engine, model, options, line):
    """``--confirm NODE[:refute]``: ``fairaudit.confirm`` — the threshold chosen on part of the rows, certified on the
    rest; prints the split and the new specification."""
    from fairaudit.api import CONFIRM_SHARE, confirm

    node, which = confirm_target(args, spec_file.spec)
    share = CONFIRM_SHARE if args.confirm_share is None else args.confirm_share
    ranges = {name: (lo, hi) for name, lo, hi in spec_file.spec.ranges} or None  # --range and '# range:'
    result = confirm(dataset, spec_file.text, node, which, engine=engine.name, model=model, pred=args.pred,
                     where=args.where, rows=args.rows, share=share, on_progress=line, ranges=ranges, **options)
    done = result.info["confirmation"]
    print(f"confirm:   {done['node']} threshold {done['threshold']:g} chosen on {done['chosen_on']:,} rows, audited "
          f"on the other {done['certified_on']:,} (split at random, seed {done['seed']}); the specification:")
    for text_line in done["spec_text"].splitlines():
        print(f"           {text_line}")
    return result


def confirm_target(args: argparse.Namespace, spec) -> tuple[str, str]:
    """``(node, "certify" | "refute")`` from ``--confirm NODE[:refute]``, the node one of ``spec``'s
    (``FairauditError`` otherwise): checked before a model is trained."""
    node, _, which = str(args.confirm).partition(":")
    node, which = node.strip(), which or "certify"
    if which not in ("certify", "refute"):
        raise FairauditError(f"--confirm {args.confirm}: give NODE or NODE:refute (e.g. --confirm n0)")
    known = [n.id for n in spec.nodes]
    if node not in known:
        raise FairauditError(f"--confirm {args.confirm}: unknown node {node!r}; the specification's nodes are "
                             f"{', '.join(known)}")
    return node, which


def run_domain(args: argparse.Namespace, request: Request) -> int:
    """``fairaudit audit --model FILE`` without --data, for an engine that does not require a dataset: the model
    is audited over its input domain (a .nnet file's input bounds)."""
    from fairaudit.api import audit
    from fairaudit.cli._model_args import model_from_args

    spec_file, engine, options, from_file = request.spec_file, request.engine, request.options, request.from_file

    for flag, value in (("--pred", args.pred), ("--where", args.where), ("--rows", args.rows),
                        ("--label", args.label), ("--protected", args.protected), ("--favourable", args.favourable)):
        if value is not None:
            raise FairauditError(f"{flag} needs --data: without it the model is audited over its input domain")
    check_outputs(args, [spec_file.path, args.model])
    model = model_from_args(args, None)
    line = terminal_line(sys.stderr)
    try:
        result = audit(None, spec_file.spec, engine=engine.name, model=model, on_progress=line, **trace_args(args),
                       **options)
    finally:
        if line is not None:
            line.close()
    return finish(args, result, from_file, model=model)


def run_population(args: argparse.Namespace, request: Request | None = None) -> int:
    """``fairaudit audit --population FILE.fr``: the chosen engine on the individuals of a population program (the
    JSON result and the PDF report name the program and its sha256; the report prints its text)."""
    from fairaudit.api import GENERATED_OPTION, audit
    from fairaudit.cli._spec_args import spec_from_args
    from fairaudit.core.preflight import check_headers, check_options, header_engine
    from fairaudit.programs.population import DEFAULT_EPSILON, load, ratio_spec
    from fairaudit.spec.files import parse_file_text

    for flag, value in (("--data", args.data), ("--model", getattr(args, "model", None)),
                        ("--pred", getattr(args, "pred", None)), ("--where", args.where), ("--rows", args.rows),
                        ("--full-trace", getattr(args, "full_trace", None)), ("--label", args.label),
                        ("--protected", args.protected), ("--favourable", args.favourable),
                        ("--missing drop", "drop" if args.missing == "drop" else None)):
        if value is not None:
            raise FairauditError(f"--population and {flag} cannot be combined: the individuals come from the "
                                 "program's popModel() and the decision is its fairnessTarget")
    if args.spec is not None and args.epsilon is not None:
        raise FairauditError("--epsilon sets the ratio property used without --spec: give one of --spec and --epsilon")
    if args.epsilon is not None:
        try:
            epsilon = float(args.epsilon)
        except ValueError:
            raise FairauditError(f"--epsilon must be a number in (0, 1), e.g. 0.15; got {args.epsilon!r}") from None
    else:
        epsilon = DEFAULT_EPSILON
    spec_file = (spec_from_args(argparse.Namespace(spec=args.spec, range=getattr(args, "range", None))) if args.spec is not None
                 else parse_file_text(ratio_spec(epsilon)))
    check_headers(spec_file)
    from_file = []
    engine_name = args.engine or header_engine(spec_file) or engines.DEFAULT
    if args.engine is None and "engine" in spec_file.headers:
        from_file.append(f"--engine {engine_name}")
    engine = engines.get(engine_name)
    given, header_flags = engine_options(args, engine, spec_file)
    from_file += header_flags
    if given.get(GENERATED_OPTION) is not None:
        flag = engine.option(GENERATED_OPTION).flag
        raise FairauditError(f"{flag} says how a population is generated from --data and --model; with --population "
                             "FILE.fr the program itself is the population: drop one of them")
    _, options = check_options(engine.name, **given)
    population = load(args.population)  # a malformed program: SpecError with FILE:LINE:COL, exit 2
    inputs = [spec_file.path, args.population]
    check_outputs(args, inputs)
    line = terminal_line(sys.stderr)
    try:
        result = audit(None, spec_file.spec, engine=engine.name, population=population, on_progress=line,
                       **options)
    finally:
        if line is not None:
            line.close()
    return finish(args, result, from_file, population=args.population)


