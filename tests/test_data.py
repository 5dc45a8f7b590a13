"""fairaudit.data: the bundled datasets, their schemas, from_csv validation and resolve().

The tests read only the bundled files in data/. The raw lines quoted below were copied from the raw files
(../shared/datasets); test_build_reproduces_bundled_files rebuilds from them when they are present.
"""
from __future__ import annotations

import gzip
import importlib.util
import io
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairaudit.data as fd
from fairaudit.data import DataError

REPO = Path(__file__).resolve().parents[1]

ROWS = {"adult": 32_561, "adult_test": 16_281, "compas": 6_172, "german": 1_000, "ricci": 118, "bank": 4_119}

COLUMNS = {
    "adult": ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
              "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
              "income"],
    "compas": ["sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
               "priors_count", "days_b_screening_arrest", "c_charge_degree", "c_charge_desc", "length_of_stay",
               "decile_score", "score_text", "v_decile_score", "v_score_text", "is_recid", "is_violent_recid",
               "two_year_recid"],
    "german": ["checking_account", "duration_months", "credit_history", "purpose", "credit_amount", "savings",
               "present_employment", "installment_rate", "sex", "personal_status", "other_debtors",
               "residence_since", "property", "age", "installment_plans", "housing", "existing_credits", "job",
               "people_liable", "telephone", "foreign_worker", "credit"],
    "ricci": ["position", "oral", "written", "race", "combine", "promoted"],
    "bank": ["age", "job", "marital", "education", "default", "housing", "loan", "contact", "month", "day_of_week",
             "duration", "campaign", "pdays", "previous", "poutcome", "emp_var_rate", "cons_price_idx",
             "cons_conf_idx", "euribor3m", "nr_employed", "y"],
}
COLUMNS["adult_test"] = COLUMNS["adult"]

ROLES = {  # label, favourable, protected, excluded
    "adult": ("income", ">50K", ("sex", "race"), ()),
    "adult_test": ("income", ">50K", ("sex", "race"), ()),
    "compas": ("two_year_recid", 0, ("race", "sex"),
               ("decile_score", "score_text", "v_decile_score", "v_score_text", "is_recid", "is_violent_recid")),
    "german": ("credit", "good", ("sex", "age"), ()),
    "ricci": ("promoted", 1, ("race",), ("combine",)),
    "bank": ("y", "yes", ("age", "marital"), ("duration",)),
}

# raw lines, copied from the raw files
ADULT_DATA_HEAD = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, "
    "United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, "
    "13, United-States, <=50K",
    "38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, Not-in-family, White, Male, 0, 0, 40, "
    "United-States, <=50K",
]
ADULT_DATA_LAST = ("52, Self-emp-inc, 287927, HS-grad, 9, Married-civ-spouse, Exec-managerial, Wife, White, Female, "
                   "15024, 0, 40, United-States, >50K")
ADULT_TEST_HEAD = [  # after the comment line "|1x3 Cross validator"
    "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, "
    "United-States, <=50K.",
    "38, Private, 89814, HS-grad, 9, Married-civ-spouse, Farming-fishing, Husband, White, Male, 0, 0, 50, "
    "United-States, <=50K.",
]
GERMAN_HEAD = [
    "A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1",
    "A12 48 A32 A43 5951 A61 A73 2 A92 A101 2 A121 22 A143 A152 1 A173 1 A191 A201 2",
]
RICCI_HEAD = ["Captain,89.52,95,W,92.808", "Captain,80,95,W,89"]
RICCI_LAST = "Lieutenant,45.83,46,B,45.932"
BANK_HEAD = ('30;"blue-collar";"married";"basic.9y";"no";"yes";"no";"cellular";"may";"fri";487;2;999;0;'
             '"nonexistent";-1.8;92.893;-46.2;1.313;5099.1;"no"')
BANK_LAST = ('34;"management";"single";"high.school";"no";"yes";"no";"cellular";"nov";"wed";175;1;999;0;'
             '"nonexistent";-0.1;93.2;-42;4.12;5195.8;"no"')


