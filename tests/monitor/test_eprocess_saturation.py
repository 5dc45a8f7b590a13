"""A joint test direction whose running log e-value has reached the display cap is not computed again
(``JointTests.chunk``): the certificates, verdicts and e-values shown, chunk by chunk, must be those of the same
chunks computed at every check (``_SATURATED`` = ∞; a chunk's values depend on its chunking at the last bits, so the
reference is chunked the same way) — on a clear stream, and on adversarial ones whose two directions both reach the
cap (the rows out of random order), in either order."""
import numpy as np
import pytest

from fairaudit.core.allocation import LeafStats
from fairaudit.engines.monitor import eprocess
from fairaudit.engines.monitor.eprocess import _LOG_CAP, JointTests
from fairaudit.spec import parse

A, B = 'E[y | g == "a"]', 'E[y | g == "b"]'


def _stream(kind: str, n: int = 60_000, every: int = 5):
    rng = np.random.default_rng(11)
    g = rng.integers(0, 2, n)
    u = rng.random(n)
    first = np.arange(n) < n // 3
    if kind == "clear":  # A − B ≈ −0.2: certified < 0.1 early, log E then grows with the rows
        y = u < np.where(g == 0, 0.3, 0.5)
    elif kind == "true-then-false":  # both directions reach the cap, the true one first
        y = np.where(first, u < np.where(g == 0, 0.1, 0.6), u < np.where(g == 0, 0.9, 0.1))
    else:  # "false-then-true"
        y = np.where(first, u < np.where(g == 0, 0.9, 0.1), u < np.where(g == 0, 0.1, 0.9))
    at = np.arange(every - 1, n, every)
    return {A: LeafStats(np.cumsum(y & (g == 0))[at].astype(float), np.cumsum(g == 0)[at].astype(float)),
            B: LeafStats(np.cumsum(y & (g == 1))[at].astype(float), np.cumsum(g == 1)[at].astype(float))}


def _chunked(spec, stats, size):
    """``(tests, certificates, evidence, running maxima)`` of the stream's checks fed ``size`` at a time."""
    tests, certs, shown, cums = JointTests(spec, 0.05), [], [], []
    for lo in range(0, len(stats[A].n), size):
        piece = {k: LeafStats(s.successes[lo:lo + size], s.n[lo:lo + size]) for k, s in stats.items()}
        c = tests.chunk(piece)
        certs.append(tests.certified(c))
        shown.append(tests.evidence(c)["n0"])
        cums.append(c)
        tests.commit(c, len(piece[A].n))
    join = lambda parts, key: np.concatenate([p[key] for p in parts])  # noqa: E731
    return (tests, {key: join(certs, key) for key in certs[0]},
            {name: np.concatenate([getattr(e, name) for e in shown]) for name in ("verdict", "evalue", "target")},
            {key: join(cums, key) for key in cums[0]})


@pytest.mark.parametrize("kind", ["clear", "true-then-false", "false-then-true"])
@pytest.mark.parametrize("size", [97, 1000])
def test_a_saturated_direction_changes_nothing_shown(kind, size, monkeypatch):
    spec = parse(f"{A} - {B} < 0.1")
    stats = _stream(kind)
    with monkeypatch.context() as m:
        m.setattr(eprocess, "_SATURATED", np.inf)  # the reference: every check computed
        _, want_certs, want, cum = _chunked(spec, stats, size)
    tests, certs, shown, _ = _chunked(spec, stats, size)
    for key in want_certs:
        assert np.array_equal(certs[key], want_certs[key])
    for name in ("verdict", "evalue", "target"):
        assert np.array_equal(shown[name], want[name]), name
    # the saturated directions were skipped: their carried maximum stopped at the cap, below the dense one
    saturated = [key for key, v in cum.items() if v[-1] >= _LOG_CAP]
    assert saturated
    if kind != "clear":
        assert len(saturated) == 2  # both directions reached the cap: the adversarial case
    assert all(tests.carry[key] < cum[key][-1] for key in saturated)
