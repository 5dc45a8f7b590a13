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
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairaudit import engines
from fairaudit.core.engine import COMMON_OPTIONS
from fairaudit.core.errors import FairauditError
from fairaudit.core.inputs import ROWS
from fairaudit.core.numbers import count
from fairaudit.core.outputs import check_output, write_atomically
from fairaudit.core.progress import terminal_line

EXIT = {"true": 0, "false": 1, "unknown": 3}
EXIT_EXPLORATORY = 3  # a verdict on a threshold chosen from the audited data: a hypothesis, not a pass
EXIT_UNBACKED = 3  # a decided verdict whose guarantee the run itself found evidence against: not a pass
EXIT_HELP = ("exit codes: 0 = certified true, 1 = decided violated, 3 = undecided, exploratory (a threshold chosen "
             "from these data) or a verdict the run found evidence against (not a pass), 2 = bad input, "
             "4 = internal error")


def decision_sources(args, spec_file, where_header):
    """``(decision, where)``: the sources ``preflight`` positions its errors in. A spec file's ``# decision:`` header
    supplies ``--pred`` (``args.pred`` is set) when neither ``--pred`` nor ``--model`` is given."""
    from fairaudit.core.preflight import option_source

    if getattr(args, "model", None) is None and args.pred is None and spec_file.decision is not None:
        if spec_file.uses_model:
            raise FairauditError("the spec file says '# decision: model': give --model KIND|PATH")
        args.pred = spec_file.decision
        decision = option_source(args.pred, "--pred", spec_file.headers["decision"], spec_file)
    else:
        decision = option_source(args.pred, "--pred") if args.pred is not None else None
    where = option_source(args.where, "--where", where_header, spec_file) if args.where else None
    return decision, where


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
    parser.add_argument("--confirm-share", type=float, default=None, metavar="P",
                        help="with --confirm: the share of the audited rows that chooses the threshold (default 0.5)")
    parser.add_argument("--json", metavar="PATH", help="write the audit result (JSON) here")
    parser.add_argument("--pdf", metavar="PATH", help="write the PDF audit report here")
    parser.add_argument("--force", action="store_true",
                        help="allow --json/--pdf to replace an existing file of another kind (never an input)")
    parser.add_argument("--trace-every", type=int, default=1, metavar="K",
                        help="write every K-th check of the display trace to the JSON (default 1: all it keeps)")
    parser.add_argument("--trace-points", type=int, default=None, metavar="N",
                        help="the display trace (JSON, charts) keeps every verdict change, the stop step, a log grid "
                             "and N evenly spaced checks (default: sized so that the JSON stays under about 1 MB; "
                             "0 keeps every check)")
    parser.add_argument("--full-trace", metavar="PATH",
                        help="write every check of every node to this Parquet file (the JSON keeps a bounded "
                             "subsample)")
    from fairaudit.cli._dask_args import add_dask_arguments

    add_dask_arguments(parser)  # --dask / --scheduler: a Parquet log on a Dask cluster


def add_engine_options(parser: argparse.ArgumentParser, shown: str) -> None:
    """A flag for every option of every engine (read as text, checked later by the chosen engine's declaration);
    the help lists the options of the engine ``shown`` and those of every run."""
    taken = {flag for action in parser._actions for flag in action.option_strings}
    shown_engine = engines.get(shown) if shown in engines.names() else engines.get(engines.DEFAULT)
    group = parser.add_argument_group(f"options of the {shown_engine.name} engine ({shown_engine.title})",
                                      None if shown_engine.options else "this engine has no options of its own")
    common = parser.add_argument_group("options of every run")
    seen = set()
    for engine in [shown_engine] + [e for e in engines.all_engines() if e is not shown_engine]:
        for option in engine.all_options():
            if option.flag in taken or option.name in seen:
                continue
            seen.add(option.name)
            visible = engine is shown_engine
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


