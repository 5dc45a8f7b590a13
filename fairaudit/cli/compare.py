"""``fairaudit compare``: two or more models (or logged decision columns) on the same rows, in the same order; each
model's value of every node of the specification, and for every pair an interval on the difference with a verdict
(``fairaudit.comparison``; the mathematics: ``docs/methods/compare.md``).

    fairaudit compare --data adult --spec @specs/demographic_parity.spec --model logreg --model tree
    fairaudit compare --data log.csv --spec @dp.spec --pred 'dec_a == 1' --pred 'dec_b == 1' --name old --name new

``--model`` and ``--pred`` may be mixed; the models are named A, B, C ... in the order given, or by ``--name``.
Exit code: 0 = every comparison of the specification has a decided difference between every pair, 3 = some are
undecided, 2 = bad input (one line), 4 = internal error.
"""
from __future__ import annotations

import argparse

from fairaudit.cli._spec_args import add_range_argument
from fairaudit.base.errors import FairauditError

EXIT_HELP = ("exit codes: 0 = every comparison of the specification decided between every pair of models, "
             "3 = some undecided, 2 = bad input, 4 = internal error")


class _Side(argparse.Action):
    """``--model`` / ``--pred``, in the order given on the command line (a mix is allowed)."""

    def __call__(self, parser, namespace, values, option_string=None):
        sides = list(getattr(namespace, "sides", None) or [])
        sides.append(("model" if option_string == "--model" else "pred", values))
        namespace.sides = sides


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from fairaudit.cli._data_args import add_data_arguments
    from fairaudit.cli._values import SEED, output, probability, typed
    from fairaudit.comparison.options import DEFAULTS, ENGINES, HELP, ORDERS, STOPS
    from fairaudit.core.options import COMMON_OPTIONS

    parser.epilog = EXIT_HELP
    parser.set_defaults(sides=[])
    add_data_arguments(parser, required=False)  # a verifier engine's .nnet networks carry their own domain
    group = parser.add_argument_group("specification")
    group.add_argument("--spec", metavar="TEXT|@FILE", required=True, help="the specification, or @path to a file")
    group.add_argument("--where", metavar="EXPR", help="compare on the rows matching this condition only")
    add_range_argument(group)
    group.add_argument("--rows", choices=["held-out", "all"],
                       help="with models trained here: the rows none of them trained on (default) or all")
    models = parser.add_argument_group("models (two or more, in order; --model and --pred may be mixed)")
    models.add_argument("--model", action=_Side, metavar="KIND|PATH", dest="sides",
                        help="a model kind to train now (logreg, tree, gbm, mlp) or a saved model file; repeatable")
    models.add_argument("--pred", action=_Side, metavar="EXPR", dest="sides",
                        help="logged decisions: a condition true for the favourable outcome, e.g. 'dec_a == 1'; "
                             "repeatable")
    models.add_argument("--name", action="append", default=None, metavar="NAME", help=HELP["name"])
    models.add_argument("--trust-pickle", action="store_true",
                        help="also load a --model file that is a pickle: loading it RUNS CODE stored in the file")
    models.add_argument("--trust-type", action="append", default=[], metavar="TYPE",
                        help="a type a skops --model file may use beyond fairaudit's own (repeatable)")
    models.add_argument("--include-protected", action="store_true", dest="include_protected",
                        help="a --model KIND trained here also reads the protected attributes")
    run = parser.add_argument_group("comparison")
    run.add_argument("--engine", default=DEFAULTS["engine"], help=HELP["engine"] + f" (paired: {', '.join(ENGINES)})")
    run.add_argument("--delta", type=typed(probability("delta", DEFAULTS["delta"])), default=DEFAULTS["delta"],
                     help=HELP["delta"])
    run.add_argument("--seed", type=typed(SEED), default=DEFAULTS["seed"], help=HELP["seed"])
    run.add_argument("--stop", choices=STOPS, default=DEFAULTS["stop"], help=HELP["stop"])
    run.add_argument("--order", choices=ORDERS, default=DEFAULTS["order"], help=HELP["order"])
    budget = next(o for o in COMMON_OPTIONS if o.name == "time_budget")  # as every engine reads it
    run.add_argument("--time-budget", type=typed(budget), default=None, dest="time_budget", metavar="SECONDS",
                     help="a verifier engine: seconds each model's run may take (its bounds so far are then used)")
    out = parser.add_argument_group("output")
    out.add_argument("--json", metavar="OUT", type=output, help="write the comparison as JSON ('-': standard output)")
    out.add_argument("--pdf", metavar="OUT", type=output, help="write the comparison's PDF report")
    out.add_argument("--force", action="store_true", help="replace an existing output file of another kind")


