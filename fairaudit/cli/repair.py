"""``fairaudit repair``: what would make it pass — decision thresholds on the model's score, chosen on part of the
audited rows and certified on the rest (``fairaudit.repair``; the method: ``docs/methods/repair.md``).

Prints the original model beside the repair (thresholds, accuracy, favourable share, margin on the search rows),
which rows chose and which certified, the verdict and the headline; writes the result as JSON (``--json``, ``-`` for
standard output) and the repaired model (``--save``: JSON over the base model's file). Exit code as ``fairaudit
audit``'s: 0 certified, 1 violated, 3 undecided, 2 bad input (a model without scores, an unknown group column, a
specification that does not read ``pred`` ...), 4 internal error.
"""
from __future__ import annotations

import argparse

from fairaudit.base.errors import FairauditError

VERDICT_WORDS = {"certified": "certified", "violated": "violated", "undecided": "not decided"}
EXIT_HELP = ("exit codes: 0 = the repair is certified on the certification rows, 1 = violated there, 3 = undecided "
             "or refused (no useful repair certified), 2 = bad input, 4 = internal error")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from fairaudit.cli._data_args import add_data_arguments
    from fairaudit.cli._model_args import add_model_arguments
    from fairaudit.cli._values import Names, output, probability, share, typed
    from fairaudit.repairs.repair import DEFAULT_DELTA, DEFAULT_SPLIT, MODES, OBJECTIVES
    from fairaudit.core.options import Option
    from fairaudit.repairs.select import DEFAULT_MAX_LOSS
    from fairaudit.repairs.wording import PER_GROUP_CAVEAT

    parser.epilog = EXIT_HELP + ". " + PER_GROUP_CAVEAT
    add_data_arguments(parser)
    parser.add_argument("--spec", metavar="TEXT|@FILE", required=True,
                        help="the specification the repair must satisfy, or @path to a file; it must read pred")
    parser.add_argument("--rows", choices=["held-out", "all"],
                        help="with a --model KIND trained here: the held-out rows (default) or all")
    add_model_arguments(parser, required=True, seed_help="seed of the search/certification split, of the "
                                                          "certificate's row order and of training a --model KIND "
                                                          "(default 0)")
    group = parser.add_argument_group("repair")
    group.add_argument("--group-by", metavar="COL", dest="group_by", action=Names,
                       help="with per-group thresholds: the column(s) whose groups get their own threshold (default: "
                            "the protected, else categorical, columns the specification's conditions compare)")
    group.add_argument("--objective", choices=OBJECTIVES, default=OBJECTIVES[0],
                       help="what to keep: accuracy (needs labels; default) or favourable (the share of favourable "
                            "decisions, as close to the original's as possible)")
    group.add_argument("--thresholds", choices=MODES, default=MODES[0],
                       help="global (default: one threshold for everyone), group (one per group) or both (per group, "
                            "or one when it does as well). Per-group thresholds are an explicit choice: "
                            + PER_GROUP_CAVEAT)
    group.add_argument("--per-group", dest="thresholds", action="store_const", const="both",
                       help="the same as --thresholds both: offer one threshold per group (see the caveat above)")
    group.add_argument("--max-loss", dest="max_loss", type=typed(Option("max-loss", float, DEFAULT_MAX_LOSS, "a loss", min=0, max=1)),
                       default=DEFAULT_MAX_LOSS,
                       help=f"refuse a repair that gives up more than this of the objective on the search rows "
                            f"(accuracy points, or how far the favourable share moves; default {DEFAULT_MAX_LOSS:g}); "
                            "a repair deciding everyone or no one favourably is always refused")
    group.add_argument("--split", type=typed(share("split", DEFAULT_SPLIT)), default=DEFAULT_SPLIT,
                       help=f"the share of the audited rows that chooses the thresholds; the rest certifies them "
                            f"(default {DEFAULT_SPLIT:g})")
    group.add_argument("--margin", default="auto", metavar="X|auto",
                       help="how far inside the specification the thresholds must be on the search rows (default "
                            "auto: a few candidates planned for the best expected objective of the certified repair "
                            "are certified together, the failure probability shared between them)")
    group.add_argument("--delta", type=typed(probability("delta", DEFAULT_DELTA)), default=DEFAULT_DELTA,
                       help=f"the certificate's failure probability (default {DEFAULT_DELTA:g})")
    out = parser.add_argument_group("output")
    out.add_argument("--save", metavar="FILE", type=output,
                     help="write the repaired model (JSON naming the base model's file; a model trained here is "
                          "saved beside it as FILE-base.skops, a model file from another folder copied there); "
                          "audit it with --model FILE")
    out.add_argument("--json", metavar="OUT|-", type=output, help="write the repair result as JSON (- for standard output)")
    out.add_argument("--force", action="store_true", help="replace an existing output file of another kind")


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from fairaudit.cli._data_args import dataset_from_args
    from fairaudit.cli._model_args import model_from_args
    from fairaudit.cli._spec_args import spec_from_args
    from fairaudit.core.outputs import check_output, write_atomically
    from fairaudit.models.training import KINDS
    from fairaudit.core.preflight import file_source, preflight
    from fairaudit.repairs.repair import check_margin, check_request, repair

    if args.pred is not None:
        raise FairauditError("--pred gives decisions without scores: a threshold repair needs a model with scores "
                             "(--model KIND|PATH)")
    margin = check_margin(args.margin)
    spec_file = spec_from_args(argparse.Namespace(spec=args.spec, range=getattr(args, "range", None)))
    inputs = [p for p in (args.data, spec_file.path, args.model) if p]
    if args.json and args.json != "-":
        check_output(args.json, "repair", inputs=inputs, force=args.force, what="repair result")
    if args.save:
        check_output(args.save, "model", inputs=inputs, force=args.force, what="repaired model")
        from fairaudit.repairs.model import base_destination

        # a model trained here, or a file outside the repair's folder, is written beside it: that path too, now
        base = base_destination(args.save, None if args.model in KINDS else args.model, args.model)
        if base is not None:
            check_output(base, "model", inputs=inputs, force=args.force, what="base model")
    if args.json and args.save and args.json != "-" and Path(args.json).resolve() == Path(args.save).resolve():
        raise FairauditError("--json and --save must name different files")
    dataset = dataset_from_args(args)
    # every option and the specification against the data before a model is trained (a typo costs no training)
    preflight(dataset, spec_file.spec, spec_source=file_source(spec_file), uses_model=True)
    check_request(dataset, spec_file.spec, args.group_by, args.objective, args.thresholds)
    # a model file is passed by its path (the saved repair names it); a kind is trained (or read from the cache)
    model = args.model if args.model not in KINDS else model_from_args(args, dataset)
    if args.model not in KINDS:
        model_from_args(args, dataset)  # the file's checks against the data's columns (one line each)
    result = repair(dataset, spec_file.text, model, group_by=args.group_by, objective=args.objective,
                    thresholds=args.thresholds, split=args.split, seed=args.seed, delta=args.delta, rows=args.rows,
                    margin=margin, max_loss=args.max_loss, trust_pickle=args.trust_pickle,
                    trusted_types=tuple(args.trust_type or ()))
    if args.save:
        from fairaudit.repairs.model import save

        for path in save(result.model, args.save, inputs=inputs, force=args.force):
            print(f"wrote {path}", file=sys.stderr if args.json == "-" else sys.stdout)  # stdout: the JSON
    if args.json == "-":
        print(result.to_json())
        return result.exit_code
    print_result(result)
    if args.json:
        write_atomically(args.json, result.to_json().encode("utf-8"), what="repair result")
        print(f"wrote {args.json}")
    return result.exit_code


