"""The Dask route (``fairaudit.engines.monitor.distributed``) against its oracles, the in-process monitor and the out-of-core
route on the same rows.

A two-worker ``LocalCluster`` audits a log split into 12 Parquet files (uneven sizes, one with several row groups,
names whose natural order differs from their lexicographic one); ``fairaudit.audit`` audits the same rows
concatenated into one CSV. Every column of every check of the trace, the verdict, the stop step and the warnings
must be identical — in given order (counts at the checks, combined by prefix sums) and shuffled (codes permuted on
the client), with a decision expression and a conditional leaf, with a row filter, with a model, and on a sorted
log whose halves test fires. The same folder of Parquet parts, and a folder of CSV parts, give the out-of-core
route's result (``fairaudit.engines.monitor.outofcore.audit_file`` on the folder), and a part that does not fit the log's schema
(a renamed column, a column stored with another type, ``yes`` in a column of whole numbers, an infinite number) is
refused with the out-of-core route's very message: both read the parts through ``fairaudit.sources``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit.engines.monitor import distributed
from fairaudit.engines.monitor.distributed import audit_parquet, dask_client
from fairaudit.sources.remote import log_parts
from fairaudit.core.observations import Observations
from fairaudit.base.errors import FairauditError
from tests.engines.parquet_logs import frame, write_log

pytestmark = pytest.mark.timeout(120)

SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05 '
        'and E[pred | sex == "Female"] > 0.2')
PRED = "decile_score <= 4"
@pytest.fixture(scope="module")
def client():
    with dask_client(workers=2, threads=1, timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dask") / "log"
    write_log(frame(), folder)
    return folder


def assert_same(a, b) -> None:
    """The in-process result ``a`` and the Dask result ``b``: every trace column at every check, and the outcome."""
    assert len(a.trace) == len(b.trace) > 0
    for column in a.trace.columns:
        pd.testing.assert_series_equal(a.trace[column], b.trace[column], check_exact=True)
    assert (a.verdict, a.stop_step, a.steps, a.verdict_step) == (b.verdict, b.stop_step, b.steps, b.verdict_step)
    assert a.warnings == b.warnings
    assert a.assumption_broken == b.assumption_broken
    assert a.sentence == b.sentence
    assert a.assumption == b.assumption


def in_process(path, **kw):
    return fairaudit.audit(str(path), SPEC if "spec" not in kw else kw.pop("spec"), rows="all", trace_points=None,
                           **kw)


@pytest.mark.parametrize("order", ["given", "shuffle"])
def test_same_as_in_process(client, log, order):
    a = in_process(log.parent / "log.csv", pred=PRED, order=order, seed=4)
    b = audit_parquet(log, SPEC, pred=PRED, order=order, seed=4, client=client, trace_points=None)
    assert a.stop_step is not None and a.stop_step < a.steps  # decided, and the run went on past the decision
    assert_same(a, b)
    assert "12 partitions" in b.rows_text


@pytest.mark.parametrize("order", ["given", "shuffle"])
def test_thinned_checks_same_as_in_process(client, log, order):
    """Past ``thin_after`` (batch 1: the gaps grow past 1 row after 10,000 rows) the Dask partitions report the
    counts at the thinned checks: the in-process trace, check for check."""
    kw = dict(pred=PRED, order=order, seed=4, batch=1, thin_after=2000)
    a = in_process(log.parent / "log.csv", **kw)
    b = audit_parquet(log, SPEC, client=client, trace_points=None, **kw)
    assert len(np.unique(a.trace_table.steps)) < 0.9 * a.steps  # it did thin
    assert_same(a, b)


def test_many_partitions_a_window_of_checks(client, tmp_path, monkeypatch):
    """60 partitions, a check at every row (120,000 checks): the in-process result row for row, while the client
    never holds more than two monitor batches of checks plus one partition's — not the stream's."""
    from fairaudit.engines.monitor.engine import CHUNK_LIMIT

    made = []

    class Recorded(distributed.ChunkedObservations):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            made.append(self)

    monkeypatch.setattr(distributed, "ChunkedObservations", Recorded)
    df = frame(120_000, seed=8)
    write_log(df, tmp_path / "many", parts=60)
    a = in_process(tmp_path / "many.csv", pred=PRED, order="given", batch=1)
    b = audit_parquet(tmp_path / "many", SPEC, pred=PRED, order="given", batch=1, client=client, trace_points=None)
    assert_same(a, b)
    assert "60 partitions" in b.rows_text
    (counted,) = made
    assert counted.counts.rows == len(df)
    biggest = int(max(pd.read_parquet(f).shape[0] for f in log_parts(tmp_path / "many")))
    assert counted.held <= 2 * CHUNK_LIMIT + biggest + 1 < len(df) // 3


def test_a_different_seed_is_a_different_stream(client, log):
    """Negative control: the comparison above does see a change of the shuffled order."""
    a = in_process(log.parent / "log.csv", pred=PRED, order="shuffle", seed=4)
    b = audit_parquet(log, SPEC, pred=PRED, order="shuffle", seed=5, client=client, trace_points=None)
    with pytest.raises(AssertionError):
        assert_same(a, b)


@pytest.mark.parametrize("order", ["given", "shuffle"])
def test_row_filter_and_stop_at_the_decision(client, log, order):
    where = "age >= 30"
    a = in_process(log.parent / "log.csv", pred=PRED, where=where, order=order, seed=1, stop=True, batch=7)
    b = audit_parquet(log, SPEC, pred=PRED, where=where, order=order, seed=1, stop=True, batch=7, client=client,
                      trace_points=None)
    assert a.steps < (frame().age >= 30).sum()  # stopped at the decision
    assert_same(a, b)


def test_sorted_log_warns_the_same(client, tmp_path):
    """A log sorted by race: the halves test (from counts on Dask) and the driver's checks give the same warnings."""
    df = frame(9_000).sort_values("race", kind="stable").reset_index(drop=True)
    write_log(df, tmp_path / "sorted", parts=5)
    spec = 'E[pred] > 0.3 and E[pred | sex == "Female"] > 0.2'
    a = in_process(tmp_path / "sorted.csv", spec=spec, pred="decile_score <= 4 and race != \"African-American\"",
                   order="given")
    b = audit_parquet(tmp_path / "sorted", spec, pred='decile_score <= 4 and race != "African-American"',
                      order="given", client=client, trace_points=None)
    assert any("first half" in w for w in a.warnings)
    assert_same(a, b)


