"""Where a ``FairQuant`` refinement's undecided individuals are: per feature of the domain (not the protected one),
the undecided mass in each of a few contiguous bins of the feature's range, as an exact fraction of the domain.

A partition's mass spreads uniformly over its grid values in a feature: a bin gets ``mass × overlap / size`` (an
integer: ``size`` is one of the factors of the partition's mass). A real-valued feature has ``REAL_BINS`` equal
dyadic bins; its partitions are dyadic sub-intervals (bisected at midpoints), so a partition lies in one bin or
covers ``2^(3−h)`` whole bins (``h`` its halvings in that feature): counted exactly in units of ``1/REAL_BINS`` of
the domain's mass. An integer feature has at most ``MAX_BINS`` bins of (almost) equal counts; a one-hot group one
bin per category.

The undecided mass has three homes (``FairQuant``): the pending stack and the second-round queue (added when asked),
and the partitions dropped undecided in ``step`` (a running accumulator, ``Where.add``): a counterexample partition
that stopped (its witness, when inside it, is one unfair individual and is taken out) or one at the depth limit.
The bins of every feature sum exactly to the undecided count, split as the rates split it: "counterexample found"
(``undecided_cex``) and "depth or time limit" (``undecided_open``).

With the individuals proven fair inside undecided partitions counted (``weighted``: ``FairQuant(count_inside=
True)``), a partition holds ``mass − credit`` undecided individuals, and where they lie inside it is not known: they
are spread evenly over it, in float64, and the bins are scaled to the undecided count the rates report (which keeps
the most individuals proven at any step, so it can be a little below the current partitions' sum). The totals stay
exact; the split by bin is then an estimate of where, not a count.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

MAX_BINS = 10   # bins of an integer feature at most
REAL_BINS = 8   # dyadic bins of a real-valued feature (2^3)
_REAL_LOG = 3


def feature_bins(f) -> list[tuple[float, float]]:
    """The bins of one feature as ``(lo, hi)`` (inclusive integer ranges or codes; a real bin ``[lo, hi)``)."""
    if f.kind == "cat":
        return [(float(c), float(c)) for c in range(len(f.values))]
    if f.kind == "real":
        step = (f.hi - f.lo) / REAL_BINS
        return [(f.lo + i * step, f.lo + (i + 1) * step) for i in range(REAL_BINS)]
    lo, n = int(f.lo), int(f.hi - f.lo) + 1
    b = min(MAX_BINS, n)
    edges = [lo + (i * n) // b for i in range(b + 1)]
    return [(float(edges[i]), float(edges[i + 1] - 1)) for i in range(b)]


class Where:
    """Bins and the dropped-undecided accumulators of one refinement (``FairQuant``: its domain, protected index
    ``j``, ``counted`` features, ``H`` and the domain's mass ``total``)."""

    def __init__(self, domain, j: int, counted: np.ndarray, H: int, total: int, weighted: bool = False):
        self.domain, self.j, self.counted, self.H = domain, j, counted, H
        self.small = total * REAL_BINS < 2 ** 62  # every bin's count (in 1/REAL_BINS units) fits int64
        self.weighted = bool(weighted)  # partitions carry credits (individuals already proven fair): floats
        self.features = [k for k, f in enumerate(domain.features) if k != j]
        self.bins = {k: feature_bins(domain.features[k]) for k in self.features}
        self.scale = {k: REAL_BINS if domain.features[k].kind == "real" else 1 for k in self.features}
        self.cex = {k: self._zeros(k) for k in self.features}
        self.limit = {k: self._zeros(k) for k in self.features}

    def _zeros(self, k: int) -> np.ndarray:
        if self.weighted:
            return np.zeros(len(self.bins[k]))
        return np.zeros(len(self.bins[k]), dtype=object if not self.small else np.int64)

    # ------------------------------------------------------------------------------------------ spreading
    def spread(self, lb: np.ndarray, ub: np.ndarray, halvings: np.ndarray, credit: np.ndarray | None = None) -> dict:
        """Per feature ``k``: ``[bins]`` the mass of the partitions ``lb, ub`` in each bin, in units of
        ``1/scale[k]`` of the mass unit (exact integers); ``weighted``: only ``mass − credit`` of each, spread evenly
        (floats)."""
        out = {k: self._zeros(k) for k in self.features}
        if not len(lb):
            return out
        obj = not self.small
        sizes = np.rint(ub - lb).astype(np.int64) + 1  # [P, F] grid values per feature (counted ones)
        shift = (self.H - halvings).astype(np.int64)
        counted = np.flatnonzero(self.counted)
        if obj:
            sz = sizes[:, counted].astype(object)
            mass = np.array([math.prod(r) << int(s) for r, s in zip(sz, shift)], dtype=object)
        else:
            mass = np.prod(sizes[:, counted], axis=1) << shift
        dom = self.domain
        for k in self.features:
            f = dom.features[k]
            edges = np.array(self.bins[k], dtype=np.float64)  # [B, 2]
            if f.kind == "real":
                span = f.hi - f.lo
                if span <= 0:
                    out[k][0] += mass.sum() * REAL_BINS
                    continue
                width = (ub[:, k] - lb[:, k]) / span
                h = np.rint(-np.log2(np.maximum(width, 2.0 ** -60))).astype(np.int64)
                start = np.floor(((lb[:, k] - f.lo) / span) * REAL_BINS + 1e-9).astype(np.int64)
                mid = np.floor(((lb[:, k] + ub[:, k]) / 2 - f.lo) / span * REAL_BINS).astype(np.int64)
                inside = h >= _REAL_LOG
                one = np.clip(mid, 0, REAL_BINS - 1)
                np.add.at(out[k], one[inside], mass[inside] * REAL_BINS)
                for p in np.flatnonzero(~inside):  # at most 2^3 bins each, and few such (shallow) partitions
                    n = 1 << (_REAL_LOG - int(h[p]))
                    for b in range(int(start[p]), int(start[p]) + n):
                        out[k][min(max(b, 0), REAL_BINS - 1)] += mass[p] << int(h[p]) if obj else \
                            mass[p] * (1 << int(h[p]))
                continue
            a, b = lb[:, k][:, None], ub[:, k][:, None]
            overlap = np.rint(np.maximum(0.0, np.minimum(b, edges[None, :, 1]) - np.maximum(a, edges[None, :, 0])
                                         + 1)).astype(np.int64)  # [P, B] grid values in common
            per_value = mass // sizes[:, k]  # exact: sizes[:, k] is a factor of mass
            if self.weighted:
                left = 1.0 if credit is None else 1.0 - np.asarray(credit, dtype=np.float64) / mass
                out[k] += (overlap * (per_value * left)[:, None]).sum(axis=0)
            elif obj:
                out[k] += (overlap.astype(object) * per_value[:, None]).sum(axis=0)
            else:
                out[k] += (overlap * per_value[:, None]).sum(axis=0)
        return out

    def at(self, points: np.ndarray, unit: int) -> dict:
        """Per feature: ``unit`` mass at each of ``points`` (single individuals of an integer grid), per bin."""
        out = {k: self._zeros(k) for k in self.features}
        if not len(points) or not unit:
            return out
        for k in self.features:
            edges = np.array(self.bins[k], dtype=np.float64)
            v = points[:, k][:, None]
            which = np.argmax((v >= edges[None, :, 0]) & (v <= edges[None, :, 1]), axis=1)
            np.add.at(out[k], which, unit * self.scale[k])
        return out

    def add(self, cex: tuple | None = None, limit: tuple | None = None, witnesses: np.ndarray | None = None,
            unit: int = 0) -> None:
        """Account for partitions dropped undecided: ``cex`` / ``limit`` as ``(lb, ub, halvings)``; the witnesses
        (points inside their counterexample partition, each ``unit``: counted unfair) are taken out."""
        if cex is not None and len(cex[0]):
            got = self.spread(*cex)  # (lb, ub, halvings[, credit])
            less = self.at(witnesses, unit) if witnesses is not None else None
            for k in self.features:
                self.cex[k] += got[k] - (less[k] if less is not None else 0)
        if limit is not None and len(limit[0]):
            got = self.spread(*limit)
            for k in self.features:
                self.limit[k] += got[k]

    # ------------------------------------------------------------------------------------------ reporting
    def exact(self, pending: list, undecided: int | None = None) -> dict:
        """Per feature ``k``: ``(cex, limit)``, exact integer bins in units of ``1/scale[k]`` of the mass unit: the
        counterexample bins and the limit bins (dropped at the depth limit, plus ``pending``: ``(lb, ub, halvings[,
        credit])`` groups still to analyse). ``weighted``: integers scaled to ``undecided``, the undecided count the
        rates report (see the module)."""
        limit = {k: self.limit[k].copy() for k in self.features}
        for part in pending:
            got = self.spread(*part)
            for k in self.features:
                limit[k] = limit[k] + got[k]
        if self.weighted:
            return {k: _scaled_bins(self.cex[k], limit[k], None if undecided is None else undecided * self.scale[k])
                    for k in self.features}
        return {k: (self.cex[k].copy(), limit[k]) for k in self.features}

    def domain_share(self, k: int) -> list[Fraction]:
        f = self.domain.features[k]
        bins = self.bins[k]
        if f.kind == "cat":
            return [Fraction(1, len(bins))] * len(bins)
        if f.kind == "real":
            return [Fraction(1, REAL_BINS)] * REAL_BINS
        n = int(f.hi - f.lo) + 1
        return [Fraction(int(hi - lo) + 1, n) for lo, hi in bins]

    def summary(self, pending: list, total: int, undecided: int | None = None) -> dict:
        """JSON-able: every feature's bins (range, the domain's share, the undecided share split into counterexample
        found / depth or time limit, as fractions of the domain, and the exact counts over ``denominator``), ranked by
        ``unevenness`` (total variation distance between where the undecided are and the domain's uniform spread:
        0 = spread like the domain, near 1 = all in bins holding little of the domain)."""
        got = self.exact(pending, undecided)
        feats = []
        und_total = None
        for k in self.features:
            f = self.domain.features[k]
            cex, limit = got[k]
            denom = total * self.scale[k]
            dom = self.domain_share(k)
            und = [int(c) + int(lm) for c, lm in zip(cex, limit)]
            u = sum(und)
            und_total = Fraction(u, denom) if und_total is None else und_total
            bins = []
            for i, ((lo, hi), d) in enumerate(zip(self.bins[k], dom)):
                entry = {"lo": _plain(lo, f), "hi": _plain(hi, f), "domain": float(d),
                         "undecided": float(Fraction(und[i], denom)),
                         "counterexample": float(Fraction(int(cex[i]), denom)),
                         "limit": float(Fraction(int(limit[i]), denom)), "count": und[i]}
                if f.kind == "cat":
                    entry["value"] = str(f.values[int(lo)])
                bins.append(entry)
            if u:
                tv = sum(abs(Fraction(x, u) - d) for x, d in zip(und, dom)) / 2
                lift = [(Fraction(x, u) / d if d else Fraction(0)) for x, d in zip(und, dom)]
                top = max(range(len(bins)), key=lambda i: (Fraction(und[i], u) - dom[i], -i))
            else:
                tv, lift, top = Fraction(0), [Fraction(0)] * len(bins), 0
            feats.append({"name": f.name, "kind": f.kind, "denominator": denom, "bins": bins,
                          "unevenness": float(tv), "top_bin": int(top),
                          "top_share": float(Fraction(und[top], u)) if u else 0.0,
                          "top_lift": float(lift[top])})
        feats.sort(key=lambda e: -e["unevenness"])
        return {"undecided": float(und_total or 0), "features": feats}


def _scaled_bins(cex: np.ndarray, limit: np.ndarray, target: int | None):
    """Float bins as integers summing to ``target`` (their own rounded sum when None): largest remainders."""
    both = np.concatenate([cex, limit]).clip(min=0)
    total = both.sum()
    want = int(round(total)) if target is None else int(target)
    if total <= 0 or want <= 0:
        return np.zeros(len(cex), dtype=object), np.zeros(len(limit), dtype=object)
    share = both * (want / total)
    floor = np.floor(share)
    rest = want - int(floor.sum())
    order = np.argsort(-(share - floor), kind="stable")[:max(rest, 0)]
    ints = floor.astype(object)
    for i in order:
        ints[i] += 1
    return ints[:len(cex)], ints[len(cex):]


def _plain(v: float, f):
    return float(v) if f.kind == "real" else int(v)
