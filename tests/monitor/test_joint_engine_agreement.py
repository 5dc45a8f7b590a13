"""The monitor engine decides where its rule does: streams of ``test_joint_engine_boundary`` (off the boundary, so
that they decide) run through ``run_monitor`` in chunks of 7 checks (the joint tests' running maxima carried over
batches) stop at the check and with the verdict that ``fairaudit.engines.monitor.engine.decisions`` gives on the whole
stream at once; and a comparison decided by its joint test while its interval straddles the threshold says so."""
import numpy as np
import pytest

from fairaudit.bounds.rules import TRUE, UNKNOWN
from fairaudit.engines.monitor.engine import check_points, decisions, run_monitor
from fairaudit.core.observations import Observations
from fairaudit.spec import parse

from test_joint_engine_boundary import CASES, DELTA, simulate, stats_of


@pytest.mark.parametrize("case", ["difference at threshold", "two-sided, at threshold",
                                  "joint and interval comparisons"])
def test_the_engine_decides_where_its_rule_does(case):
    text, _, _ = CASES[case]
    spec = parse(text)
    streams, rows = 8, 800
    sim = simulate(spec, (0.2, 0.45), streams, rows, seed=4)
    want = decisions(spec, stats_of(sim, rows, 5), DELTA)
    idx = check_points(rows, 5)
    decided = 0
    for s in range(streams):
        obs = Observations({k: y[s].astype(np.int8) for k, (y, m) in sim.items()},
                           {k: m[s] for k, (y, m) in sim.items()}, rows)
        r = run_monitor(spec, obs, delta=DELTA, batch=5, stop=True, chunk=7)
        hits = np.flatnonzero(want[s] != UNKNOWN)
        assert r.stop_step == (int(idx[hits[0]]) + 1 if len(hits) else None), (s, r.stop_step)
        if len(hits):
            decided += 1
            assert r.verdict == ("true" if want[s][hits[0]] == TRUE else "false")
            # the JSON trace and the final values carry the e-value of every tested comparison
            cmp = [i.id for i in r.node_info if i.kind == "cmp" and r.has_evalue(i.id)]
            assert cmp and all(r.final_values(c)["evalue_target"] > 1 for c in cmp)
    assert decided >= streams // 2