def test_a_model_shipped_to_the_workers(client, log):
    from fairaudit.data import resolve
    from fairaudit.models import train

    dataset = resolve(str(log.parent / "log.csv"), label="two_year_recid")
    model = train(dataset, "logreg", seed=0)
    spec = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05 '
            'and E[score > 0.5 | sex == "Male"] > 0.1 and E[label | pred] > 0.2')
    for order in ("given", "shuffle"):
        a = fairaudit.audit(dataset, spec, model=model, rows="all", order=order, trace_points=None)
        b = audit_parquet(log, spec, model=model, label="two_year_recid", favourable="1", order=order,
                          client=client, trace_points=None)
        assert_same(a, b)
    # Fair[...]: the flip test over the column's values in the whole log, and its counterexamples (the first 100 in
    # stream order with their features, decisions, scores and row numbers in the log), with and without a filter
    spec = 'Fair[sex] > 0.5 and E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05'
    for order, where in (("given", "age >= 30"), ("shuffle", None), ("shuffle", "age >= 30")):
        a = fairaudit.audit(dataset, spec, model=model, rows="all", order=order, where=where, trace_points=None)
        b = audit_parquet(log, spec, model=model, order=order, where=where, client=client, trace_points=None)
        assert_same(a, b)
        (found,) = b.counterexamples.leaves
        assert found.total > 100 and len(found.examples) == 100
        assert a.counterexamples == b.counterexamples
    # Fair[...] of a numeric column: flipped between its distinct values in the whole log, sorted (decile_score 1-10)
    spec = 'Fair[decile_score] > 0.5 and E[pred | sex == "Female"] > 0.1'
    for order, where in (("given", None), ("shuffle", "age >= 30")):
        a = fairaudit.audit(dataset, spec, model=model, rows="all", order=order, where=where, trace_points=None)
        b = audit_parquet(log, spec, model=model, order=order, where=where, client=client, trace_points=None)
        assert_same(a, b)
        (found,) = b.counterexamples.leaves
        assert found.values == tuple(range(1, 11)) and found.total > 100
        assert a.counterexamples == b.counterexamples


def test_a_numeric_fair_column_with_too_many_values(client, log):
    """Fair[age] (52 distinct ages): one line, before the workers evaluate anything, as in process."""
    with pytest.raises(FairauditError, match=r"Fair\[age\]: column 'age' has more than 20 values in the log"):
        audit_parquet(log, "Fair[age] > 0.9", model=_Model(), client=client)


