"""One input, one meaning, live: a generated log (``tests.sources.routes``), complete when the watch starts, followed
with ``fairaudit audit --follow PATH --watch`` until the idle timeout gives the verdict, stop step and intervals of
``--data`` in memory in given order — or the same refusal (the same message, exit 2). A live CSV log is one file (of
a log of several CSV parts, its first part is the log); a Parquet log is a folder.

The one difference by design: a live log's first rows need not hold every category yet, so a string the spec
compares a text column with is admitted live where the file at rest, holding every row, refuses it ("never takes
the value"), and the live run goes on to what comes next (a result, the next refusal, or "no audited row" when the
watch ends); those logs are not compared.

The log is complete before the watch starts, so the idle timeout only says when the watch ends (an empty poll comes
only once every row has been read: ``polls`` reads on at once while rows keep coming); 0.05 s instead of 0.2 s
takes this file from about 90 s to about 40 s and changes no verdict it compares."""
from __future__ import annotations

import os

import pytest

from tests.sources.routes import common_args, make_log, run_cli, write_log

LOGS = int(os.environ.get("FAIRAUDIT_LIVE_ROUTE_LOGS", "500"))
CHUNKS = 5


def live_args(log: dict, path) -> list[str]:
    args = common_args(log, path)
    follow = path if path.is_dir() or log["format"] == "csv" else path.parent  # a Parquet log is a folder
    i = args.index("--data")
    args[i:i + 2] = ["--follow", str(follow), "--watch", "--idle-timeout", "0.05", "--poll", "0.01"]
    i = args.index("--order")
    del args[i:i + 2]  # (a live log is audited in arrival order: given)
    return args


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_a_complete_log_followed_live_reads_as_the_file_at_rest(chunk, tmp_path_factory, capsys):
    seen = {"result": 0, "error": 0}
    for seed in range(chunk, LOGS, CHUNKS):
        log = make_log(seed)
        if log["format"] == "csv" and len(log["parts"]) > 1:
            log = {**log, "parts": log["parts"][:1]}
        if any(name.endswith(".gz") for name, _ in log["parts"]):  # a live log is written as it is, uncompressed
            import gzip

            log = {**log, "parts": [(n.removesuffix(".gz"), gzip.decompress(d) if n.endswith(".gz") else d)
                                    for n, d in log["parts"]]}
        folder = tmp_path_factory.mktemp(f"log{seed}")
        path = write_log(log, folder)
        rest = run_cli([*common_args(log, path), "--out-of-core", "off"], folder, capsys)
        live = run_cli(live_args(log, path), folder, capsys)
        if rest[0] == "error" and "never takes the value" in rest[2]:
            continue  # (admitted live: the value may still arrive, so live goes on to what comes next)
        assert live == rest, f"seed {seed} ({log['drift']}, {log['format']}): live differs from --data:\n" \
                             f"{live}\n{rest}"
        seen[rest[0]] += 1
    assert seen["result"] > 0 and seen["error"] > 0


def test_a_spec_that_reads_no_decision_needs_none_live(tmp_path, capsys):
    """A spec over logged columns only (no ``pred``) is audited without a decision at rest: live too, to the same
    result (issue 43: it was refused only live); one that reads ``pred`` still needs one."""
    path = tmp_path / "log.csv"
    path.write_text("g,decision,y\n" + "a,1,1\nb,0,0\n" * 150 + "a,1,0\n")
    spec = 'E[y == 1 | g == "a"] > 0.5'
    rest = run_cli(["--data", str(path), "--spec", spec, "--order", "given", "--out-of-core", "off"], tmp_path, capsys)
    live = run_cli(["--follow", str(path), "--watch", "--idle-timeout", "0.05", "--poll", "0.01", "--spec", spec],
                   tmp_path, capsys)
    assert rest[0] == "result" and live == rest
    refused = run_cli(["--follow", str(path), "--watch", "--idle-timeout", "0.05", "--spec", 'E[pred | g == "a"] > 0.5'],
                      tmp_path, capsys)
    assert refused[0] == "error" and refused[1] == 2 and "no decision" in refused[2]
