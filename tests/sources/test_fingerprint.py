"""The data's fingerprint (``fairaudit.sources.fingerprint``): one definition on every route, read once per process
while a file is unchanged, and for a frame in memory a canonical SHA-256 that tells apart what differs."""
from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairaudit import data
from fairaudit.data.dataset import Dataset, Schema
from fairaudit.engines.monitor.outofcore import audit_file, file_sha256
from fairaudit.sources import FileLog, fingerprint
from fairaudit.sources.files import content_sha256

SPEC = 'E[pred | group == "A"] - E[pred | group == "B"] < 0.5'
PRED = "decision == 1"


@pytest.fixture(autouse=True)
def fresh_cache():
    fingerprint.clear_cache()
    yield
    fingerprint.clear_cache()


def _frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"group": rng.choice(["A", "B"], n), "age": rng.integers(18, 80, n),
                         "decision": rng.integers(0, 2, n)})


def _bytes(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _parts(folder: Path) -> str:
    digest = hashlib.sha256()
    for part in sorted(folder.iterdir()):
        digest.update(part.name.encode("utf-8") + b"\0" + part.read_bytes())
    return digest.hexdigest()


def _counting(monkeypatch) -> list:
    """The files actually read to be hashed (``_hash_parts`` and ``read_file``'s hashing)."""
    reads = []
    real = fingerprint._hash_parts

    def counted(parts, idents):
        reads.append(tuple(parts))
        return real(parts, idents)

    monkeypatch.setattr(fingerprint, "_hash_parts", counted)
    return reads


# ---- one definition on every route ---------------------------------------------------------------------------------

@pytest.mark.parametrize("gz", [False, True])
def test_a_csv_has_one_digest_on_every_route(tmp_path, gz):
    path = tmp_path / ("log.csv.gz" if gz else "log.csv")
    text = _frame().to_csv(index=False).encode("utf-8")
    path.write_bytes(gzip.compress(text) if gz else text)
    want = _bytes(path)  # the bytes as stored (a .csv.gz's compressed bytes)
    in_memory = data.from_csv(path)
    upload = data.from_csv(path.read_bytes(), name=path.name)
    as_log = data.from_log(path)
    out_of_core = audit_file(path, SPEC, pred=PRED, order="given", trace_points=None)
    assert in_memory.content_hash == upload.content_hash == as_log.content_hash == want
    assert in_memory.hash_of == upload.hash_of == as_log.hash_of == fingerprint.FILE_BYTES
    recorded = out_of_core.provenance["dataset"]
    assert (recorded["content_hash"], recorded["hash_of"]) == (want, fingerprint.FILE_BYTES)
    assert file_sha256(path) == want
    assert content_sha256(FileLog(path)) == (want, fingerprint.FILE_BYTES)


def test_a_parquet_folder_has_one_digest_on_every_route(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    frame = _frame(900)
    for i, start in enumerate(range(0, 900, 300)):
        frame.iloc[start:start + 300].to_parquet(folder / f"part-{i}.parquet", index=False)
    want = _parts(folder)
    in_memory = data.from_log(folder)
    out_of_core = audit_file(folder, SPEC, pred=PRED, order="given", trace_points=None)
    assert (in_memory.content_hash, in_memory.hash_of) == (want, fingerprint.PARTS_BYTES)
    recorded = out_of_core.provenance["dataset"]
    assert (recorded["content_hash"], recorded["hash_of"]) == (want, fingerprint.PARTS_BYTES)
    assert file_sha256(folder) == want == fingerprint.of_parts(sorted(folder.iterdir())).digest
    one = folder / "part-0.parquet"
    assert data.from_log(one).content_hash == _bytes(one)


def test_an_uploads_digest_is_passed_along_or_computed():
    payload = b"group,decision\nA,1\nB,0\n"
    assert fingerprint.of_bytes(payload) == (hashlib.sha256(payload).hexdigest(), fingerprint.FILE_BYTES)
    assert fingerprint.of_bytes(payload, digest="ab" * 32).digest == "ab" * 32


# ---- once per process, again when the file changes -----------------------------------------------------------------

def test_a_file_is_read_once_whatever_runs_on_it(tmp_path, monkeypatch):
    path = tmp_path / "log.parquet"
    _frame().to_parquet(path, index=False)
    reads = _counting(monkeypatch)
    first = data.from_log(path).content_hash
    assert data.from_log(path, label="decision").content_hash == first  # another command, other roles
    audit_file(path, SPEC, pred=PRED, order="given", trace_points=None)
    assert file_sha256(path) == first == _bytes(path)
    assert len(reads) == 1
    info = fingerprint.cache_info()
    assert (info.misses, info.hits) == (1, 3)


def test_a_csv_read_whole_shares_the_entry_with_the_other_routes(tmp_path, monkeypatch):
    path = tmp_path / "log.csv"
    _frame().to_csv(path, index=False)
    reads = _counting(monkeypatch)
    digest = data.from_csv(path).content_hash  # hashed from the bytes it read (no second read)
    assert data.from_csv(path).content_hash == file_sha256(path) == digest
    assert reads == [] and fingerprint.cache_info().misses == 1


def test_a_changed_file_is_hashed_again(tmp_path, monkeypatch):
    path = tmp_path / "log.csv"
    _frame(seed=1).to_csv(path, index=False)
    reads = _counting(monkeypatch)
    before = file_sha256(path)
    stat = path.stat()
    text = path.read_bytes()
    changed = text.replace(b"A", b"B", 1)  # the same size
    assert len(changed) == len(text) and changed != text
    path.write_bytes(changed)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    after = file_sha256(path)
    assert after != before and after == _bytes(path)
    assert data.from_csv(path).content_hash == after
    assert len(reads) == 2
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 9_000_000_000))  # touched: read again, same digest
    assert file_sha256(path) == after and len(reads) == 3


