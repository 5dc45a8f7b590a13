"""A live log read through the one ingestion pipeline (``fairaudit.sources``, issue 27 "one input, one meaning"):
the schema fixed by the first poll, every later poll checked against it with its file and row, the values and the
refusals of the file at rest (``fairaudit.data.from_csv``, ``fairaudit.sources.FileLog``)."""
import io
import threading
import time

import numpy as np
import pandas as pd
import pytest

from fairaudit import data, engines
from fairaudit.base.errors import FairauditError
from fairaudit.engines.monitor.livelog import LiveRun, log_dataset, prepare
from fairaudit.sources.live import CsvTail, JsonLines, ParquetDir, follow
from fairaudit.core.preflight import option_source, preflight
from fairaudit.sources import FileLog, UnfitValue
from fairaudit.spec import parse, parse_event


def decisions(n: int) -> str:
    return "".join(f"{i % 2},{'A' if i % 3 else 'B'}\n" for i in range(n))


def append(path, text) -> None:
    with open(path, "ab") as fh:
        fh.write(text if isinstance(text, bytes) else text.encode())


# ------------------------------------------------------------------------------------- a later poll that does not fit
def test_a_value_that_does_not_fit_a_later_poll_is_refused_with_its_row(tmp_path):
    """``yes`` among the 1/0 of ``decision`` at data row 601, after the first poll fixed the column as whole
    numbers: refused naming the log and row 601 (it was refused without a row, as "numbers in the first rows")."""
    path = tmp_path / "log.csv"
    path.write_text("decision,group\n" + decisions(600))
    tail = CsvTail(path)
    assert len(tail.poll()) == 600
    append(path, "yes,A\n1,B\n")
    with pytest.raises(FairauditError) as err:
        tail.poll()
    tail.close()
    assert str(err.value).startswith(f"{path}, data row 601: column 'decision' holds 'yes', which is not a whole "
                                     "number as its type, fixed by the first 600 data rows of")
    assert isinstance(err.value, UnfitValue)
    assert (err.value.row, err.value.column, err.value.origin) == (601, "decision", str(path))


def test_yes_in_the_first_row_makes_the_column_text_as_at_rest(tmp_path):
    """``yes`` in the first row: the column is text, and ``decision == 1`` is refused with the message the file at
    rest gives (it was accepted live: the literal 1 was admitted as a value still to come)."""
    text = "decision,group\nyes,A\n0,B\n1,A\n"
    path = tmp_path / "log.csv"
    path.write_text(text)
    tail = CsvTail(path)
    spec = parse('E[pred | group == "A"] >= 0.1')
    with pytest.raises(FairauditError) as live:
        prepare(spec, tail, pred="decision == 1", name="log.csv", poll=0.01, idle_timeout=1)
    tail.close()
    assert "'decision' never takes the value 1 (it holds strings: write the value in quotes)" in str(live.value)
    rest = data.from_csv(text.encode(), name="log.csv")
    with pytest.raises(FairauditError) as at_rest:
        preflight(rest, spec, decision=option_source("decision == 1", "the decision"))
    assert str(live.value) == str(at_rest.value)


def test_a_literal_of_another_type_than_its_column_is_refused_as_at_rest():
    """``log_dataset`` admits a value not seen yet only for a text column and only a string: ``group == "true"`` on
    a column of true/false, and ``code == 1`` on one of text, are refused as the file at rest refuses them."""
    text = b"group,code,decision\nTrue,x1,1\nFalse,x2,0\n"
    log = FileLog("log.csv", data=text)  # the first rows as the pipeline gives them
    frame = log.read_all()
    assert log.schema.kinds == ("boolean", "text", "integer")
    for spec_text in ('E[pred | group == "true"] >= 0.1', "E[pred | code == 1] >= 0.1"):
        spec = parse(spec_text)
        live = log_dataset(frame, "log.csv", spec, [parse_event("decision == 1")])  # (kinds: the frame's types)
        rest = data.from_csv(text, name="log.csv")
        with pytest.raises(FairauditError) as a:
            preflight(live, spec)
        with pytest.raises(FairauditError) as b:
            preflight(rest, spec)
        assert str(a.value) == str(b.value) and "never takes the value" in str(a.value)
        with pytest.raises(FairauditError, match="never takes the value"):
            preflight(log_dataset(frame, "log.csv", spec, schema=log.schema), spec)
    spec = parse('E[pred | code == "x9"] >= 0.1 and E[pred | group == 1] >= 0.1')  # still to come: admitted
    preflight(log_dataset(frame.iloc[:1], "log.csv", spec, schema=log.schema), spec)


