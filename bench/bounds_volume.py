"""Benchmark: anytime box decomposition (``fairaudit.engines.fairsquare.volume.decompose``) on angled half-planes.

For each event and target width: rounds (= boxes split), boxes proven inside / outside / still mixed, the final
sound bounds, the closed-form value (``prob_linear``) they must contain, and wall seconds (fresh mass cache).
Axis-aligned boxes need ~N ∝ 1/width rounds in 2-D on a slanted boundary — why the engine should use the
closed forms wherever an event is linear.

Run: ``.venv/bin/python bench/bounds_volume.py``
"""
from __future__ import annotations

import time

from fairaudit.engines.fairsquare import volume as V

G = V.Gaussian(0, 1)
CASES = [
    ("x + y > 0, N(0,1)²", [G, G], ([1, 1], 0, ">", 0)),
    ("x + y > 1, N(0,1)² (T2 min)", [G, G], ([1, 1], 0, ">", 1)),
    ("2x − y > 1, N(1,2)×N(0,3)", [V.Gaussian(1, 2), V.Gaussian(0, 3)], ([2, -1], 0, ">", 1)),
]


def main(widths=(1e-2, 1e-3)) -> None:
    print(f"{'event':30} {'width':>7} {'rounds':>7} {'in/out/mixed':>17} {'lo':>10} {'hi':>10} {'exact':>10} {'s':>6}")
    for name, dists, (a, b, op, c) in CASES:
        exact = V.prob_linear(a, dists, b, op, c)
        for w in widths:
            V._gauss_mass.cache_clear()
            t = time.perf_counter()
            *_, last = V.decompose(dists, V.halfspace(a, b, op, c), target_width=w, every=10 ** 9)
            s = time.perf_counter() - t
            assert last.lo <= exact[1] and exact[0] <= last.hi
            boxes = f"{last.inside}/{last.outside}/{last.mixed}"
            print(f"{name:30} {w:7.0e} {last.round:7d} {boxes:>17} {last.lo:10.6f} {last.hi:10.6f} "
                  f"{exact[0]:10.6f} {s:6.2f}")


if __name__ == "__main__":
    main()
