"""``fairaudit.engines.monitor.outofcore.audit_file`` (a CSV / Parquet log read in chunks) gives the in-memory run's verdict, stop
step, intervals and warnings, check for check: in file order, in a shuffle that fits in memory (the same
permutation), with a row filter and a label, with the codes spilled to a file, and on a sorted file whose
order evidence (the halves test) must fire the same way."""
import numpy as np
import pytest

from fairaudit import data
from fairaudit.api import audit
from fairaudit.engines.monitor.outofcore import audit_file
from fairaudit.spec import parse

SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05 and '
        'E[pred | sex == "Female"] > 0.1')
PRED = "priors_count > 2"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    frame = data.load("compas").frame
    frame.to_csv(folder / "log.csv", index=False)
    frame.to_parquet(folder / "log.parquet", index=False)
    frame.sort_values("priors_count", kind="stable").to_csv(folder / "sorted.csv", index=False)
    return folder


def same(a, b):
    assert (a.verdict, a.stop_step, a.verdict_step, a.steps) == (b.verdict, b.stop_step, b.verdict_step, b.steps)
    ta, tb = a.trace_table, b.trace_table
    assert np.array_equal(ta.steps, tb.steps)
    for name in ("estimate", "lo", "hi", "delta", "verdict", "n"):
        assert np.array_equal(getattr(ta, name), getattr(tb, name), equal_nan=True), name
    assert a.warnings == b.warnings
    assert a.sentence == b.sentence and a.assumption == b.assumption


