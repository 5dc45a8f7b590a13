"""Hand-made ``Findings`` for the front ends' tests (no engine needed)."""
from __future__ import annotations

from fairaudit.core.findings import Findings, GroupRate, Influence, Metric, disparities


def sample_findings(ci: bool = True, influence: bool = True, edges: bool = True) -> Findings:
    groups = (
        GroupRate((("sex", "Male"), ("race", "White")), 0.31, 0.33, 0.61, *((0.29, 0.35) if ci else (None, None))),
        GroupRate((("sex", "Male"), ("race", "Black")), 0.18, 0.18, 0.05, *((0.15, 0.21) if ci else (None, None))),
        GroupRate((("sex", "Female"), ("race", "White")), 0.12, 0.14, 0.28, *((0.10, 0.16) if ci else (None, None))),
        GroupRate((("sex", "Female"), ("race", "Black")), 0.06, 0.07, 0.06, *((0.04, 0.10) if ci else (None, None))),
    )
    metrics = disparities(groups) + (Metric("equalized odds (TPR gap)", 0.20, 0.24, "largest gap in true positive "
                                            "rates between the groups", 0.15, 0.30),)
    infl = (Influence("education", 0.08, 0.09), Influence("hours_per_week", -0.02, -0.02),
            Influence("age", 0.15, 0.17), Influence("capital_gain", -0.05, -0.03)) if influence else ()
    graph = (("sex", "education"), ("race", "education"), ("education", "hours_per_week"), ("age", "hours_per_week"))
    return Findings(groups=groups, groups_about="favourable rate in each compound group of the modelled population",
                    ci_about="what the rate may be for the population the model was estimated from, with "
                             "probability ≥ 0.95",
                    metrics=metrics, influence=infl,
                    influence_about="each feature's contribution to statistical parity",
                    edges=graph if edges else (), nodes=("sex", "race", "education", "hours_per_week", "age")
                    if edges else (), graph_about="the Bayesian network learned over the features" if edges else "",
                    notes=("an example note",))
