"""The monitor on a live log (``fairaudit.engines.monitor.live``, ``fairaudit.engines.monitor.livelog``): the same checks, decision and
intervals as the file-at-rest run in given order (the oracle: ``monitor_batches`` on the whole stream in memory),
however the rows are cut into arriving chunks; the log readers; drift evidence raised live."""
import io
import json
import os
import threading
import time

import numpy as np
import pandas as pd
import pytest

from fairaudit import api, data, engines
from fairaudit.engines.monitor.live import LIVE_ASSUMPTION
from fairaudit.core.observations import observe
from fairaudit.engines.monitor.stream import RunningCounts
from fairaudit.base.errors import FairauditError
from fairaudit.core.evaluate import compile_spec
from fairaudit.core.observations import event_array
from fairaudit.engines.monitor.livelog import live_audit, log_dataset
from fairaudit.sources.live import CsvTail, JsonLines, ParquetDir, follow
from fairaudit.models import from_expression
from fairaudit.core.driver import last
from fairaudit.spec import parse, parse_event

SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] >= -0.1 and '
        'E[pred | sex == "Female"] >= 0.3')
PRED = "decile_score <= 4"
FIELDS = ("steps", "estimate", "lo", "hi", "delta", "verdict", "n")


@pytest.fixture(scope="module")
def compas():
    return data.load("compas")