@pytest.mark.parametrize("order", ["given", "shuffle"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("where", [None, "age > 25"])
def test_equals_in_memory(files, order, suffix, where):
    a = audit(str(files / "log.csv"), SPEC, pred=PRED, where=where, order=order, seed=7, trace_points=None)
    b = audit_file(files / f"log{suffix}", SPEC, pred=PRED, where=where, order=order, seed=7, trace_points=None,
                   read_rows=700)
    same(a, b)
    assert b.rows_text == a.rows_text.replace("log", "log")  # "all 6,172 rows of log"
    assert b.info["out_of_core"] is True


def test_codes_spilled_to_a_file_give_the_same_run(files):
    a = audit(str(files / "log.csv"), SPEC, pred=PRED, order="given", trace_points=None)
    b = audit_file(files / "log.parquet", SPEC, pred=PRED, order="given", trace_points=None, read_rows=500,
                   memory_bytes=1000)
    same(a, b)


def test_label_and_default_trace(files):
    spec = 'E[pred | label == 1 and race == "Caucasian"] > 0.1'
    a = audit(data.from_csv(files / "log.csv", label="two_year_recid", favourable=0), spec, pred=PRED,
              order="given")
    b = audit_file(files / "log.csv", spec, pred=PRED, label="two_year_recid", favourable=0, order="given")
    same(a, b)


def test_sorted_file_order_evidence_is_the_same(files):
    """The halves test (file order) runs on the counts the code store gives; a file sorted by the decision's
    column must raise the same warnings as in memory."""
    spec = 'E[pred | race == "African-American"] > 0.3'
    a = audit(str(files / "sorted.csv"), spec, pred=PRED, order="given", trace_points=None)
    b = audit_file(files / "sorted.csv", spec, pred=PRED, order="given", trace_points=None, read_rows=1000)
    assert any("first half" in w for w in a.warnings)
    same(a, b)
    assert a.assumption_broken and b.assumption_broken


def test_memory_does_not_keep_every_check(files):
    """The chunked observations keep a window of checks, not all of them."""
    from fairaudit.engines.monitor.engine import check_points
    from fairaudit.core.counting import encode
    from fairaudit.engines.monitor.stream import CodeStore
    from fairaudit.core.observations import observe
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.spec import parse

    spec = parse(SPEC)
    frame = data.load("compas").frame
    keys = compile_spec(spec).leaf_keys
    store = CodeStore(np.uint8, codes=encode(observe(spec, frame, pred=(frame["priors_count"] > 2).to_numpy()), keys))
    obs = store.observations(keys, rows=300)
    stats = obs.stats(check_points(obs.length, 1))
    widest = 0
    for a in range(0, obs.length, 256):
        for k in keys:
            stats[k].at(slice(a, a + 256))
        widest = max(widest, len(obs.cum[keys[0]][0]))
    assert widest <= 256 + 300 + 1


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_distinct_combinations_give_every_rows_code(files, suffix, monkeypatch):
    """Evaluating the decision, the filter and the leaves once per distinct combination of the columns they read
    (``distinct_rows``) gives every row the code that evaluating every row gives."""
    from fairaudit.engines.monitor import outofcore
    from fairaudit.spec import parse

    spec = parse(SPEC + ' and E[pred | juv_fel_count > 0 and sex != "Male"] > 0.05')
    kw = dict(where='race != "Other"', rows=2000)
    fast, total, _ = outofcore.encode_file(spec, files / f"log{suffix}", PRED, **kw)
    calls = []
    from fairaudit.core import codes

    real = codes.distinct_rows
    monkeypatch.setattr(codes, "distinct_rows", lambda *a, **k: calls.append(real(*a, **k)) or None)
    slow, total2, _ = outofcore.encode_file(spec, files / f"log{suffix}", PRED, **kw)
    assert any(c is not None for c in calls)  # the fast path was taken for some chunk
    assert total == total2 and np.array_equal(fast.load(), slow.load())


@pytest.mark.parametrize("length,batch", [(0, 3), (1, 1), (10, 5), (11, 5), (12, 5), (7, 10), (1000, 7)])
def test_check_points_without_the_array(length, batch):
    from fairaudit.engines.monitor.engine import check_points
    from fairaudit.engines.monitor.stream import CheckPoints

    want, got = check_points(length, batch), CheckPoints(length, batch)
    assert len(got) == len(want)
    assert np.array_equal(got[:], want) and np.array_equal((got + 1)[2:9:3], (want + 1)[2:9:3])
    if len(want):
        assert got[-1] == want[-1] and got[0] == want[0]
        assert np.array_equal(got[np.array([0, len(want) - 1])], want[[0, len(want) - 1]])
    for x in range(-2, length + 3):
        assert got.count_upto(x) == int(np.searchsorted(want, x, side="right"))


def test_messy_text_is_cleaned_as_in_memory(tmp_path):
    """Spaces around text, empty and NA fields (the "?" category) read out of core as ``from_csv`` reads them."""
    rng = np.random.default_rng(3)
    n = 3000
    race = rng.choice(np.array(["A", " A", "B ", "", "C", "NA"], dtype=object), n)
    score = rng.integers(0, 10, n)
    path = tmp_path / "messy.csv"
    with open(path, "w") as f:
        f.write("race,points\n")
        for r, s in zip(race, score):
            f.write(f"{r},{s}\n")
    spec = 'E[pred | race == "A"] - E[pred | race == "?"] < 0.3 and E[pred | race == "B"] > 0.1'
    a = audit(str(path), spec, pred="points > 4", order="given", trace_points=None)
    b = audit_file(path, spec, pred="points > 4", order="given", trace_points=None, read_rows=500)
    same(a, b)
    missing = int(np.isin(race, [""]).sum())  # the "?" rows: empty fields ("NA" is a value, as in memory)
    assert missing in set(b.trace_table.n[-1][np.isfinite(b.trace_table.n[-1])].astype(int))


def test_a_column_typed_differently_later_is_one_line(tmp_path):
    from fairaudit.base.errors import DataError

    path = tmp_path / "typed.csv"
    lines = ["race,points"] + [f"A,{i % 10}" for i in range(1_500_000)] + ["B,high"]  # past the first 4 MB
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"typed\.csv, data row 1,500,001: column 'points' holds 'high', which is not a "
                                        r"whole number .*--column-type points=text"):
        audit_file(path, 'E[pred | race == "A"] > 0.1', pred="points > 4", read_rows=1000)


def test_a_saved_model_scored_chunk_by_chunk_equals_in_memory(files, tmp_path):
    """A model file (not trained on these very rows) scored chunk by chunk gives the in-memory run's checks; the
    spec reads its decision and its score."""
    from fairaudit import models

    model = models.train(data.load("compas"), "logreg", seed=1)
    path = tmp_path / "m.skops"
    model.save(path)
    spec = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05 and '
            'E[score > 0.6 | sex == "Female"] < 0.5')
    a = audit(str(files / "log.csv"), spec, model=str(path), rows="all", order="given", trace_points=None)
    loaded = models.load(path)
    for suffix in (".csv", ".parquet"):
        b = audit_file(files / f"log{suffix}", spec, model=loaded, order="given", trace_points=None, read_rows=900,
                       where=None)
        assert (a.verdict, a.stop_step) == (b.verdict, b.stop_step)
        ta, tb = a.trace_table, b.trace_table
        for name in ("estimate", "lo", "hi", "delta", "verdict", "n"):
            assert np.array_equal(getattr(ta, name), getattr(tb, name), equal_nan=True), name
        assert b.rows_text == a.rows_text.replace("log", "log")


