"""``fairaudit audit --dask`` / ``--scheduler`` as a user runs them: a subprocess, its output, its exit code.

``--dask`` on a folder of Parquet files gives the JSON result of the in-process CLI on the same rows (one CSV), and
so does ``--dask`` on that CSV (one part); bad input (no CSV or Parquet part, an unreachable scheduler, a Dask knob
without --dask, --dask with --scheduler, a Fair[...] leaf) is one line on stderr and exit 2, before any cluster
starts (or within the timeout); a part that does not fit the log's schema is exit 2 with the out-of-core route's
line.
"""
from __future__ import annotations

import json

import pytest

from tests.engines.parquet_logs import PRED, SPEC, cli, frame, write_log

pytestmark = pytest.mark.timeout(150)


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli") / "log"
    write_log(frame(12_000), folder, parts=4)
    return folder


def test_dask_gives_the_in_process_result(log, tmp_path):
    common = ["--pred", PRED, "--spec", SPEC, "--order", "given", "--trace-points", "0"]
    local = cli("--data", log.parent / "log.csv", *common, "--json", tmp_path / "a.json")
    dask = cli("--data", log, *common, "--dask", "--dask-workers", "2", "--json", tmp_path / "b.json")
    assert local.returncode == dask.returncode == 0, dask.stderr
    assert "read in 4 partitions by a Dask cluster" in dask.stdout
    assert dask.stderr == ""  # no cluster chatter
    a, b = (json.loads((tmp_path / f"{x}.json").read_text()) for x in "ab")
    assert (a["verdict"], a["stop_step"], a["steps"]) == (b["verdict"], b["stop_step"], b["steps"])
    assert a["trace"] == b["trace"] and a["nodes"] == b["nodes"]
    verdicts = [line for line in dask.stdout.splitlines() if line.startswith(("verdict", "guarantee", "stop step"))]
    assert verdicts == [line for line in local.stdout.splitlines()
                        if line.startswith(("verdict", "guarantee", "stop step"))]


@pytest.mark.parametrize("args, said", [
    (["--dask"], "holds no CSV or Parquet file (*.csv, *.csv.gz, *.parquet, *.pq)"),
    (["--dask-workers", "3"], "--dask-workers sets up a Dask cluster: give --dask (or --scheduler ADDRESS) too"),
    (["--dask", "--scheduler", "tcp://127.0.0.1:9"], "not both"),
    (["--dask", "--engine", "dataset"], "--dask runs the monitor engine over a log, not dataset"),
    (["--scheduler", "tcp://127.0.0.1:9", "--dask-timeout", "1"],
     "cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, log, args, said):
    data = tmp_path if args == ["--dask"] else log  # an empty folder: no Parquet files
    out = cli("--data", data, "--pred", PRED, "--spec", SPEC, *args, timeout=60)
    assert out.returncode == 2, out.stderr
    assert said in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_fair_leaf_without_a_model_file_is_refused(log):
    out = cli("--data", log, "--model", "nothing.skops", "--spec", "Fair[race] > 0.9", "--dask", timeout=60)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_a_csv_log_on_dask(log, tmp_path):
    """A CSV is a log of one part on Dask too (it was refused: "is not a Parquet file"): the in-process result; a CSV
    part with ``yes`` in a column of whole numbers is exit 2 with the out-of-core route's very line."""
    common = ["--pred", PRED, "--spec", SPEC, "--order", "given", "--trace-points", "0"]
    local = cli("--data", log.parent / "log.csv", *common, "--json", tmp_path / "a.json")
    dask = cli("--data", log.parent / "log.csv", *common, "--dask", "--json", tmp_path / "b.json")
    assert local.returncode == dask.returncode == 0, dask.stderr
    assert "read in 1 partition by a Dask cluster" in dask.stdout
    a, b = (json.loads((tmp_path / f"{x}.json").read_text()) for x in "ab")
    assert (a["verdict"], a["stop_step"], a["trace"]) == (b["verdict"], b["stop_step"], b["trace"])
    folder = tmp_path / "parts"
    folder.mkdir()
    lines = (log.parent / "log.csv").read_text().splitlines()
    for i, (start, stop) in enumerate(((1, 5_000), (5_000, 9_000), (9_000, len(lines)))):
        (folder / f"part-{i}.csv").write_text("\n".join([lines[0]] + lines[start:stop]) + "\n")
    bad = (folder / "part-1.csv").read_text().splitlines()
    cells = bad[10].split(",")
    cells[3] = "yes"  # decile_score
    bad[10] = ",".join(cells)
    (folder / "part-1.csv").write_text("\n".join(bad) + "\n")
    out_of_core = cli("--data", folder, *common)
    dask = cli("--data", folder, *common, "--dask")
    assert out_of_core.returncode == dask.returncode == 2, dask.stderr
    assert "part-1.csv, data row 10: column 'decile_score' holds 'yes'" in dask.stderr
    assert dask.stderr == out_of_core.stderr and len(dask.stderr.strip().splitlines()) == 1