def _num(x, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _thresholds(point) -> str:
    if not point.thresholds:
        return f"≥ {point.default:.3g} (every row)"
    return "; ".join(f"{g} ≥ {t:.3g}" for g, t in sorted(point.thresholds.items()))


def print_result(result) -> None:
    """A refused repair first says so in one line ("No repair adopted: …", the bound named ``--max-loss``); then the
    original beside the candidate shown on the search rows ("repaired" only when adopted, else "best candidate
    tried"), the candidates tried, the rows, the verdict (its status word), and the headline of an adopted repair;
    the caveat when per-group thresholds were offered. Sentences come from the parsed specification, which is printed
    only on its own ``spec:`` line."""
    word = result.status[0]
    adopted = result.is_adopted
    if not adopted:
        print(result.refusal_for("cli"))
    shown = result.shown_name if result.tried else None
    rows = [("", "original") + ((f"{shown} ({result.kind})",) if shown else ()),
            ("thresholds", _thresholds(result.original)) + ((_thresholds(result.chosen),) if shown else ()),
            ("accuracy", _num(result.original.accuracy)) + ((_num(result.chosen.accuracy),) if shown else ()),
            ("favourable share", _num(result.original.favourable)) + ((_num(result.chosen.favourable),) if shown
                                                                       else ()),
            ("margin", _num(result.original.margin)) + ((_num(result.chosen.margin),) if shown else ())]
    width = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(f"spec:      {result.spec}")
    print(f"thresholds: {'per group by ' + ', '.join(result.group_by) if result.per_group and result.group_by else 'one for everyone'}"
          f"; objective: {result.objective}; refused beyond a loss of {_num(result.max_loss, 2)} or with everyone / "
          "no one favourable")
    if result.caveat:
        print(f"caveat:    {result.caveat}")
    print(f"search:    {result.method}; margin {result.margin_rule}")
    print("on the search rows:")
    for r in rows:
        print("  " + "  ".join(cell.ljust(width[i]) for i, cell in enumerate(r)).rstrip())
    change = result.accuracy_change(points=True) if shown else None
    if change is not None:
        print(f"change:    {change}" + ("" if adopted else f" ({shown})"))
    if result.certified_accuracy is not None:
        print(f"accuracy:  {result.certified_accuracy:.3f} for the {'repaired model' if adopted else shown} on the "
              f"{result.certification.count:,} certification rows")
    label = "candidate:" if adopted else "tried:    "
    for c in result.tried:
        print(f"{label} {_thresholds(c.point)}: accuracy {_num(c.point.accuracy)}, favourable "
              f"{_num(c.point.favourable)} (search rows); certificate at failure probability {c.delta:.3g}: {c.verdict}")
        if not adopted:
            print(f"           {result.candidate_sentence(c)}")
    print(f"chose on:  {result.search.text}" if adopted else f"searched:  {result.search.text}")
    print(f"certified: {result.certification.text}" if adopted else f"tried on:  {result.certification.text}")
    for note in result.notes:
        print(f"note:      {note}")
    if adopted:
        print(f"verdict:   {word}")
        print(result.headline)
    else:
        print(f"verdict:   {word} (the candidates tried: "
              + ", ".join(VERDICT_WORDS.get(c.verdict, c.verdict) for c in result.tried) + ")"
              if result.tried else f"verdict:   {word}")
