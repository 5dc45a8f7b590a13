"""The bounded display trace (``fairaudit.core.trace.TraceBuilder(points=...)``) and the full trace in Parquet.

A thinned trace must keep, exactly, every fact a decision rests on: the first and last verdict change of every node
and the root's first changes (each with the check before it), the stop step, the first and the last check; its rows are rows of the full trace; its size is
bounded whatever the stream's length; the result built from it (verdict, stop step, verdict step, final values)
is the one built from every check."""
import json

import numpy as np
import pytest

from fairaudit.api import audit
from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.core.fulltrace import read_full_trace
from fairaudit.core.trace import LOG_RATIO, NODE_CHANGES, ROOT_CHANGES, AuditResult, Trace, TraceBuilder

SPEC = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.4'


def _random_trace(k, nodes, seed):
    rng = np.random.default_rng(seed)
    steps = np.cumsum(rng.integers(1, 9, k)).astype(np.int64)
    vals = rng.random((k, nodes))
    # verdicts that change now and then (runs of random length), as a drifting stream's would
    verdict = np.repeat(rng.choice([TRUE, FALSE, UNKNOWN], (k // 50 + 1, nodes)), 50, axis=0)[:k].astype(np.int8)
    flips = rng.random(k) < 0.002
    verdict[flips, 0] = TRUE
    return Trace(steps, [f"n{j}" for j in range(nodes)], vals, vals - 0.1, vals + 0.1, vals * 0 + 0.05, verdict,
                 vals * 10, vals, vals, vals)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_thinned_trace_keeps_every_change_and_is_bounded(seed):
    full = _random_trace(40_000, 3, seed)
    ids = full.node_ids
    thin, every = TraceBuilder(ids, points=300), TraceBuilder(ids)
    partial = []
    pin_step = int(full.steps[12_345])
    for a in range(0, len(full), 256):
        part = Trace(*(getattr(full, f)[a:a + 256] if f != "node_ids" else ids for f in (
            "steps", "node_ids", "estimate", "lo", "hi", "delta", "verdict", "n", "certified", "unfair", "undecided")))
        thin.append(part, pin=(pin_step,) if a <= 12_345 < a + 256 else ())
        every.append(part)
        partial.append((thin.view(), len(thin.view())))
    t, f = thin.view(), every.view()
    assert thin.checks == every.checks == len(f) == 40_000
    # rows of the full trace, in order
    pos = np.searchsorted(f.steps, t.steps)
    assert np.array_equal(f.steps[pos], t.steps)
    for name in ("estimate", "lo", "hi", "verdict", "n"):
        assert np.array_equal(getattr(f, name)[pos], getattr(t, name))
    # with the check before each: at least the first and last verdict change of every node, the root's first
    # ROOT_CHANGES changes; the first, last and pinned checks
    changed = np.diff(f.verdict, axis=0) != 0  # (checks - 1, nodes): a change at check c + 1
    held = set()
    for j in range(len(ids)):
        at = np.flatnonzero(changed[:, j]) + 1
        held |= {int(at[0]), int(at[-1])} if len(at) else set()
        if j == 0:
            held |= set(at[:ROOT_CHANGES].tolist())
    need = {int(f.steps[c]) for c in held} | {int(f.steps[c - 1]) for c in held}
    need |= {int(f.steps[0]), int(f.steps[-1]), pin_step}
    assert need <= set(t.steps.tolist())
    assert t.verdict_step() == f.verdict_step()
    # the changes left out are counted: a change is shown when its check and the check before it are kept
    kept = np.isin(f.steps, t.steps)
    events = np.argwhere(changed)
    shown = kept[events[:, 0] + 1] & kept[events[:, 0]]
    assert thin.changes == len(events) > 1_000
    assert thin.changes_dropped == int((~shown).sum()) > 0
    # strictly bounded: the uniform grid, the log grid, the changes kept
    log_cells = len(np.unique(np.floor(np.log(f.steps) / np.log(LOG_RATIO))))
    assert len(t) <= 300 + log_cells + 2 * (2 * len(ids) + ROOT_CHANGES + NODE_CHANGES) + 3
    # a trace handed out earlier is never changed by later appends
    for view, size in partial:
        assert len(view) == size
        p = np.searchsorted(f.steps, view.steps)
        assert np.array_equal(f.lo[p], view.lo)


def test_every_check_without_points():
    full = _random_trace(5_000, 2, 3)
    b = TraceBuilder(full.node_ids, points=None)
    b.append(full)
    assert np.array_equal(b.view().steps, full.steps) and not b.thinned


@pytest.fixture(scope="module")
def runs():
    kw = dict(pred="decile_score > 4", delta=0.05, batch=1, order="given")
    return audit("compas", SPEC, trace_points=50, **kw), audit("compas", SPEC, trace_points=None, **kw)


def test_thinned_result_has_the_full_results_facts(runs):
    thin, full = runs
    assert len(thin.trace_table) < len(full.trace_table) == full.info["checks"] == thin.info["checks"]
    assert thin.info["trace_kept"] == len(thin.trace_table)
    for attr in ("verdict", "stop_step", "verdict_step", "steps", "warnings", "assumption_broken"):
        assert getattr(thin, attr) == getattr(full, attr), attr
    assert thin.final.equals(full.final)
    assert int(thin.stop_step) in set(thin.trace_table.steps.tolist())


def test_thinned_result_json_round_trip_and_charts(runs):
    thin, _ = runs
    text = thin.to_json()
    back = AuditResult.from_json(text)
    assert back.to_json() == text
    assert back.verdict_step == thin.verdict_step and back.stop_step == thin.stop_step
    from fairaudit.viz.convergence import convergence_chart

    chart = convergence_chart(back.trace, back.root, back.nodes, stop_step=back.stop_step)
    spec = chart.to_dict()
    assert json.dumps(spec)


def test_full_trace_parquet_holds_every_check(tmp_path):
    path = tmp_path / "full.parquet"
    r = audit("compas", SPEC, pred="decile_score > 4", batch=3, order="given", trace_points=20, full_trace=path)
    frame = read_full_trace(path)
    assert frame["step"].nunique() == r.info["checks"] > len(r.trace_table)
    full = audit("compas", SPEC, pred="decile_score > 4", batch=3, order="given", trace_points=None)
    expect = full.trace.reset_index(drop=True)
    assert list(frame.columns) == list(expect.columns)
    assert np.allclose(frame["hi"].to_numpy(), expect["hi"].to_numpy(), equal_nan=True)
    assert (frame["verdict"].fillna("-") == expect["verdict"].fillna("-")).all()


def test_default_json_is_bounded(tmp_path):
    r = audit("adult", 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.3', pred='age > 40', batch=1)
    assert r.info["checks"] > 30_000
    assert len(r.to_json()) < 1_000_000


def test_cli_full_trace_and_bounded_json(tmp_path):
    import subprocess
    import sys

    out_json, out_trace = tmp_path / "r.json", tmp_path / "t.parquet"
    cmd = [sys.executable, "-m", "fairaudit", "audit", "--data", "compas", "--pred", "decile_score > 4",
           "--spec", SPEC, "--batch", "1", "--order", "given", "--trace-points", "40", "--json", str(out_json),
           "--full-trace", str(out_trace)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wrote {out_trace}" in done.stdout
    r = AuditResult.from_json(out_json.read_text())
    assert read_full_trace(out_trace)["step"].nunique() == r.info["checks"] > len(r.trace_table)
    # the trace file is never written over the data, nor over another kind of file without --force
    again = subprocess.run(cmd[:-2] + ["--full-trace", str(out_json)], capture_output=True, text=True)
    assert again.returncode == 2 and "refusing to overwrite" in again.stdout + again.stderr