def engine_options(args: argparse.Namespace, engine, spec_file) -> tuple[dict, list[str]]:
    """``(options given, what came from the spec file)``: the flags given for ``engine``'s options, parsed by
    their declarations; then its header options from the spec file. A flag of another engine's option is
    refused (it would be silently ignored)."""
    from fairaudit.core.preflight import header_options

    own = {o.name: o for o in engine.all_options()}
    given, from_file = {}, []
    for key, value in vars(args).items():
        if not key.startswith("opt_") or value is None:
            continue
        name = key[4:]
        if name not in own:
            owners = [e.name for e in engines.all_engines() if name in {o.name for o in e.options}]
            raise FairauditError(f"--{name.replace('_', '-')} is an option of the {' / '.join(owners)} engine, "
                                 f"not of {engine.name}; see `fairaudit audit --engine {engine.name} --help`")
        given[name] = own[name].parse(value)
    if "seed" in own and getattr(args, "seed", None) is not None:
        given["seed"] = own["seed"].validate(args.seed)
    for name, value in header_options(spec_file, engine).items():
        if name not in given:
            given[name] = value
            from_file.append(f"{own[name].flag} {own[name].show(value)}")
    return given, from_file


def other_engines_headers(spec_file, engine) -> list[str]:
    """The spec file's headers that set another engine's option: not an error (a spec may be written for one
    engine and audited with another), but said, so that nobody believes they were applied."""
    own = {o.name for o in engine.all_options()}
    out = []
    for other in engines.all_engines():
        for option in other.header_options():
            if option.name in spec_file.headers and option.name not in own and option.name not in out:
                out.append(option.name)
    return [f"the spec file's '# {name}:' header is an option of another engine, not of {engine.name}: not applied"
            for name in out]


def run(args: argparse.Namespace) -> int:
    from fairaudit.api import audit, check_generated, check_options
    from fairaudit.cli._data_args import dataset_from_args
    from fairaudit.cli._model_args import model_from_args
    from fairaudit.cli._spec_args import spec_from_args
    from fairaudit.cli._follow_args import run_follow, wants_follow
    from fairaudit.core.preflight import check_headers, file_source, header_engine, preflight

    if wants_follow(args):  # a live log (fairaudit.cli._follow_args)
        return run_follow(args)
    if getattr(args, "population", None) is not None:
        return run_population(args)
    if getattr(args, "epsilon", None) is not None:
        raise FairauditError("--epsilon is the ratio property of a population program: give --population FILE.fr")
    if args.spec is None:
        raise FairauditError("no specification: give --spec TEXT|@FILE (or --population FILE.fr)")
    spec_file = spec_from_args(argparse.Namespace(spec=args.spec))
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
    from fairaudit.cli._dask_args import run_dask, wants_dask

    if wants_dask(args):
        return run_dask(args, engine, spec_file, options, from_file)
    if args.data is None and spec_file.dataset is None and getattr(args, "model", None) is not None \
            and "dataset" not in engine.requires:
        return run_domain(args, engine, spec_file, options, from_file)
    if args.data is None:
        if spec_file.dataset is None:
            raise FairauditError("no dataset: give --data NAME|CSV (or a '# dataset:' header in the spec file)")
        args.data = spec_file.dataset_ref()  # a built-in name, or a file beside the spec (never anywhere)
    # output paths are checked before any work: never an input (the data as resolved, the spec file, the model
    # file), never another kind of file without --force
    inputs = [spec_file.path, args.data, getattr(args, "model", None)]
    check_outputs(args, inputs)
    from fairaudit.cli._stream_args import route, run_out_of_core

    if route(args, engine, spec_file):  # a big CSV / Parquet log, read in chunks (fairaudit.engines.monitor.outofcore)
        return run_out_of_core(args, engine, spec_file, options, from_file, where_header, finish)
    dataset = dataset_from_args(args)
    uses_model = getattr(args, "model", None) is not None
    decision, where = decision_sources(args, spec_file, where_header)
    check_generated(engine, spec_file.spec, model=getattr(args, "model", None), pred=args.pred, where=args.where,
                    rows=args.rows)
    # everything is validated before a model is trained (a typo costs no time)
    preflight(dataset, spec_file.spec, spec_source=file_source(spec_file), decision=decision, where=where,
              uses_model=uses_model)
    line = terminal_line(sys.stderr)  # progress of training, the run and the PDF, on a terminal only
    try:
        model = model_from_args(args, dataset, on_progress=line) if uses_model else None
        if getattr(args, "confirm", None):
            result = confirmed_audit(args, dataset, spec_file, engine, model, options, line)
        else:
            result = audit(dataset, spec_file.spec, engine=engine.name, model=model, pred=args.pred,
                           where=args.where, rows=args.rows, on_progress=line, **trace_args(args), **options)
    finally:
        if line is not None:
            line.close()
    return finish(args, result, from_file, notes=other_engines_headers(spec_file, engine), dataset=dataset,
                  model=model)