def _adult_row(line: str) -> list:
    fields = [f.strip() for f in line.split(",")]
    fields[-1] = fields[-1].rstrip(".")
    return [int(f) if f.isdigit() else f for f in fields]


def _row(frame: pd.DataFrame, i: int) -> list:
    return [v.item() if hasattr(v, "item") else v for v in frame.iloc[i].tolist()]


# ----------------------------------------------------------------------------------------------- catalogue


def test_names_and_info():
    assert fd.names() == list(ROWS)
    infos = {i.name: i for i in fd.info()}
    for name, rows in ROWS.items():
        label, favourable, protected, _ = ROLES[name]
        item = infos[name]
        assert (item.rows, item.label, item.favourable, item.protected) == (rows, label, favourable, protected)
        assert item.description and "\n" not in item.description
        assert item.licence


@pytest.mark.parametrize("name", list(ROWS))
def test_rows_columns_and_schema(name):
    ds = fd.load(name)
    label, favourable, protected, excluded = ROLES[name]
    assert len(ds) == ROWS[name]
    assert list(ds.frame.columns) == COLUMNS[name]
    assert ds.schema.names == COLUMNS[name]
    assert (ds.schema.label, ds.schema.favourable, ds.schema.protected, ds.schema.excluded) == (
        label, favourable, protected, excluded)
    assert ds.source == "built-in" and ds.description
    assert not ds.frame.isna().any().any(), "bundled files have no missing values"
    for col in ds.schema.columns:
        series = ds.frame[col.name]
        if col.kind == "categorical":
            assert col.values == tuple(sorted(series.unique().tolist())), col.name
        else:
            assert pd.api.types.is_numeric_dtype(series) and col.values == (), col.name
        if pd.api.types.is_string_dtype(series):
            assert col.kind == "categorical"
            assert (series == series.str.strip()).all(), f"{col.name} has unstripped values"
    assert ds.schema.column(label).kind == "categorical" and len(ds.schema.column(label).values) == 2
    assert favourable in ds.schema.column(label).values
    assert ds.schema.feature_names == [c for c in COLUMNS[name] if c != label and c not in excluded]
    assert list(ds.features.columns) == ds.schema.feature_names
    np.testing.assert_array_equal(ds.labels, (ds.frame[label] == favourable).to_numpy().astype(np.int8))


def test_load_returns_independent_copies():
    first = fd.load("adult")
    first.frame.loc[0, "age"] = -1
    del first.frame["income"]
    again = fd.load("adult")
    assert again.frame.loc[0, "age"] == 39 and "income" in again.frame.columns
    assert again.schema == fd.schema("adult")


def test_unknown_dataset_suggests():
    with pytest.raises(DataError, match=r"unknown dataset 'adlt'; did you mean 'adult'"):
        fd.load("adlt")


