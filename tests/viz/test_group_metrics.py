import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairaudit.core.group_metrics import group_base_rates, group_model_metrics, proportion_ci


def test_wilson_matches_scipy():
    for k, n in [(0, 10), (3, 10), (10, 10), (47, 120)]:
        lo, hi = proportion_ci(k, n, 0.95, "wilson")
        ref = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        assert float(lo) == pytest.approx(ref.low, abs=1e-9) and float(hi) == pytest.approx(ref.high, abs=1e-9)


def test_clopper_pearson_matches_scipy():
    for k, n in [(0, 10), (3, 10), (10, 10), (47, 120)]:
        lo, hi = proportion_ci(k, n, 0.9, "clopper-pearson")
        ref = stats.binomtest(k, n).proportion_ci(0.9, method="exact")
        assert float(lo) == pytest.approx(ref.low, abs=1e-9) and float(hi) == pytest.approx(ref.high, abs=1e-9)


def test_empty_group_interval_and_bad_method():
    lo, hi = proportion_ci(0, 0)
    assert float(lo) == 0.0 and float(hi) == 1.0
    with pytest.raises(ValueError):
        proportion_ci(1, 2, method="nope")


def test_base_rates_oracle():
    frame = pd.DataFrame({"sex": ["M"] * 40 + ["F"] * 10, "y": [1] * 30 + [0] * 10 + [1] * 2 + [0] * 8})
    out = group_base_rates(frame, ["sex"], "y", 1).set_index("group")
    assert out.loc["M", "n"] == 40 and out.loc["M", "rate"] == pytest.approx(0.75)
    assert out.loc["F", "rate"] == pytest.approx(0.2) and out.loc["F", "small"]
    assert out.loc["M", "lo"] < 0.75 < out.loc["M", "hi"]
    inter = group_base_rates(frame.assign(r=["a", "b"] * 25), ["sex", "r"], "y", 1, intersectional=True)
    assert "sex × r" in set(inter["attribute"])


def test_model_metrics_oracle():
    frame = pd.DataFrame({"g": ["a"] * 6 + ["b"] * 4})
    y = np.array([1, 1, 0, 0, 1, 0, 1, 0, 0, 1])
    p = np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 0])
    out = group_model_metrics(frame, ["g"], p, y).set_index(["group", "metric"])
    assert out.loc[("a", "accuracy"), "value"] == pytest.approx(4 / 6)
    assert out.loc[("a", "selection rate"), "value"] == pytest.approx(3 / 6)
    assert out.loc[("a", "TPR"), "value"] == pytest.approx(2 / 3)
    assert out.loc[("a", "FPR"), "value"] == pytest.approx(1 / 3)
    assert out.loc[("b", "TPR"), "n"] == 2
    only_sel = group_model_metrics(frame, ["g"], p)
    assert set(only_sel["metric"]) == {"selection rate"}
