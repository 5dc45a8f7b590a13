"""The display trace is strictly bounded even when verdicts keep flipping (issue 18): an adversarial stream whose
comparison flips between certified, violated and undecided thousands of times, driven through the real driver
(``fairaudit.core.driver.drive``) by a stand-in engine. The thinned result keeps the first and last change of every node, the
root's first ``ROOT_CHANGES`` changes and the others' first ``NODE_CHANGES``, counts the changes it leaves out
(``info``, JSON, the CLI summary), and has the verdict, stop step, verdict step and final values of the run that
keeps every check; its JSON stays under 1 MB for two million checks."""
from __future__ import annotations

import numpy as np
import pytest

from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.core.engine import Context, LeafBatch
from fairaudit.engines.monitor.engine import Monitor
from fairaudit.core.evaluate import LeafValue, compile_spec
from fairaudit.core.guarantee import Guarantee
from fairaudit.core.driver import drive, last
from fairaudit.spec import parse
from fairaudit.core.trace import LOG_RATIO, NODE_CHANGES, ROOT_CHANGES, AuditResult, display_points, thinning_note

SPEC = 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1'
BATCH = 4096


def _verdicts(checks: int, seed: int) -> np.ndarray:
    """The root's intended verdict at each check: runs of 1 to 12 checks of true / false / unknown."""
    rng = np.random.default_rng(seed)
    runs = rng.integers(1, 13, checks // 3 + 1)
    codes = rng.choice([TRUE, FALSE, UNKNOWN], len(runs))
    return np.repeat(codes, runs)[:checks]


def _batches(spec, checks: int, seed: int):
    """Leaf intervals that make each difference certainly below 0.1 (true), above it (false) or straddle it, as
    ``_verdicts`` says (one seed per comparison): the first group's rate moves, the second's stays put."""
    keys = compile_spec(spec).leaf_keys
    pairs = [(keys[i], keys[i + 1], _verdicts(checks, seed + i)) for i in range(0, len(keys), 2)]
    for a in range(0, checks, BATCH):
        k = min(BATCH, checks - a)
        steps = 5 * (a + 1 + np.arange(k, dtype=np.int64))
        leaves, half = {}, np.full(k, 0.02)
        for moving, fixed, want in pairs:
            v = want[a:a + k]
            centre = np.select([v == TRUE, v == FALSE], [0.35, 0.45], 0.40)  # fixed 0.3: 0.05 / 0.15 / 0.1 apart
            leaves[moving] = LeafValue(centre, centre - half, centre + half, 0.025, steps / 2.0)
            leaves[fixed] = LeafValue(np.full(k, 0.3), np.full(k, 0.29), np.full(k, 0.31), 0.025, steps / 2.0)
        yield LeafBatch(steps, leaves, done=float(a + k), total=float(checks))


def _run(checks: int, seed: int, trace_points="auto", text: str = SPEC) -> AuditResult:
    spec = parse(text)
    return last(drive(Monitor(), spec, _batches(spec, checks, seed), options={"delta": 0.05},
                      guarantee=Guarantee("probabilistic", 0.05), ctx=Context(), trace_points=trace_points))


@pytest.fixture(scope="module")
def pair():
    return _run(120_000, 1), _run(120_000, 1, trace_points=None)


def test_flipping_stream_keeps_the_facts_of_every_check(pair):
    thin, full = pair
    f, t = full.trace_table, thin.trace_table
    root = np.diff(f.verdict[:, 0]) != 0
    assert root.sum() > 10_000  # adversarial: the root flips over ten thousand times
    assert len(t) < 2_500 < len(f) == thin.info["checks"] == 120_000
    for attr in ("verdict", "stop_step", "verdict_step", "steps", "warnings", "assumption_broken"):
        assert getattr(thin, attr) == getattr(full, attr), attr
    assert thin.final.equals(full.final)
    kept = set(t.steps.tolist())
    # the root's first ROOT_CHANGES changes and its last, each with the check before it; every node's first and last
    at = np.flatnonzero(root) + 1
    for c in list(at[:ROOT_CHANGES]) + [at[-1]]:
        assert {int(f.steps[c]), int(f.steps[c - 1])} <= kept
    for j in range(f.verdict.shape[1]):
        changes = np.flatnonzero(np.diff(f.verdict[:, j]) != 0) + 1
        for c in changes[[0, -1]] if len(changes) else ():
            assert {int(f.steps[c]), int(f.steps[c - 1])} <= kept
    assert int(thin.stop_step) in kept
    # the count of changes left out, against the full trace: a change is shown when it and the check before are kept
    events = np.argwhere(np.diff(f.verdict, axis=0) != 0)
    present = np.isin(f.steps, t.steps)
    shown = present[events[:, 0]] & present[events[:, 0] + 1]
    assert thin.info["verdict_changes"] == len(events)
    assert thin.info["verdict_changes_dropped"] == int((~shown).sum()) > 10_000
    assert "verdict_changes_dropped" not in full.info


def test_counts_reach_the_json_and_the_cli_summary(pair, capsys):
    thin, _ = pair
    back = AuditResult.from_json(thin.to_json())
    assert back.info["verdict_changes_dropped"] == thin.info["verdict_changes_dropped"]
    from fairaudit.cli.audit import print_summary

    print_summary(back)
    out = capsys.readouterr().out
    dropped = thin.info["verdict_changes_dropped"]
    line = next(x for x in out.splitlines() if x.startswith("trace:"))
    assert f"{dropped:,} of {thin.info['verdict_changes']:,} verdict changes" in line and "--full-trace" in line
    assert thinning_note({}) is None and thinning_note({"verdict_changes_dropped": 0}) is None


def test_two_million_flipping_checks_stay_bounded():
    long = _run(2_000_000, 2)
    assert long.info["checks"] == 2_000_000 and long.info["verdict_changes_dropped"] > 150_000
    # strictly bounded: the uniform grid, the log grid, and two rows per change kept (first and last of every node,
    # the root's first ROOT_CHANGES, the others' first NODE_CHANGES), however many changes there are
    t = long.trace_table
    log_cells = len(np.unique(np.floor(np.log(t.steps) / np.log(LOG_RATIO))))
    assert len(t) <= (display_points(len(t.node_ids)) + log_cells
                      + 2 * (2 * len(t.node_ids) + ROOT_CHANGES + NODE_CHANGES) + 3)
    assert len(long.to_json()) <= 1_000_000
    assert long.verdict == verdict_text_at_end(2_000_000, 2)


def verdict_text_at_end(checks: int, seed: int) -> str:
    return {TRUE: "true", FALSE: "false", UNKNOWN: "unknown"}[int(_verdicts(checks, seed)[-1])]


TWO = (SPEC.replace("E[pred", "sex_parity: E[pred", 1) + "\n"
       + 'race_parity: E[pred | race == "White"] - E[pred | race == "Black"] < 0.1')


def test_a_few_changes_are_all_kept_however_thin_the_trace():
    """A run whose nodes change a few dozen times (the demo at a threshold near its value does): every change is
    shown at its exact step even with a uniform grid of 10 checks."""
    thin, full = _run(200, 5, trace_points=10, text=TWO), _run(200, 5, trace_points=None, text=TWO)
    f, t = full.trace_table, thin.trace_table
    changed = np.diff(f.verdict, axis=0) != 0
    assert 10 < changed[:, 0].sum() <= ROOT_CHANGES and 10 < changed[:, 1:].sum() <= NODE_CHANGES
    assert len(t) < len(f) and "verdict_changes_dropped" not in thin.info
    at = np.flatnonzero(changed.any(axis=1)) + 1
    assert set(f.steps[at].tolist()) | set(f.steps[at - 1].tolist()) <= set(t.steps.tolist())


def test_the_demos_tree_flipping_two_million_times_stays_under_a_megabyte():
    """Two named comparisons (the demo's 11-node tree), each flipping on its own: the JSON stays under 1 MB."""
    r = _run(2_000_000, 3, text=TWO)
    assert len(r.trace_table.node_ids) == 11 and r.info["verdict_changes_dropped"] > 300_000
    assert len(r.to_json()) <= 1_000_000