@pytest.mark.parametrize("name", list(ROWS))
def test_bundled_files_are_deterministic_gzip(name):
    raw = (fd.DATA_DIR / f"{name}.csv.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert raw[4:8] == b"\x00\x00\x00\x00", "gzip mtime must be 0"
    assert raw[3] & 0x08 == 0, "no file name in the gzip header"
    text = gzip.decompress(raw).decode("utf-8")
    assert "\r" not in text and text.splitlines()[0] == ",".join(COLUMNS[name])


def test_provenance_names_every_file():
    text = (fd.DATA_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    for name in ROWS:
        assert f"`{name}.csv.gz`" in text


# ----------------------------------------------------------------------------------------------- contents


def test_adult_rows_match_raw_file():
    frame = fd.load("adult").frame
    for i, line in enumerate(ADULT_DATA_HEAD):
        assert _row(frame, i) == _adult_row(line)
    assert _row(frame, len(frame) - 1) == _adult_row(ADULT_DATA_LAST)
    assert set(frame["income"]) == {"<=50K", ">50K"}
    assert int((frame["income"] == ">50K").sum()) == 7_841
    # unknown values are kept as the category "?"
    assert {"workclass", "occupation", "native_country"} <= {c for c in frame.columns if (frame[c] == "?").any()}


def test_adult_test_labels_have_no_trailing_dot():
    frame = fd.load("adult_test").frame
    for i, line in enumerate(ADULT_TEST_HEAD):
        assert _row(frame, i) == _adult_row(line)
    assert set(frame["income"]) == {"<=50K", ">50K"}
    assert not frame["income"].str.endswith(".").any()


def test_compas_filter_and_columns():
    ds = fd.load("compas")
    frame = ds.frame
    assert len(frame) == 6_172
    assert frame["days_b_screening_arrest"].between(-30, 30).all()
    assert set(frame["is_recid"]) == {0, 1}
    assert set(frame["c_charge_degree"]) == {"F", "M"}
    assert set(frame["score_text"]) == {"Low", "Medium", "High"}
    assert int(frame["two_year_recid"].sum()) == 2_809  # ProPublica: 45.5% re-arrested
    # the first rows kept are raw ids 1, 3 and 4 (id 2 is not in the file)
    assert frame.loc[0, ["sex", "age", "race", "decile_score", "priors_count", "c_charge_desc"]].tolist() == [
        "Male", 69, "Other", 1, 0, "Aggravated Assault w/Firearm"]
    assert frame.loc[2, ["age", "race", "decile_score", "priors_count", "juv_other_count", "c_charge_desc",
                         "two_year_recid"]].tolist() == [24, "African-American", 4, 4, 1, "Possession of Cocaine", 1]
    assert frame["length_of_stay"].min() >= 0
    # favourable is 0: no recidivism
    assert ds.schema.favourable == 0
    assert ds.labels.sum() == 6_172 - 2_809


def test_german_decoding():
    frame = fd.load("german").frame
    first = frame.iloc[0]  # A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1
    assert first["checking_account"] == "x < 0 DM"
    assert first["credit_history"] == "critical account/ other credits existing (not at this bank)"
    assert first["purpose"] == "radio/television"
    assert first["savings"] == "unknown/ no savings account"
    assert first["present_employment"] == "x >= 7 years"
    assert (first["sex"], first["personal_status"]) == ("Male", "single")
    assert (first["duration_months"], first["credit_amount"], first["age"]) == (6, 1169, 67)
    assert (first["telephone"], first["foreign_worker"], first["credit"]) == ("yes", "yes", "good")
    second = frame.iloc[1]  # A12 48 ... A92 ... A191 A201 2
    assert second["checking_account"] == "0 <= x < 200 DM"
    assert (second["sex"], second["personal_status"]) == ("Female", "divorced/separated/married")
    assert (second["telephone"], second["credit"]) == ("no", "bad")
    assert frame["sex"].value_counts().to_dict() == {"Male": 690, "Female": 310}
    assert frame["credit"].value_counts().to_dict() == {"good": 700, "bad": 300}
    assert not frame.map(lambda v: isinstance(v, str) and v[:1] == "A" and v[1:].isdigit()).any().any(), \
        "no undecoded A-codes left"


def test_ricci_label():
    frame = fd.load("ricci").frame
    assert _row(frame, 0) == ["Captain", 89.52, 95, "White", 92.808, 1]
    assert _row(frame, 1) == ["Captain", 80.0, 95, "White", 89.0, 1]
    assert _row(frame, 117) == ["Lieutenant", 45.83, 46, "Black", 45.932, 0]
    assert (frame["promoted"] == (frame["combine"] >= 70)).all()
    assert frame["race"].value_counts().to_dict() == {"White": 68, "Black": 27, "Hispanic": 23}
    assert int(frame["promoted"].sum()) == 56


def _bank_row(line: str) -> list:
    return [f.strip('"') if f.startswith('"') else (float(f) if "." in f or f.startswith("-") else int(f))
            for f in line.split(";")]


def test_bank_rows_match_raw_file():
    frame = fd.load("bank").frame
    for i, line in ((0, BANK_HEAD), (len(frame) - 1, BANK_LAST)):
        assert all(a == b or (isinstance(a, float) and math.isclose(a, b))
                   for a, b in zip(_row(frame, i), _bank_row(line), strict=True))
    assert frame["y"].value_counts().to_dict() == {"no": 3_668, "yes": 451}


# ----------------------------------------------------------------------------------------------- resolve


def test_resolve_builtin_and_overrides():
    assert fd.resolve("adult").schema == fd.schema("adult")
    assert fd.resolve("compas", protected=["race"]).schema.protected == ("race",)
    assert fd.resolve("compas", protected=[]).schema.protected == ()
    other = fd.resolve("compas", label="is_recid")
    assert (other.schema.label, other.schema.favourable) == ("is_recid", 1)  # 0/1 -> 1 is the obvious reading
    assert "two_year_recid" in other.schema.excluded and "two_year_recid" not in other.schema.feature_names
    assert other.schema.column("is_recid").kind == "categorical"
    flipped = fd.resolve("compas", favourable="1")
    assert flipped.schema.favourable == 1 and flipped.labels.sum() == 2_809
    by_sex = fd.resolve("adult", label="sex", favourable="Female")
    assert by_sex.schema.protected == ("race",)  # sex left the default protected set


@pytest.mark.parametrize("kwargs, message", [
    ({"protected": ["gender"]}, r"unknown protected column 'gender'"),
    ({"protected": ["sexx"]}, r"did you mean 'sex'"),
    ({"label": "incom"}, r"unknown label column 'incom'; did you mean 'income'"),
    ({"label": "sex"}, r"cannot tell which value of label column 'sex' is favourable.*--favourable"),
    ({"label": "race"}, r"label column 'race' has 5 values .*binary"),
    ({"favourable": "yes"}, r"favourable value 'yes' is not a value of label column 'income'"),
    ({"label": "sex", "favourable": "Male", "protected": ["sex"]}, r"both the label and a protected"),
])
def test_resolve_builtin_errors(kwargs, message):
    with pytest.raises(DataError, match=message) as err:
        fd.resolve("adult", **kwargs)
    assert "\n" not in str(err.value)


def test_resolve_unknown_name_and_csv_path(tmp_path):
    with pytest.raises(DataError, match=r"no built-in dataset or file named 'compass'; did you mean 'compas'"):
        fd.resolve("compass")
    path = tmp_path / "d.csv"
    path.write_text("x,y\n1,0\n2,1\n")
    ds = fd.resolve(str(path), label="y")
    assert (ds.name, ds.schema.label, ds.schema.favourable, ds.source) == ("d", "y", 1, str(path))


# ----------------------------------------------------------------------------------------------- from_csv


def _write(tmp_path, text: str | bytes, name: str = "data.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


GOOD = ("age, group ,score,approved,city\n"
        "31, a , 0.5,yes, Paris\n"
        "45,b,,no,\n"
        "27,a,1.5,yes,NA\n")


def test_from_csv_types_strips_and_fills(tmp_path):
    ds = fd.from_csv(_write(tmp_path, GOOD), label="approved", protected="group")
    schema = ds.schema
    assert schema.names == ["age", "group", "score", "approved", "city"]  # names kept, whitespace stripped
    assert [c.kind for c in schema.columns] == ["numeric", "categorical", "numeric", "categorical", "categorical"]
    assert schema.column("group").values == ("a", "b")
    assert schema.column("city").values == ("?", "NA", "Paris")  # empty text -> "?"; "NA" is a value
    assert ds.frame["city"].tolist() == ["Paris", "?", "NA"]
    assert math.isnan(ds.frame.loc[1, "score"])  # missing numbers stay NaN
    assert (schema.label, schema.favourable, schema.protected) == ("approved", "yes", ("group",))
    assert ds.labels.tolist() == [1, 0, 1]
    assert ds.name == "data" and ds.source.endswith("data.csv")


@pytest.mark.parametrize("values, favourable", [
    (("1", "0"), 1), (("True", "False"), True), (("Yes", "No"), "Yes"), (("y", "n"), "y"), (("1.0", "0.0"), 1.0),
])
def test_from_csv_obvious_favourable(tmp_path, values, favourable):
    text = "x,out\n" + "".join(f"{i},{v}\n" for i, v in enumerate(values * 2))
    ds = fd.from_csv(_write(tmp_path, text), label="out")
    assert ds.schema.favourable == favourable and type(ds.schema.favourable) is type(favourable)
    assert ds.labels.tolist() == [1, 0, 1, 0]


def test_from_csv_favourable_given_as_text(tmp_path):
    path = _write(tmp_path, "x,income\n1,<=50K\n2,>50K\n")
    with pytest.raises(DataError, match=r"cannot tell which value of label column 'income' is favourable"):
        fd.from_csv(path, label="income")
    assert fd.from_csv(path, label="income", favourable=">50K").labels.tolist() == [0, 1]
    numeric = _write(tmp_path, "x,y\n1,0\n2,1\n", "n.csv")
    assert fd.from_csv(numeric, label="y", favourable="0").schema.favourable == 0


def test_from_csv_without_label_and_other_delimiters(tmp_path):
    ds = fd.from_csv(_write(tmp_path, "a;b;c\n1;x;2.5\n2;y;3\n"))
    assert ds.schema.names == ["a", "b", "c"] and ds.schema.label is None and ds.labels is None
    assert ds.schema.protected == () and ds.schema.feature_names == ["a", "b", "c"]
    tabbed = fd.from_csv(_write(tmp_path, "a\tb\n1\tx\n", "t.tsv"))
    assert tabbed.schema.names == ["a", "b"]
    single = fd.from_csv(_write(tmp_path, "only\n1\n2\n\n", "one.csv"))
    assert single.frame["only"].tolist() == [1, 2]


def test_from_csv_gzip_file_object_and_bytes(tmp_path):
    payload = gzip.compress(b"a,b\n1,yes\n2,no\n")
    gz = fd.from_csv(_write(tmp_path, payload, "upload.csv.gz"), label="b")
    assert gz.name == "upload" and gz.labels.tolist() == [1, 0]
    upload = io.BytesIO(b"a,b\n1,yes\n2,no\n")
    upload.name = "browser.csv"
    ds = fd.from_csv(upload, label="b", name="mine")
    assert ds.name == "mine" and ds.source == "browser.csv" and len(ds) == 2
    assert upload.tell() == 0, "the upload stays readable"
    assert len(fd.from_csv(io.StringIO("a,b\n1,2\n"))) == 1
    assert len(fd.from_csv(b"\xef\xbb\xbfa,b\n1,2\n").frame.columns) == 2  # UTF-8 byte-order mark
    raw = fd.from_csv(b"a,b\n1,yes\n2,no\n", label="b", name="drop.csv")
    assert (raw.name, raw.source) == ("drop", "drop.csv")
    with pytest.raises(DataError, match=r"^drop\.csv is empty"):
        fd.from_csv(b"", name="drop.csv")


def test_from_csv_keeps_odd_column_names(tmp_path):
    ds = fd.from_csv(_write(tmp_path, "Age (years),is-member,Ünïcode\n30,1,x\n40,0,y\n"), label="is-member")
    assert ds.schema.names == ["Age (years)", "is-member", "Ünïcode"]
    assert ds.schema.favourable == 1


BAD_CSV = [
    ("empty", b"", r"is empty"),
    ("blank lines", b"\n \n\n", r"is empty"),
    ("header only", b"a,b,label\n", r"has a header \(a, b, label\) but no data rows"),
    ("duplicate columns", b"a,b,a\n1,2,3\n", r"column name 'a' appears twice \(columns 1 and 3\)"),
    ("ragged row", b"a,b\n1,2\n3,4,5\n", r"data row 2: 3 fields but the header has 2"),
    ("short row", b"a,b\n1,2\n3\n", r"data row 2: 1 field but the header has 2"),
    ("unterminated quote", b'a,b\n1,"x\n', r"cannot parse .*quoted value opened in data row 1 is never closed"),
    ("binary garbage", bytes(range(256)) * 8, r"its header \(line 1\) holds a NUL byte: it is not CSV text"),
    ("not utf-8", "a,b\n1,caf\xe9\n".encode("latin-1"), r"data row 1: column 'b' is not UTF-8 text \(byte 0xe9\)"),
    ("not utf-8 header", "caf\xe9,b\n1,2\n".encode("latin-1"), r"its header \(line 1\) is not UTF-8 text \(byte 0xe9"),
    ("nul in a cell", b"a,b\n1,2\n3,x\x00y\n", r"data row 2: column 'b' holds a NUL byte"),
    ("excel", b"PK\x03\x04rest-of-a-zip", r"zip archive or Excel workbook"),
    ("broken gzip", b"\x1f\x8b\x08\x00garbage", r"not a valid gzip file"),
]


@pytest.mark.parametrize("text, message", [(t, m) for _, t, m in BAD_CSV], ids=[i for i, _, _ in BAD_CSV])
def test_from_csv_rejects_bad_files(tmp_path, text, message):
    with pytest.raises(DataError, match=message) as err:
        fd.from_csv(_write(tmp_path, text))
    assert "\n" not in str(err.value)


BAD_ROLES = [
    ("non-binary label", {"label": "grade"}, r"label column 'grade' has 5 values \('A', 'B', 'C', 'D', 'E'\); "
                                             r"a label must be binary"),
    ("one-valued label", {"label": "const"}, r"label column 'const' has 1 value .*binary"),
    ("label with gaps", {"label": "gappy"}, r"label column 'gappy' has 1 missing value"),
    ("unknown label", {"label": "grad"}, r"unknown label column 'grad'; did you mean 'grade'\?"),
    ("unknown protected", {"protected": ["gender", "x"]}, r"unknown protected column 'gender'; did you mean 'Gender'"),
    ("no suggestion", {"protected": ["zzz"]}, r"unknown protected column 'zzz' \(columns: Gender, grade, const, "
                                              r"gappy, x\)"),
    ("favourable without label", {"favourable": "A"}, r"favourable value needs a label column"),
    ("favourable not a value", {"label": "Gender", "favourable": "X"}, r"favourable value 'X' is not a value"),
]


@pytest.mark.parametrize("kwargs, message", [(k, m) for _, k, m in BAD_ROLES], ids=[i for i, _, _ in BAD_ROLES])
def test_from_csv_rejects_bad_roles(tmp_path, kwargs, message):
    text = "Gender,grade,const,gappy,x\nF,A,1,yes,1\nM,B,1,no,2\nF,C,1,,3\nM,D,1,yes,4\nF,E,1,no,5\n"
    with pytest.raises(DataError, match=message) as err:
        fd.from_csv(_write(tmp_path, text), **kwargs)
    assert "\n" not in str(err.value)


def test_from_csv_missing_file_and_directory(tmp_path):
    with pytest.raises(DataError, match=r"file not found: .*nope\.csv"):
        fd.from_csv(tmp_path / "nope.csv")
    with pytest.raises(DataError, match=r"is a directory"):
        fd.from_csv(tmp_path)


# ----------------------------------------------------------------------------------------------- build script


def _shared_dir() -> Path | None:
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if (candidate / "datasets" / "adult" / "adult.data").is_file():
            return candidate
    return None


@pytest.mark.skipif(_shared_dir() is None, reason="the raw datasets (../shared) are not beside the repository")
def test_build_reproduces_bundled_files(tmp_path):
    """tools/build_datasets.py is deterministic and the committed files are what it builds."""
    spec = importlib.util.spec_from_file_location("build_datasets", REPO / "tools" / "build_datasets.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
        module.build(_shared_dir(), tmp_path)
    finally:
        del sys.modules[spec.name]
    built = sorted(p.name for p in tmp_path.iterdir())
    assert built == sorted([f"{n}.csv.gz" for n in ROWS] + ["datasets.json"])
    for name in built:
        assert (tmp_path / name).read_bytes() == (fd.DATA_DIR / name).read_bytes(), name
