"""`fairaudit train`: train a model on a dataset, save it, print its held-out accuracy per group.

    fairaudit train --data adult --kind logreg --out adult-logreg.skops [--seed 0]
                    [--test-size 0.25] [--features a,b | --exclude c,d] [--include-protected]
                    [--param max_depth=4 ...]

The rows are split (stratified, seeded) into a training part and a held-out part (``HELD_OUT_SHARE``
by default, as in the dashboard and its demo); the accuracy table is measured on the held-out part,
overall and for each value of each protected column.

The model is trained as on every route (``fairaudit.models.recipe``: the same data, kind, held-out share and seed
give the model that ``audit``/``scan``/``compare``/``repair --model KIND`` and the dashboard train). It reads the
default features of ``fairaudit.models.features`` (as the dashboard's Model page):
every column but the label, the protected attributes (unless --include-protected), the dataset's logged
decisions and outcomes, and identifier-like columns. ``--features`` names the columns instead; ``--exclude``
removes columns from either. The features used and those left out are printed, and a feature that predicts
the label almost perfectly on its own is a warning on stderr.

Model files cannot run code when loaded: scikit-learn kinds are saved in skops's secure format
(default extension ``.skops``), mlp as a torch ``state_dict`` + JSON config (``.pt``). An ``--out``
without an extension gets that one added. The format never depends on the name: ``--out m.joblib``
still writes skops (with a note on stderr), because refusing it would break existing scripts for no
safety gain (loading detects the format from the content, so the name cannot make it unsafe).
`--model PATH` in other commands loads these files.

On a terminal, stderr shows one updating line while the model trains (``Training gbm: 40% — about 12 s left``,
from ``fairaudit.base.progress``); nothing when stderr is not a terminal (pipes, logs, tests).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fairaudit.cli._data_args import add_data_arguments, dataset_from_args
from fairaudit.cli._values import SEED, Names, names, output, share, typed
from fairaudit.base.errors import ModelError
from fairaudit.models.features import leak_warnings, left_out_text
from fairaudit.models.recipe import held_out, train_model
from fairaudit.models.training import HELD_OUT_SHARE, KIND_HELP, KINDS, MAX_MLP_PARAMETERS, check_kind


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_arguments(parser)
    group = parser.add_argument_group("model")
    group.add_argument("--kind", required=True, metavar="KIND",
                       help="; ".join(f"{k}: {KIND_HELP[k]}" for k in KINDS))
    group.add_argument("--out", required=True, metavar="PATH", type=output,
                       help="where to save the trained model, in a format that cannot run code when loaded: "
                            "skops for logreg/tree/gbm (default extension .skops), torch state_dict + JSON for mlp "
                            "(.pt); the extension is added when PATH has none. The name never changes the format "
                            "(e.g. m.joblib still holds skops)")
    group.add_argument("--force", action="store_true",
                       help="allow --out to replace an existing file that is not a model (never the data)")
    group.add_argument("--seed", type=typed(SEED), default=0, help="seed of the split and the learner (default 0)")
    group.add_argument("--test-size", type=typed(share("test_size", HELD_OUT_SHARE)), default=HELD_OUT_SHARE,
                       metavar="FRACTION",
                       help="fraction of rows held out to measure accuracy; an audit of the saved model reads them "
                            f"(default {HELD_OUT_SHARE}, as in the dashboard)")
    group.add_argument("--features", metavar="COL", default=None, action=Names,
                       help="the columns the model reads (default: every column but the label, the protected "
                            "attributes, logged decisions and identifier-like columns)")
    group.add_argument("--exclude", metavar="COL", default=None, action=Names,
                       help="columns the model must not read, removed from the default features or --features")
    group.add_argument("--include-protected", action="store_true",
                       help="let the default features include the protected attributes")
    group.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                       help="learner parameter, repeatable: max_depth=4 (tree), C=0.5 (logreg), "
                            f"hidden=[32,16] epochs=20 (mlp; at most {MAX_MLP_PARAMETERS:,} weights and biases); "
                            "VALUE is read as JSON when it parses")


EXTENSIONS = {"mlp": (".pt", "torch state_dict")}
DEFAULT_EXTENSION = (".skops", "skops")  # the scikit-learn kinds


def out_path(text: str, kind: str) -> Path:
    """``--out`` with the kind's extension added when it has none. The path as given is checked first
    (``fairaudit.base.files.check_path``): a folder, a device (``/dev/null``), a pipe or an empty path is refused,
    never turned into another name beside it (``/dev/null.skops``)."""
    from fairaudit.base.files import check_path

    extension, _ = EXTENSIONS.get(kind, DEFAULT_EXTENSION)
    path = check_path(text, what="model")
    return path if path.suffix else path.with_name(path.name + extension)


def name_note(path: Path, kind: str) -> str | None:
    """A note when the name suggests another format (``m.joblib``: it holds skops all the same, not a pickle)."""
    extension, fmt = EXTENSIONS.get(kind, DEFAULT_EXTENSION)
    if path.suffix.lower() == extension:
        return None
    pickle_name = path.suffix.lower() in (".joblib", ".pkl", ".pickle")
    return (f"note: {path.name} holds the {fmt} format whatever its name ({extension} is the usual extension)"
            f"{'; it is not a pickle' if pickle_name else ''}")


def names_list(value) -> list[str]:
    """``"a, b"`` or ``["a", "b"]`` -> ``["a", "b"]`` (``fairaudit.cli._values.names``); ``None`` -> ``[]``."""
    return names(value) or []


def parse_params(items: list[str]) -> dict:
    """``["max_depth=4", "hidden=[8,8]", "solver=saga"]`` -> ``{"max_depth": 4, "hidden": [8, 8], "solver": "saga"}``.

    A VALUE that is not JSON is kept as a string.
    """
    params = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ModelError(f"--param takes NAME=VALUE, got '{item}'")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        params[name.strip()] = value
    return params


def table_lines(metrics: dict) -> list[str]:
    """The aligned accuracy table: one row overall, then one per protected group."""
    rows = [("all", metrics["n_test"], metrics["accuracy"])]
    for column, groups in metrics["groups"].items():
        for value, g in groups.items():
            name = f"{column} {value}" if value[:1] in "<>" else f"{column}={value}"  # "age < 33" or "sex=Male"
            rows.append((name, g["n"], g["accuracy"]))
    width = max(len("group"), *(len(r[0]) for r in rows))
    count = max(len("rows"), *(len(f"{r[1]:,}") for r in rows))
    lines = [f"{'group':<{width}}  {'rows':>{count}}  accuracy"]
    lines += [f"{name:<{width}}  {n:>{count},}  {acc:8.3f}" for name, n, acc in rows]
    return lines


def run(args: argparse.Namespace) -> int:
    from fairaudit.core.outputs import check_output
    from fairaudit.base.progress import terminal_line

    check_kind(args.kind)
    out = out_path(args.out, args.kind)
    # fail before training, not after; never onto the data (or another kind of file without --force)
    check_output(out, "model", inputs=[args.data], force=getattr(args, "force", False), what="model")
    params = parse_params(args.param)
    exclude = names_list(args.exclude)
    dataset = dataset_from_args(args)
    line = terminal_line(sys.stderr)
    try:  # as every route trains a model (fairaudit.models.recipe): the same flags give the same model
        model = train_model(dataset, args.kind, seed=args.seed, held_out_share=args.test_size,
                            features=names_list(args.features) if args.features is not None else None,
                            include_protected=args.include_protected, exclude=exclude, on_progress=line, **params)
    finally:
        if line is not None:
            line.close()
    features = list(model.params["features"])
    model.save(out)
    m = model.metrics
    print(f"trained {model.describe()}")
    print(f"data {dataset.name}: {m['n_train']:,} rows for training, {m['n_test']:,} held out (seed {args.seed})")
    print(f"audits read {held_out(model, dataset).text}")  # the record every route's output cites
    print(f"features {', '.join(features)}")
    skipped = left_out_text(dataset, features, include_protected=args.include_protected)
    if skipped:
        print(f"not read {skipped}")
    print(f"saved to {out}")
    note = name_note(out, args.kind)
    if note:
        print(note, file=sys.stderr)
    for warning in leak_warnings(dataset, features):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"sha256 {model.content_hash}")
    print()
    print("held-out accuracy")
    print("\n".join(table_lines(m)))
    return 0
