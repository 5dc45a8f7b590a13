"""A Parquet column the audit does not read is left undecoded only where its stored type proves that none of its
values can be refused (``fairaudit.sources.conform.fits_unread``, ``FileLog.checked``; issue 30): every column is
still checked, so the result JSON — or the refusal — is the same with and without leaving columns unread, and the
in-memory route (which reads every column) agrees."""
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
def test_the_same_json_with_and_without_unread_columns(tmp_path, capsys, monkeypatch, extra, parts):
    path = _write(_messy(3000, seed=parts), tmp_path / ("log" if parts > 1 else "log.parquet"), parts)
    seen = _read_columns(monkeypatch)
    pruned = _run(path, tmp_path, capsys, "--out-of-core", "on", *extra)
    read = {c for cols in seen for c in cols}
    assert read.isdisjoint({"note", "age", "big", "small"}) or "--where" in extra  # proven by the stored type
    assert {"rate", "flag"} <= read  # their values decide: an infinite float, a missing true/false
    with monkeypatch.context() as m:
        _unpruned(m)
        seen.clear()
        every = _run(path, tmp_path, capsys, "--out-of-core", "on", *extra)
        assert {c for cols in seen for c in cols} >= {"note", "age", "big", "small", "rate", "flag"}
    assert pruned[0] == "result"
    assert pruned == every
    memory = _run(path, tmp_path, capsys, "--out-of-core", "off", *extra)
    assert result_key(memory[1]) == result_key(pruned[1])


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


@pytest.mark.parametrize("what", sorted(BAD))
def test_a_bad_value_in_an_unread_column_is_refused_as_before(tmp_path, capsys, monkeypatch, what):
    path = _write(_messy(3000, seed=9, **BAD[what]), tmp_path / "log.parquet")
    extra = DECLARE.get(what, ())
    pruned = _run(path, tmp_path, capsys, "--out-of-core", "on", *extra)
    assert pruned[0] == "error", pruned
    with monkeypatch.context() as m:
        _unpruned(m)
        assert _run(path, tmp_path, capsys, "--out-of-core", "on", *extra) == pruned
    assert _run(path, tmp_path, capsys, "--out-of-core", "off", *extra) == pruned


def test_a_part_that_stores_an_unread_column_otherwise_is_refused(tmp_path, capsys, monkeypatch):
    """The decision is taken per part, from that part's stored types: a later part whose unread integer column
    holds text is read, and refused, as before."""
    table = _messy(3000, seed=4)
    path = _write(table, tmp_path / "log", parts=2)
    later = table.slice(1500).set_column(3, "age", pa.array(["old"] * 1500, pa.string()))
    pq.write_table(later, path / "part-1.parquet")
    pruned = _run(path, tmp_path, capsys, "--out-of-core", "on")
    assert pruned[0] == "error" and "part-1" in pruned[2], pruned
    with monkeypatch.context() as m:
        _unpruned(m)
        assert _run(path, tmp_path, capsys, "--out-of-core", "on") == pruned
    assert _run(path, tmp_path, capsys, "--out-of-core", "off") == pruned


def test_checked_keeps_the_log_order_and_one_column(tmp_path):
    path = _write(_messy(100, seed=1), tmp_path / "log.parquet")
    log = FileLog(path)
    assert log.checked(path, ["decision", "g"]) == ["g", "decision", "rate", "flag"]
    assert log.checked(path, None) == list(log.schema.names)
    assert log.checked(path, []) == ["rate", "flag"]
    only = _write(_messy(100, seed=1).select(["g", "note"]), tmp_path / "two.parquet")
    assert FileLog(only).checked(only, []) == ["g"]  # (a batch of no column has no rows)
