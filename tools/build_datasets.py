"""Build the bundled datasets in ``data/`` from the raw public files.

    python tools/build_datasets.py [--shared DIR] [--out DIR]

Reads the raw files under ``DIR/datasets`` and ``DIR/benchmarks/fairquant/data`` (``DIR`` defaults to
``../shared`` beside the repository, then ``/work/shared``; see ``DIR/datasets/PROVENANCE.md``) and writes

* ``<out>/<name>.csv.gz`` for every dataset: UTF-8 CSV, ``\\n`` line ends, gzip with mtime 0 and no file name,
  so that rebuilding from the same inputs gives the same bytes;
* ``<out>/datasets.json``: the schema of every dataset (column kinds and dtypes, categorical values, label,
  favourable value, protected and excluded columns, description, licence) and the SHA-256 of its file.

The runtime (``fairaudit.data``) reads only these two kinds of file, never the raw ones. The declarations below
(``DATASETS``) are the single place where a dataset's roles and description are written down.

Column kinds: integer and float columns are ``numeric``, string columns ``categorical``, and the label is always
``categorical`` (it is binary). No bundled file has a missing value: a missing categorical value is the string
``"?"`` (Adult's own convention, kept as a category), and no numeric column has one.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
MISSING = "?"  # the category that stands for a missing categorical value


# --------------------------------------------------------------------------------------------- readers


def _strip_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """Strip surrounding whitespace from every string column."""
    out = frame.copy()
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].astype(str).str.strip()
    return out


ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
                 "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
                 "income"]
ADULT_NUMERIC = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]


def _read_adult(path: Path, skip_comment: bool) -> pd.DataFrame:
    frame = pd.read_csv(path, header=None, names=ADULT_COLUMNS, skiprows=1 if skip_comment else 0, dtype=str,
                        keep_default_na=False, skipinitialspace=True)
    frame = _strip_strings(frame)
    for col in ADULT_NUMERIC:
        frame[col] = frame[col].astype("int64")
    # adult.test writes the label with a trailing full stop ("<=50K."); adult.data does not.
    frame["income"] = frame["income"].str.rstrip(".")
    return frame


def adult(shared: Path) -> pd.DataFrame:
    return _read_adult(shared / "datasets/adult/adult.data", skip_comment=False)


def adult_test(shared: Path) -> pd.DataFrame:
    return _read_adult(shared / "datasets/adult/adult.test", skip_comment=True)  # line 1: "|1x3 Cross validator"


COMPAS_COLUMNS = ["sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
                  "priors_count", "days_b_screening_arrest", "c_charge_degree", "c_charge_desc", "length_of_stay",
                  "decile_score", "score_text", "v_decile_score", "v_score_text", "is_recid", "is_violent_recid",
                  "two_year_recid"]


def compas(shared: Path) -> pd.DataFrame:
    path = shared / "datasets/compas/compas-scores-two-years.csv"
    # Only empty fields are missing: "N/A" is a value of score_text that the filter below must see.
    raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    # The file has two decile_score and two priors_count columns; pandas names the second ones "<name>.1".
    # The first of each is the one ProPublica's analysis uses, so the ".1" copies are dropped.
    header = list(pd.read_csv(path, nrows=0).columns)
    assert header.index("decile_score") < header.index("decile_score.1"), header
    assert header.index("priors_count") < header.index("priors_count.1"), header
    days = pd.to_numeric(raw["days_b_screening_arrest"])
    keep = ((days >= -30) & (days <= 30) & (raw["is_recid"] != "-1") & (raw["c_charge_degree"] != "O")
            & (raw["score_text"] != "N/A"))
    frame = raw[keep].reset_index(drop=True)
    # ProPublica: length_of_stay = as.Date(c_jail_out) - as.Date(c_jail_in), in whole calendar days.
    jail_in = pd.to_datetime(frame["c_jail_in"]).dt.normalize()
    jail_out = pd.to_datetime(frame["c_jail_out"]).dt.normalize()
    frame["length_of_stay"] = (jail_out - jail_in).dt.days
    frame["c_charge_desc"] = frame["c_charge_desc"].fillna(MISSING)  # 5 rows have no charge description
    frame = frame[COMPAS_COLUMNS].copy()
    for col in ["age", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count",
                "days_b_screening_arrest", "length_of_stay", "decile_score", "v_decile_score", "is_recid",
                "is_violent_recid", "two_year_recid"]:
        frame[col] = pd.to_numeric(frame[col]).astype("int64")
    return _strip_strings(frame)


# UCI attribute order; (name, key in values_maps.json or None for a numeric attribute).
GERMAN_ATTRIBUTES = [
    ("checking_account", "status"), ("duration_months", None), ("credit_history", "credit_history"),
    ("purpose", "purpose"), ("credit_amount", None), ("savings", "savings"),
    ("present_employment", "present_employment"), ("installment_rate", None), ("personal_status", "status_sex"),
    ("other_debtors", "other_debtors"), ("residence_since", None), ("property", "property"), ("age", None),
    ("installment_plans", "installment_plans"), ("housing", "housing"), ("existing_credits", None),
    ("job", "job"), ("people_liable", None), ("telephone", "telephone"), ("foreign_worker", "foreign_worker"),
    ("credit", "credit"),
]


def _decode(value: Any) -> str:
    """A values_maps.json meaning as a clean string: booleans become "yes"/"no", the UCI documentation's
    placeholder "..." (or "..") for the amount becomes "x" ("0 <= ... < 200 DM" -> "0 <= x < 200 DM"),
    whitespace is collapsed."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return " ".join(re.sub(r"\.{2,3}", "x", str(value)).split())


