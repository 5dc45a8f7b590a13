"""The pending partitions of FairQuant's refinement (``fairaudit.engines.fairquant.pending``): pushes and pops from
either end, interleaved at random, agree with a plain list, whatever the buffers' growth and compaction."""
import numpy as np
import pytest

from fairaudit.engines.fairquant.pending import Pending


def rows(rng, n, start):
    ids = np.arange(start, start + n)
    lb = np.stack([ids, -ids], axis=1).astype(float)
    return lb, lb + 1.0, ids.astype(np.int64), ids % 3, ids * 7


@pytest.mark.parametrize("seed", range(6))
def test_pending_matches_a_list(seed):
    rng = np.random.default_rng(seed)
    first = rows(rng, 1, 0)
    q = Pending(*first)
    ref = [0]
    nxt = 1
    for _ in range(400):
        action = rng.integers(3)
        if action == 0 or not ref:
            n = int(rng.integers(0, 50))
            q.push(*rows(rng, n, nxt))
            ref += list(range(nxt, nxt + n))
            nxt += n
        elif action == 1:
            n = int(rng.integers(1, 40))
            front = bool(rng.integers(2))
            got = q.pop(n, first=front)
            n = min(n, len(ref))
            want = ref[:n] if front else ref[len(ref) - n:]
            ref = ref[n:] if front else ref[:len(ref) - n]
            assert got[2].tolist() == want
            assert got[0][:, 0].tolist() == [float(i) for i in want]
            assert got[4].tolist() == [7 * i for i in want]
        else:
            order = rng.permutation(len(ref))
            q.reorder(order)
            ref = [ref[i] for i in order]
        assert len(q) == len(ref)
        assert q.depth.tolist() == ref
        assert q.ub[:, 1].tolist() == [1.0 - i for i in ref]
        assert q.halvings.tolist() == [i % 3 for i in ref]


def test_popped_rows_survive_later_pushes():
    q = Pending(*rows(None, 5, 0))
    got = q.pop(3, first=False)  # the last three; the children pushed next reuse their slots
    q.push(*rows(None, 10, 100))
    assert got[2].tolist() == [2, 3, 4]
    assert q.depth.tolist() == [0, 1] + list(range(100, 110))