def test_a_shuffle_beyond_memory_is_the_out_of_core_routes(client, log, monkeypatch, tmp_path):
    """Codes too big to shuffle in memory (the limit lowered to 4 kB): a bucket shuffle through a temporary file,
    the out-of-core route's with the same limit and seed (row for row), not the in-process permutation; the
    temporary folder is gone after the run; with Fair[...] the row ids are shuffled with the codes, so the
    counterexamples are the out-of-core route's too."""
    import tempfile

    from fairaudit.engines.monitor import stream
    from fairaudit.engines.monitor.outofcore import audit_file

    monkeypatch.setattr(stream, "MEMORY_SHUFFLE_BYTES", 4096)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    a = audit_file(log.parent / "log.csv", SPEC, pred=PRED, order="shuffle", seed=3, memory_bytes=4096,
                   trace_points=None)
    b = audit_parquet(log, SPEC, pred=PRED, order="shuffle", seed=3, client=client, trace_points=None)
    assert_same(a, b)
    with pytest.raises(AssertionError):
        assert_same(in_process(log.parent / "log.csv", pred=PRED, order="shuffle", seed=3), b)
    assert not list(tmp_path.glob("fairaudit-dask-*"))
    model = _trained(log)
    fair = "Fair[sex] > 0.5 and Fair[race] > 0.5"
    a = audit_file(log.parent / "log.csv", fair, model=model, order="shuffle", seed=3, memory_bytes=4096,
                   trace_points=None)
    b = audit_parquet(log, fair, model=model, order="shuffle", seed=3, client=client, trace_points=None)
    assert_same(a, b)
    assert a.counterexamples.to_dict() == b.counterexamples.to_dict()
    assert b.counterexamples.leaves[0].total > 0 or b.counterexamples.leaves[1].total > 0
    assert not list(tmp_path.glob("fairaudit-dask-*"))


def _trained(log):
    from fairaudit.data import resolve
    from fairaudit.models import train

    return train(resolve(str(log.parent / "log.csv"), label="two_year_recid"), "logreg", seed=0)


def test_progress_counts_partitions(client, log):
    seen = []
    audit_parquet(log, SPEC, pred=PRED, client=client, on_progress=lambda p: seen.append(p.message))
    said = [m for m in seen if m and m.startswith("Dask:")]
    assert said[0] == "Dask: 0 of 12 partitions" and said[-1] == "Dask: 12 of 12 partitions"


def test_natural_file_order(log):
    names = [p.rsplit("/", 1)[-1] for p in log_parts(log)]
    assert names == [f"part-{i}.parquet" for i in range(12)]  # part-2 before part-10
    assert log_parts(str(log / "part-1*.parquet"))[-1].endswith("part-11.parquet")
    assert distributed.dask_log(log).parts == log_parts(log)  # the partitions: the log's parts, in that order


def test_bad_sources_say_one_line(tmp_path, log):
    with pytest.raises(FairauditError, match="holds no CSV or Parquet file"):
        log_parts(tmp_path)
    (tmp_path / "x.parquet").write_text("a,b\n1,2\n")
    with pytest.raises(FairauditError, match=r"cannot read .*x\.parquet"):  # the schema: fixed on the client
        audit_parquet(tmp_path, SPEC, pred=PRED, client=object())
    with pytest.raises(FairauditError, match="no column 'decile_scor'"):
        audit_parquet(log, SPEC, pred="decile_scor <= 4", client=object())
    with pytest.raises(FairauditError, match="needs a model"):
        audit_parquet(log, "Fair[race] > 0.9", pred=PRED, client=object())
    with pytest.raises(FairauditError, match="'label'"):
        audit_parquet(log, "E[label | pred] > 0.1", pred=PRED, client=object())


