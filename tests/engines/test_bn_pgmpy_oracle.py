"""The network's structure search (``fairaudit.engines.fvgm.network.learn_structure``, written here because importing pgmpy
alone costs seconds) against pgmpy's own ``HillClimbSearch`` as the oracle: same score, same constraints (no edge
into a protected column, at most k parents, no tabu list) → the same parents for every column."""
import warnings

import numpy as np
import pandas as pd
import pytest

from fairaudit.engines.fvgm.network import learn_structure

pgmpy = pytest.importorskip("pgmpy")


def _synthetic(n: int, seed: int) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    a = r.choice(["f", "m"], n)
    b = np.where(a == "m", r.choice(["x", "y", "z"], n, p=[.6, .3, .1]), r.choice(["x", "y", "z"], n, p=[.1, .3, .6]))
    c = np.where(b == "x", r.choice(["p", "q"], n, p=[.8, .2]), r.choice(["p", "q"], n, p=[.3, .7]))
    d = r.choice(["u", "v"], n)
    e = np.where((c == "p") & (a == "m"), r.choice(["1", "2"], n, p=[.9, .1]), r.choice(["1", "2"], n, p=[.4, .6]))
    return pd.DataFrame(dict(a=a, b=b, c=c, d=d, e=e))


def _german() -> pd.DataFrame:
    from fairaudit import data

    frame = data.load("german").frame
    cols = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])][:7]
    return pd.DataFrame({c: frame[c].astype(str).to_numpy(dtype=object) for c in cols})


def _pgmpy_parents(frame, protected, score, k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.causal_discovery import ExpertKnowledge
        from pgmpy.estimators import BIC, K2, HillClimbSearch

        scorer = (BIC if score == "bic" else K2)(frame)
        knowledge = ExpertKnowledge(forbidden_edges=[(v, p) for p in protected for v in frame.columns if v != p])
        dag = HillClimbSearch(frame).estimate(scoring_method=scorer, tabu_length=0, max_indegree=k,
                                              expert_knowledge=knowledge, epsilon=1e-8, show_progress=False)
    return {v: tuple(sorted(dag.get_parents(v))) if v in dag else () for v in frame.columns}


@pytest.mark.parametrize("score", ["bic", "k2"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_finds_pgmpys_network_on_synthetic_data(score, seed):
    frame = _synthetic(3000, seed)
    ours = learn_structure(frame, ["a"], score=score, max_indegree=3)
    assert ours == _pgmpy_parents(frame, ["a"], score, 3)
    assert ours["b"] == ("a",)  # the planted dependence is found


def test_the_search_finds_pgmpys_network_on_german():
    frame = _german()
    protected = [frame.columns[0]]
    ours = learn_structure(frame, protected, score="bic", max_indegree=2)
    assert ours == _pgmpy_parents(frame, protected, "bic", 2)
    assert not ours[protected[0]]


def test_k2_gives_unobserved_parent_configurations_no_credit_unlike_pgmpy():
    """Cooper & Herskovits' K2 term of a parent configuration seen 0 times is lgamma(r) − lgamma(0 + r) = 0. pgmpy
    1.x counts only the observed configurations but adds lgamma(r) for every possible one, so a redundant parent
    (german: sex is a function of personal_status) raises its score by (q − q_observed)·lgamma(r) and pgmpy adds
    it; fairaudit's search does not."""
    import math

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.estimators import K2

        frame = _german()
        scorer = K2(frame)
        child = "present_employment"
        one = scorer.local_score(child, ["personal_status"])
        two = scorer.local_score(child, ["personal_status", "sex"])
    r = frame[child].nunique()
    q_full = frame["personal_status"].nunique() * frame["sex"].nunique()
    q_seen = len(frame.groupby(["personal_status", "sex"]).size())
    assert two - one == pytest.approx((q_full - q_seen) * math.lgamma(r))
    ours = learn_structure(frame, [frame.columns[0]], score="k2", max_indegree=2)
    assert "sex" not in ours[child]
