"""The ingestion pipeline's rules, each with the case that used to give another meaning to the same rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fairaudit import data
from fairaudit.cli import main
from fairaudit.base.errors import DataError
from fairaudit.sources import FileLog, TYPE_ROWS

SPEC = 'E[pred | group == "A"] - E[pred | group == "B"] < 0.1'


def _biased(n: int, seed: int = 0) -> pd.DataFrame:
    """Group A favoured 0.30 more often than B: the spec is violated."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["A", "B"], n)
    p = np.where(group == "A", 0.6, 0.3)
    return pd.DataFrame({"group": group, "decision": (rng.random(n) < p).astype(int)})


def _split(frame: pd.DataFrame, k: int) -> list[pd.DataFrame]:
    edges = np.linspace(0, len(frame), k + 1).astype(int)
    return [frame.iloc[a:b] for a, b in zip(edges[:-1], edges[1:])]


def _cli(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["audit", *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("row", [1, 601, TYPE_ROWS + 50])
@pytest.mark.parametrize("route", ["off", "on"])
def test_a_yes_among_whole_numbers_is_refused_wherever_it_is(tmp_path, capsys, row, route):
    frame = _biased(TYPE_ROWS + 200).astype({"decision": object})
    frame.loc[row - 1, "decision"] = "yes"
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    code, err = _cli(capsys, "--data", str(path), "--pred", "decision == 1", "--spec", SPEC, "--out-of-core", route)
    assert code == 2 and "error" in err and "Traceback" not in err
    if row > TYPE_ROWS:  # past the rows that fix the type: the row is named
        assert f"data row {row:,}: column 'decision' holds 'yes', which is not a whole number" in err
    else:  # the column is text: a number compared with it is refused before any row is counted
        assert "'decision' never takes the value 1" in err


def test_a_parquet_part_storing_numbers_as_text_is_refused(tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    frame = _biased(900)
    for i, part in enumerate(_split(frame, 3)):
        table = pa.Table.from_pandas(part.reset_index(drop=True), preserve_index=False)
        if i == 2:
            table = table.set_column(1, "decision", table.column("decision").cast(pa.string()))
        pq.write_table(table, folder / f"part-{i + 1}.parquet")
    for route in ("on", "off"):
        code, err = _cli(capsys, "--data", str(folder), "--pred", "decision == 1", "--spec", SPEC,
                         "--out-of-core", route)
        assert code == 2 and "part-3.parquet: column 'decision' is stored as string" in err, err


def test_a_folder_of_parts_is_one_log_in_natural_order(tmp_path):
    frame = _biased(1200, seed=3)
    folder = tmp_path / "logs"
    folder.mkdir()
    pieces = _split(frame, 11)
    for i, part in enumerate(pieces):
        part.to_csv(folder / f"part-{i + 1}.csv", index=False)
    log = FileLog(folder)
    assert [p.rsplit("-", 1)[1] for p in log.parts][:3] == ["1.csv", "2.csv", "3.csv"]
    assert log.parts[-1].endswith("part-11.csv")
    pd.testing.assert_frame_equal(log.read_all(), frame.reset_index(drop=True), check_dtype=False)


def test_only_empty_cells_are_missing_unless_told(tmp_path):
    path = tmp_path / "countries.csv"
    path.write_text("country,code,x\nNA,01,1.5\nNone,1,\nnull,001,2.5\nFR,1,3\n")
    ds = data.from_csv(path)
    assert ds.frame["country"].tolist() == ["NA", "None", "null", "FR"]  # Namibia is a country
    assert ds.frame["code"].tolist() == ["01", "1", "001", "1"]  # codes keep their zeros: "01" is not "1"
    assert ds.schema.column("code").kind == "categorical" and ds.frame["x"].isna().tolist() == [False, True,
                                                                                                 False, False]
    told = data.from_csv(path, na_values=["NA", "None", "null"])
    assert told.frame["country"].tolist() == ["?", "?", "?", "FR"]


def test_integers_stay_exact(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("group,decision\n1152921504606846976,1\n1152921504606846977,0\n")
    frame = data.from_csv(path).frame
    assert frame["group"].dtype == np.int64 and frame["group"].tolist() == [1 << 60, (1 << 60) + 1]
    path.write_text("group,decision\n1152921504606846976,1\n,0\n")  # with a missing one: not through a float
    assert data.from_csv(path).frame["group"].tolist()[0] == 1 << 60


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_line_ends_and_a_bom_are_read_alike(tmp_path, ending):
    text = ending.join(["group,decision", "A,1", 'B,"0"', "A,0"]) + ending
    path = tmp_path / "ends.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    log = FileLog(path)
    assert log.schema.names == ("group", "decision")
    assert log.read_all()["decision"].tolist() == [1, 0, 0]


def test_a_truncated_last_line_and_an_unclosed_quote_are_refused(tmp_path):
    path = tmp_path / "cut.csv"
    path.write_text("group,decision,note\nA,1,x\nB,0")
    with pytest.raises(DataError, match=r"data row 2: 2 fields but the header has 3"):
        FileLog(path).read_all()
    path.write_text('group,decision,note\nA,1,x\nB,0,"open\n')
    with pytest.raises(DataError, match="a quoted value opened in data row 2 is never closed"):
        FileLog(path).read_all()


def test_a_declared_type_is_kept_and_checked(tmp_path):
    path = tmp_path / "typed.csv"
    path.write_text("group,decision\nA,1\nB,0\n")
    log = FileLog(path, declared=["decision=text"])
    assert log.schema.kind("decision") == "text" and log.read_all()["decision"].tolist() == ["1", "0"]
    with pytest.raises(DataError, match="--column-type names column 'decison'.*did you mean 'decision'"):
        FileLog(path, declared={"decison": "text"})
    with pytest.raises(DataError, match="the type must be one of integer, float, boolean, text"):
        FileLog(path, declared=["decision=words"])


def test_the_data_page_reads_an_upload_with_the_same_options(tmp_path):
    """The dashboard's "How the file is read" (missing markers, declared types) is the command line's
    --na-values / --column-type, read by the same functions."""
    from fairaudit.ui import flows

    content = b"country,zip,score\nNA,01234,1\nFR,75001,NA\n"
    plain = flows.parse_upload(content, "up.csv")
    assert plain.frame["country"].tolist() == ["NA", "FR"] and plain.schema.column("score").kind == "categorical"
    told = flows.parse_upload(content, "up.csv", na_values="NA", column_types="zip=text, score=float")
    assert told.frame["country"].tolist() == ["?", "FR"] and told.frame["zip"].tolist() == ["01234", "75001"]
    assert told.schema.column("score").kind == "numeric" and told.frame["score"].isna().tolist() == [False, True]
    with pytest.raises(DataError, match="the type must be one of"):
        flows.parse_upload(content, "up.csv", column_types="zip=txt")


@pytest.mark.parametrize("first, late, kind", [("1.5", "1_000", "a number"), ("1", "1_0", "a whole number")])
def test_a_late_value_is_read_as_the_rows_that_typed_its_column(tmp_path, first, late, kind):
    """A number is what pyarrow reads as one, in the rows that type a column and after them: '1_000' (which Python's
    float() reads) was an internal error in a float column and the whole number 10 in an integer one."""
    path = tmp_path / "late.csv"
    path.write_text("x,g\n" + f"{first},a\n" * TYPE_ROWS + f"2,a\n{late},a\n")
    with pytest.raises(DataError, match=rf"data row {TYPE_ROWS + 2:,}: column 'x' holds '{late}', which is not "
                                        rf"{kind}"):
        FileLog(path).read_all()


def test_whole_numbers_written_as_floats_fit_an_integer_column(tmp_path):
    path = tmp_path / "whole.csv"
    path.write_text("x\n" + "1\n" * TYPE_ROWS + "2.0\n1e3\n")
    assert FileLog(path).read_all()["x"].tolist()[-2:] == [2, 1000]