def confirmed_audit(args: argparse.Namespace, dataset, spec_file, engine, model, options, line):
    """``--confirm NODE[:refute]``: ``fairaudit.confirm`` — the threshold chosen on part of the rows, certified on the
    rest; prints the split and the new specification."""
    from fairaudit.api import CONFIRM_SHARE, confirm

    node, _, which = str(args.confirm).partition(":")
    which = which or "certify"
    if which not in ("certify", "refute"):
        raise FairauditError(f"--confirm {args.confirm}: give NODE or NODE:refute (e.g. --confirm n0)")
    share = CONFIRM_SHARE if args.confirm_share is None else args.confirm_share
    result = confirm(dataset, spec_file.text, node.strip(), which, engine=engine.name, model=model, pred=args.pred,
                     where=args.where, rows=args.rows, share=share, on_progress=line, **options)
    done = result.info["confirmation"]
    print(f"confirm:   {done['node']} threshold {done['threshold']:g} chosen on {done['chosen_on']:,} rows, audited "
          f"on the other {done['certified_on']:,} (split at random, seed {done['seed']}); the specification:")
    for text_line in done["spec_text"].splitlines():
        print(f"           {text_line}")
    return result


def finish(args: argparse.Namespace, result, from_file, notes=(), **report) -> int:
    """Every route's end: the summary (and ``notes``), --json and --pdf (``report``: what ``build_pdf`` is given
    besides the result), and the exit code."""
    print_summary(result, from_file)
    for note in notes:
        print(f"note:      {note}")
    if getattr(args, "full_trace", None):
        print(f"wrote {args.full_trace}")
    if args.json:
        write_atomically(args.json, result.to_json(trace_every=max(1, args.trace_every)).encode("utf-8"),
                         what="audit result")
        print(f"wrote {args.json}")
    if args.pdf:
        write_report(args.pdf, result, **report)
    claim = result.claim
    if result.assumption_broken and claim.verdict in ("true", "false"):
        # a gate must not pass on a verdict its own data contradicts: exit 3, "not a pass", and say why
        from fairaudit.core.explain import NOT_BACKED

        print(f"exit:      3 — the verdict is {NOT_BACKED} (see the warnings)")
        return EXIT_UNBACKED
    if claim.status == "exploratory":  # a threshold chosen from these data: a hypothesis, not a pass
        print("exit:      3 — exploratory: the threshold was chosen from these data; confirm it on fresh rows "
              "(fairaudit audit ... --confirm NODE)")
        return EXIT_EXPLORATORY
    return claim.exit_code


def run_domain(args: argparse.Namespace, engine, spec_file, options: dict, from_file: list) -> int:
    """``fairaudit audit --model FILE`` without --data, for an engine that does not require a dataset: the model
    is audited over its input domain (a .nnet file's input bounds)."""
    from fairaudit.api import audit
    from fairaudit.cli._model_args import model_from_args

    for flag, value in (("--pred", args.pred), ("--where", args.where), ("--rows", args.rows)):
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


def trace_args(args: argparse.Namespace) -> dict:
    """``api.audit``'s ``trace_points`` and ``full_trace`` from ``--trace-points`` / ``--full-trace``."""
    points = getattr(args, "trace_points", None)
    if points is not None and points < 0:
        raise FairauditError(f"--trace-points must be 0 (every check) or a positive number, got {points}")
    out = {"trace_points": "auto" if points is None else (points or None)}
    if getattr(args, "full_trace", None):
        out["full_trace"] = args.full_trace
    return out


def check_outputs(args: argparse.Namespace, inputs: list) -> None:
    """``--json`` / ``--pdf`` / ``--full-trace`` checked before any work: never one of ``inputs``, never another kind
    of file without --force, never the same file twice."""
    if args.json:
        check_output(args.json, "result", inputs=inputs, force=args.force, what="audit result")
    if args.pdf:
        check_output(args.pdf, "pdf", inputs=inputs, force=args.force, what="report")
    full = getattr(args, "full_trace", None)
    if full:
        check_output(full, "trace", inputs=inputs, force=args.force, what="full trace")
    outs = [Path(p).resolve() for p in (args.json, args.pdf, full) if p]
    if len(set(outs)) < len(outs):
        raise FairauditError("--json, --pdf and --full-trace must name different files; give distinct paths")


