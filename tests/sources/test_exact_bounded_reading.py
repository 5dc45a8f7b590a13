"""Issue 43, the reading side (items 3 and 5): the same bytes give the same values — or the same one-line refusal —
on every route: in memory (``--out-of-core off``), out of core (``--out-of-core on``), live (``--follow``) and on
Dask (``--dask``, marked slow: a cluster per run).

* exact types: a whole-number decimal past 2^53 stays exact, a decimal a float cannot give back and an unsigned
  integer past int64 are refused naming the column, a float part beside a uint64 part is one line and exit 2, one
  instant stored in ms and in µs is one value;
* bounded: a ``.csv.gz`` part of a folder or glob is held to the unpacked-size limit (counted before a row is
  parsed), a Parquet file's footer is bounded before it is read whole, only the columns a run uses are typed and
  read (with a column limit), a skops file's ``schema.json`` has its own cap, a ``.nnet`` domain too wide to count
  is refused at its line;
* one refusal: a NUL byte in a cell and a latin-1 header are refused with the same line (file, data row) on every
  route; a folder, a glob and a followed folder read the same parts (recursive, ``.``/``_`` names skipped); a
  header-only first part does not refuse a folder that has rows; a live CSV rewritten in place ends the watch; a
  log of many parts says so.
"""
from __future__ import annotations

import datetime
import decimal
import gzip
import json
import struct
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fairaudit.base import limits
from fairaudit.base.errors import DataError, FairauditError, ModelError
from tests.console import run_main

EXACT = 1 << 53
PRED = "decision == 1"


def _audit(capsys, route: str, data: Path, spec: str, tmp: Path, *extra) -> tuple:
    """``("result", verdict, steps, final intervals)`` or ``("error", code, the error line)`` of one route."""
    out = tmp / f"result-{route}.json"
    if out.exists():
        out.unlink()
    if route == "follow":
        where = ["--follow", data, "--watch", "--idle-timeout", "0.05", "--poll", "0.01"]
    else:
        where = ["--data", data, "--order", "given", *({"off": ["--out-of-core", "off"], "on": ["--out-of-core", "on"],
                                                        "dask": ["--dask", "--dask-workers", "1"]}[route])]
    done = run_main(capsys, "audit", *where, "--pred", PRED, "--spec", spec, "--json", out, *extra)
    if done.returncode not in (0, 1, 3):
        line = next((x for x in done.stderr.splitlines() if "error" in x), done.stderr.strip())
        return ("error", done.returncode, line)
    payload = json.loads(out.read_text())
    return ("result", payload["verdict"], payload["steps"],
            [(n["final"]["lo"], n["final"]["hi"]) for n in payload["nodes"]])


ROUTES = ("off", "on", "follow")


def _same(capsys, data: Path, spec: str, tmp: Path, routes=ROUTES, follow=None):
    """Every route's answer; they must all be equal (``follow``: the path a live route follows)."""
    answers = {r: _audit(capsys, r, follow if (r == "follow" and follow is not None) else data, spec, tmp)
               for r in routes}
    first = answers[routes[0]]
    assert all(a == first for a in answers.values()), answers
    return first


def _parquet_folder(tmp: Path, *tables, name: str = "log") -> Path:
    folder = tmp / name
    folder.mkdir()
    for i, table in enumerate(tables):
        pq.write_table(table, folder / f"part-{i + 1}.parquet")
    return folder


# ------------------------------------------------------------------------------------------------- exact types


def _decimal_log(tmp: Path) -> Path:
    values = [decimal.Decimal(EXACT + 1), decimal.Decimal(EXACT)] * 300  # …993 favourable, …992 not
    table = pa.table({"x": pa.array(values, pa.decimal128(38, 0)), "decision": [1, 0] * 300})
    return _parquet_folder(tmp, table)


def test_whole_decimals_past_2_53_stay_exact_on_every_route(tmp_path, capsys):
    log = _decimal_log(tmp_path)
    answer = _same(capsys, log, f"E[pred | x == {EXACT + 1}] > 0.9", tmp_path)
    assert answer[0] == "result" and answer[1] == "true"  # (rounded to float64, …993 and …992 merged: 0.5)
    assert answer[3][1] == (answer[3][1][0], 1.0)