def cut(frame, pieces, seed, empty=False):
    """``frame`` in ``pieces`` consecutive chunks of random sizes (with empty ones in between when ``empty``)."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, len(frame)), pieces - 1, replace=False))
    out = []
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(frame)]):
        out.append(frame.iloc[a:b])
        if empty:
            out.append(frame.iloc[0:0])
    return out


def live(spec_text, frames, decide, stop=False, **options):
    opts = engines.get("monitor").resolve_options({"order": "given", "stop": stop, **options})
    return last(live_audit(parse(spec_text), iter(frames), decide=decide, options=opts, trace_points=None))


def same(a, b):
    for f in FIELDS:
        x, y = getattr(a.trace_table, f), getattr(b.trace_table, f)
        assert x.shape == y.shape, f
        assert np.array_equal(x, y, equal_nan=True), f


@pytest.mark.parametrize("split,batch,seed", [("directed", 5, 0), ("equal", 7, 1), ("optimized", 5, 2),
                                              ("directed", 1, 3)])
def test_live_equals_the_file_at_rest_row_for_row(compas, split, batch, seed):
    rest = api.audit(compas, SPEC, pred=PRED, order="given", trace_points=None, split=split, batch=batch)
    model = from_expression(PRED, compas)
    result = live(SPEC, cut(compas.frame, 37, seed, empty=seed % 2 == 1), model.predict, split=split, batch=batch)
    assert (result.verdict, result.stop_step, result.steps) == (rest.verdict, rest.stop_step, rest.steps)
    assert result.steps == len(compas)  # the last row is a check once the log ends
    same(result, rest)
    assert result.guarantee.delta == rest.guarantee.delta
    assert result.guarantee.assumes == LIVE_ASSUMPTION


def test_live_stops_at_the_same_decision(compas):
    rest = api.audit(compas, SPEC, pred=PRED, order="given", trace_points=None, stop=True)
    model = from_expression(PRED, compas)
    pulled = []

    def frames():
        for frame in cut(compas.frame, 60, 5):
            pulled.append(len(frame))
            yield frame

    result = live(SPEC, frames(), model.predict, stop=True)
    assert result.stop_step == rest.stop_step and result.complete
    same(result, rest)
    assert sum(pulled) < len(compas)  # it stopped reading the log at the decision


def test_running_counts_finish_is_the_final_check():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"g": rng.integers(0, 2, 103), "y": rng.integers(0, 2, 103)})
    spec = parse("E[y == 1 | g == 1] >= 0.5")
    keys = list(compile_spec(spec).leaf_keys)
    whole = RunningCounts(keys, 10)
    steps_a, stats_a = whole.consume(observe(spec, frame), final=True)
    parts = RunningCounts(keys, 10)
    got_steps, got = [], {k: ([], []) for k in keys}
    for a, b in ((0, 13), (13, 13), (13, 100), (100, 103)):
        s, st = parts.consume(observe(spec, frame.iloc[a:b].reset_index(drop=True)))
        got_steps += list(s)
        for k in keys:
            got[k][0].extend(st[k].successes)
            got[k][1].extend(st[k].n)
    s, st = parts.finish()
    got_steps += list(s)
    for k in keys:
        got[k][0].extend(st[k].successes)
        got[k][1].extend(st[k].n)
        assert np.array_equal(got[k][0], stats_a[k].successes) and np.array_equal(got[k][1], stats_a[k].n)
    assert got_steps == list(steps_a) and got_steps[-1] == 103
    done = RunningCounts(keys, 10)
    done.consume(observe(spec, frame.iloc[:100]))
    assert len(done.finish()[0]) == 0  # the last row was a check already


def test_drift_is_reported_as_the_rows_arrive():
    # the favourable rate is 0.9 for 3,000 rows and then 0.1: the running intersection of the confidence sequence
    # becomes empty, and the root's verdict changes after its decision; both are said live, while watching
    rng = np.random.default_rng(1)
    n = 3000
    y = np.r_[rng.random(n) < 0.9, rng.random(n) < 0.1].astype(int)
    frame = pd.DataFrame({"y": y, "g": rng.integers(0, 2, 2 * n)})
    spec_text = "E[pred] >= 0.5"
    seen = []
    opts = engines.get("monitor").resolve_options({"order": "given"})
    results = live_audit(parse(spec_text), iter(cut(frame, 30, 2)), decide=lambda f: f["y"].to_numpy(),
                         options=opts)
    for result in results:
        seen.append((int(result.info["stream_length"]), list(result.warnings)))
    first = next(rows for rows, warnings in seen if any("became empty" in w for w in warnings))
    assert first < 2 * n  # raised before the log ended
    final = seen[-1][1]
    assert any("changed after a decision" in w for w in final)
    assert any("do not look randomly ordered" in w for w in final)  # the monitor's hint, once


def test_no_drift_on_an_exchangeable_log():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"y": (rng.random(4000) < 0.6).astype(int)})
    opts = engines.get("monitor").resolve_options({"order": "given"})
    result = last(live_audit(parse("E[pred] >= 0.5"), iter(cut(frame, 20, 3)), decide=lambda f: f["y"].to_numpy(),
                             options=opts))
    assert result.verdict == "true" and not result.warnings and not result.assumption_broken


# ------------------------------------------------------------------------------------------------ the log readers
def test_csv_tail_reads_complete_lines_and_the_header_once(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(b"a,b\n1,x\n2,")
    tail = CsvTail(path)
    first = tail.poll()
    assert list(first.columns) == ["a", "b"] and first["a"].tolist() == [1]
    assert tail.poll() is None  # "2," is a partial line: it waits
    with open(path, "ab") as fh:
        fh.write(b" y \n3,z\n")
    second = tail.poll()
    assert second["a"].tolist() == [2, 3] and second["b"].tolist() == ["y", "z"]  # stripped as from_csv does
    tail.close()


def test_csv_tail_header_arrives_in_pieces(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(b"a,")
    tail = CsvTail(path)
    assert tail.poll() is None and tail.columns is None
    with open(path, "ab") as fh:
        fh.write(b"b\n")
    assert tail.poll() is None and tail.columns == ["a", "b"]
    tail.close()


def test_csv_tail_refuses_truncation_and_rotation(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(b"a\n1\n2\n")
    tail = CsvTail(path)
    tail.poll()
    path.write_bytes(b"a\n")  # truncated in place
    with pytest.raises(FairauditError, match="truncated"):
        tail.poll()
    tail.close()
    path.write_bytes(b"a\n1\n")
    tail = CsvTail(path)
    tail.poll()
    other = tmp_path / "new.csv"
    other.write_bytes(b"a\n1\n2\n3\n")
    os.replace(other, path)  # rotated: another file under the name
    with pytest.raises(FairauditError, match="rotated"):
        tail.poll()
    tail.close()


def test_parquet_dir_reads_each_file_once_in_name_order(tmp_path):
    pd.DataFrame({"a": [1, 2]}).to_parquet(tmp_path / "p-002.parquet")
    pd.DataFrame({"a": [0]}).to_parquet(tmp_path / "p-001.parquet")
    (tmp_path / ".p-003.parquet").write_bytes(b"partial")  # hidden: being written
    source = ParquetDir(tmp_path)
    assert source.poll()["a"].tolist() == [0, 1, 2]
    assert source.poll() is None
    pd.DataFrame({"a": [3]}).to_parquet(tmp_path / "p-003.parquet")
    assert source.poll()["a"].tolist() == [3]
    pd.DataFrame({"a": [9]}).to_parquet(tmp_path / "p-000.parquet")
    with pytest.raises(FairauditError, match="out of order"):
        source.poll()


def test_parquet_dir_waits_for_an_incomplete_file_then_refuses_a_broken_one(tmp_path):
    (tmp_path / "p-001.parquet").write_bytes(b"PAR1 not yet")
    source = ParquetDir(tmp_path)
    assert source.poll() is None  # retried: it may still be written
    with pytest.raises(FairauditError, match="not a readable Parquet file"):
        source.poll()  # the same size twice: broken


def test_json_lines_until_the_end_of_the_input():
    stream = io.StringIO("\n".join(json.dumps({"a": i, "b": " x "}) for i in range(5)) + "\n")
    source = JsonLines(stream)
    why = {}
    frames = list(follow(source, poll=0.01, why=why))
    assert pd.concat(frames)["a"].tolist() == list(range(5)) and why["end"] == "ended"
    assert pd.concat(frames)["b"].tolist() == ["x"] * 5


def test_json_lines_refuses_a_line_that_is_not_an_object():
    source = JsonLines(io.StringIO('{"a": 1}\n[1, 2]\n'))
    with pytest.raises(FairauditError, match="line 2"):
        list(follow(source, poll=0.01))


def test_follow_stops_when_asked_and_after_the_idle_timeout(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(b"a\n1\n")
    why = {}
    assert sum(len(f) for f in follow(CsvTail(path), poll=0.01, idle_timeout=0.1, why=why)) == 1
    assert why["end"] == "idle"
    stop = threading.Event()
    stop.set()
    why = {}
    assert list(follow(CsvTail(path), stop=stop, why=why)) == [] and why["end"] == "stopped"


def test_first_rows_accept_categories_that_have_not_arrived_yet():
    frame = pd.DataFrame({"race": ["Caucasian", "Caucasian"], "decile_score": [3, 7]})
    spec = parse('E[pred | race == "African-American"] >= 0.5')
    dataset = log_dataset(frame, "log", spec, [parse_event(PRED)])
    from fairaudit.core.preflight import preflight

    preflight(dataset, spec)  # no error for the category still to come
    assert "African-American" in dataset.schema.column("race").values


def test_a_column_keeps_its_first_type(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(b"score,zip\n3,A1\n5,B2\n")
    tail = CsvTail(path)
    tail.poll()
    with open(path, "ab") as fh:
        fh.write(b",01234\n7,99\n")  # a missing score, digits-only zips: still a number and text
    frame = tail.poll()
    assert np.isnan(frame["score"].iloc[0]) and frame["score"].iloc[1] == 7
    assert frame["zip"].tolist() == ["01234", "99"]
    with open(path, "ab") as fh:
        fh.write(b"high,C3\n")
    # refused as the file at rest refuses it (``fairaudit.sources.conform``), naming the log and its data row
    with pytest.raises(FairauditError, match=r"log\.csv, data row 5: column 'score' holds 'high', which is not a "
                                             r"whole number as its type, fixed by the first 2 data rows of "):
        tail.poll()
    tail.close()


def test_a_live_run_nobody_watches_stops(tmp_path):
    from fairaudit.engines.monitor.livelog import LiveRun

    path = tmp_path / "log.csv"
    path.write_text("y\n" + "1\n0\n" * 50)
    opts = engines.get("monitor").resolve_options({"order": "given"})
    run = LiveRun(parse("E[pred] >= 0.1"), path, pred="y == 1", options=opts, poll=0.05, unwatched=0.5)
    run.thread.join(20)
    assert run.done and run.error is None and run.why.get("unwatched") and run.rows == 100
    watched = LiveRun(parse("E[pred] >= 0.1"), path, pred="y == 1", options=opts, poll=0.05)
    time.sleep(0.8)
    assert not watched.done  # without a watchdog it follows the log until stopped
    watched.stop()
    assert watched.done and watched.ended() == "interrupted"


def test_csv_tail_semicolons_and_flags(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes("\ufeffa;ok\n1;True\n".encode())
    tail = CsvTail(path)
    first = tail.poll()
    assert tail.columns == ["a", "ok"] and first["ok"].tolist() == [True]
    with open(path, "ab") as fh:
        fh.write(b"2;False\n")
    assert tail.poll()["ok"].tolist() == [False]
    tail.close()


def test_a_live_run_keeps_going_while_its_session_is_connected(tmp_path):
    """The dashboard passes whether the browser session is still connected: a user on another page (no redraw of
    the live view) keeps the run going; once the session is gone for ``unwatched`` seconds it stops, and says why."""
    from fairaudit.engines.monitor.livelog import LiveRun

    path = tmp_path / "log.csv"
    path.write_text("y\n" + "1\n0\n" * 50)
    opts = engines.get("monitor").resolve_options({"order": "given"})
    connected = {"yes": True}
    run = LiveRun(parse("E[pred] >= 0.1"), path, pred="y == 1", options=opts, poll=0.05, unwatched=0.5,
                  alive=lambda: connected["yes"])
    time.sleep(1.5)
    assert not run.done  # nobody drew it for 1.5 s, but its session is connected
    connected["yes"] = False
    run.thread.join(20)
    assert run.done and run.why.get("unwatched") and "the dashboard was closed" in run.ended()


def _polled(source, text: str) -> pd.DataFrame | None:
    """``text`` written to the pipe a ``JsonLines`` reads, then one poll once its reader has every line."""
    source.stream_writer.write(text)
    source.stream_writer.flush()
    lines = text.count("\n")
    deadline = time.monotonic() + 10
    while source.lines.qsize() < lines and time.monotonic() < deadline:
        time.sleep(0.01)
    return source.poll()


@pytest.fixture
def json_pipe():
    r, w = os.pipe()
    reader, writer = os.fdopen(r, "r"), os.fdopen(w, "w")
    source = JsonLines(reader)
    source.stream_writer = writer
    yield source
    writer.close()
    source._thread.join(5)
    reader.close()


def test_json_lines_a_key_no_record_of_a_poll_has_is_missing(json_pipe):
    """A poll whose records all lack a key of the first rows: that column is missing in those rows (NaN for a
    number, "?" for text), as in the file at rest — it was "unknown column" (exit 2) or not, as polls fell."""
    first = _polled(json_pipe, '{"a": 1, "b": 2, "g": "x"}\n')
    assert list(first.columns) == ["a", "b", "g"]
    later = _polled(json_pipe, '{"a": 0}\n{"a": 1}\n')
    assert np.isnan(later["b"]).all() and later["g"].tolist() == ["?", "?"]
    assert event_array(parse_event('b == 2 or g == "x"'), later, None, None, None).tolist() == [False, False]


def test_json_lines_numbers_and_numbers_as_text_in_the_first_records_are_refused(json_pipe):
    """5 and "5" in the first records: which one a condition means is a guess, so the schema refuses the column
    (``fairaudit.sources.schema.infer_values``) — they were made numbers (``_numbers_kept``, gone with the pipeline),
    and text with a number among it text."""
    with pytest.raises(FairauditError, match=r"the JSON lines: column 'b' mixes a whole number and text in its first "
                                             r"records"):
        _polled(json_pipe, '{"b": 1, "g": "x"}\n{"b": "1", "g": "y"}\n{"b": null, "g": "y"}\n')


def test_json_lines_refuse_a_nested_value(json_pipe):
    with pytest.raises(FairauditError, match=r"line 2 of the JSON lines: 'b' holds a JSON array"):
        _polled(json_pipe, '{"a": 1, "b": 2}\n{"a": 1, "b": [1, 2]}\n')


def test_csv_tail_a_quoted_value_spanning_lines_waits_for_its_end(tmp_path):
    """A record whose quoted value holds a line end, written in two pieces: the piece that ends inside the quotes
    waits (it was parsed alone: "unexpected end of data", exit 2); escaped quotes "" keep the count."""
    path = tmp_path / "log.csv"
    path.write_bytes(b'a,note\n1,"say ""hi"",\nthere"\n2,"multi\n')
    tail = CsvTail(path)
    first = tail.poll()
    assert first["a"].tolist() == [1] and first["note"].tolist() == ['say "hi",\nthere']
    assert tail.poll() is None
    with open(path, "ab") as fh:
        fh.write(b'line"\n3,plain\n')
    assert tail.poll()["note"].tolist() == ["multi\nline", "plain"]
    with open(path, "ab") as fh:  # a quote inside an unquoted value is a character, as from_csv reads it
        fh.write(b'4,5" screen\n5,"a; b"\n')
    assert tail.poll()["note"].tolist() == ['5" screen', "a; b"]
    tail.close()


def test_json_lines_refuse_bytes_that_are_not_utf8():
    """Standard input decodes bad bytes as lone surrogates: one line, exit 2 (was an internal error, exit 4)."""
    source = JsonLines(io.StringIO('{"a": 1}\n{"a": "\udcff"}\n'))
    with pytest.raises(FairauditError, match="line 2 of the JSON lines is not UTF-8 text"):
        list(follow(source, poll=0.01))


def test_json_lines_a_text_column_stays_text_whatever_the_polls(json_pipe):
    """A column of text in the first records stays text: "5" in a later poll is the text "5"; the number 5 does not
    fit it and is refused with its data row (``conform``) — it was made the text "5" (``ColumnTypes``)."""
    _polled(json_pipe, '{"g": "x"}\n')
    assert _polled(json_pipe, '{"g": "5"}\n')["g"].tolist() == ["5"]
    with pytest.raises(FairauditError, match=r"the JSON lines: column 'g' is stored as int64 \(5 in data row 4\), "
                                             r"not as text"):
        _polled(json_pipe, '{"g": "6"}\n{"g": 5}\n')


def test_the_first_rows_are_not_counted_as_the_log(tmp_path):
    """The first rows of a live log are not the log: no "only 2 rows satisfy …" warning about them (it was given,
    and changed with how many rows the first poll happened to read); the at-rest audit counts every row."""
    from fairaudit.engines.monitor.livelog import prepare

    path = tmp_path / "log.csv"
    path.write_text("race,points\nA,3\nB,7\nA,9\n")
    tail = CsvTail(path)
    spec = parse('E[pred | race == "A"] > 0.1 and E[pred | race == "C"] > 0.1')
    first, _, _, warnings, _ = prepare(spec, tail, pred="points > 4", name="log.csv", poll=0.01, idle_timeout=1)
    tail.close()
    assert len(first) == 3 and not [w for w in warnings if "satisf" in w]


def test_an_infinite_number_in_a_later_chunk_is_refused_with_its_row(tmp_path):
    """Review finding: an ``inf`` arriving after the log's first rows was audited; at rest it is refused."""
    from fairaudit.base.errors import DataError

    path = tmp_path / "log.csv"
    path.write_bytes(b"a,b\n1.5,x\n2,y\n")
    tail = CsvTail(path)
    assert tail.poll()["a"].tolist() == [1.5, 2.0]
    with open(path, "ab") as fh:
        fh.write(b"3,z\ninf,z\n-inf,z\n")
    with pytest.raises(DataError, match=r"log\.csv, data row 4: column 'a' holds an infinite value \(inf\); "):
        tail.poll()
    tail.close()
    source = JsonLines(io.StringIO('{"a": 1.5}\n{"a": 2}\n{"a": 1e999}\n'))  # json reads 1e999 as inf
    with pytest.raises(DataError, match=r"the JSON lines, data row 3: column 'a' holds an infinite value \(inf\); "):
        list(follow(source, poll=0.01))