def german(shared: Path) -> pd.DataFrame:
    folder = shared / "datasets/german"
    maps = json.loads((folder / "values_maps.json").read_text(encoding="utf-8"))
    names = [name for name, _ in GERMAN_ATTRIBUTES]
    raw = pd.read_csv(folder / "german.data", sep=" ", header=None, names=names, dtype=str)
    frame = pd.DataFrame(index=raw.index)
    for name, key in GERMAN_ATTRIBUTES:
        if key is None:
            frame[name] = raw[name].astype("int64")
            continue
        mapping = {code: _decode(meaning) for code, meaning in maps[key].items()}
        unknown = set(raw[name]) - set(mapping)
        assert not unknown, f"german {name}: codes without a meaning {sorted(unknown)}"
        decoded = raw[name].map(mapping)
        if name == "personal_status":
            # "male : divorced/separated" -> sex "male", personal_status "divorced/separated"
            parts = decoded.str.split(":", n=1, expand=True)
            frame["sex"] = parts[0].str.strip().str.capitalize()  # "Male"/"Female" as in adult and compas
            frame[name] = parts[1].str.strip()
        else:
            frame[name] = decoded
    return frame


RICCI_RACE = {"W": "White", "H": "Hispanic", "B": "Black"}
RICCI_PASS_MARK = 70  # ricci.txt: "Applicants with a total score of 70% or above pass the exam"


def ricci(shared: Path) -> pd.DataFrame:
    raw = _strip_strings(pd.read_csv(shared / "datasets/ricci/ricci.csv"))
    frame = pd.DataFrame({
        "position": raw["Position"],
        "oral": raw["Oral"].astype("float64"),
        "written": raw["Written"].astype("int64"),
        "race": raw["Race"].map(RICCI_RACE),
        "combine": raw["Combine"].astype("float64"),
    })
    assert frame["race"].notna().all()
    frame["promoted"] = (frame["combine"] >= RICCI_PASS_MARK).astype("int64")
    return frame


BANK_INT = ["age", "duration", "campaign", "pdays", "previous"]
BANK_FLOAT = ["emp_var_rate", "cons_price_idx", "cons_conf_idx", "euribor3m", "nr_employed"]


def bank(shared: Path) -> pd.DataFrame:
    raw = pd.read_csv(shared / "benchmarks/fairquant/data/bank-additional.csv", sep=";", dtype=str,
                      keep_default_na=False)
    frame = _strip_strings(raw.rename(columns=lambda c: c.strip().replace(".", "_")))
    for col in BANK_INT:
        frame[col] = frame[col].astype("int64")
    for col in BANK_FLOAT:
        frame[col] = frame[col].astype("float64")
    return frame


# --------------------------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class Declaration:
    build: Callable[[Path], pd.DataFrame]
    rows: int
    description: str
    label: str
    favourable: Any
    protected: tuple[str, ...]
    licence: str
    excluded: tuple[str, ...] = ()  # kept for analysis, not given to models (see fairaudit.data.dataset.Schema)


UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository)"