def test_decimals_a_float_cannot_hold_and_uint64_past_int64_are_refused_naming_the_column(tmp_path, capsys):
    long = pa.array([decimal.Decimal("1234567890123456.78"), decimal.Decimal("0.10")] * 5, pa.decimal128(38, 2))
    log = _parquet_folder(tmp_path, pa.table({"x": long, "decision": [1, 0] * 5}), name="dec")
    answer = _same(capsys, log, "E[pred | x > 0] > 0.1", tmp_path)
    assert answer[:2] == ("error", 2) and "data row 1: column 'x' holds 1234567890123456.78, a decimal that a " \
                                          "float cannot hold exactly" in answer[2]
    big = pa.table({"x": pa.array([3, (1 << 63) + 5] * 5, pa.uint64()), "decision": [1, 0] * 5})
    log = _parquet_folder(tmp_path, big, name="u64")
    answer = _same(capsys, log, "E[pred | x > 0] > 0.1", tmp_path)
    assert answer[:2] == ("error", 2) and "data row 2: column 'x' holds 9223372036854775813" in answer[2]


def test_a_float_part_then_a_uint64_part_past_2_63_is_one_line_and_exit_2(tmp_path, capsys):
    log = _parquet_folder(tmp_path, pa.table({"x": [1.5, 2.5] * 10, "decision": [1, 0] * 10}),
                          pa.table({"x": pa.array([3, (1 << 63) + 5] * 10, pa.uint64()), "decision": [1, 0] * 10}))
    answer = _same(capsys, log, "E[pred | x > 2] > 0.1", tmp_path)  # (was an internal error, exit 4)
    assert answer[:2] == ("error", 2)
    assert "part-2.parquet, data row 2: column 'x' holds 9223372036854775813, a whole number beyond 2^53" in answer[2]


def test_one_instant_stored_in_ms_and_in_us_is_one_value(tmp_path, capsys):
    t = datetime.datetime(2020, 1, 1, 12, 0, 0)
    later = datetime.datetime(2020, 1, 1, 12, 0, 0, 250000)
    parts = [pa.table({"t": pa.array([t, later] * 100, pa.timestamp(unit)), "decision": [1, 0] * 100})
             for unit in ("ms", "us", "ns")]
    parts.append(pa.table({"t": pa.array([t, later] * 10, pa.timestamp("ms", "Europe/Paris")),
                           "decision": [1, 0] * 10}))
    log = _parquet_folder(tmp_path, *parts[:3])
    answer = _same(capsys, log, 'E[pred | t == "2020-01-01 12:00:00"] > 0.9 and '
                                'E[pred | t == "2020-01-01 12:00:00.25"] < 0.1', tmp_path)
    assert answer[0] == "result" and answer[1] == "true"  # (each unit its own text: 100 of 300 rows matched)
    from fairaudit.sources.conform import temporal_text

    assert temporal_text(parts[3].column("t").combine_chunks()).to_pylist()[:2] == [  # (in UTC, not +0100)
        "2020-01-01 12:00:00Z", "2020-01-01 12:00:00.25Z"]
    assert temporal_text(pa.array([datetime.timedelta(seconds=1.5)], pa.duration("ms"))).to_pylist() == [
        "1500000000 ns"]


# --------------------------------------------------------------------------------------------------- bounded


