"""What every route of ``fairaudit audit`` shares (in memory, out of core, a live log, Dask, a population program, a
model's input domain): the exit codes, the options from flags and spec-file headers, the output checks, and
``finish`` — the summary, the JSON and the PDF, and the exit code — so that every route ends the same way.

Below ``fairaudit.cli.audit`` (which decides the route) and the route modules (``_stream_args``, ``_follow_args``,
``_dask_args``): it imports none of them.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from fairaudit.core import registry as engines
from fairaudit.base.errors import FairauditError
from fairaudit.base.numbers import count
from fairaudit.core.outputs import check_output, write_atomically
from fairaudit.base.progress import terminal_line

EXIT = {"true": 0, "false": 1, "unknown": 3}
EXIT_EXPLORATORY = 3  # a verdict on a threshold chosen from the audited data: a hypothesis, not a pass
EXIT_UNBACKED = 3  # a decided verdict whose guarantee the run itself found evidence against: not a pass
EXIT_HELP = ("exit codes: 0 = certified true, 1 = decided violated, 3 = undecided, exploratory (a threshold chosen "
             "from these data) or a verdict the run found evidence against (not a pass), 2 = bad input, "
             "4 = internal error")


@dataclass
class Request:
    """What ``fairaudit audit`` resolved before it chose a route over a spec file (``fairaudit.cli.audit.route``):
    the spec file, the engine, its options (validated), the options that came from the spec file's headers
    (``from_file``, for the summary) and the ``# where:`` header the row filter came from (None: the flag)."""

    spec_file: object
    engine: object
    options: dict
    from_file: list = field(default_factory=list)
    where_header: object = None


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
            from_file.append(f"{own[name].flag} {own[name].token(value)}")
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
    if worst is not None:  # the headline's comparison, and the rule that chose it (``fairaudit.core.focus``)
        print(f"worst:     {result.worst_node()['rule']}: {worst}")
    from fairaudit.core.explain import fair_text

    for info in result.node_info:  # every Fair[...] node: its certified / upper bound / undecided shares
        if info.kind == "fair":
            print(f"fair:      {info.text} ({info.id}): {fair_text(result.final_values(info.id))}")
    from fairaudit.core.undecided_view import summary_lines as undecided_lines

    for line in undecided_lines(result):  # where a Fair[...] leaf's undecided individuals are
        print(line)
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
