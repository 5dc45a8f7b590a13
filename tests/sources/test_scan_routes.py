"""One input, one scan: the scan of a generated log in memory (``--out-of-core off``) and read in batches
(``--out-of-core on``, ``fairaudit.subgroups.reading``) gives the same cells, counts, intervals, flags, looks and
warnings — or the same refusal. The logs are the route-equivalence generator's (``tests.sources.routes``: constant
parts, a group in one part only, single-row and empty parts, missing values, integers past 2^53, Parquet columns
stored as decimals, unsigned integers and dictionaries, drifts that must be refused); the batches are made tiny so
that batch boundaries fall everywhere."""
from __future__ import annotations

import json
import os

import pytest

from tests.sources.routes import make_log, write_log

LOGS = int(os.environ.get("FAIRAUDIT_SCAN_ROUTE_LOGS", "120"))
SCANS = (
    ["--protected", "g", "--depth", "1", "--mode", "exact"],
    ["--protected", "g", "code", "--depth", "2", "--mode", "anytime", "--order", "shuffle"],
    ["--protected", "g", "--bins", "x=0,0.25,0.5,1", "--depth", "2", "--mode", "one-look"],
    ["--protected", "code", "--bins", "x=0,0.5,1", "--depth", "2", "--mode", "anytime", "--order", "given"],
)


def scan_key(payload: dict) -> tuple:
    """What a signer reads of a scan: every cell's counts, intervals and flag, the looks, the row record."""
    def r(x):
        return None if x is None else round(float(x), 12)

    def est(e):
        return None if e is None else (r(e["estimate"]), r(e["lo"]), r(e["hi"]), e.get("exact"))

    cells = tuple((c["id"], c["rows"], c["selected"], est(c["rate"]), est(c.get("impact_ratio")), c["flag"],
                   r(c["delta"]), c.get("reference")) for c in payload["cells"])
    tables = tuple((tuple(t["attributes"]), t["rows"], t["unknown"], tuple(t["cells"]))
                   for t in payload["tables"])
    history = payload.get("history")
    looks = None if history is None else (tuple(history["rows"]),
                                          tuple(sorted((k, tuple(None if x is None else r(x) for x in v["rate_hi"]))
                                                       for k, v in history["cells"].items())))
    said = tuple(sorted(w for w in payload.get("warnings", ()) if "neither true nor false" in w))
    record = payload["scan"].get("rows_record") or {}
    return (cells, tables, looks, said, record.get("audited"), payload["scan"].get("data_hash"))


def run_scan(argv, tmp, capsys) -> tuple:
    from fairaudit.cli import main

    out = tmp / "scan.json"
    if out.exists():
        out.unlink()
    capsys.readouterr()
    code = main(["scan", *argv, "--json", str(out)])
    err = capsys.readouterr().err
    if code not in (0, 1, 3):
        lines = [line for line in err.splitlines() if "error" in line]
        return ("error", code, (lines[0] if lines else err).strip())
    return ("result", scan_key(json.loads(out.read_text())))


@pytest.mark.parametrize("chunk", range(6))
def test_the_scan_reads_every_log_alike_in_memory_and_in_batches(chunk, tmp_path_factory, capsys, monkeypatch):
    from fairaudit.subgroups import reading

    monkeypatch.setattr(reading, "READ_ROWS", 7)  # batch boundaries everywhere
    results = 0
    for seed in range(chunk, LOGS, 6):
        log = make_log(seed)
        tmp = tmp_path_factory.mktemp(f"scan{seed}")
        path = write_log(log, tmp)
        scan = SCANS[seed % len(SCANS)]
        where = ["--where", log["where"]] if log["where"] else []
        args = ["--data", str(path), "--pred", log["pred"], *scan, *where]
        memory = run_scan([*args, "--out-of-core", "off"], tmp, capsys)
        batches = run_scan([*args, "--out-of-core", "on"], tmp, capsys)
        assert batches == memory, f"seed {seed} ({log['drift']}, {log['format']}, {scan}): in batches\n{batches}\n" \
                                  f"in memory\n{memory}"
        assert memory[0] == "result" or memory[1] == 2, memory
        results += memory[0] == "result"
    assert results >= 3  # most logs are scanned, not refused


def test_a_parquet_folder_scanned_in_batches_equals_memory_with_a_label(tmp_path):
    """A label (TPR and FPR per cell), numeric categories read as integers in one part and as floats (a missing
    value) in another, and a category in the last part only."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import fairaudit
    from fairaudit.subgroups.reading import scan_log

    rng = np.random.default_rng(3)
    folder = tmp_path / "log"
    folder.mkdir()
    for p in range(3):
        n = 400
        grade = pa.array([int(v) for v in rng.integers(1, 4, n)] if p != 1 else
                         [None if i % 17 == 0 else int(v) for i, v in enumerate(rng.integers(1, 4, n))], pa.int64())
        group = rng.choice(["a", "b"] + (["late"] if p == 2 else []), n)
        pq.write_table(pa.table({"group": pa.array(group).dictionary_encode(), "grade": grade,
                                 "hired": rng.integers(0, 2, n), "good": rng.integers(0, 2, n)}),
                       folder / f"part-{p}.parquet")
    kw = dict(depth=2, pred="hired == 1", label="good", mode="anytime", looks=1)
    memory = fairaudit.scan(str(folder), ["group", "grade"], **kw).to_dict()
    batches = scan_log(str(folder), ["group", "grade"], rows=50, **kw).to_dict()
    for d in (memory, batches):
        d["scan"].pop("date")
    assert batches == memory
    ids = [c["id"] for c in memory["cells"]]
    assert "group=late" in ids and "grade=1" in ids and not any("1.0" in i for i in ids)


DASK_LOGS = int(os.environ.get("FAIRAUDIT_SCAN_DASK_LOGS", "36"))


@pytest.fixture(scope="module")
def scheduler():
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", dashboard_address=None,
                      host="127.0.0.1") as cluster:
        yield cluster.scheduler_address


@pytest.mark.timeout(600)
def test_the_scan_on_dask_reads_every_log_as_in_memory(scheduler, tmp_path_factory, capsys):
    """One part a partition, each counted on a worker in its own category codes and merged on the client: the
    same cells, intervals, looks and refusals as in memory."""
    results = 0
    for seed in range(DASK_LOGS):
        log = make_log(1000 + seed)
        tmp = tmp_path_factory.mktemp(f"dask{seed}")
        path = write_log(log, tmp)
        scan = SCANS[seed % len(SCANS)]
        where = ["--where", log["where"]] if log["where"] else []
        args = ["--data", str(path), "--pred", log["pred"], *scan, *where]
        memory = run_scan([*args, "--out-of-core", "off"], tmp, capsys)
        dask = run_scan([*args, "--scheduler", scheduler], tmp, capsys)
        assert dask == memory, f"seed {1000 + seed} ({log['drift']}, {log['format']}, {scan}): on Dask\n{dask}\n" \
                               f"in memory\n{memory}"
        results += memory[0] == "result"
    assert results >= 3