@pytest.mark.parametrize("sep", [",", ";", "\t"])
def test_a_csv_is_read_as_from_csv_reads_it(tmp_path, sep):
    """The delimiter of the header line (from_csv's; out of core read ',' only: 'unknown column', exit 2), pandas'
    missing-value markers "None" and "<NA>" (out of core they were text, not "?") and quoted values holding the
    delimiter and line ends across the reader's blocks (out of core: "CSV parser got out of sync", exit 2)."""
    rng = np.random.default_rng(5)
    n = 20_000
    race = rng.choice(np.array(["A", "B", "None", "<NA>", "C", ""], dtype=object), n)
    note = rng.choice(np.array(['"one, two"', '"multi\nline"', "plain", '"say ""hi"""'], dtype=object), n)
    points = rng.integers(0, 10, n)
    path = tmp_path / "quirks.csv"
    with open(path, "w", newline="") as f:
        f.write(sep.join(["race", "note", "points"]) + "\n")
        for r, t, p in zip(race, note, points):
            f.write(sep.join([r, t.replace(",", sep) if sep != "," else t, str(p)]) + "\n")
    spec = 'E[pred | race == "A"] - E[pred | race == "?"] < 0.3 and E[pred | note == "plain"] > 0.1'
    a = audit(str(path), spec, pred="points > 4", where='note != "one, two"' if sep == "," else None,
              order="given", trace_points=None)
    b = audit_file(path, spec, pred="points > 4", where='note != "one, two"' if sep == "," else None,
                   order="given", trace_points=None, read_rows=500)
    same(a, b)
    kept = note != '"one, two"' if sep == "," else np.ones(n, bool)
    assert b.rows["audited"] == int(kept.sum())
    missing = int((np.isin(race, [""]) & kept).sum())  # the "?" rows: empty fields; "None" and "<NA>" are values
    audited = b.trace_table.n[-1]
    assert missing in set(audited[np.isfinite(audited)].astype(int))


def test_a_column_with_no_value_in_its_first_rows_is_text_on_every_route_unless_declared(tmp_path):
    """A number column empty in the rows that fix the types: text in memory and out of core alike ('rating > 4'
    refused the same way), and a declared type (--column-type rating=float) audits it the same way on both."""
    from fairaudit.engines.monitor.outofcore import log_of
    from fairaudit.sources import TYPE_ROWS

    n = TYPE_ROWS + 20_000
    path = tmp_path / "late.csv"
    with open(path, "w") as f:
        f.write("race,points,rating\n")
        for i in range(n):
            f.write(f"{'AB'[i % 2]},{i % 10},{'' if i < n - 2000 else (i * 7) % 10}\n")
    spec = 'E[pred | race == "A"] > 0.1'
    from fairaudit.base.errors import FairauditError

    with pytest.raises(FairauditError, match="rating"):
        audit(str(path), spec, pred="rating > 4", order="given", trace_points=None)
    with pytest.raises(FairauditError, match="rating"):
        audit_file(path, spec, pred="rating > 4", order="given", trace_points=None)
    # declared a number, the column is read as one on both routes; a decision that a missing rating leaves neither
    # true nor false is an error (fairaudit.spec.events), so the rows without one are decided by 'points < 10'
    declared, pred = {"rating": "float"}, "rating > 4 or points < 10"
    a = audit(data.from_csv(path, column_types=declared), spec, pred=pred, order="given", trace_points=None)
    b = audit_file(log_of(path, declared), spec, pred=pred, order="given", trace_points=None)
    same(a, b)


