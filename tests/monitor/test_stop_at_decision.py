"""``stop=True`` ends the run at the decision: nothing after it may reach the result — not its checks, and not
the evidence the monitor watches for (a warning naming a step the result does not have, or an
``assumption_broken`` that turns exit 0 into exit 3, would depend on where a chunk of checks happens to end)."""
import numpy as np

from fairaudit.engines.monitor.engine import Observations, run_monitor
from fairaudit.spec import parse


def test_no_evidence_from_checks_after_the_stop():
    spec = parse("E[x] > 0.3")
    key = spec.leaves[0].text
    n = 1000
    x = np.r_[np.ones(500, bool), np.zeros(500, bool)]  # decided early; its running interval empties later
    obs = Observations({key: x}, {key: np.ones(n, bool)}, n)
    full = run_monitor(spec, obs, delta=0.05, batch=5)
    assert full.assumption_broken and any("became empty" in w for w in full.warnings)
    stopped = run_monitor(spec, obs, delta=0.05, batch=5, stop=True)
    assert stopped.verdict == "true" and stopped.steps == stopped.stop_step == full.stop_step
    assert stopped.warnings == [] and not stopped.assumption_broken
