"""`fairaudit report RESULT.json --pdf REPORT.pdf`: rebuild the PDF report from a saved audit result.

The result is the JSON written by `fairaudit audit --json` (or the dashboard's download). The dataset named in
the result is reloaded when it is a built-in one (for the per-group statistics); give --data for a CSV, and
--model for the model's facts and per-group selection rates. The result of an audit of a population program
records the program's name and sha256, not its text: give --population FILE.fr to print the program (its sha256
must be the recorded one). Exit codes: 0 written, 2 bad input (unreadable or
invalid JSON, unknown node, unwritable path).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from fairaudit.cli._data_args import add_data_arguments, dataset_from_args
from fairaudit.cli._model_args import add_model_arguments, model_from_args
from fairaudit.cli._values import output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n"
                     "  fairaudit report audit.json --pdf audit.pdf\n"
                     "  fairaudit report audit.json --pdf audit.pdf --data my.csv --protected sex --node n2\n"
                     "  fairaudit report audit.json --pdf audit.pdf --population program.fr\n\n"
                     "Exit codes: 0 the report was written, 2 bad input (one line on stderr).")
    parser.add_argument("result", metavar="RESULT.json", help="audit result written by `fairaudit audit --json`")
    parser.add_argument("--pdf", metavar="PATH", type=output, help="where to write the PDF (default: RESULT with suffix .pdf)")
    parser.add_argument("--title", help="report title (default: from the dataset and model)")
    parser.add_argument("--node", metavar="ID", action="append", default=[],
                        help="also plot the convergence of this node (repeatable; every comparison is plotted)")
    parser.add_argument("--no-data", action="store_true",
                        help="do not reload the built-in dataset named in the result (no per-group statistics)")
    parser.add_argument("--force", action="store_true",
                        help="allow --pdf to replace an existing file that is not a PDF (never the input)")
    parser.add_argument("--population", metavar="FILE.fr",
                        help="the population program of an audit of one, to print it in the report (its sha256 must "
                             "be the one the result recorded)")
    add_data_arguments(parser, required=False)
    add_model_arguments(parser, required=False)


def run(args: argparse.Namespace) -> int:
    from fairaudit.base.errors import FairauditError
    from fairaudit.core.outputs import check_output, write_atomically
    from fairaudit.report import build_pdf, load_result
    from fairaudit.report.content import generated_from_data, is_population, population_facts

    if not args.result.strip():
        raise FairauditError("no result file: give RESULT.json, written by `fairaudit audit --json`")
    out = Path(args.pdf) if args.pdf else _pdf_beside(args.result)
    check_output(out, "pdf", inputs=[args.result, args.data, getattr(args, "model", None), args.population],
                 force=args.force, what="report")  # before any work; `report r.json --pdf r.json` would destroy it
    result = load_result(args.result)  # bad/missing JSON: FairauditError -> one line, exit 2
    if is_population(result) and not generated_from_data(result):
        given = [flag for flag, value in (("--data", args.data), ("--model", getattr(args, "model", None)),
                                          ("--pred", getattr(args, "pred", None))) if value is not None]
        if given:
            raise FairauditError(f"this result is an audit of a population program, which has no dataset or model: "
                                 f"{given[0]} does not apply (give --population FILE.fr to print the program)")
        if args.population is not None:  # a program that cannot be printed is an error here, not a note
            if not Path(args.population).is_file():
                raise FairauditError(f"no population program at {args.population!r} (a .fr file)")
            facts = population_facts(result, args.population)
            if facts["text"] is None:
                raise FairauditError(facts["note"])
        path = write_atomically(out, build_pdf(result, selected_nodes=args.node, title=args.title,
                                               population=args.population), what="report")
        return _wrote(path, result)
    if args.population is not None:
        raise FairauditError("--population applies to the result of an audit of a population program file; this "
                             "result is about " + ("a program generated from a dataset and a model: give --data and "
                                                   "--model to print it" if is_population(result)
                                                   else "a dataset's rows"))
    dataset = dataset_from_args(args)
    model = None
    if getattr(args, "model", None) is not None or getattr(args, "pred", None) is not None:
        model = model_from_args(args, dataset)
    path = write_atomically(out, build_pdf(result, dataset=dataset, model=model, selected_nodes=args.node,
                                           title=args.title, load_dataset=not args.no_data), what="report")
    return _wrote(path, result)


def _pdf_beside(result: str) -> Path:
    """The default ``--pdf``: the result's path with the suffix ``.pdf`` (``r.json`` -> ``r.pdf``), checked as given
    (``fairaudit.base.files.check_path``: a folder or a device is never the base of a name)."""
    from fairaudit.base.files import check_path

    return check_path(result, what="report").with_suffix(".pdf")


def _wrote(path: Path, result) -> int:
    size = path.stat().st_size
    pages = _pages(path)
    print(f"wrote {path} ({pages} pages, {size / 1024:.0f} KB): verdict {result.claim.word}")
    return 0


def _pages(path: Path) -> str:
    try:
        from pypdf import PdfReader

        return str(len(PdfReader(str(path)).pages))
    except Exception:  # noqa: BLE001 - pypdf is optional here
        return "?"