def test_true_false_with_missing_values_is_text_as_in_memory(tmp_path):
    """True/False with empty fields: pandas reads the column as text ("True", "False", "?"); out of core it was a
    boolean column with nulls, and 'flag == "?"' or 'flag == "True"' were refused."""
    rng = np.random.default_rng(8)
    n = 4000
    path = tmp_path / "flags.csv"
    with open(path, "w") as f:
        f.write("flag,points\n")
        for fl, p in zip(rng.choice(np.array(["True", "False", ""]), n), rng.integers(0, 10, n)):
            f.write(f"{fl},{p}\n")
    spec = 'E[pred | flag == "?"] > 0.2 and E[pred | flag == "True"] > 0.2'
    a = audit(str(path), spec, pred="points > 4", order="given", trace_points=None)
    b = audit_file(path, spec, pred="points > 4", order="given", trace_points=None, read_rows=500)
    same(a, b)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_missing_label_is_refused_as_in_memory(tmp_path, suffix):
    """A row without a label: refused in memory; out of core it was the label "?", counted as unfavourable."""
    from fairaudit.base.errors import DataError

    frame = data.load("compas").frame[["race", "priors_count", "two_year_recid"]].copy()
    frame["outcome"] = frame.pop("two_year_recid").map({0: "no", 1: "yes"}).astype(object)
    frame.loc[[5, 4000], "outcome"] = [None, ""]
    path = tmp_path / f"log{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
    if suffix == ".csv":
        with pytest.raises(DataError, match="label column 'outcome' has 2 missing values"):
            data.from_csv(path, label="outcome", favourable="no")
    with pytest.raises(DataError, match="label column 'outcome' has 2 missing values"):
        audit_file(path, 'E[pred | label == 1] > 0.1', pred=PRED, label="outcome", favourable="no")


def test_a_column_name_twice_is_refused_as_in_memory(tmp_path):
    """Two columns named 'a': refused in memory; out of core one of them was audited."""
    from fairaudit.base.errors import DataError

    path = tmp_path / "twice.csv"
    path.write_text("a,b, a\n1,x,0\n0,y,1\n" * 50)
    with pytest.raises(DataError, match=r"column name 'a' appears twice \(columns 1 and 3\)"):
        data.from_csv(path)
    with pytest.raises(DataError, match=r"column name 'a' appears twice \(columns 1 and 3\)"):
        audit_file(path, 'E[pred | b == "x"] > 0.1', pred="a > 0")
    blank = tmp_path / "blank.csv"  # empty header cells (a delimiter at each line's end) are no name twice
    blank.write_text("a,b,,\n" + "1,x,,\n0,y,,\n" * 50)
    spec = 'E[pred | b == "x"] > 0.1'
    same(audit(str(blank), spec, pred="a > 0", order="given"), audit_file(blank, spec, pred="a > 0", order="given"))


