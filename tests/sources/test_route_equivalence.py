"""One input, one meaning: every route reads a generated log to the same verdict, stop step and intervals — or to
the same refusal (the same message, exit 2). Routes: in memory (``--out-of-core off``), out of core
(``--out-of-core on``); the Dask and live routes are compared in their own modules against these two."""
from __future__ import annotations

import os
from collections import Counter

import pytest

from tests.sources.routes import CASES, REGRESSIONS, common_args, make_log, run_cli, write_log

LOGS = int(os.environ.get("FAIRAUDIT_ROUTE_LOGS", "500"))
REFUSED = {"yes_late", "yes_first", "text_part", "renamed", "truncated", "inf"}  # never audited, on any route
SEVERAL = {"text_part", "renamed"}  # (drifts between parts: only where there are several)


def test_the_generator_reaches_every_case(capsys):
    """The logs the tests below draw reach every case of ``CASES`` (issue 43, item 2), counted and printed."""
    seen = Counter()
    for seed in range(LOGS):
        seen.update(make_log(seed)["cases"])
    with capsys.disabled():
        print(f"\nroute-equivalence generator, {LOGS} logs:")
        for case in CASES:
            print(f"  {seen[case]:5d}  {case}")
    floor = max(1, LOGS // 100)
    assert all(seen[case] >= floor for case in CASES), {case: seen[case] for case in CASES}


def routes(log, tmp_path, capsys) -> dict:
    path = write_log(log, tmp_path)
    args = common_args(log, path)
    return {"memory": run_cli([*args, "--out-of-core", "off"], tmp_path, capsys),
            "out_of_core": run_cli([*args, "--out-of-core", "on"], tmp_path, capsys)}


@pytest.mark.parametrize("chunk", range(10))
def test_in_memory_and_out_of_core_read_every_log_alike(chunk, tmp_path_factory, capsys):
    seen = {"result": 0, "error": 0}
    for seed in range(chunk, LOGS, 10):
        log = make_log(seed)
        got = routes(log, tmp_path_factory.mktemp(f"log{seed}"), capsys)
        first = got["memory"]
        for name, other in got.items():
            assert other == first, f"seed {seed} ({log['drift']}, {log['format']}): {name} differs from memory:\n" \
                                   f"{other}\n{first}"
        assert first[0] == "result" or first[1] == 2, f"seed {seed}: exit {first[1]}: {first[2]}"
        unread = log["drift"] == "inf" and "x" not in log["spec"] + log["where"]  # (a column no route reads)
        if log["drift"] in REFUSED and (log["drift"] not in SEVERAL or len(log["parts"]) > 1) and not unread:
            assert first[0] == "error", f"seed {seed}: a log with {log['drift']} was audited: {first}"
        seen[first[0]] += 1
    assert seen["result"] > 0


DASK_LOGS = int(os.environ.get("FAIRAUDIT_ROUTE_DASK_LOGS", "500"))


@pytest.fixture(scope="module")
def scheduler():
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", dashboard_address=None,
                      host="127.0.0.1") as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("chunk", range(5))  # (chunks: make test's workers share the logs)
def test_dask_reads_every_log_as_in_memory(chunk, scheduler, tmp_path_factory, capsys):
    """The same generated logs on a Dask cluster (``--scheduler``): the in-memory run's result or refusal."""
    for seed in range(chunk, DASK_LOGS, 5):
        log = make_log(seed)
        tmp = tmp_path_factory.mktemp(f"dask{seed}")
        path = write_log(log, tmp)
        args = common_args(log, path)
        memory = run_cli([*args, "--out-of-core", "off"], tmp, capsys)
        dask = run_cli([*args, "--scheduler", scheduler], tmp, capsys)
        assert dask == memory, f"seed {seed} ({log['drift']}, {log['format']}): Dask differs:\n{dask}\n{memory}"


def _live_args(log: dict, path, tmp) -> list[str]:
    """``--follow`` of the same stream: a CSV log of several parts as one file (the parts' rows in order)."""
    from tests.sources.test_live_route import live_args

    if log["format"] == "csv" and path.is_dir():
        lines = [log["parts"][0][1].splitlines()[0]]
        for _, data in log["parts"]:
            lines += data.splitlines()[1:]
        path = tmp / "whole.csv"
        path.write_bytes(b"\n".join(lines) + b"\n")
    return live_args(log, path)


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regressions_read_alike_on_every_route(name, scheduler, tmp_path, capsys):
    """Every log a route once answered differently (``REGRESSIONS``): in memory, out of core, on Dask and followed
    live, the same verdict, stop step and intervals."""
    log = REGRESSIONS[name]
    path = write_log(log, tmp_path)
    args = common_args(log, path)
    got = {"memory": run_cli([*args, "--out-of-core", "off"], tmp_path, capsys),
           "out_of_core": run_cli([*args, "--out-of-core", "on"], tmp_path, capsys),
           "dask": run_cli([*args, "--scheduler", scheduler], tmp_path, capsys),
           "live": run_cli(_live_args(log, path, tmp_path), tmp_path, capsys)}
    assert got["memory"][0] == "result"
    for route, other in got.items():
        assert other == got["memory"], f"{name}: {route} differs from memory:\n{other}\n{got['memory']}"