def test_unreachable_scheduler():
    with pytest.raises(FairauditError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s"):
        with dask_client("tcp://127.0.0.1:9", timeout=1):
            pass


def _partitions(v, m, sizes, batch, keys=("a", "b")):
    """The stream ``v``/``m`` (leaf ``keys[0]`` conditional on ``m``, ``keys[1]`` the same values unconditionally)
    cut into partitions of ``sizes`` rows: each one's ``PartitionCodes`` and its ``Counted`` piece as the workers
    make them (the one kernel: ``fairaudit.core.counting``)."""
    from fairaudit.core.counting import encode

    a, b = keys
    codes, parts, offset = [], [], 0
    length = sum(sizes)
    for n in sizes:
        vv, mm = v[offset:offset + n], m[offset:offset + n]
        obs = Observations({a: vv, b: vv}, {a: mm, b: np.ones(n, bool)}, n)
        c = distributed.PartitionCodes(encode(obs, keys))
        codes.append(c)
        parts.append(distributed.partition_counts(c, list(keys), offset, length, batch))
        offset += n
    return codes, parts


def _whole(v, m):
    return Observations({"a": v, "b": v}, {"a": m, "b": np.ones(len(v), bool)}, len(v))


def _constant_runs(rng, length):
    """A condition that is true on every row of some stretches and false on every row of others (a partition where
    ``g == "a"`` holds throughout: the case the Dask route once miscounted), random elsewhere."""
    m = rng.random(length) < 0.7
    for _ in range(3):
        lo = int(rng.integers(0, max(1, length)))
        hi = min(length, lo + int(rng.integers(1, 25)))
        m[lo:hi] = bool(rng.random() < 0.5)
    return m


def test_partition_counts_are_the_whole_streams():
    """Partitions of any sizes (empty ones, single rows, ones where the condition is constant), any batch: the
    counts the monitor's ``ChunkedObservations`` merges from the workers' ``Counted`` pieces, asked for as the
    monitor asks (increasing windows of checks), equal those of the concatenated stream, and the halves' counts those
    of its two halves."""
    from fairaudit.core.counting import encode
    from fairaudit.core.counting import halves
    from fairaudit.engines.monitor.engine import check_points
    from fairaudit.engines.monitor.stream import CheckPoints

    rng = np.random.default_rng(2)
    for sizes, batch in (([3, 0, 11, 1, 7, 20], 4), ([1], 1), ([0, 5, 0], 5), ([50, 2, 9, 0, 33], 7),
                         ([5, 5], 1), ([4, 4, 4], 4), ([1, 1, 1, 1], 2)):
        length = sum(sizes)
        v, m = rng.random(length) < 0.4, _constant_runs(rng, length)
        m[:sizes[0]] = True  # the first partition's rows all satisfy the condition
        codes, parts = _partitions(v, m, sizes, batch)
        counted = distributed.ChunkedObservations(["a", "b"], iter(parts), length)
        whole = _whole(v, m).stats(check_points(length, batch))
        lazy = counted.stats(CheckPoints(length, batch))
        for a in range(0, len(whole["a"].n), 3):
            for k in "ab":
                got = lazy[k].at(slice(a, a + 3))
                np.testing.assert_array_equal(got.successes, whole[k].successes[a:a + 3])
                np.testing.assert_array_equal(got.n, whole[k].n[a:a + 3])
        half = length // 2
        expected = halves([encode(_whole(v, m), ["a", "b"])], ["a", "b"], half)
        split = [distributed._split_totals(c, ["a", "b"], half - o) for c, o in
                 zip(codes, np.concatenate([[0], np.cumsum(sizes)]))]
        for k, (vv, mm) in {"a": (v & m, m), "b": (v, np.ones(length, bool))}.items():
            assert expected[k] == (int(mm[:half].sum()), int(vv[:half].sum()), int(mm[half:].sum()),
                                   int(vv[half:].sum()))
            n1 = sum(x.of(k)[1] for x, _ in split)
            s1 = sum(x.of(k)[0] for x, _ in split)
            assert (n1, s1) == expected[k][:2]
    with pytest.raises(RuntimeError):  # a check the partitions did not report (counts taken every 3 rows, not 2)
        _, parts = _partitions(rng.random(10) < 0.5, rng.random(10) < 0.5, [5, 5], 3)
        distributed.ChunkedObservations(["a", "b"], iter(parts), 10).stats(CheckPoints(10, 2))["a"].at(slice(0, 5))


def test_the_client_holds_a_window_of_checks():
    """The monitor over ``PartitionCounts`` of a long stream (200,000 checks in 400 partitions): the same batches
    as over the whole stream in memory, while the counts held at once never exceed two monitor batches
    (``CHUNK_LIMIT`` checks each) plus one partition's checks — whatever the stream's length."""
    import dataclasses

    from fairaudit.engines.monitor.engine import CHUNK_LIMIT, monitor_batches
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.spec import parse

    rng = np.random.default_rng(7)
    sizes = list(rng.integers(0, 1_000, 400))
    length = int(sum(sizes))
    v, m = rng.random(length) < 0.5, rng.random(length) < 0.6
    spec = parse("E[pred | group] > 0.45 and E[pred] > 0.45")
    keys = list(compile_spec(spec).leaf_keys)  # E[pred | group], E[pred]
    _, parts = _partitions(v, m, sizes, 1, keys)
    windowed = distributed.ChunkedObservations(keys, iter(parts), length)
    whole = Observations(dict(zip(keys, (v, v))), dict(zip(keys, (m, np.ones(length, bool)))), length)
    run = dict(delta=0.05, batch=1, order="given")
    a, b = list(monitor_batches(spec, whole, **run)), list(monitor_batches(spec, windowed, **run))
    assert len(a) == len(b) > 10
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.steps, y.steps)
        assert x.warnings == y.warnings
        for key in x.leaves:
            for field in dataclasses.fields(x.leaves[key]):
                np.testing.assert_array_equal(getattr(x.leaves[key], field.name), getattr(y.leaves[key], field.name))
    assert windowed.counts.rows == length
    assert windowed.held <= 2 * CHUNK_LIMIT + max(sizes) + 1 < length // 10