def test_na_is_a_value_in_every_poll(tmp_path):
    """Only an empty cell is missing: ``NA`` (Namibia) arriving in a later poll is the value "NA" (pandas read it as
    missing, "?", after the first poll)."""
    path = tmp_path / "log.csv"
    path.write_text("country,y\nDE,1\nFR,0\n")
    tail = CsvTail(path)
    tail.poll()
    append(path, "NA,1\n,0\nNULL,1\n")
    assert tail.poll()["country"].tolist() == ["NA", "?", "NULL"]
    tail.close()


def test_declared_types_and_missing_markers_apply_live_as_at_rest(tmp_path):
    """``--column-type`` and ``--na-values`` reach a live log: ``yes`` later in a column declared text is a value, and
    a literal that ``na_values`` reads as missing is not admitted as a value still to come."""
    from fairaudit.sources.live import open_log

    path = tmp_path / "log.csv"
    path.write_text("g,decision\nA,1\nnull,0\n")
    tail = open_log(path, declared=["decision=text"], na_values=("NA", "null"))
    assert tail.poll()["g"].tolist() == ["A", "?"]
    append(path, "NA,yes\n")
    assert tail.poll()["decision"].tolist() == ["yes"]
    tail.close()
    spec = parse('E[pred | g == "NA"] >= 0.1')
    with pytest.raises(FairauditError) as live:
        prepare(spec, open_log(path, declared=["decision=text"], na_values=("NA", "null")), pred='decision == "1"',
                name="log.csv", poll=0.01, idle_timeout=1)
    rest = data.from_csv(path, column_types=["decision=text"], na_values=("NA", "null"))
    with pytest.raises(FairauditError) as at_rest:
        preflight(rest, spec)
    assert str(live.value) == str(at_rest.value) and "never takes the value \"NA\"" in str(live.value)


# --------------------------------------------------------------------------------------------------- the log's end
def test_a_last_line_cut_short_is_refused_when_the_log_ends(tmp_path):
    """A last line with fewer fields and no line end when the watch ends (the idle timeout): refused naming its
    row, as the file at rest refuses it (it was left unread, silently)."""
    text = b"a,b\n1,x\n2,y\n3"
    path = tmp_path / "log.csv"
    path.write_bytes(text)
    with pytest.raises(FairauditError) as live:
        list(follow(CsvTail(path), poll=0.01, idle_timeout=0.2))
    with pytest.raises(FairauditError) as rest:
        data.from_csv(path)
    assert str(live.value) == str(rest.value)
    assert "data row 3: 1 field but the header has 2 ('3')" in str(live.value)


