"""Only the columns a run reads are typed and read, on every route (issue 43: a log of 100,000 columns audited on
two): a value in a column the audit does not read — an infinite float, a missing true/false, text where numbers
were declared — is neither decoded nor refused, in memory, out of core and live alike, and the result is the one of
the same log without those columns. A log read whole (no ``columns``: a model's features not known, the scan)
still checks every column, decoding only those whose stored type does not prove every value fits
(``fairaudit.sources.conform.fits_unread``, ``FileLog.checked``; issue 30)."""
from __future__ import annotations

import importlib
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fairaudit.sources import FileLog
from fairaudit.sources.conform import fits_unread
from tests.sources.routes import result_key

SPEC = 'E[pred | g == "A"] - E[pred | g == "B"] < 0.2 and E[pred | g == "?"] > 0.05'
USED = ["g", "decision"]


def test_the_stored_type_alone_decides():
    assert fits_unread(pa.string(), "text") and fits_unread(pa.large_string(), "text")
    assert fits_unread(pa.dictionary(pa.int8(), pa.string()), "text")
    assert fits_unread(pa.null(), "text") and fits_unread(pa.null(), "float") and not fits_unread(pa.null(), "boolean")
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32()):
        assert fits_unread(t, "integer")
    assert not fits_unread(pa.uint64(), "integer")  # may not fit an int64
    assert fits_unread(pa.int32(), "float") and fits_unread(pa.uint32(), "float")
    assert not fits_unread(pa.int64(), "float")  # beyond 2^53: not exact in a float
    assert not fits_unread(pa.float64(), "float") and not fits_unread(pa.float32(), "float")  # inf is refused
    assert not fits_unread(pa.float64(), "integer")  # 1.5 is refused
    assert not fits_unread(pa.string(), "integer") and not fits_unread(pa.int64(), "text")  # another type
    assert not fits_unread(pa.decimal128(10, 2), "float") and not fits_unread(pa.timestamp("s"), "text")
    assert fits_unread(pa.bool_(), "boolean", nullable=False) and not fits_unread(pa.bool_(), "boolean")


def _messy(n: int, seed: int, **override) -> pa.Table:
    """Used: ``g`` (text with spaces, empty and missing), ``decision`` (0/1). Unused, every one
    messy: text with nulls and blanks, integers with nulls, a float with NaN and nulls, true/false."""
    rng = np.random.default_rng(seed)
    pick = lambda values: [values[i] for i in rng.integers(0, len(values), n)]  # noqa: E731
    columns = {
        "g": pa.array(pick(["A", " A", "B ", "", None, "B", "C"])).dictionary_encode(),
        "decision": pa.array(pick([0, 1, 1]), pa.int64()),
        "note": pa.array(pick(["x", "  ", "", None, "NA", "long text, with a comma"]), pa.string()),
        "age": pa.array(pick([18, 40, None, 70]), pa.int32()),
        "big": pa.array(pick([1 << 60, -(1 << 60), None]), pa.int64()),
        "small": pa.array(pick([0, 7, None]), pa.uint32()),
        "rate": pa.array(pick([0.5, float("nan"), None, -2.25]), pa.float64()),
        "flag": pa.array(pick([True, False]), pa.bool_()),
    }
    columns.update(override)
    return pa.table(columns)