def test_attach_to_a_running_scheduler(client, log):
    """``scheduler=ADDRESS``: a client of its own on an existing cluster, closed after the run; the cluster lives on."""
    a = audit_parquet(log, SPEC, pred=PRED, order="given", client=client, trace_points=None)
    b = audit_parquet(log, SPEC, pred=PRED, order="given", scheduler=client.scheduler.address, timeout=30,
                      trace_points=None)
    assert_same(a, b)
    assert client.submit(sum, [1, 2]).result(timeout=30) == 3


def test_a_damaged_partition_is_named(client, log, tmp_path):
    """A part without a column the log has: refused, named, as out of core (it was "cannot read … of the Parquet
    log" with pyarrow's words)."""
    import shutil

    folder = tmp_path / "damaged"
    folder.mkdir()
    for name in ("part-0.parquet", "part-1.parquet"):
        shutil.copy(log / name, folder / name)
    pd.read_parquet(log / "part-2.parquet").drop(columns=["race"]).to_parquet(folder / "part-2.parquet")
    with pytest.raises(FairauditError, match=r"part-2\.parquet lacks column 'race': every part of a log has the "
                                             r"same columns"):
        audit_parquet(folder, SPEC, pred=PRED, client=client)
    with pytest.raises(FairauditError, match="no audited row matches the row filter"):
        audit_parquet(log, SPEC, pred=PRED, where="decile_score > 20", client=client)


class _Model:
    """Stands for a model in the checks made before any work."""

    feature_names = ("age", "sex")

    def describe(self) -> str:
        return "a model"


@pytest.mark.parametrize("order", ["given", "shuffle"])
def test_text_is_cleaned_as_in_process(client, tmp_path, order):
    """Text with surrounding spaces, empty or missing (None) in the Parquet files: the workers clean it as the
    in-process path does (stripped, missing "?"), so the rows that match a condition — and the verdict, stop step
    and every interval — are the same (the workers compared the raw values: " Caucasian " matched nothing)."""
    df = frame(6_000)
    df["race"] = df["race"].astype(object)
    df.loc[df.index % 7 == 0, "race"] = " Caucasian "
    df.loc[df.index % 11 == 0, "race"] = None
    df.loc[df.index % 13 == 0, "sex"] = ""
    write_log(df, tmp_path / "spaced", parts=4)
    spec = SPEC + ' and E[pred | race == "?"] > 0.1 and E[pred | sex == "?"] > 0.1'
    a = in_process(tmp_path / "spaced.csv", spec=spec, pred=PRED, order=order, seed=2)
    b = audit_parquet(tmp_path / "spaced", spec, pred=PRED, order=order, seed=2, client=client, trace_points=None)
    assert_same(a, b)