def test_a_column_of_many_values_is_validated_on_its_literals(tmp_path, monkeypatch):
    """A text column with more values than the schema keeps (an id): only the values the audit compares it with
    are kept — one the file holds passes, one it never holds is refused — so memory stays bounded; Fair[...] of it
    is refused by the pass over its values, not flipped between the literals."""
    from fairaudit.sources import values
    from fairaudit.base.errors import FairauditError
    from fairaudit.engines.monitor.outofcore import file_dataset, used_columns, written_values
    from fairaudit.core.preflight import ValidationError, option_source, preflight

    monkeypatch.setattr(values, "VALUES_CAP", 500)
    frame = data.load("compas").frame[["race", "sex", "priors_count"]].copy()
    frame["person"] = [f"p{i}" for i in range(len(frame))]
    path = tmp_path / "ids.csv"
    frame.to_csv(path, index=False)
    where = 'person != "p17"'
    a = audit(str(path), SPEC, pred=PRED, where=where, order="given", trace_points=None)
    b = audit_file(path, SPEC, pred=PRED, where=where, order="given", trace_points=None, read_rows=700)
    same(a, b)
    dataset = file_dataset(path, used_columns(parse(SPEC), PRED, where, list(frame.columns)),
                           literals=written_values(parse(SPEC), PRED, where))
    kept = dataset.schema.column("person").values
    assert dataset.wide == {"person"} and "p17" in kept and len(kept) == 1 + values.EXAMPLES
    typo = 'person != "q17"'
    dataset = file_dataset(path, used_columns(parse(SPEC), PRED, typo, list(frame.columns)),
                           literals=written_values(parse(SPEC), PRED, typo))
    with pytest.raises(ValidationError, match='never takes the value "q17"'):
        preflight(dataset, parse(SPEC), where=option_source(typo, "--where"))
    with pytest.raises(FairauditError, match="more than 20 values"):
        audit_file(path, 'Fair[person] > 0.9', model=_Flat(), where=where)


class _Flat:
    """A model that decides 1 for every row (enough to reach the Fair[...] domains)."""

    kind = "flat"
    feature_names = ["person"]
    warnings = ()

    def predict(self, frame):
        return np.ones(len(frame), dtype=np.int8)

    def describe(self):
        return "flat"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_an_infinite_number_is_refused_as_in_memory(tmp_path, suffix):
    """Review finding: an ``inf`` in a numeric column was audited out of core, while ``from_csv`` refuses it."""
    import pandas as pd

    from fairaudit.base.errors import DataError

    x = np.arange(30000.0)  # several read blocks: the row is counted across them
    x[25000] = -np.inf
    frame = pd.DataFrame({"x": x, "g": ["a", "b"] * 15000})
    path = tmp_path / f"log{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    with pytest.raises(DataError, match=r"data row 25,001: column 'x' holds an infinite value \(-inf\); "):
        audit_file(path, 'E[pred | g == "a"] > 0.1', pred="x > 3", read_rows=1000)
    if suffix == ".csv":
        with pytest.raises(DataError, match=r"data row 25,001: column 'x' holds an infinite value \(-inf\); "):
            data.from_csv(path)


def test_a_parquet_part_storing_numbers_as_text_is_refused_unless_declared(tmp_path):
    """A folder of Parquet parts whose second part stores the int64 column ``decision`` as the strings "1"/"0": a
    typed store's text is not parsed as a CSV's is (it was audited as numbers); a declared type converts it."""
    import pandas as pd

    from fairaudit.base.errors import DataError
    from fairaudit.engines.monitor.outofcore import log_of

    folder = tmp_path / "parts"
    folder.mkdir()
    pd.DataFrame({"g": ["a", "b"] * 50, "decision": [1, 0] * 50}).to_parquet(folder / "part-0.parquet")
    pd.DataFrame({"g": ["a", "b"] * 50, "decision": ["1", "0"] * 50}).to_parquet(folder / "part-1.parquet")
    spec = 'E[pred | g == "a"] > 0.1'
    with pytest.raises(DataError, match=r"part-1\.parquet: column 'decision' is stored as \w*string \('1' in data row "
                                        r"1\), not as a whole number as its type, fixed by the column types stored in "
                                        r".*part-0"):
        audit_file(folder, spec, pred="decision == 1")
    result = audit_file(log_of(folder, {"decision": "integer"}), spec, pred="decision == 1")
    assert result.rows["audited"] == 200
