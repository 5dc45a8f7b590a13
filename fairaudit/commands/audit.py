"""``fairaudit audit``: audit decisions against a specification and write the JSON result / PDF report.

Prints the verdict, the guarantee sentence, the stop step and the worst comparison. Exit code, so that an
audit can gate a deployment pipeline: 0 certified true, 1 violated, 3 undecided, 2 bad input.

A spec file's ``# dataset:``, ``# decision:``, ``# where:`` and ``# delta:`` headers supply ``--data``,
``--pred``, ``--where`` and ``--delta`` when those are not given on the command line.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from fairaudit.errors import FairauditError

EXIT = {"true": 0, "false": 1, "unknown": 3}
DEFAULT_DELTA = 0.05
EXIT_HELP = ("exit codes: 0 = certified true, 1 = decided violated, 3 = undecided (not a pass), "
             "2 = bad input")


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
    parser.add_argument("--order", choices=["given", "shuffle"], default="given",
                        help="stream order: as in the file, or shuffled with --seed (default given)")
    parser.add_argument("--stop", action="store_true", help="stop at the decision instead of running to the end")
    parser.add_argument("--time-budget", type=float, metavar="SECONDS", help="stop searching for a decision after this long")
    parser.add_argument("--json", metavar="PATH", help="write the audit result (JSON) here")
    parser.add_argument("--pdf", metavar="PATH", help="write the PDF audit report here")
    parser.add_argument("--trace-every", type=int, default=1, metavar="K",
                        help="write every K-th check of the trace to the JSON (default 1: all)")


def run(args: argparse.Namespace) -> int:
    from fairaudit.api import audit
    from fairaudit.commands._data_args import dataset_from_args
    from fairaudit.commands._model_args import model_from_args
    from fairaudit.commands._spec_args import spec_from_args

    if args.batch < 1:
        raise FairauditError("--batch must be at least 1")
    spec_file = spec_from_args(argparse.Namespace(spec=args.spec))
    if args.data is None:
        if spec_file.dataset is None:
            raise FairauditError("no dataset: give --data NAME|CSV (or a '# dataset:' header in the spec file)")
        args.data = spec_file.dataset
    dataset = dataset_from_args(args)
    model = None
    if getattr(args, "model", None) is not None:
        model = model_from_args(args, dataset)
    elif args.pred is None and spec_file.decision is not None:
        if spec_file.uses_model:
            raise FairauditError("the spec file says '# decision: model': give --model KIND|PATH")
        spec_file.decision_event()  # a wrong header is reported at its line:column
        args.pred = spec_file.decision
    from_file = []
    if args.where is None and spec_file.where is not None:
        spec_file.where_event()  # a wrong header is reported at its line:column
        args.where = spec_file.where
        from_file.append(f"--where '{args.where}'")
    if args.delta is None:
        args.delta = spec_file.delta if spec_file.delta is not None else DEFAULT_DELTA
        if spec_file.delta is not None:
            from_file.append(f"--delta {args.delta:g}")
    if args.pdf:
        from fairaudit.report import check_output_path

        check_output_path(args.pdf)  # fail before a long audit, not after
    result = audit(dataset, spec_file.spec, engine=args.engine, model=model, pred=args.pred,
                   where=args.where, delta=args.delta, batch=args.batch, split=args.split, bound=args.bound,
                   order=args.order, seed=args.seed, stop=args.stop, time_budget=args.time_budget)
    print(f"verdict:   {result.verdict}")
    print(f"guarantee: {result.guarantee}")
    print(f"stop step: {result.stop_step if result.stop_step is not None else 'not decided'} "
          f"(of {result.steps} observations)")
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
    if args.json:
        try:
            result.to_json(args.json, trace_every=max(1, args.trace_every))
        except OSError as err:
            raise FairauditError(f"cannot write {args.json}: {err.strerror}") from None
        print(f"wrote {args.json}")
    if args.pdf:
        from fairaudit.report import write_pdf

        write_pdf(result, args.pdf, dataset=dataset, model=model)
        print(f"wrote {args.pdf}")
    return EXIT.get(result.verdict, 3)