@pytest.mark.parametrize("spec,where,needle", [
    ('E[pred | race != "Caucasain"] > 0.3', None, 'never takes the value "Caucasain"; did you mean "Caucasian"'),
    (SPEC, 'sex == "female"', 'never takes the value "female"'),
    ('E[pred | race > 3] > 0.3', None, "'race' is categorical"),
])
def test_values_are_validated_as_in_process(client, log, spec, where, needle):
    """A value the log never takes is refused before the audit, as in process (the Dask route checked names only:
    ``race != "Caucasain"`` audited every row, ``race == "african-american"`` none — a wrong or undecided verdict)."""
    from fairaudit.core.preflight import ValidationError

    with pytest.raises(ValidationError, match=needle):
        in_process(log.parent / "log.csv", spec=spec, pred=PRED, where=where)
    with pytest.raises(ValidationError, match=needle):
        audit_parquet(log, spec, pred=PRED, where=where, client=client)


def test_a_missing_label_is_refused_as_in_process(client, tmp_path):
    """A row without a label (None, or empty text): one line, as in process — the workers counted it unfavourable."""
    df = frame(3_000)
    df["outcome"] = df["two_year_recid"].map({0: "no", 1: "yes"}).astype(object)
    df.loc[[10, 2500], "outcome"] = [None, " "]
    write_log(df, tmp_path / "unlabelled", parts=3)
    with pytest.raises(FairauditError, match="label column 'outcome' has 2 missing values"):
        audit_parquet(tmp_path / "unlabelled", "E[pred | label == 1] > 0.1", pred=PRED, label="outcome",
                      favourable="no", client=client)


def test_a_column_of_many_values_is_validated_on_its_literals(client, tmp_path, monkeypatch):
    """A text column with more values than the client keeps (an id): only the values the audit compares it with
    are kept — a value the log holds passes, one it never holds is refused — so validating costs bounded memory."""
    from fairaudit.core.preflight import ValidationError

    from fairaudit.sources import values

    monkeypatch.setattr(values, "VALUES_CAP", 500)
    df = frame(6_000)
    df["person"] = [f"p{i}" for i in range(len(df))]
    write_log(df, tmp_path / "ids", parts=4)
    a = in_process(tmp_path / "ids.csv", pred=PRED, where='person != "p17"', order="given")
    b = audit_parquet(tmp_path / "ids", SPEC, pred=PRED, where='person != "p17"', order="given", client=client,
                      trace_points=None)
    assert_same(a, b)
    with pytest.raises(ValidationError, match='never takes the value "q17"'):
        audit_parquet(tmp_path / "ids", SPEC, pred=PRED, where='person != "q17"', client=client)


def test_an_infinite_number_is_refused_as_in_process(client, tmp_path):
    """Review finding: an ``inf`` in a numeric column was audited on Dask; in process it is refused — now by the one
    conform step, with the part and its data row, in the out-of-core route's words (was "…: column 'rating' holds an
    infinite value (inf) in data row N", worded by the Dask route itself)."""
    from fairaudit.base.errors import DataError
    from fairaudit.engines.monitor.outofcore import audit_file

    df = frame(3000).assign(rating=np.linspace(0.0, 1.0, 3000))
    df.loc[2000, "rating"] = np.inf
    folder = tmp_path / "log"
    write_log(df, folder, parts=3)
    first = sorted(folder.glob("*.parquet"), key=lambda p: int(p.stem.split("-")[1]))
    sizes = np.cumsum([len(pd.read_parquet(p)) for p in first])
    part = int(np.searchsorted(sizes, 2000, side="right"))
    row = 2000 - (int(sizes[part - 1]) if part else 0) + 1
    said = rf"part-{part}\.parquet, data row {row:,}: column 'rating' holds an infinite value \(inf\); "
    with pytest.raises(DataError, match=said) as on_dask:
        audit_parquet(folder, SPEC, pred="rating > 0.5", client=client)
    with pytest.raises(DataError, match=said) as out_of_core:
        audit_file(folder, SPEC, pred="rating > 0.5")
    assert str(on_dask.value) == str(out_of_core.value)


# ---- the one ingestion pipeline: the out-of-core route's result and refusals -----------------------------------

def write_csv_log(df: pd.DataFrame, folder, parts: int = 5, seed: int = 5) -> None:
    """``df`` as CSV parts ``part-0.csv`` … (natural order = row order; uneven sizes)."""
    folder.mkdir()
    rng = np.random.default_rng(seed)
    cuts = np.r_[0, np.sort(rng.choice(np.arange(1, len(df)), parts - 1, replace=False)), len(df)]
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        df.iloc[a:b].to_csv(folder / f"part-{i}.csv", index=False)