def _write(table: pa.Table, path, parts: int = 1):
    if parts == 1:
        pq.write_table(table, path, row_group_size=max(1, table.num_rows // 3))
        return path
    path.mkdir()
    step = -(-table.num_rows // parts)
    for i in range(parts):
        pq.write_table(table.slice(i * step, step), path / f"part-{i}.parquet")
    return path


def _timeless(value):
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if not k.endswith("seconds")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _run(path, tmp_path, capsys, *extra) -> tuple:
    """``fairaudit audit`` in this process: ``("result", the whole JSON less its timings)`` or
    ``("error", exit code, the error line)``."""
    from fairaudit.cli import main

    out = tmp_path / "result.json"
    if out.exists():
        out.unlink()
    capsys.readouterr()
    code = main(["audit", "--data", str(path), "--spec", SPEC, "--pred", "decision == 1", "--batch", "7",
                 *extra, "--json", str(out)])
    err = capsys.readouterr().err
    if code not in (0, 1, 3):
        return ("error", code, next((line for line in err.splitlines() if "error" in line), err).strip())
    return ("result", _timeless(json.loads(out.read_text())))


def _read_columns(monkeypatch) -> list:
    """Spy: the columns each Parquet read decodes."""
    seen = []
    raw = FileLog._raw_batches

    def spy(self, path, columns=None, *args, **kwargs):
        seen.append(tuple(columns or ()))
        return raw(self, path, columns, *args, **kwargs)

    monkeypatch.setattr(FileLog, "_raw_batches", spy)
    return seen


def _unpruned(monkeypatch):
    module = importlib.import_module("fairaudit.sources.conform")  # (the package's ``conform`` is the function)
    monkeypatch.setattr(module, "fits_unread", lambda *a, **k: False)


@pytest.mark.parametrize("extra", [("--order", "given"), ("--order", "shuffle", "--seed", "5"),
                                   ("--order", "given", "--where", 'note != "x"'),
                                   ("--order", "given", "--where", "rate > 0")])
@pytest.mark.parametrize("parts", [1, 3])
def test_only_the_columns_a_run_reads_are_decoded(tmp_path, capsys, monkeypatch, extra, parts):
    path = _write(_messy(3000, seed=parts), tmp_path / ("log" if parts > 1 else "log.parquet"), parts)
    seen = _read_columns(monkeypatch)
    pruned = _run(path, tmp_path, capsys, "--out-of-core", "on", *extra)
    read = {c for cols in seen if cols for c in cols}
    filtered = {"note"} if "note" in " ".join(extra) else {"rate"} if "rate" in " ".join(extra) else set()
    assert read == {"g", "decision"} | filtered
    assert pruned[0] == "result"
    memory = _run(path, tmp_path, capsys, "--out-of-core", "off", *extra)
    assert result_key(memory[1]) == result_key(pruned[1])
    narrow = _write(_messy(3000, seed=parts).select(sorted({"g", "decision"} | filtered)),
                    tmp_path / ("narrow" if parts > 1 else "narrow.parquet"), parts)
    assert result_key(_run(narrow, tmp_path, capsys, "--out-of-core", "on", *extra)[1]) == result_key(pruned[1])


BAD = {
    "an infinite float": {"rate": pa.array([0.5] * 2999 + [float("inf")], pa.float64())},
    "a missing true/false": {"flag": pa.array([True] * 2500 + [None] * 500, pa.bool_())},
    "an unsigned integer past int64": {"small": pa.array([1] * 2000 + [(1 << 64) - 1] * 1000, pa.uint64())},
    "text declared a number": {"note": pa.array(["1"] * 1500 + ["yes"] * 1500, pa.string())},
    "a whole number stored as 1.5": {"age": pa.array([18.0] * 2990 + [1.5] * 10, pa.float64())},
    "an integer not exact in a float": {"age": pa.array([1] * 2990 + [(1 << 53) + 1] * 10, pa.int64())},
}
DECLARE = {"text declared a number": ("--column-type", "note=integer"),
           "a whole number stored as 1.5": ("--column-type", "age=integer"),
           "an integer not exact in a float": ("--column-type", "age=float")}
READ_BY = {"an infinite float": "rate > 0", "a missing true/false": "flag", "an unsigned integer past int64":
           "small > 0", "text declared a number": "note > 0", "a whole number stored as 1.5": "age > 0",
           "an integer not exact in a float": "age > 0"}


@pytest.mark.parametrize("what", sorted(BAD))
def test_a_bad_value_is_refused_only_where_a_run_reads_it_and_alike_on_every_route(tmp_path, capsys, what):
    path = _write(_messy(3000, seed=9, **BAD[what]), tmp_path / "log.parquet")
    extra = DECLARE.get(what, ())
    unread = _run(path, tmp_path, capsys, "--out-of-core", "on", "--order", "given", *extra)
    assert unread[0] == "result", unread
    memory = _run(path, tmp_path, capsys, "--out-of-core", "off", "--order", "given", *extra)
    assert result_key(memory[1]) == result_key(unread[1])
    read = ("--where", READ_BY[what])
    refused = _run(path, tmp_path, capsys, "--out-of-core", "on", *extra, *read)
    assert refused[0] == "error" and refused[1] == 2, refused
    assert _run(path, tmp_path, capsys, "--out-of-core", "off", *extra, *read) == refused


def test_a_part_that_stores_a_read_column_otherwise_is_refused(tmp_path, capsys):
    """The check is per part, from that part's stored types: a later part whose integer column holds text is
    refused where the run reads that column, on every route, and audited alike where it does not."""
    table = _messy(3000, seed=4)
    path = _write(table, tmp_path / "log", parts=2)
    later = table.slice(1500).set_column(3, "age", pa.array(["old"] * 1500, pa.string()))
    pq.write_table(later, path / "part-1.parquet")
    read = ("--where", "age > 0")
    refused = _run(path, tmp_path, capsys, "--out-of-core", "on", *read)
    assert refused[0] == "error" and "part-1" in refused[2], refused
    assert _run(path, tmp_path, capsys, "--out-of-core", "off", *read) == refused
    unread = _run(path, tmp_path, capsys, "--out-of-core", "on", "--order", "given")
    assert unread[0] == "result"
    assert result_key(_run(path, tmp_path, capsys, "--out-of-core", "off", "--order", "given")[1]) == \
        result_key(unread[1])


def test_checked_keeps_the_log_order_and_one_column(tmp_path):
    path = _write(_messy(100, seed=1), tmp_path / "log.parquet")
    log = FileLog(path)
    assert log.checked(path, ["decision", "g"]) == ["g", "decision", "rate", "flag"]
    assert log.checked(path, None) == list(log.schema.names)
    assert log.checked(path, []) == ["rate", "flag"]
    only = _write(_messy(100, seed=1).select(["g", "note"]), tmp_path / "two.parquet")
    assert FileLog(only).checked(only, []) == ["g"]  # (a batch of no column has no rows)