def run(args: argparse.Namespace) -> int:
    from fairaudit.cli._data_args import dataset_from_args
    from fairaudit.cli._spec_args import spec_from_args
    from fairaudit.comparison import compare
    from fairaudit.core.outputs import check_output
    from fairaudit.core.preflight import Source, file_source, preflight

    if len(args.sides) < 2:
        raise FairauditError(f"compare needs two or more --model / --pred (given {len(args.sides)})")
    spec_file = spec_from_args(argparse.Namespace(spec=args.spec, range=getattr(args, "range", None)))
    inputs = [p for p in [args.data, spec_file.path] + [v for k, v in args.sides if k == "model"] if p]
    if args.json and args.json != "-":
        check_output(args.json, "comparison", inputs=inputs, force=args.force, what="comparison result")
    if args.pdf:
        check_output(args.pdf, "pdf", inputs=inputs, force=args.force, what="report")
    if args.json and args.pdf and args.json == args.pdf:
        raise FairauditError("--json and --pdf must name different files")
    dataset = dataset_from_args(args) if args.data is not None else None
    # the specification, every decision expression and the row filter, positioned, before any model is trained
    for kind, value in (args.sides if dataset is not None else []):
        preflight(dataset, spec_file.spec, spec_source=file_source(spec_file),
                  decision=Source(value, "--pred") if kind == "pred" else None,
                  where=Source(args.where, "--where") if args.where else None, uses_model=kind == "model")
    result = compare(dataset, spec_file.spec, sides=args.sides, names=args.name, engine=args.engine,
                     delta=args.delta, seed=args.seed, stop=args.stop, order=args.order, where=args.where,
                     rows=args.rows, trust_pickle=args.trust_pickle, trusted_types=args.trust_type,
                     include_protected=args.include_protected,
                     options={"time_budget": args.time_budget} if args.time_budget is not None else None)
    if args.json == "-":
        print(result.to_json())
    else:
        print_result(result)
    write_outputs(args, result)
    return exit_code(result)


def exit_code(result) -> int:
    cmps = [d for d in result.differences if d.kind == "cmp" and d.pairing != "same"]
    return 3 if any(d.verdict == "undecided" for d in cmps) else 0


def write_outputs(args: argparse.Namespace, result) -> None:
    from fairaudit.core.outputs import write_atomically

    if args.json and args.json != "-":
        write_atomically(args.json, result.to_json().encode("utf-8"), what="comparison result")
        print(f"wrote {args.json}")
    if args.pdf:
        from fairaudit.report.compare import build_compare_pdf

        write_atomically(args.pdf, build_compare_pdf(result), what="report")
        print(f"wrote {args.pdf}")


def print_result(result) -> None:
    """Each model's value of every node, the differences of the first pair ... and the sentences."""
    from fairaudit.comparison.result import verdict_name
    from fairaudit.comparison.wording import difference_word, model_verdict_word
    from fairaudit.core.explain import interval, is_point, number

    named = [f"{m['name']} = " + (m["model"] or f"pred: {m['pred']}") for m in result.models]
    print(f"compare:   {'; '.join(named)}")
    print(f"rows:      {result.rows.get('text')}" + (f" · read {result.rows_read:,}" if result.sequential else ""))
    head = ["node", "text"] + result.names + [f"{d_a} − {d_b}" for d_a, d_b in result.diff_series]
    lines = []
    by = {(d.node, d.a, d.b): d for d in result.differences}
    for tn in result.tree.nodes:
        if tn.kind in ("const",):
            continue
        row = [tn.id, tn.text if len(tn.text) <= 48 else tn.text[:47] + "…"]
        for name in result.names:
            s = result.model_series[name][tn.id]
            # the words every front end uses ("certified true" / "violated" / "undecided"), never "unknown"
            v = model_verdict_word(None if s.verdict is None else verdict_name(s.verdict[-1]))
            value = (interval(s.lo[-1], s.hi[-1]) if is_point(s.lo[-1], s.hi[-1])
                     else f"{number(s.estimate[-1])} {interval(s.lo[-1], s.hi[-1])}")
            row.append(v if tn.kind in ("and", "or", "not") else value + (f" {v}" if v else ""))
        for a, b in result.diff_series:
            d = by.get((tn.id, a, b))
            row.append("" if d is None else f"{interval(d.lo, d.hi)} {difference_word(d.verdict, a, b)}")
        lines.append(row)
    widths = [max(len(h), *(len(r[i]) for r in lines)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for row in lines:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    print(f"headline:  {result.headline}")
    print(f"guarantee: {result.guarantee}")
    for d in result.questions():
        if d.kind == "cmp" and d.pairing != "same":
            print(f"- {result.sentence(d)}")
    for warning in result.warnings:
        print(f"warning:   {warning}")
