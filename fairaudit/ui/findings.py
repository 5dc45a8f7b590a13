"""The Audit page's "Groups" section: what the run's engine found besides the specification (``result.findings``) —
every compound group's favourable rate with the most and least favoured marked, the group metrics, each feature's
influence and the dependency graph the engine modelled. Drawn from the findings alone; nothing is shown that the
findings do not carry."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from fairaudit.core import findings_view as fv
from fairaudit import viz
from fairaudit.ui import charts

CHART_W = 460


def findings_section(result, container=None) -> bool:
    """Draw the section when ``result.findings`` holds anything; returns whether it drew it."""
    findings = getattr(result, "findings", None)
    if not findings:
        return False
    box = container or st
    box.subheader("Groups")
    if findings.groups:
        box.markdown("**Favourable rate in each group**")
        box.dataframe(pd.DataFrame(fv.group_table(findings)), width="stretch", hide_index=True,
                      key="findings_groups", column_config={fv.GROUP: st.column_config.TextColumn(width="large")})
        text = fv.groups_caption(findings)
        if text:
            box.caption(text)
        charts.show(box, ("group_rates", CHART_W), lambda: viz.group_rates_chart(findings, width=CHART_W),
                    owners=(findings,), width="content")
    if findings.metrics:
        box.markdown("**Group metrics**")
        box.dataframe(pd.DataFrame(fv.metric_table(findings)), width="stretch", hide_index=True,
                      key="findings_metrics",
                      column_config={"metric": st.column_config.TextColumn(width="medium"),
                                     "value": st.column_config.TextColumn(width="small"),
                                     fv.CI: st.column_config.TextColumn(width="small"),
                                     "about": st.column_config.TextColumn(width="large")})
    if findings.influence:
        box.markdown("**Influence of each feature**")
        charts.show(box, ("influence", CHART_W), lambda: viz.influence_chart(findings, width=CHART_W),
                    owners=(findings,), width="content")
        if findings.influence_about:
            box.caption(fv.caption(findings.influence_about))
    if findings.edges:
        box.markdown("**Dependencies modelled**")
        box.graphviz_chart(findings.dot())
        if findings.graph_about:
            box.caption(fv.caption(findings.graph_about))
    for note in findings.notes:
        box.caption(fv.caption(note))
    return True