def test_the_cache_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(fingerprint, "MAX_ENTRIES", 3)
    paths = []
    for i in range(5):
        paths.append(tmp_path / f"f{i}.csv")
        paths[-1].write_bytes(b"x\n%d\n" % i)
    reads = _counting(monkeypatch)
    for p in paths:
        fingerprint.of_parts([p])
    assert fingerprint.cache_info().size == 3
    fingerprint.of_parts([paths[-1]])  # kept
    fingerprint.of_parts([paths[0]])  # dropped first
    assert len(reads) == 6


def test_a_folder_and_its_single_file_are_not_confused(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.csv").write_bytes(b"x\n1\n")
    (folder / "b.csv").write_bytes(b"x\n2\n")
    one = fingerprint.of_parts([folder / "a.csv"])
    both = fingerprint.of_parts([folder / "a.csv", folder / "b.csv"])
    assert one.of == fingerprint.FILE_BYTES and both.of == fingerprint.PARTS_BYTES and one.digest != both.digest


# ---- a frame in memory ---------------------------------------------------------------------------------------------

def _rows(frame: pd.DataFrame) -> str:
    return fingerprint.of_frame(frame).digest


BASE = {"group": ["A", "B", None, "A"], "age": [31, 45, 27, 60], "score": [0.5, np.nan, 1.0, -2.0],
        "label": [True, False, True, True]}


def test_a_frame_is_hashed_without_writing_it_as_text(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("to_csv called")

    monkeypatch.setattr(pd.DataFrame, "to_csv", refuse)
    monkeypatch.setattr(pd.Series, "to_csv", refuse)
    ds = Dataset("toy", pd.DataFrame(BASE), Schema(()))
    assert ds.hash_of == fingerprint.ROWS
    digest = ds.content_hash
    assert len(digest) == 64 and ds.content_hash == digest and ds.hash_of == fingerprint.ROWS
    assert digest == _rows(pd.DataFrame(BASE))


def test_equal_frames_built_two_ways_have_one_digest():
    a = pd.DataFrame(BASE)
    b = pd.DataFrame.from_records(list(zip(*BASE.values())), columns=list(BASE))
    c = pd.concat([a.iloc[:1], a.iloc[1:]]).set_axis([10, 11, 12, 13])  # pieces, another index
    d = pd.DataFrame({k: pd.Series(v[::-1]).iloc[::-1].to_numpy() for k, v in BASE.items()})
    d["group"] = d["group"].astype("str")
    assert _rows(a) == _rows(b) == _rows(c) == _rows(d)
    big = pd.DataFrame({"t": pd.Series([f"v{i}" for i in range(50_000)], dtype="str")})
    sliced = big.iloc[20_000:30_000].reset_index(drop=True)  # Arrow buffers with an offset
    fresh = pd.DataFrame({"t": pd.Series([f"v{i}" for i in range(20_000, 30_000)], dtype="str")})
    assert _rows(sliced) == _rows(fresh)


@pytest.mark.parametrize("change", ["value", "text value", "dtype", "null or empty", "column order", "column name",
                                    "row order", "a row less", "nan or zero", "object or str", "boundary"])
def test_frames_that_differ_have_different_digests(change):
    a = pd.DataFrame(BASE)
    b = a.copy()
    if change == "value":
        b.loc[1, "age"] = 46
    elif change == "text value":
        b.loc[0, "group"] = "C"
    elif change == "dtype":
        b["age"] = b["age"].astype("int32")
    elif change == "null or empty":
        b.loc[2, "group"] = ""
    elif change == "column order":
        b = b[["age", "group", "score", "label"]]
    elif change == "column name":
        b = b.rename(columns={"age": "Age"})
    elif change == "row order":
        b = b.iloc[::-1].reset_index(drop=True)
    elif change == "a row less":
        b = b.iloc[:-1]
    elif change == "nan or zero":
        b.loc[1, "score"] = 0.0
    elif change == "object or str":
        b["group"] = b["group"].astype(object)
    elif change == "boundary":  # the same bytes in the column, cut elsewhere
        a = pd.DataFrame({"t": ["ab", "c"]}, dtype="str")
        b = pd.DataFrame({"t": ["a", "bc"]}, dtype="str")
    assert _rows(a) != _rows(b)


def test_the_kinds_of_column_are_told_apart_and_stable():
    zoo = pd.DataFrame({
        "cat": pd.Categorical(["a", "b", None]),
        "ordered": pd.Categorical(["a", "b", None], ordered=True),
        "Int": pd.array([1, None, 3], dtype="Int64"),
        "boolean": pd.array([True, None, False], dtype="boolean"),
        "when": pd.to_datetime(["2020-01-01", None, "2021-01-01"]),
        "when_utc": pd.to_datetime(["2020-01-01", None, "2021-01-01"]).tz_localize("UTC"),
        "lapse": pd.to_timedelta([1, None, 3], unit="s"),
        "mixed": pd.Series([1, "a", None], dtype=object),
        "arrow": pd.array([1, None, 3], dtype="int64[pyarrow]"),
        "text": pd.array(["q", None, "r"], dtype="string[pyarrow]"),
        "period": pd.period_range("2020-01", periods=3, freq="M"),
    })
    assert _rows(zoo) == _rows(zoo.copy())
    digests = {name: _rows(zoo[[name]].set_axis(["x"], axis=1)) for name in zoo.columns}
    assert len(set(digests.values())) == len(digests)  # (the same values under another type differ)
    assert _rows(pd.DataFrame({"x": pd.Series([b"a"], dtype=object)})) != \
        _rows(pd.DataFrame({"x": pd.Series(["a"], dtype=object)}))  # bytes are not text
    surrogate = pd.DataFrame({"x": pd.Series(["a\ud800", None], dtype=object)})
    assert _rows(surrogate) == _rows(surrogate.copy())  # not UTF-8: hashed all the same


def test_a_frame_digest_is_pinned():
    """The canonical form is a recorded definition: a change to it must change ``ROWS``'s words too."""
    assert _rows(pd.DataFrame(BASE)) == PINNED


def test_threads_give_the_same_digest():
    frame = pd.DataFrame(BASE)
    assert fingerprint.of_frame(frame, threads=2) == fingerprint.of_frame(frame, threads=1)


PINNED = "875f92aec8e6ebf20b294904da0e96d73e1846340251c182494672d803b81357"
