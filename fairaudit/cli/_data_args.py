"""The data options shared by every command that reads a dataset (train, check, audit).

    --data NAME|CSV        a built-in dataset (see `fairaudit datasets`) or a CSV file (.csv or .csv.gz)
    --label COL            the outcome column (replaces a built-in dataset's label)
    --protected COL ...    protected attributes (replaces the default set; "" means none)
    --favourable VALUE     the favourable label value (needed when it is not obvious: 1, True, yes)
    --column-type COL=KIND declare a column's type (integer, float, boolean, text) instead of inferring it
    --na-values TEXT ...   text that means "missing" besides an empty cell

The list-valued flags (``--protected``, ``--na-values``) take their items as separate words, comma-separated or both
(``fairaudit.cli._values.Names``, as on every command).
"""
from __future__ import annotations

import argparse

from fairaudit import data
from fairaudit.cli._values import Names, names
from fairaudit.data.dataset import Dataset


def add_data_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """Add --data, --label, --protected and --favourable to ``parser``."""
    group = parser.add_argument_group("data")
    group.add_argument("--data", metavar="NAME|CSV", required=required,
                       help="built-in dataset name (see `fairaudit datasets`) or path to a CSV file (.csv, .csv.gz)")
    group.add_argument("--label", metavar="COL", help="label (outcome) column; must be binary")
    group.add_argument("--protected", metavar="COL", action=Names,
                       help="protected attribute column(s), space- or comma-separated; '' for none "
                            "(default: the dataset's own; none for a CSV)")
    group.add_argument("--missing", choices=["keep", "drop"], default="keep",
                       help="rows whose protected attribute is missing: keep them as a group of their own, "
                            "\"?\" (default, with a warning), or drop them")
    group.add_argument("--favourable", metavar="VALUE",
                       help="label value that is the favourable outcome (inferred only for 1/0, True/False, yes/no)")
    add_reading_arguments(group)


def add_reading_arguments(group) -> None:
    """Add --column-type and --na-values (how a file's cells are read) to ``group``: every command that reads a file
    of rows takes them (``scan`` too, which has its own ``--protected``)."""
    group.add_argument("--column-type", metavar="COL=KIND", action="append", dest="column_type",
                       help="declare a column's type: integer, float, boolean or text (repeatable); otherwise a "
                            "CSV's types are fixed by its first 10,000 rows and a later value that does not fit is "
                            "an error")
    group.add_argument("--na-values", metavar="TEXT", action=Names, default=(), dest="na_values",
                       help="text that means a missing value besides an empty cell, space- or comma-separated (e.g. "
                            "'NA,null'); by default NA, None and null are values (Namibia's code is NA)")


def protected_names(value) -> list[str] | None:
    """``"sex, race"`` or ``["sex", "race"]`` -> ``["sex", "race"]``; ``""`` -> ``[]`` (none); ``None`` -> ``None``
    (the default): ``fairaudit.cli._values.names``."""
    return names(value)


def dataset_from_args(args: argparse.Namespace, columns=None) -> Dataset | None:
    """The dataset named by the parsed options (``None`` when --data is optional and absent); ``columns``: the
    caller reads only these columns (``fairaudit.data.resolve``: a built-in dataset is then read in part).

    Raises ``DataError`` (one line) for an unknown name, a bad file, an unknown column or a non-binary label.
    """
    if getattr(args, "data", None) is None:
        return None
    dataset = data.resolve(args.data, label=args.label, protected=protected_names(args.protected),
                           favourable=args.favourable, column_types=getattr(args, "column_type", None),
                           na_values=tuple(getattr(args, "na_values", None) or ()), columns=columns)
    if getattr(args, "missing", "keep") == "drop":
        dataset = dataset.without_missing_protected()
        if not len(dataset):
            raise data.DataError("--missing drop leaves no row: every row misses a protected attribute")
    return dataset
