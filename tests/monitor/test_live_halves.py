"""The halves order test on a live log (``fairaudit.engines.monitor.halves.SequentialHalves``): sound under exchangeability
(Monte Carlo on i.i.d. and on shuffled finite streams: the false alarms are ≤ Δ, and every alarm is the one an
independent re-computation of the rule predicts), it fires on drift at the epoch computed by hand, and it runs in
``live_batches`` (a drifting log warns while it arrives, a shuffled one does not; the verdicts and intervals stay
those of the file at rest)."""
import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from fairaudit import api, data, engines
from fairaudit.core.allocation import LeafStats
from fairaudit.engines.monitor.halves import MIN_ROWS, SequentialHalves, epoch_level, epoch_rows, first_epoch
from fairaudit.engines.monitor.livelog import live_audit
from fairaudit.models import from_expression
from fairaudit.spec import parse

from tests.monitor.test_live import SPEC, PRED, cut, live, same

DOUBLINGS = 7  # the streams run to T_0 · 2^7 rows


def epochs(m, batch=5):
    """The epochs, recomputed here: T_0 = the first multiple of m·batch ≥ 200, then T_0·2^i·(m + q)/m."""
    t0 = (m * batch) * -(-200 // (m * batch))
    return np.array([t0 * 2 ** i * (m + q) // m for i in range(DOUBLINGS) for q in range(m)] + [t0 * 2 ** DOUBLINGS])


def iid_counts(rng, t, streams, p_y, p_g, p_y_given_g):
    """Per stream and epoch (``t``), the two leaves E[y] and E[y | g]' (n, successes) after that many i.i.d. rows:
    each segment's counts of the four (g, y) cells are multinomial."""
    seg = np.diff(np.r_[0, t])
    p_g1y1 = p_g * p_y_given_g
    p_g1y0 = p_g - p_g1y1
    p_g0y1 = max(p_y - p_g1y1, 0.0)
    cells = np.stack([rng.multinomial(L, [p_g1y1, p_g1y0, p_g0y1, 1 - p_g1y1 - p_g1y0 - p_g0y1], size=streams)
                      for L in seg], axis=1).cumsum(axis=1)  # (streams, epochs, 4)
    n_all = np.broadcast_to(t, (streams, len(t)))
    return {"E[y]": (n_all, cells[..., 0] + cells[..., 2]), "E[y | g]": (cells[..., 0] + cells[..., 1], cells[..., 0])}


def shuffled_counts(rng, t, streams, cells):
    """A finite stream of ``t[-1]`` rows whose multiset is fixed: ``cells`` rows of each (g, y) in (1, 1), (1, 0),
    (0, 1), (0, 0), in uniformly random order. Each segment between epochs is a uniform sample without replacement
    of what is left: its cell counts are drawn one cell after the other by hypergeometric draws."""
    assert sum(cells) == t[-1]
    left = np.tile(np.asarray(cells, dtype=np.int64), (streams, 1))
    got = []
    for L in np.diff(np.r_[0, t]):
        need, rest = np.full(streams, L), left.sum(axis=1)
        seg = np.zeros_like(left)
        for c in range(3):  # the last cell takes what the sample still needs
            rest = rest - left[:, c]
            seg[:, c] = rng.hypergeometric(left[:, c], rest, need)
            need = need - seg[:, c]
        seg[:, 3] = need
        left -= seg
        got.append(seg)
    c = np.cumsum(np.stack(got, axis=1), axis=1)
    n_all = np.broadcast_to(t, (streams, len(t)))
    return {"E[y]": (n_all, c[..., 0] + c[..., 2]), "E[y | g]": (c[..., 0] + c[..., 1], c[..., 0])}


def oracle_alarms(t, m, counts, delta):
    """The alarms the rule predicts, recomputed here: at every epoch T = t[e] whose half T/2 is an epoch too, each
    leaf's rows [0, T/2) against [T/2, T), Hoeffding radii sqrt(ln(2/δ)/(2n)) with δ = Δ/(2k)·6/(π² i²)/m in the
    i-th doubling (T in [2^i·T_0, 2^(i+1)·T_0)); the first alarm of each leaf (stream × leaf → epoch rows or −1)."""
    k = len(counts)
    out = {}
    where = {int(v): e for e, v in enumerate(t)}
    for key, (n, s) in counts.items():
        n, s = np.asarray(n, float), np.asarray(s, float)
        first = np.full(n.shape[0], -1)
        for e, rows in enumerate(t):
            if rows % 2 or int(rows) // 2 not in where:
                continue
            h = where[int(rows) // 2]
            i = int(np.floor(np.log2(rows / t[0])))
            n1, s1 = n[:, h], s[:, h]
            n2, s2 = n[:, e] - n1, s[:, e] - s1
            d = delta / (2 * k) * 6 / (math.pi ** 2 * i ** 2) / m
            with np.errstate(divide="ignore", invalid="ignore"):
                gap = np.abs(s1 / n1 - s2 / n2)
                rad = np.sqrt(np.log(2 / d) / (2 * n1)) + np.sqrt(np.log(2 / d) / (2 * n2))
            hit = (n1 > 0) & (n2 > 0) & (gap > rad) & (first < 0)
            first[hit] = rows
        out[key] = first
    return out


def engine_alarms(t, m, counts, delta, pieces=1):
    """The alarms ``SequentialHalves`` gives on the same counts, fed the epochs' checks (in ``pieces`` calls)."""
    streams = next(iter(counts.values()))[0].shape[0]
    out = {key: np.full(streams, -1) for key in counts}
    for i in range(streams):
        test = SequentialHalves(list(counts), delta, 5, per_doubling=m)
        for part in np.array_split(np.arange(len(t)), pieces):
            test.observe(t[part], {key: LeafStats(s[i, part].astype(float), n[i, part].astype(float))
                                   for key, (n, s) in counts.items()})
        assert len(test.kept) <= m + 1  # O(m) counts per leaf
        for key, at in test.fired.items():
            out[key][i] = at
    return out


@pytest.mark.parametrize("delta,m", [(0.05, 4), (0.5, 4), (0.5, 1)])
def test_false_alarms_on_iid_streams_are_rare_and_exactly_the_rule(delta, m):
    rng = np.random.default_rng(11)
    t = epochs(m)
    streams, alarms = 0, 0
    for p_y, p_g, p_yg in [(0.5, 0.3, 0.5), (0.3, 0.5, 0.2), (0.05, 0.3, 0.1), (0.9, 0.1, 0.95)]:
        counts = iid_counts(rng, t, 4000, p_y, p_g, p_yg)
        want = oracle_alarms(t, m, counts, delta)
        got = engine_alarms(t, m, counts, delta, pieces=3)
        for key in counts:
            assert np.array_equal(got[key], want[key]), key
        streams += 4000
        alarms += int(np.any(np.stack([want[key] >= 0 for key in counts]), axis=0).sum())
    assert alarms / streams <= delta / 4  # ≤ Δ by the theorem; Hoeffding's slack makes it far smaller


@pytest.mark.parametrize("m", [4, 1])
def test_alarms_on_drifting_streams_are_exactly_the_rule(m):
    # the rates step up after a random epoch by a random amount: the engine's alarms (which leaf, at which epoch)
    # are the oracle's, and there are many of them at several epochs (the comparison above is not vacuous)
    rng = np.random.default_rng(13)
    t = epochs(m)
    before = iid_counts(rng, t, 3000, 0.3, 0.4, 0.3)
    after = iid_counts(rng, t, 3000, 0.45, 0.4, 0.5)
    at = rng.integers(1, len(t) - 1, 3000)[:, None]
    cols = np.arange(len(t))[None, :]
    counts = {}
    for key in before:
        parts = []
        for x, y in zip(before[key], after[key]):
            x, y = np.asarray(x), np.asarray(y)
            base = np.take_along_axis(x, at, 1) - np.take_along_axis(y, at, 1)
            parts.append(np.where(cols <= at, x, y + base))
        counts[key] = tuple(parts)
    want = oracle_alarms(t, m, counts, 0.05)
    got = engine_alarms(t, m, counts, 0.05, pieces=5)
    for key in counts:
        assert np.array_equal(got[key], want[key]), key
        assert (want[key] >= 0).mean() > 0.2 and len(np.unique(want[key])) > 5


def test_false_alarms_on_shuffled_finite_streams():
    # exchangeable but not i.i.d.: a fixed multiset of rows in random order (sampling without replacement)
    rng = np.random.default_rng(12)
    delta, m = 0.5, 4
    t = epochs(m)
    total = int(t[-1])
    streams, alarms = 0, 0
    for cells in [(0.15, 0.15, 0.35, 0.35), (0.1, 0.4, 0.1, 0.4), (0.01, 0.19, 0.04, 0.76), (0.5, 0.0, 0.45, 0.05)]:
        cells = [int(c * total) for c in cells[:3]]
        cells.append(total - sum(cells))
        counts = shuffled_counts(rng, t, 4000, cells)
        assert np.all(counts["E[y]"][1][:, -1] == cells[0] + cells[2])  # the whole stream is the fixed multiset
        assert np.all(counts["E[y | g]"][0][:, -1] == cells[0] + cells[1])
        want = oracle_alarms(t, m, counts, delta)
        got = engine_alarms(t, m, counts, delta)
        for key in counts:
            assert np.array_equal(got[key], want[key]), key
        streams += 4000
        alarms += int(np.any(np.stack([want[key] >= 0 for key in counts]), axis=0).sum())
    assert alarms / streams <= delta / 4


def test_the_budget_sums_to_delta():
    # Σ over leaves and epochs of the two intervals' levels: ≤ Δ, and → Δ (the whole budget is spent)
    k, delta, m = 3, 0.05, 4
    spent = sum(2 * k * m * epoch_level(delta, k, i, m) for i in range(1, 200_000))
    assert spent <= delta and spent > delta * 0.99999
    assert first_epoch(5) == MIN_ROWS and first_epoch(7) == 224 and first_epoch(7, 1) == 203
    assert first_epoch(1000) == 4000
    assert [epoch_rows(200, 4, j) for j in range(10)] == [200, 250, 300, 350, 400, 500, 600, 700, 800, 1000]


def drifting(n=3000, at=1000):
    """y follows the exact pattern of rate 0.3 (3 ones in every 10 rows) before row ``at``, then of rate 0.6."""
    low = np.tile([1, 0, 0, 1, 0, 0, 1, 0, 0, 0], at // 10)
    high = np.tile([1, 1, 0, 1, 1, 0, 1, 1, 0, 0], (n - at) // 10)
    return pd.DataFrame({"y": np.r_[low, high]})


def test_drift_fires_at_the_epoch_computed_by_hand():
    # batch 5, m = 4: T_0 = 200, epochs 200, 250, 300, 350, 400, 500, …; tested from 400 on. Up to 1,000 both halves
    # are at 0.3 exactly. At 1,200 (second doubling: δ = 0.05/2·6/(4π²)/4 = 0.00094989, ln(2/δ) = 7.652): rows
    # 1–600 give 0.300, rows 601–1,200 give (120 + 120)/600 = 0.400; radii 2·sqrt(7.652/1200) = 0.160 > 0.1: no.
    # At 1,400: 0.300 against (90 + 240)/700 = 0.471; radii 2·sqrt(7.652/1400) = 0.148 < 0.171: it fires, once
    frame = drifting()
    opts = engines.get("monitor").resolve_options({"order": "given"})
    seen = []
    for result in live_audit(parse("E[pred] >= 0.2"), iter(cut(frame, 40, 1)), decide=lambda f: f["y"].to_numpy(),
                             options=opts, trace_points=None):
        seen.append((int(result.info["stream_length"]), [w for w in result.warnings if "as the log grows" in w]))
    assert result.assumption_broken  # the run is not a pass
    fired = [rows for rows, said in seen if said]
    assert fired and fired[0] >= 1400
    assert all(not said for rows, said in seen if rows < 1400)
    final = seen[-1][1]
    assert final == ["E[pred] is 0.300 on rows 1–700 of the log and 0.471 on rows 701–1,400 (700 and 700 "
                     "observations): more than chance allows at Δ = 0.05 (the two halves of its first 1,400 rows, "
                     "tested as the log grows)"]


def test_plain_doubling_fires_later_on_the_same_drift():
    # m = 1: tests at 400, 800, 1,600 (third doubling: δ = 0.05/2·6/(9π²) = 0.0016887, ln(2/δ) = 7.077); at 1,600
    # rows 1–800 give 0.300 and rows 801–1,600 (60 + 360)/800 = 0.525; radii 2·sqrt(7.077/1600) = 0.133 < 0.225
    y = drifting()["y"].to_numpy()
    steps = np.arange(5, len(y) + 1, 5)
    cum = np.cumsum(y)[steps - 1].astype(float)
    test = SequentialHalves(["E[y]"], 0.05, 5, per_doubling=1)
    said = []
    for part in np.array_split(np.arange(len(steps)), 7):
        said += test.observe(steps[part], {"E[y]": LeafStats(cum[part], steps[part].astype(float))})
    assert test.fired == {"E[y]": 1600}
    assert said == ["E[y] is 0.300 on rows 1–800 of the log and 0.525 on rows 801–1,600 (800 and 800 observations): "
                    "more than chance allows at Δ = 0.05 (the two halves of its first 1,600 rows, tested as the log "
                    "grows)"]


@pytest.mark.parametrize("column", ["age", "decile_score"])
def test_a_sorted_log_warns_live_and_a_shuffled_one_does_not(column):
    # sorted by decile_score, every rate is 1 up to about row 3,400 and then falls: plain doubling would test at
    # 3,200 (the same rate in both halves) and next at 6,400 (after the end); the epoch 5,600 sees it
    compas = data.load("compas")
    model = from_expression(PRED, compas)
    ordered = compas.frame.sort_values(column, kind="stable").reset_index(drop=True)
    shuffled = compas.frame.sample(frac=1, random_state=3).reset_index(drop=True)
    for frame, drift in ((ordered, True), (shuffled, False)):
        result = live(SPEC, cut(frame, 25, 4), model.predict)
        said = [w for w in result.warnings if "as the log grows" in w]
        assert bool(said) == drift, said
        assert result.assumption_broken == drift
        # the verdict, stop step and intervals are the file at rest's in given order, warnings or not
        rest = api.audit(dataclasses.replace(compas, frame=frame, _hash=None), SPEC, pred=PRED, order="given",
                         trace_points=None)
        assert (result.verdict, result.stop_step, result.steps) == (rest.verdict, rest.stop_step, rest.steps)
        same(result, rest)