def test_a_complete_last_line_without_a_line_end_is_read_when_the_log_ends(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(b"a,b\n1,x\n2,y\n3,z")
    why = {}
    frames = list(follow(CsvTail(path), poll=0.01, idle_timeout=0.2, why=why))
    assert pd.concat(frames)["b"].tolist() == ["x", "y", "z"] and why["end"] == "idle"
    stop = threading.Event()  # an interrupt does not read it: the line may still be being written
    tail = CsvTail(path)
    got = []
    for frame in follow(tail, poll=0.01, stop=stop):
        got.append(frame)
        stop.set()
    assert pd.concat(got)["b"].tolist() == ["x", "y"]


def test_a_log_of_one_line_without_its_end_is_audited(tmp_path):
    """The header and a single row without a line end: the first rows arrive at the idle timeout, once."""
    path = tmp_path / "log.csv"
    path.write_bytes(b"race,points\nA,3")
    tail = CsvTail(path)
    why = {}
    started = time.monotonic()
    first, _, _, _, _ = prepare(parse('E[pred | race == "A"] > 0.1'), tail, pred="points > 2", name="log.csv",
                                poll=0.01, idle_timeout=0.3, why=why)
    assert len(first) == 1 and why["end"] == "idle"
    assert [len(f) for f in follow(tail, first=first, poll=0.01, idle_timeout=0.3, why=why)] == [1]
    assert time.monotonic() - started < 0.3 * 2.5  # no second idle wait after the log's end


# ----------------------------------------------------------------------------------- bytes as the file at rest reads
def test_cr_line_ends_are_read(tmp_path):
    """A log whose lines end with CR only (old Mac): its header and rows are read (it waited for a LF forever)."""
    path = tmp_path / "log.csv"
    path.write_bytes(b"a,b\r1,x\r2,y\r")
    tail = CsvTail(path)
    frame = tail.poll()
    assert tail.columns == ["a", "b"] and frame["a"].tolist() == [1, 2] and frame["b"].tolist() == ["x", "y"]
    append(path, b"3,z\r")
    assert tail.poll()["b"].tolist() == ["z"]
    tail.close()


SAMPLES = {
    "cr line ends": b"a,b\r1,x\r2,y\r3,z\r",
    "crlf": b"a,b\r\n1,x\r\n2,y\r\n",
    "bom, blank lines, semicolons": b"\xef\xbb\xbf\n\na;ok\n1;True\n\n2;false\n3;TRUE\n",
    "quotes": b'a,note\n1,"say ""hi"",\nthere"\n2,"multi\r\nline"\n3,plain\n4,5" screen\n5,"a; b"\n6, "q"\n',
    "no line end at the end": b"id,score,group\n007,1.5,A\n008,,B\n009,2,NA",
    "digits then text": b"zip,y\n01234,1\n99,0\nA1,1\n",
}


@pytest.mark.parametrize("name", list(SAMPLES))
@pytest.mark.parametrize("piece", [1, 3, 7, 1000])
def test_a_log_read_in_pieces_gives_the_rows_of_the_file_at_rest(tmp_path, name, piece):
    """The bytes appended ``piece`` at a time (cutting lines, quotes, CR LF pairs and the byte-order mark), polled
    after each piece, then the log's end: the rows, values and types ``from_csv`` reads from the whole file."""
    text = SAMPLES[name]
    path = tmp_path / "log.csv"
    path.write_bytes(b"")
    tail = CsvTail(path)
    frames = []
    for i in range(0, len(text), piece):
        append(path, text[i:i + piece])
        frame = tail.poll()
        if frame is not None:
            frames.append(frame)
    last = tail.finish()
    if last is not None:
        frames.append(last)
    tail.close()
    rest = data.from_csv(text, name="log.csv").frame
    # (the first poll may hold fewer rows than the file: the samples type alike from their first row)
    live = pd.concat(frames, ignore_index=True)
    assert list(live.columns) == list(rest.columns)
    for c in rest.columns:
        assert live[c].tolist() == rest[c].tolist() or np.allclose(live[c], rest[c], equal_nan=True), c


def test_csv_tail_and_the_file_at_rest_read_one_schema(tmp_path):
    path = tmp_path / "log.csv"
    text = b"id,score,flag,group\n007,1.5,true,A\n8,2,False,B\n"
    path.write_bytes(text)
    tail = CsvTail(path)
    tail.poll()
    assert tail.schema == FileLog(path).schema
    tail.close()


# ----------------------------------------------------------------------------------------------- Parquet, JSON lines
def test_a_parquet_file_that_stores_a_number_column_as_text_is_refused(tmp_path):
    """The third file of a Parquet log stores ``decision`` as "1"/"0": refused naming that file (it was read as
    numbers)."""
    for i in (1, 2):
        pd.DataFrame({"decision": [1, 0], "group": ["A", "B"]}).to_parquet(tmp_path / f"part-{i}.parquet")
    source = ParquetDir(tmp_path)
    assert source.poll()["decision"].tolist() == [1, 0, 1, 0]
    pd.DataFrame({"decision": ["1", "0"], "group": ["A", "B"]}).to_parquet(tmp_path / "part-3.parquet")
    with pytest.raises(UnfitValue, match=r"part-3\.parquet: column 'decision' is stored as \w+ \('1' in data row "
                                         r"1\), not as a whole number as its type, fixed by the column types stored "
                                         r"in .*part-1\.parquet") as live:
        source.poll()
    with pytest.raises(UnfitValue) as rest:
        FileLog(tmp_path).read_all()
    assert str(live.value) == str(rest.value)


def test_a_parquet_file_with_a_renamed_column_is_refused(tmp_path):
    pd.DataFrame({"decision": [1, 0], "group": ["A", "B"]}).to_parquet(tmp_path / "part-1.parquet")
    source = ParquetDir(tmp_path)
    source.poll()
    pd.DataFrame({"decisions": [1, 0], "group": ["A", "B"]}).to_parquet(tmp_path / "part-2.parquet")
    with pytest.raises(FairauditError, match=r"part-2\.parquet lacks column 'decision' and has column 'decisions'"):
        source.poll()
    assert "decision" in FileLog(tmp_path / "part-1.parquet").schema


def test_parquet_files_are_read_in_the_order_of_the_folder_at_rest(tmp_path):
    for i in (1, 2, 10):
        pd.DataFrame({"a": [i]}).to_parquet(tmp_path / f"part-{i}.parquet")
    assert ParquetDir(tmp_path).poll()["a"].tolist() == [1, 2, 10] == FileLog(tmp_path).read_all()["a"].tolist()


def test_json_lines_a_key_the_first_records_did_not_have_is_refused():
    source = JsonLines(io.StringIO('{"decision": 1, "g": "A"}\n{"decision": 0}\n'))
    assert len(list(follow(source, poll=0.01))) >= 1
    source = JsonLines(io.StringIO('{"decision": 1, "g": "A"}\n'))
    frames = follow(source, poll=0.01)
    next(frames)
    source.lines.put('{"decisionx": 1, "g": "A"}\n')
    with pytest.raises(FairauditError, match=r"data row 2 \(line 2\) has key 'decisionx', which the first records"):
        next(frames)


# ------------------------------------------------------------------------------------------------ a live run failing
def test_a_live_run_a_value_ends_keeps_its_verdict_so_far_marked_incomplete(tmp_path):
    """The dashboard's run: the error names the log and its row, and the verdict so far is kept, incomplete, saying
    it is not the log's final answer (it read "stopped on request")."""
    path = tmp_path / "log.csv"
    path.write_text("decision,group\n" + decisions(600))
    opts = engines.get("monitor").resolve_options({"order": "given"})
    run = LiveRun(parse('E[pred | group == "A"] >= 0.5'), path, pred="decision == 1", options=opts, poll=0.05)
    deadline = time.monotonic() + 30
    while run.rows < 600 and time.monotonic() < deadline:
        time.sleep(0.05)
    append(path, "yes,A\n")
    run.thread.join(30)
    assert run.done and run.error.startswith("log.csv, data row 601: column 'decision' holds 'yes'")
    assert run.latest is not None and not run.latest.complete and run.rows == 600
    assert "not the log's final answer" in run.latest.stopped_reason
    assert "data row 601" in run.latest.stopped_reason and run.ended() is None
