"""The out-of-core shuffle of row codes (``fairaudit.engines.monitor.stream.shuffle_codes``) is a uniform random order:
in memory it is the in-memory monitor's own permutation; spilled to bucket files, every order of a small stream
is equally likely (enumerated: all n! orders counted over many seeds, chi-square) and each row's position is
uniform; the same seed gives the same order."""
import itertools
import math

import numpy as np
import pytest
from scipy.stats import chisquare

from fairaudit.core.codes import decode
from fairaudit.core.counting import encode
from fairaudit.engines.monitor.stream import CodeStore, shuffle_codes


def store_of(n, folder=None):
    codes = np.arange(n, dtype=np.uint16)
    if folder is None:
        return CodeStore(np.uint16, codes=codes)
    s = CodeStore(np.uint16, path=folder / "in.codes")
    s.append(codes)
    return s.close()


def test_in_memory_shuffle_is_the_in_memory_runs_permutation():
    out, how = shuffle_codes(store_of(5000), 11)
    assert how == {"shuffle": "in memory", "seed": 11}
    from fairaudit.base.order import order_rng

    assert np.array_equal(out.load(), order_rng(11).permutation(5000))


@pytest.mark.parametrize("n,buckets", [(3, 2), (4, 3), (4, 2)])
def test_every_order_equally_likely_with_spill_files(tmp_path, n, buckets):
    orders = {p: 0 for p in itertools.permutations(range(n))}
    runs = 150 * len(orders)
    src = store_of(n, tmp_path)
    for seed in range(runs):
        out, how = shuffle_codes(src, seed, folder=tmp_path, buckets=buckets)
        assert how["shuffle"].startswith("external")
        orders[tuple(int(x) for x in out.load())] += 1
    assert sum(orders.values()) == runs
    assert min(orders.values()) > 0  # every order occurs
    assert chisquare(list(orders.values())).pvalue > 1e-4


def test_spilled_positions_uniform_and_reproducible(tmp_path):
    n, runs = 40, 600
    src = store_of(n, tmp_path)
    first = np.zeros(n, dtype=int)
    for seed in range(runs):
        out, _ = shuffle_codes(src, seed, folder=tmp_path, memory_bytes=16)  # spills: 80 bytes > 16
        order = out.load()
        assert sorted(order.tolist()) == list(range(n))  # a permutation: no row lost or repeated
        first[int(np.flatnonzero(order == 0)[0])] += 1
    assert chisquare(first).pvalue > 1e-4
    a, _ = shuffle_codes(src, 5, folder=tmp_path, memory_bytes=16)
    a = a.load().copy()
    b, _ = shuffle_codes(src, 5, folder=tmp_path, memory_bytes=16)
    c, _ = shuffle_codes(src, 6, folder=tmp_path, memory_bytes=16)
    assert b.path != c.path  # each run its own output file
    assert np.array_equal(a, b.load()) and not np.array_equal(a, c.load())
    assert not list(tmp_path.glob("spill*"))  # spill files removed


def test_negative_control_a_biased_shuffle_is_caught():
    """The chi-square above can fail: a shuffle that never moves the first row is rejected."""
    counts = {p: 0 for p in itertools.permutations(range(3))}
    for seed in range(900):
        rest = list(np.random.default_rng(seed).permutation([1, 2]))
        counts[tuple([0] + [int(x) for x in rest])] += 1
    assert chisquare(list(counts.values())).pvalue < 1e-10


def test_codes_round_trip():
    from fairaudit.core.observations import Observations

    rng = np.random.default_rng(0)
    keys = [f"k{i}" for i in range(5)]
    masks = {k: rng.random(100) < 0.6 for k in keys}
    values = {k: rng.random(100) < 0.5 for k in keys}
    codes = encode(Observations(values, masks, 100), keys)
    assert codes.dtype == np.uint16 and math.ceil(2 * len(keys) / 8) == 2
    back = decode(codes, keys)
    for k in keys:
        assert np.array_equal(back.masks[k], masks[k])
        assert np.array_equal(back.values[k], values[k] & masks[k])
