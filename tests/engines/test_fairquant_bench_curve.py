"""The benchmark's anytime-curve table (``bench/fairquant.py --markdown-curve``)."""
from __future__ import annotations

from pathlib import Path

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    return load_script(ROOT / "bench" / "fairquant.py", "fairquant_bench")


def test_curve_table_lists_every_doubling_and_the_mean_drop_of_the_last_three():
    bench = _bench()
    runs = [[{"model": "AC-5", "curve": [(15.0, 100, 40.0, 60.0), (30.1, 210, 44.0, 56.0), (60.0, 400, 47.0, 53.0),
                                         (120.2, 800, 49.0, 51.0), (240.0, 1600, 50.5, 49.5)]},
             {"model": "AC-7", "curve": [(15.0, 90, 30.0, 70.0), (30.0, 180, 31.0, 69.0)]},
             {"model": "old", "certified": 1.0}]]  # a run from before curves were recorded: left out
    lines = bench.markdown_curve(*runs).splitlines()
    assert lines[0] == "| model | 15 s | 30 s | 60 s | 120 s | 240 s | points per doubling (last three) |"
    assert len(lines) == 4
    assert lines[2].startswith("| AC-5 | 60.00 (100) | 56.00 (210) | 53.00 (400) | 51.00 (800) | 49.50 (1,600) |")
    assert lines[2].endswith("| 2.17 |")  # (3 + 2 + 1.5) / 3
    assert lines[3] == "| AC-7 | 70.00 (90) | 69.00 (180) |  |  |  | 1.00 |"
    assert bench.markdown_curve([{"model": "x"}]) == "(no run with a recorded curve)"
