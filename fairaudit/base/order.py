"""The seeded random order a stream is audited in: one generator for every shuffle the guarantee rests on.

The monitor's guarantee assumes the rows arrive in random (exchangeable) order, so a log at rest is shuffled with the
run's seed before it is streamed (in memory, out of core, on Dask, by the scan and the paired comparison). A
generator seeded with the seed alone would be the one a user gets from ``numpy.random.default_rng(seed)`` — and a
user who generated, sampled or split their data with that same generator would see their data's own structure line
up with the audit's order (a simulation that did saw a cell's running rate at 0.23 against a true 0.47). So the order
is drawn from numpy's default generator (PCG64) seeded by the seed **and** ``ORDER_SALT``, a constant of this project's
own (the first 64 bits of SHA-256 of ``b"fairaudit stream order"``), through ``numpy.random.SeedSequence``: the same
seed gives the same order on every route and every machine, and no ``default_rng(seed)`` a user draws shares its
stream.
"""
from __future__ import annotations

import numpy as np

ORDER_SALT = 0x58B2FBD039909B46
ORDER_HOW = "numpy's PCG64 seeded by the seed and fairaudit's order salt (fairaudit.base.order)"


def order_rng(seed: int) -> np.random.Generator:
    """The generator a stream's order is drawn from with ``seed`` (module doc)."""
    return np.random.default_rng([ORDER_SALT, int(seed)])
