"""AVOIR Theorem 2: on the same stream the optimised split stops no later than the equal split."""
import numpy as np
import pytest

from fairaudit.engines.monitor.engine import Observations, run_monitor
from fairaudit.spec import parse

SPECS = [
    "E[pred | g == 1] - E[pred | g == 0] < 0.3",
    "(E[pred | g == 1] - E[pred | g == 0] < 0.35) & (E[pred | h == 1] - E[pred | h == 0] > -0.3)",
    "E[pred | g == 1] / E[pred | g == 0] > 0.5",
]


@pytest.mark.slow
@pytest.mark.parametrize("spec_text", SPECS)
def test_optimized_stops_no_later(spec_text):
    spec = parse(spec_text)
    keys = {tn.text for tn in spec.leaves}
    decided = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = 1500
        g = rng.random(n) < rng.uniform(0.1, 0.5)
        h = rng.random(n) < 0.5
        pred = rng.random(n) < np.where(g, rng.uniform(0.2, 0.6), rng.uniform(0.2, 0.6))
        masks = {"g == 1": g, "g == 0": ~g, "h == 1": h, "h == 0": ~h}
        obs = Observations({k: pred for k in keys}, {k: masks[k.split("| ")[1].rstrip("]")] for k in keys}, n)
        kw = dict(delta=0.1, batch=5, bound="hoeffding")
        eq = run_monitor(spec, obs, split="equal", **kw)
        ob = run_monitor(spec, obs, split="optimized", **kw)
        if eq.stop_step is not None:
            decided += 1
            assert ob.stop_step is not None and ob.stop_step <= eq.stop_step
            assert ob.verdict == eq.verdict
    assert decided >= 3