DATASETS: dict[str, Declaration] = {
    "adult": Declaration(
        adult, 32_561, "UCI Adult (1994 US census): does income exceed $50K a year? Training split.",
        label="income", favourable=">50K", protected=("sex", "race"), licence=UCI_LICENCE),
    "adult_test": Declaration(
        adult_test, 16_281, "UCI Adult (1994 US census): does income exceed $50K a year? Test split.",
        label="income", favourable=">50K", protected=("sex", "race"), licence=UCI_LICENCE),
    "compas": Declaration(
        compas, 6_172,
        "ProPublica COMPAS, Broward County 2013-14: re-arrest within two years (0 = no, favourable).",
        label="two_year_recid", favourable=0, protected=("race", "sex"),
        licence="published by ProPublica for public analysis (github.com/propublica/compas-analysis)",
        # COMPAS's own scores (audit them as logged decisions) and later outcomes that give away the label.
        excluded=("decile_score", "score_text", "v_decile_score", "v_score_text", "is_recid",
                  "is_violent_recid")),
    "german": Declaration(
        german, 1_000, "Statlog German Credit (Hofmann, 1994): is the applicant a good credit risk?",
        label="credit", favourable="good", protected=("sex", "age"), licence=UCI_LICENCE),
    "ricci": Declaration(
        ricci, 118,
        "Ricci v. DeStefano, New Haven fire department 2003 promotion exams: combined score of 70 or more.",
        label="promoted", favourable=1, protected=("race",), licence="public court record",
        excluded=("combine",)),  # the label is defined by combine >= 70
    "bank": Declaration(
        bank, 4_119, "UCI Bank Marketing (Portugal 2008-10, 10% sample): does the client subscribe a term deposit?",
        label="y", favourable="yes", protected=("age", "marital"), licence=UCI_LICENCE,
        excluded=("duration",)),  # call duration is known only after the call (bank-additional-names.txt)
}


# --------------------------------------------------------------------------------------------- writing


def _python(value: Any) -> Any:
    """A numpy scalar as the matching plain Python value (for JSON)."""
    return value.item() if hasattr(value, "item") else value


def _dtype_name(series: pd.Series) -> str:
    if pd.api.types.is_integer_dtype(series):
        return "int64"
    if pd.api.types.is_float_dtype(series):
        return "float64"
    return "str"


def schema_entry(name: str, decl: Declaration, frame: pd.DataFrame, digest: str) -> dict:
    """The datasets.json entry of one dataset; checks the declaration against the frame."""
    assert len(frame) == decl.rows, f"{name}: {len(frame)} rows, expected {decl.rows}"
    assert not frame.isna().any().any(), f"{name}: missing values {frame.columns[frame.isna().any()].tolist()}"
    assert frame.columns.is_unique, f"{name}: duplicate columns"
    for col in (decl.label, *decl.protected, *decl.excluded):
        assert col in frame.columns, f"{name}: no column {col}"
    labels = sorted(frame[decl.label].unique().tolist())
    assert len(labels) == 2 and decl.favourable in labels, f"{name}: label values {labels}"
    columns = []
    for col in frame.columns:
        dtype = _dtype_name(frame[col])
        kind = "categorical" if dtype == "str" or col == decl.label else "numeric"
        entry = {"name": col, "kind": kind, "dtype": dtype}
        if kind == "categorical":
            entry["values"] = sorted(_python(v) for v in frame[col].unique())
        columns.append(entry)
    return {"file": f"{name}.csv.gz", "sha256": digest, "rows": len(frame), "description": decl.description,
            "licence": decl.licence, "label": decl.label, "favourable": decl.favourable,
            "protected": list(decl.protected), "excluded": list(decl.excluded), "columns": columns}


def csv_gz_bytes(frame: pd.DataFrame) -> bytes:
    """The frame as deterministic gzip-compressed CSV (mtime 0, no file name in the header)."""
    text = frame.to_csv(index=False, lineterminator="\n")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return buffer.getvalue()


def default_shared() -> Path:
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if (candidate / "datasets").is_dir():
            return candidate
    return REPO.parent / "shared"


def build(shared: Path, out: Path) -> dict[str, dict]:
    """Write every dataset and datasets.json into ``out``; returns the datasets.json content."""
    out.mkdir(parents=True, exist_ok=True)
    schemas = {}
    for name, decl in DATASETS.items():
        frame = decl.build(shared)
        data = csv_gz_bytes(frame)
        schemas[name] = schema_entry(name, decl, frame, hashlib.sha256(data).hexdigest())
        (out / f"{name}.csv.gz").write_bytes(data)
    text = json.dumps(schemas, indent=1, ensure_ascii=False) + "\n"
    (out / "datasets.json").write_text(text, encoding="utf-8", newline="\n")
    return schemas


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=default_shared(),
                        help="folder holding datasets/ and benchmarks/ (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=REPO / "data", help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    if not (args.shared / "datasets").is_dir():
        print(f"build_datasets: no raw datasets under {args.shared}/datasets", file=sys.stderr)
        return 2
    schemas = build(args.shared, args.out)
    print(f"{'dataset':<11} {'rows':>7} {'columns':>7} {'bytes':>8}  sha256")
    for name, entry in schemas.items():
        size = (args.out / entry["file"]).stat().st_size
        print(f"{name:<11} {entry['rows']:>7} {len(entry['columns']):>7} {size:>8}  {entry['sha256'][:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