def run_population(args: argparse.Namespace) -> int:
    """``fairaudit audit --population FILE.fr``: the chosen engine on the individuals of a population program (the
    JSON result and the PDF report name the program and its sha256; the report prints its text)."""
    from fairaudit.api import audit, check_options
    from fairaudit.cli._spec_args import spec_from_args
    from fairaudit.core.preflight import check_headers, header_engine
    from fairaudit.programs.population import DEFAULT_EPSILON, load, ratio_spec
    from fairaudit.spec.files import parse_file_text

    for flag, value in (("--data", args.data), ("--model", getattr(args, "model", None)),
                        ("--pred", getattr(args, "pred", None)), ("--where", args.where), ("--rows", args.rows),
                        ("--full-trace", getattr(args, "full_trace", None))):
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
    spec_file = (spec_from_args(argparse.Namespace(spec=args.spec)) if args.spec is not None
                 else parse_file_text(ratio_spec(epsilon)))
    check_headers(spec_file)
    from_file = []
    engine_name = args.engine or header_engine(spec_file) or engines.DEFAULT
    if args.engine is None and "engine" in spec_file.headers:
        from_file.append(f"--engine {engine_name}")
    engine = engines.get(engine_name)
    given, header_flags = engine_options(args, engine, spec_file)
    from_file += header_flags
    from fairaudit.api import GENERATED_OPTION

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


def write_report(path, result, **kw) -> None:
    """Build the PDF report of ``result`` (``fairaudit.report.build_pdf(result, **kw)``, its progress on a terminal)
    and write it to ``path``."""
    from fairaudit.report import build_pdf

    line = terminal_line(sys.stderr)
    try:
        pdf = build_pdf(result, on_progress=line, **kw)
    finally:
        if line is not None:
            line.close()
    write_atomically(path, pdf, what="report")
    print(f"wrote {path}")


def print_summary(result, from_file=()) -> None:
    """The verdict, its guarantee, what was audited and every warning, one labelled line each."""
    claim = result.claim
    print(f"verdict:   {claim.word}")
    print(f"summary:   {claim.summary}")
    print(f"guarantee: {result.sentence}")
    if claim.second:
        print(f"modelled:  {claim.second}")
    print(f"about:     {claim.about}")
    from fairaudit.core.claim import chosen_line

    if chosen_line(result):
        print(f"chosen:    {chosen_line(result)}")
    decided = f"{result.stop_step:,}" if result.stop_step is not None else "not decided"
    if result.verdict_step is not None and result.stop_step is not None and result.verdict_step != result.stop_step:
        decided += f" (first decision; the reported verdict holds from step {result.verdict_step:,})"
    print(f"stop step: {decided} (of {count(result.steps, result.unit)})")
    if not result.complete:
        print(f"stopped:   {result.stopped_reason}")
    if result.rows_text:
        print(f"rows:      {result.rows_text}")
    if result.assumption:
        print(f"assumes:   {result.assumption}")
    worst = result.worst_summary()
    if worst is not None:
        print(f"worst:     {worst}")
    from fairaudit.core.explain import fair_text

    for info in result.node_info:  # every Fair[...] node: its certified / upper bound / undecided shares
        if info.kind == "fair":
            print(f"fair:      {info.text} ({info.id}): {fair_text(result.final_values(info.id))}")
    from fairaudit.core.suggest import summary_lines as suggestion_lines

    for i, line in enumerate(suggestion_lines(result)):  # every undecided comparison: thresholds decidable now
        print(f"{'suggest:' if i == 0 else '':10} {line}")
    if from_file:
        print(f"options:   {' '.join(from_file)} (from the spec file's headers)")
    findings = getattr(result, "findings", None)
    if findings:  # what the engine found besides the specification: groups with their marks, metrics, ...
        from fairaudit.core.findings_view import summary_lines

        for line in summary_lines(findings):
            print(line)
    counterexamples = getattr(result, "counterexamples", None)
    if counterexamples:  # individuals a Fair[...] leaf's decision changes for: how many, and the first
        from fairaudit.core.counterexamples_view import summary_lines as counterexample_lines

        for line in counterexample_lines(counterexamples):
            print(line)
    from fairaudit.core.trace import thinning_note

    thinned = thinning_note(result.info)  # a display trace that leaves out verdict changes says so
    if thinned:
        print(f"trace:     {thinned}")
    for warning in result.warnings:
        print(f"warning:   {warning}")
    from fairaudit.core.claim import how_decided

    for i, line in enumerate(how_decided(result)):  # the mathematics, on its own lines after everything else
        print(f"{'how:' if i == 0 else '':10} {line}")