def assert_same_as_out_of_core(a, b) -> None:
    """The out-of-core result ``a`` and the Dask result ``b``: the verdict, the stop step, every interval."""
    assert len(a.trace) == len(b.trace) > 0
    for column in a.trace.columns:
        pd.testing.assert_series_equal(a.trace[column], b.trace[column], check_exact=True)
    assert (a.verdict, a.stop_step, a.steps, a.verdict_step) == (b.verdict, b.stop_step, b.steps, b.verdict_step)
    assert a.warnings == b.warnings and a.sentence == b.sentence


@pytest.mark.parametrize("kind", ["parquet", "csv"])
@pytest.mark.parametrize("order", ["given", "shuffle"])
def test_a_folder_of_parts_is_the_out_of_core_log(client, log, tmp_path, kind, order):
    """The same folder audited out of core and on Dask: the same parts, in the same order, read by the same
    ``FileLog`` — the same result, interval for interval; CSV parts are audited on Dask too (Parquet only before)."""
    from fairaudit.engines.monitor.outofcore import audit_file

    folder = log
    if kind == "csv":
        folder = tmp_path / "csvlog"
        write_csv_log(frame(), folder, parts=11)  # part-10 after part-2
    where = "age >= 25" if order == "given" else None
    a = audit_file(folder, SPEC, pred=PRED, where=where, order=order, seed=6, trace_points=None)
    b = audit_parquet(folder, SPEC, pred=PRED, where=where, order=order, seed=6, client=client, trace_points=None)
    assert a.stop_step is not None
    assert_same_as_out_of_core(a, b)
    parts = 11 if kind == "csv" else 12
    assert f"read in {parts} partitions" in b.rows_text and ("CSV" if kind == "csv" else "Parquet") in b.rows_text


def test_a_csv_log_with_a_label_and_a_model(client, tmp_path):
    """CSV parts whose label is text (``yes``/``no``): the favourable value and the values validated from the log's
    schema, as out of core; a model shipped to the workers reads the frame ``to_frame`` makes, as out of core."""
    from fairaudit.engines.monitor.outofcore import audit_file

    df = frame(8_000).assign(outcome=lambda d: d.two_year_recid.map({0: "no", 1: "yes"}))
    folder = tmp_path / "labelled"
    write_csv_log(df, folder, parts=4)
    spec = 'E[label | pred] > 0.2 and E[pred | sex == "Female"] > 0.1'
    a = audit_file(folder, spec, pred=PRED, label="outcome", favourable="yes", trace_points=None)
    b = audit_parquet(folder, spec, pred=PRED, label="outcome", favourable="yes", client=client, trace_points=None)
    assert_same_as_out_of_core(a, b)
    from fairaudit.data import resolve
    from fairaudit.models import train

    df.drop(columns=["outcome"]).to_csv(tmp_path / "whole.csv", index=False)
    model = train(resolve(str(tmp_path / "whole.csv"), label="two_year_recid"), "logreg", seed=0)
    fair = 'Fair[sex] > 0.5 and E[pred | race == "Caucasian"] > 0.1'
    a = audit_file(folder, fair, model=model, trace_points=None)
    b = audit_parquet(folder, fair, model=model, client=client, trace_points=None)
    assert_same_as_out_of_core(a, b)
    assert a.counterexamples.to_dict() == b.counterexamples.to_dict()


def _refusals(tmp_path, log) -> dict:
    """Folders of parts that do not fit their log's schema: ``{name: (folder, pred)}``."""
    import shutil

    out = {}
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    for i in range(12):
        shutil.copy(log / f"part-{i}.parquet", renamed / f"part-{i}.parquet")
    pd.read_parquet(log / "part-3.parquet").rename(columns={"race": "ethnicity"}).to_parquet(renamed / "part-3.parquet")
    out["renamed column"] = (renamed, PRED)
    typed = tmp_path / "typed"
    df = frame(6_000).assign(decision=lambda d: (d.decile_score <= 4).astype("int64"))
    write_log(df, typed, parts=4)
    second = pd.read_parquet(typed / "part-2.parquet")
    second.assign(decision=second.decision.astype(str)).to_parquet(typed / "part-2.parquet")  # "1"/"0": text
    out["a Parquet part storing another type"] = (typed, "decision == 1")
    yes = tmp_path / "yes"
    write_csv_log(frame(6_000), yes, parts=4)
    lines = (yes / "part-2.csv").read_text().splitlines()
    cells = lines[5].split(",")
    cells[3] = "yes"  # decile_score: a column of whole numbers
    lines[5] = ",".join(cells)
    (yes / "part-2.csv").write_text("\n".join(lines) + "\n")
    out["yes in a CSV column of whole numbers"] = (yes, PRED)
    return out