def _gzip_lines(n: int, line: bytes = b"a,1\n") -> bytes:
    """A gzip member of about ``n`` bytes of ``line`` repeated, built without inflating anything (CRC left at 0:
    it must be refused before its end)."""
    block = line * ((1 << 16) // len(line))
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + piece * (n // len(block)) + last.flush(zlib.Z_FINISH)
            + struct.pack("<LL", 0, 0))


@pytest.fixture
def gz_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(limits.UNPACKED_ENV, "1")  # 1 MB: a 4 MB part passes it
    folder = tmp_path / "gz"
    folder.mkdir()
    (folder / "part-1.csv").write_text("g,decision\n" + "a,1\nb,0\n" * 50)
    (folder / "part-2.csv.gz").write_bytes(gzip.compress(b"g,decision\n") + _gzip_lines(4 << 20))
    return folder


def test_a_gz_part_of_a_folder_or_glob_is_held_to_the_unpacked_limit(gz_folder, tmp_path, capsys):
    spec = 'E[pred | g == "a"] > 0.5'
    said = f"{gz_folder / 'part-2.csv.gz'} unpacks to more than 1.0 MB, the limit for a decompressed .csv.gz"
    for data in (gz_folder, f"{gz_folder}/*.csv*"):
        for route in ("off", "on"):
            answer = _audit(capsys, route, data, spec, tmp_path)
            assert answer[:2] == ("error", 2) and said in answer[2], (data, route, answer)
    with pytest.raises(FairauditError, match="is compressed: a compressed file cannot grow"):
        from fairaudit.sources.live import open_log

        open_log(gz_folder / "part-2.csv.gz")


def test_the_gz_reader_reads_what_gzip_reads_and_counts_before_parsing(tmp_path, monkeypatch):
    from fairaudit.sources import compressed

    payload = b"g,decision\n" + b"a,1\nb,0\n" * 70_000
    path = tmp_path / "ok.csv.gz"
    path.write_bytes(gzip.compress(payload[:1000]) + b"\x00\x00" + gzip.compress(payload[1000:]))
    with compressed.open_part(path) as f:
        assert f.read() == payload
    assert compressed.check_size(path) == len(payload)
    monkeypatch.setenv(limits.UNPACKED_ENV, "1")
    parsed = []
    import fairaudit.sources.files as files

    original = files.text_cells
    monkeypatch.setattr(files, "text_cells", lambda *a: parsed.append(1) or original(*a))
    (tmp_path / "bomb.csv.gz").write_bytes(gzip.compress(b"g,decision\n") + _gzip_lines(4 << 20))
    (tmp_path / "ok.csv.gz").unlink()
    with pytest.raises(DataError, match="unpacks to more than 1.0 MB"):
        list(files.FileLog(tmp_path).batches())
    assert parsed == []  # refused before any row of the part was parsed


def test_a_parquet_file_is_bounded_by_its_footer_before_it_is_read_whole(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(limits.MEMORY_VALUES_ENV, "1000")
    log = _parquet_folder(tmp_path, pa.table({"g": ["a", "b"] * 500, "decision": [1, 0] * 500}))
    spec = 'E[pred | g == "a"] > 0.5'
    said = "declares 1,000 rows × 2 columns read = 2,000 values (its Parquet footer), over the limit of 1,000 values"
    for route in ("off", "follow"):
        answer = _audit(capsys, route, log, spec, tmp_path)
        assert answer[:2] == ("error", 2) and said in answer[2], (route, answer)
    assert "audit it out of core (--out-of-core on)" in _audit(capsys, "off", log, spec, tmp_path)[2]
    done = run_main(capsys, "scan", "--data", log, "--pred", PRED, "--protected", "g", "--out-of-core", "off")
    assert done.returncode == 2 and said in done.stderr
    done = run_main(capsys, "scan", "--data", log, "--pred", PRED, "--protected", "g")  # (auto: read in batches)
    assert done.returncode in (0, 1, 3), done.stderr
    assert _audit(capsys, "on", log, spec, tmp_path)[0] == "result"  # (streamed in batches: no such limit)
    monkeypatch.setenv(limits.MEMORY_VALUES_ENV, "100000")
    monkeypatch.setenv(limits.MEMORY_MB_ENV, "1")
    big = _parquet_folder(tmp_path, pa.table({"g": pa.array(["x" * 1000] * 3000).dictionary_encode(),
                                              "decision": [1, 0, 1] * 1000}), name="wide")
    from fairaudit.sources import FileLog

    with pytest.raises(DataError, match="takes more than 1.0 MB in memory .* the limit for a log read whole"):
        FileLog(big).read_all()  # (dictionary-encoded: declares little, decodes to 3 MB)


def test_only_the_columns_a_run_uses_are_typed_and_read(tmp_path, monkeypatch):
    from fairaudit import data
    from fairaudit.sources import FileLog

    path = tmp_path / "wide.csv"
    path.write_text("g,decision,x,y,z\n" + "a,1,1,yes,\x00\n" * 3 + "b,0,oops,2,3\n")
    log = FileLog(path, columns=("decision", "g"))
    assert log.schema.names == ("g", "decision") and log.names == ("g", "decision", "x", "y", "z")
    assert len(log.read_all()) == 4  # (the NUL byte and the 'oops' are in columns it does not read)
    with pytest.raises(DataError, match="column 'z' holds a NUL byte"):  # (a name it lacks: every column read,
        FileLog(path, columns=("g", "nope"))  # so that the audit names the log's columns as when it reads them all)
    with pytest.raises(DataError, match="data row 1: column 'z' holds a NUL byte"):
        FileLog(path).read_all()
    monkeypatch.setenv(limits.COLUMNS_ENV, "3")
    with pytest.raises(DataError, match=r"wide.csv has 5 columns, over the limit of 3 columns that one run reads"):
        FileLog(path)
    assert data.resolve(str(path), columns=["g"], label="decision").frame.columns.tolist() == ["g", "decision"]
    with pytest.raises(DataError, match="--column-type names column 'w', which .* does not have"):
        FileLog(path, columns=("g",), declared={"w": "text"})


def test_a_skops_schema_json_has_its_own_small_cap(tmp_path, capsys, monkeypatch):
    from fairaudit import models
    from tests.bombs import zip_archive

    monkeypatch.setattr(limits, "MODEL_METADATA_MB", 1)
    schema = b'{"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "content": {}}'
    big = 2 << 20
    bomb = zip_archive([("schema.json", zlib.compress(schema + b" " * (big - len(schema)))[2:-4], 8, big)])
    with pytest.raises(ModelError, match=r"its schema.json declares 2.0 MB once unpacked, over the limit of 1.0 MB "
                                         r"for a model file's metadata"):
        models.load_bytes(bomb, "bomb.skops")
    (tmp_path / "bomb.skops").write_bytes(bomb)
    done = run_main(capsys, "audit", "--data", "adult", "--model", tmp_path / "bomb.skops", "--spec",
                    'E[pred | sex == "Male"] > 0.1')
    assert done.returncode == 2 and "schema.json declares 2.0 MB" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("mins, maxs, said", [
    ("0,0,0,", "1e300,1e300,1e300,", "the input bounds span about 10^900 grid points, over the limit of 10^100"),
    ("-1e308,0,0,", "1e308,5,5,", "input 1 ranges over [-1e+308, 1e+308], wider than the largest number"),
])
def test_a_nnet_domain_too_wide_to_count_is_one_line_and_exit_2(tmp_path, capsys, mins, maxs, said):
    example = Path(__file__).resolve().parents[1] / "fixtures" / "example.nnet"
    lines = example.read_text().splitlines()
    lines[16], lines[17] = mins, maxs
    path = tmp_path / "wide.nnet"
    path.write_text("\n".join(lines) + "\n")
    done = run_main(capsys, "audit", "--engine", "fairquant", "--model", path, "--spec", "Fair[x2] >= 0.75")
    assert done.returncode == 2 and f"wide.nnet, line 18: {said}" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------------------------- one refusal


@pytest.mark.parametrize("body, said", [
    (b"g,decision\na,1\nb,0\na\x00b,1\na,0\n", "log.csv, data row 3: column 'g' holds a NUL byte"),
    ("g,decision\na,1\nb,0\ncaf\xe9,1\n".encode("latin-1"), "log.csv, data row 3: column 'g' is not UTF-8 text (byte "
                                                            "0xe9)"),
    ("gr\xfcppe,decision\na,1\nb,0\n".encode("latin-1"), "log.csv: its header (line 1) is not UTF-8 text (byte 0xfc"),
])
def test_the_same_bytes_get_the_same_refusal_on_every_route(tmp_path, capsys, body, said):
    path = tmp_path / "log.csv"
    path.write_bytes(body)
    spec = 'E[pred | g == "a"] > 0.1'
    answer = _same(capsys, path, spec, tmp_path)
    assert answer[:2] == ("error", 2) and said in answer[2]
    glob = _audit(capsys, "on", f"{tmp_path}/*.csv", spec, tmp_path)
    assert glob == answer


def _spark_folder(tmp: Path, fmt: str) -> Path:
    """A folder as Spark writes one: parts in a sub-folder too, a ``_SUCCESS``-like marker, a hidden copy."""
    folder = tmp / f"spark-{fmt}"
    (folder / "day=2").mkdir(parents=True)
    (folder / "_temporary").mkdir()
    rows = [pa.table({"g": ["a", "b"] * 5, "decision": [1, 1] * 5}), pa.table({"g": ["a", "b"] * 5,
                                                                              "decision": [0, 0] * 5})]
    where = [folder / "part-1", folder / "day=2" / "part-2", folder / "_temporary" / "part-3",
             folder / ".part-4"]
    for target, table in zip(where, rows + rows):
        if fmt == "csv":
            target.with_suffix(".csv").write_text(table.to_pandas().to_csv(index=False))
        else:
            pq.write_table(table, target.with_suffix(".parquet"))
    return folder


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_folder_a_glob_and_a_followed_folder_read_the_same_parts(tmp_path, capsys, fmt):
    from fairaudit.sources.live import ParquetDir
    from fairaudit.sources import list_parts

    folder = _spark_folder(tmp_path, fmt)
    parts = list_parts(folder)
    assert [Path(p).relative_to(folder).as_posix() for p in parts] == [f"day=2/part-2.{fmt}", f"part-1.{fmt}"]
    assert list_parts(f"{folder}/**/*.{fmt}") == parts
    assert list_parts(f"{folder}/*.{fmt}") == [str(folder / f"part-1.{fmt}")]  # (what the glob matches, less _/.)
    if fmt == "parquet":
        live = ParquetDir(folder)
        assert len(live.poll()) == 20 and live.done == parts
        answer = _same(capsys, folder, 'E[pred | g == "a"] > 0.9', tmp_path)  # (live read 10 rows: certified)
        assert answer[0] == "result" and answer[2] == 20


def test_a_header_only_first_part_does_not_refuse_a_folder_with_rows(tmp_path, capsys):
    folder = tmp_path / "log"
    folder.mkdir()
    (folder / "part-1.csv").write_text("g,decision\n")
    (folder / "part-2.csv").write_text("g,decision\n" + "a,1\nb,0\n" * 20)
    spec = 'E[pred | g == "a"] > 0.5'
    for route in ("off", "on"):
        answer = _audit(capsys, route, folder, spec, tmp_path)
        assert answer[0] == "result" and answer[2] == 40, (route, answer)
    (folder / "part-2.csv").write_text("g,decision\n")
    answer = _audit(capsys, "on", folder, spec, tmp_path)
    assert answer[:2] == ("error", 2) and "none of its 2 parts has a data row" in answer[2]


def test_a_live_csv_rewritten_in_place_ends_the_watch(tmp_path, monkeypatch):
    from fairaudit.sources import live as livelog
    from fairaudit.sources.live import CsvTail

    path = tmp_path / "log.csv"
    path.write_text("g,decision\n" + "a,1\n" * 10)
    tail = CsvTail(path)
    assert len(tail.poll()) == 10
    with open(path, "r+") as f:  # rewritten in place, to a larger size: the old offset is inside new rows
        f.write("g,decision\n" + "b,0\n" * 30)
    with pytest.raises(FairauditError, match=r"log.csv was rewritten in place \(its first bytes changed\) after 51 "
                                             "bytes had been read"):
        tail.poll()
    monkeypatch.setattr(livelog, "HEAD_BYTES", 16)  # (the first 16 bytes kept)
    path.write_text("g,decision\n" + "a,1\n" * 10)
    tail = CsvTail(path)
    tail.poll()
    with open(path, "r+") as f:  # the same first bytes, the rows before the offset changed
        f.seek(40)
        f.write("b,0\n" * 5)
    with pytest.raises(FairauditError, match="the bytes before byte 51 changed"):
        tail.poll()
    with open(path, "a") as f:
        f.write("a,1\n")
    tail = CsvTail(path)
    tail.poll()
    with open(path, "a") as f:  # appended: read on
        f.write("b,0\n" * 3)
    assert len(tail.poll()) == 3


def test_a_log_of_many_parts_says_so(tmp_path, monkeypatch):
    from fairaudit.sources import FileLog

    monkeypatch.setattr(limits, "MANY_PARTS", 3)
    for i in range(4):
        (tmp_path / f"part-{i}.csv").write_text("g,decision\na,1\n")
    assert FileLog(tmp_path).warnings == [f"{tmp_path} has 4 parts, read one after another (each costs a file open, "
                                          "a schema check and its own batches, so many small parts read slowly); "
                                          "merge them into fewer, larger files"]
    assert FileLog(tmp_path / "part-1.csv").warnings == []


@pytest.mark.slow
def test_dask_reads_and_refuses_as_the_other_routes(tmp_path, capsys, gz_folder):
    """One Dask run per case (a cluster each): the answer of ``--out-of-core on``."""
    cases = [(_decimal_log(tmp_path), f"E[pred | x == {EXACT + 1}] > 0.9"), (gz_folder, 'E[pred | g == "a"] > 0.5')]
    nul = tmp_path / "nul" / "log.csv"
    nul.parent.mkdir()
    nul.write_bytes(b"g,decision\na,1\nb,0\na\x00b,1\n")
    cases.append((nul, 'E[pred | g == "a"] > 0.1'))
    empty_first = tmp_path / "empty-first"
    empty_first.mkdir()
    (empty_first / "part-1.csv").write_text("g,decision\n")
    (empty_first / "part-2.csv").write_text("g,decision\n" + "a,1\nb,0\n" * 20)
    cases.append((empty_first, 'E[pred | g == "a"] > 0.5'))
    for data, spec in cases:
        assert _audit(capsys, "dask", data, spec, tmp_path) == _audit(capsys, "on", data, spec, tmp_path), data
