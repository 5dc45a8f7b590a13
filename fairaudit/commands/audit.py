"""``fairaudit audit``: audit decisions against a specification and write the JSON result / PDF report.

Prints the verdict, the guarantee sentence, the stop step and the worst comparison. Exit code, so that an
audit can gate a deployment pipeline: 0 certified true, 1 violated, 3 undecided, 2 bad input.

A spec file's ``# dataset:``, ``# decision:``, ``# where:``, ``# delta:`` and ``# order:`` headers supply
``--data``, ``--pred``, ``--where``, ``--delta`` and ``--order`` when those are not given on the command line.

Everything is validated before any work (``fairaudit.preflight``, the same check as ``fairaudit check
--data``): the spec against the data, the decision, the row filter, the options and the output paths;
a problem exits 2 with every error positioned and a caret. An internal error (a bug) exits 4.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from fairaudit.engines.monitor import ROWS
from fairaudit.errors import FairauditError
from fairaudit.outputs import check_output, write_atomically
from fairaudit.spec.files import ORDERS

EXIT = {"true": 0, "false": 1, "unknown": 3}
EXIT_UNBACKED = 3  # a decided verdict whose guarantee the run itself found evidence against: not a pass
DEFAULT_DELTA = 0.05
EXIT_HELP = ("exit codes: 0 = certified true, 1 = decided violated, 3 = undecided, or a verdict the run found "
             "evidence against (not a pass), 2 = bad input, 4 = internal error")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from fairaudit.commands._data_args import add_data_arguments
    from fairaudit.commands._model_args import add_model_arguments

    parser.epilog = EXIT_HELP
    add_data_arguments(parser, required=False)
    parser.add_argument("--spec", required=True, metavar="TEXT|@FILE", help="the specification, or @path to a file")
    parser.add_argument("--engine", default="monitor", choices=["monitor"], help="engine (default monitor)")
    add_model_arguments(parser, required=False,
                        seed_help="seed for training a --model KIND and for --order shuffle (default 0)")
    parser.add_argument("--where", metavar="EXPR", help='restrict the stream to matching rows, e.g. \'workclass == "Federal-gov"\'')
    parser.add_argument("--delta", type=float, default=None,
                        help="total failure probability Δ (default: the spec file's '# delta:' header, else 0.05)")
    parser.add_argument("--batch", type=int, default=5, help="check every B observations (default 5)")
    parser.add_argument("--split", choices=["equal", "optimized"], default="equal",
                        help="δ allocation: equal (VeriFair; the verdict holds with probability ≥ 1 − Δ; "
                             "default) or optimized (AVOIR-OB: decides earlier, but the δ's are chosen from "
                             "the data, so it only guarantees 1 − k·Δ for k estimated probabilities)")
    parser.add_argument("--bound", choices=["hoeffding", "betting"], default="hoeffding",
                        help="confidence sequence (default hoeffding, as in AVOIR)")
    parser.add_argument("--order", choices=list(ORDERS), default=None,
                        help="stream order: shuffled with --seed (default; the random order the guarantee assumes), "
                             "or 'given' (file order, for a log whose arrival order is the point; the guarantee "
                             "then assumes that order is random). Default: the spec file's '# order:' header, "
                             "else shuffle")
    parser.add_argument("--rows", choices=list(ROWS), default=None,
                        help="which rows to audit: 'held-out' (default when --model KIND trains the model here: "
                             "the rows it was not trained on) or 'all'")
    parser.add_argument("--stop", action="store_true", help="stop at the decision instead of running to the end")
    parser.add_argument("--time-budget", type=float, metavar="SECONDS", help="stop searching for a decision after this long")
    parser.add_argument("--json", metavar="PATH", help="write the audit result (JSON) here")
    parser.add_argument("--pdf", metavar="PATH", help="write the PDF audit report here")
    parser.add_argument("--force", action="store_true",
                        help="allow --json/--pdf to replace an existing file of another kind (never an input)")
    parser.add_argument("--trace-every", type=int, default=1, metavar="K",
                        help="write every K-th check of the trace to the JSON (default 1: all)")


def run(args: argparse.Namespace) -> int:
    from fairaudit.api import audit, check_options
    from fairaudit.commands._data_args import dataset_from_args
    from fairaudit.commands._model_args import model_from_args
    from fairaudit.commands._spec_args import spec_from_args
    from fairaudit.preflight import check_headers, file_source, option_source, preflight

    spec_file = spec_from_args(argparse.Namespace(spec=args.spec))
    check_headers(spec_file)  # a misspelt '# where:' would silently audit other rows
    from_file = []
    where_header = None
    if args.where is None and spec_file.where is not None:
        args.where, where_header = spec_file.where, spec_file.headers["where"]
        from_file.append(f"--where '{args.where}'")
    if args.delta is None:
        args.delta = spec_file.delta if spec_file.delta is not None else DEFAULT_DELTA
        if spec_file.delta is not None:
            from_file.append(f"--delta {args.delta:g}")
    if args.order is None:
        args.order = spec_file.order or "shuffle"
        if spec_file.order is not None:
            from_file.append(f"--order {args.order}")
    check_options(delta=args.delta, batch=args.batch, split=args.split, bound=args.bound, order=args.order,
                  seed=args.seed, rows=args.rows, time_budget=args.time_budget)
    if args.data is None:
        if spec_file.dataset is None:
            raise FairauditError("no dataset: give --data NAME|CSV (or a '# dataset:' header in the spec file)")
        args.data = spec_file.dataset_ref()  # a built-in name, or a file beside the spec (never anywhere)
    # output paths are checked before any work: never an input (the data as resolved, the spec file, the model
    # file), never another kind of file without --force
    inputs = [spec_file.path, args.data, getattr(args, "model", None)]
    if args.json:
        check_output(args.json, "result", inputs=inputs, force=args.force, what="audit result")
    if args.pdf:
        check_output(args.pdf, "pdf", inputs=inputs, force=args.force, what="report")
    if args.json and args.pdf and Path(args.json).resolve() == Path(args.pdf).resolve():
        raise FairauditError("--json and --pdf name the same file; give two paths")
    dataset = dataset_from_args(args)
    uses_model = getattr(args, "model", None) is not None
    if not uses_model and args.pred is None and spec_file.decision is not None:
        if spec_file.uses_model:
            raise FairauditError("the spec file says '# decision: model': give --model KIND|PATH")
        args.pred = spec_file.decision
        decision = option_source(args.pred, "--pred", spec_file.headers["decision"], spec_file)
    else:
        decision = option_source(args.pred, "--pred") if args.pred is not None else None
    where = option_source(args.where, "--where", where_header, spec_file) if args.where else None
    # everything is validated before a model is trained (a typo costs no time)
    preflight(dataset, spec_file.spec, spec_source=file_source(spec_file), decision=decision, where=where,
              uses_model=uses_model)
    model = model_from_args(args, dataset) if uses_model else None
    result = audit(dataset, spec_file.spec, engine=args.engine, model=model, pred=args.pred,
                   where=args.where, delta=args.delta, batch=args.batch, split=args.split, bound=args.bound,
                   order=args.order, seed=args.seed, rows=args.rows, stop=args.stop, time_budget=args.time_budget)
    print_summary(result, from_file)
    if args.json:
        write_atomically(args.json, result.to_json(trace_every=max(1, args.trace_every)).encode("utf-8"),
                         what="audit result")
        print(f"wrote {args.json}")
    if args.pdf:
        from fairaudit.report import build_pdf

        write_atomically(args.pdf, build_pdf(result, dataset=dataset, model=model), what="report")
        print(f"wrote {args.pdf}")
    if result.assumption_broken and result.verdict in ("true", "false"):
        # a gate must not pass on a verdict its own data contradicts: exit 3, "not a pass", and say why
        print("exit:      3 — the verdict is not backed by its guarantee (see the warnings); audit with "
              "--order shuffle, or investigate the drift")
        return EXIT_UNBACKED
    return EXIT.get(result.verdict, 3)


def print_summary(result, from_file=()) -> None:
    """The verdict, its guarantee, what was audited and every warning, one labelled line each."""
    print(f"verdict:   {result.verdict}")
    print(f"guarantee: {result.guarantee}")
    decided = f"{result.stop_step:,}" if result.stop_step is not None else "not decided"
    if result.verdict_step is not None and result.stop_step is not None and result.verdict_step != result.stop_step:
        decided += f" (first decision; the reported verdict holds from step {result.verdict_step:,})"
    print(f"stop step: {decided} (of {result.steps:,} observations)")
    if result.rows_text:
        print(f"rows:      {result.rows_text}")
    if result.assumption:
        print(f"assumes:   {result.assumption}")
    worst = result.worst_node()
    if worst is not None:
        info = result.node(worst["id"])
        name = f"{info.name} " if info.name else ""
        verdict = {"true": "certified", "false": "violated"}.get(worst["verdict"], "undecided")
        line = f"worst:     {name}({worst['id']}) {worst['text']}: {verdict}"
        if len(info.children) == 2:
            left = result.final_values(info.children[0])
            line += (f"; left side {left['estimate']:.4g} in [{left['lo']:.4g}, {left['hi']:.4g}]")
        print(line)
    if from_file:
        print(f"options:   {' '.join(from_file)} (from the spec file's headers)")
    for warning in result.warnings:
        print(f"warning:   {warning}")
