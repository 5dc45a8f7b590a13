"""`fairaudit datasets`: list the built-in datasets, or show the columns of one dataset.

    fairaudit datasets                 one aligned line per built-in dataset
    fairaudit datasets NAME|CSV [...]  the columns of a dataset: kind, role and values (accepts the data options)
"""
from __future__ import annotations

import argparse

from fairaudit import data
from fairaudit.cli._data_args import protected_names
from fairaudit.cli._values import Names
from fairaudit.data.roles import listing
from fairaudit.base.errors import DataError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", nargs="?", metavar="NAME|CSV",
                        help="show the columns of this built-in dataset or CSV file")
    parser.add_argument("--label", metavar="COL", help="label column (as for --data in other commands)")
    parser.add_argument("--protected", metavar="COL", action=Names,
                        help="protected column(s), space- or comma-separated")
    parser.add_argument("--favourable", metavar="VALUE", help="favourable label value")


def _table(rows: list[list[str]]) -> list[str]:
    """Left-aligned columns separated by two spaces; numbers right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.rjust(w) if cell.replace(",", "").isdigit() else cell.ljust(w) for cell, w in zip(row, widths)]
        lines.append("  ".join(cells).rstrip())
    return lines


def catalogue_lines() -> list[str]:
    rows = [["name", "rows", "label (favourable)", "protected", "description"]]
    for item in data.info():
        rows.append([item.name, f"{item.rows:,}", f"{item.label} ({item.favourable})",
                     ",".join(item.protected), item.description])
    return _table(rows)


def column_lines(dataset: data.Dataset) -> list[str]:
    schema = dataset.schema
    lines = [f"{dataset.name}: {len(dataset):,} rows, {len(schema.columns)} columns ({dataset.source})"]
    if dataset.description:
        lines.append(dataset.description)
    rows = [["column", "kind", "role", "values"]]
    for col in schema.columns:
        if col.name == schema.label:
            role = f"label (favourable {schema.favourable})"
        elif col.name in schema.protected:
            role = "protected"
        elif col.name in schema.excluded:
            role = "not a feature"
        else:
            role = "feature"
        if col.kind == "categorical":
            values = f"{len(col.values)}: {listing(col.values, limit=6)}"
        else:
            series = dataset.frame[col.name]
            values = f"{series.min():g} .. {series.max():g}" + (
                f", {int(series.isna().sum())} missing" if series.isna().any() else "")
        rows.append([col.name, col.kind, role, values])
    return lines + _table(rows)


def run(args: argparse.Namespace) -> int:
    if args.dataset is None:
        if args.label is not None or args.protected is not None or args.favourable is not None:
            raise DataError("--label, --protected and --favourable need a dataset: fairaudit datasets NAME|CSV ...")
        lines = catalogue_lines()
    else:
        dataset = data.resolve(args.dataset, label=args.label, protected=protected_names(args.protected),
                               favourable=args.favourable)
        lines = column_lines(dataset)
    print("\n".join(lines))
    return 0