def test_parts_that_do_not_fit_are_refused_as_out_of_core(client, log, tmp_path):
    """A part with a renamed column, a Parquet part storing ``decision`` as the text "1"/"0" where the first part
    stores int64, a CSV part with ``yes`` in a column of whole numbers: each refused on Dask with the out-of-core
    route's very message (part and data row named), never coerced or counted."""
    from fairaudit.base.errors import DataError
    from fairaudit.engines.monitor.outofcore import audit_file

    needles = {"renamed column": r"part-3\.parquet lacks column 'race' and has column 'ethnicity' that .*part-0\.parquet "
                                 r"does not have",
               "a Parquet part storing another type": r"part-2\.parquet: column 'decision' is stored as \w*string "
                                                      r"\('\d' in data row 1\), not as a whole number as its type, "
                                                      r"fixed by the column types stored in .*part-0\.parquet",
               "yes in a CSV column of whole numbers": r"part-2\.csv, data row 5: column 'decile_score' holds 'yes', "
                                                       r"which is not a whole number"}
    for name, (folder, pred) in _refusals(tmp_path, log).items():
        with pytest.raises(DataError, match=needles[name]) as out_of_core:
            audit_file(folder, SPEC, pred=pred)
        with pytest.raises(DataError, match=needles[name]) as on_dask:
            audit_parquet(folder, SPEC, pred=pred, client=client)
        assert str(on_dask.value) == str(out_of_core.value), name


def test_the_first_bad_part_in_log_order_is_reported(client, tmp_path):
    """Two parts that do not fit: the first in log order is reported, as out of core meets it, whichever worker
    finished first."""
    from fairaudit.base.errors import DataError
    from fairaudit.engines.monitor.outofcore import audit_file

    folder = tmp_path / "two"
    folder.mkdir()
    df = frame(300_000)
    cuts = [0, 1_000, 2_000, 290_000, 291_000, 291_100, 300_000]  # part-2: long, its bad row last; part-4: short
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        df.iloc[a:b].to_csv(folder / f"part-{i}.csv", index=False)
    for i, row in ((2, 288_000), (4, 3)):
        lines = (folder / f"part-{i}.csv").read_text().splitlines()
        cells = lines[row].split(",")
        cells[2] = "old"  # age: a column of whole numbers (not read by the values pass: refused by the workers)
        lines[row] = ",".join(cells)
        (folder / f"part-{i}.csv").write_text("\n".join(lines) + "\n")
    spec = 'E[pred | sex == "Female"] > 0.1'
    with pytest.raises(DataError, match=r"part-2\.csv, data row 288,000: column 'age' holds 'old'") as out_of_core:
        audit_file(folder, spec, pred="age > 30")
    with pytest.raises(DataError) as on_dask:
        audit_parquet(folder, spec, pred="age > 30", client=client)
    assert str(on_dask.value) == str(out_of_core.value)


def test_only_an_empty_cell_is_missing(client, tmp_path):
    """The strings "NA" and "None" are values on every route (Namibia's code is NA); only an empty cell is missing
    ("?") — unless ``na_values`` says otherwise, on Dask as out of core."""
    from fairaudit.engines.monitor.outofcore import audit_file, log_of

    df = frame(6_000).astype({"race": object})
    df.loc[df.index % 5 == 0, "race"] = "NA"
    df.loc[df.index % 7 == 0, "race"] = "None"
    df.loc[df.index % 11 == 0, "race"] = ""
    folder = tmp_path / "na"
    write_csv_log(df, folder, parts=3)
    spec = 'E[pred | race == "NA"] > 0.1 and E[pred | race == "?"] > 0.1 and E[pred | race == "None"] > 0.1'
    a = audit_file(folder, spec, pred=PRED, order="given", trace_points=None)
    b = audit_parquet(folder, spec, pred=PRED, order="given", client=client, trace_points=None)
    assert_same_as_out_of_core(a, b)
    spec = 'E[pred | race == "?"] > 0.1'
    a = audit_file(log_of(folder, na_values=("NA", "None")), spec, pred=PRED, order="given", trace_points=None)
    b = audit_parquet(folder, spec, pred=PRED, order="given", na_values=("NA", "None"), client=client,
                      trace_points=None)
    assert_same_as_out_of_core(a, b)
