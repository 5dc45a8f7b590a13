"""The multiply-adds ``tighten="auto"`` weighs (``work``), counted by hand on a small network, and a run that chooses by
them does not depend on the clock."""
import time

import numpy as np

from fairaudit.engines.fairquant import analysis
from fairaudit.engines.fairquant.analysis import FairQuant, nnet_domain
from fairaudit.engines.fairquant.work import forward_work, linear_work, tighten_work
from tests.engines.test_fairquant_linear import tie_net

SHAPES = [(3, 2), (4, 3), (1, 4)]  # 2 inputs, hidden layers of 3 and 4, one output


def test_counts_by_hand():
    # first layer 2·3; later layers' lower and upper forms (3 columns): 2·3·3·4 + 2·3·4·1; concretized: 2·2·(3+4+1)
    assert forward_work(SHAPES, 1) == 6 + 72 + 24 + 32
    assert linear_work(SHAPES, 1) == 2 * (6 + 12 + 4 + 2)
    # the second hidden layer's 4 forms: through layer 1 by sign (2·3·2), concretized (2·2), lower and upper
    assert tighten_work(SHAPES, 1) == 2 * 4 * (12 + 4)
    assert forward_work(SHAPES, 7) == 7 * forward_work(SHAPES, 1)
    assert tighten_work([(5, 2), (1, 5)], 9) == 0  # one hidden layer: nothing to tighten


def test_auto_does_not_depend_on_the_clock(monkeypatch):
    """Two runs with ``tighten="auto"`` under clocks that run at wildly different speeds analyse the same partitions
    and make the same choices."""
    monkeypatch.setattr(analysis, "TRIAL_EVERY", 2)
    dom = nnet_domain(["a", "p", "b"], [0, 0, 0], [9, 1, 11])
    layers = tie_net(np.random.default_rng(3), 3, [4, 3, 3])
    seen = []
    for speed in (1e-9, 1e3):
        ticks = iter(range(10 ** 9))
        monkeypatch.setattr(time, "perf_counter", lambda: next(ticks) * speed * np.random.default_rng().random())
        fq = FairQuant(layers, dom, 1, max_depth=None, batch=2, bounds="linear", refine_counterexamples=True,
                       count_inside=True, tighten="auto", seed=1)
        for _ in range(12):
            fq.step()
        seen.append((fq.trials, fq.rates(), fq.pops))
    assert seen[0] == seen[1] and seen[0][0]
