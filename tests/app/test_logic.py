"""Selection -> action logic of the dashboard (pure functions)."""
import pytest

from fairaudit.ui import logic, speclib


def test_event_ids_from_streamlit_shapes():
    assert logic.event_ids(None) == []
    assert logic.event_ids({"selection": {"node": [{"id": "n3"}, {"id": "n5"}]}}) == ["n3", "n5"]
    assert logic.event_ids({"selection": {"node": [{"id": None}, {"id": "n3"}, {"id": "n3"}]}}) == ["n3"]
    assert logic.event_ids({"selection": {}}) == []

    class Sel:
        node = [{"id": "n1"}]

    class Ev:
        selection = Sel()

    assert logic.event_ids(Ev()) == ["n1"]


def test_next_selection_only_reacts_to_changed_events():
    valid = ["n0", "n1", "n2", "n3"]
    sel, last = logic.next_selection([], [], ["n1"], valid)
    assert sel == ["n1"] and last == ["n1"]
    # the same event reported again on a later rerun: keep what the user has now
    sel2, last2 = logic.next_selection(["n2"], ["n1"], ["n1"], valid)
    assert sel2 == ["n2"] and last2 == ["n1"]
    # shift-click: two nodes
    sel3, _ = logic.next_selection(["n1"], ["n1"], ["n1", "n3"], valid)
    assert sel3 == ["n1", "n3"]
    # three ids (should not happen) -> the last two
    sel4, _ = logic.next_selection([], [], ["n0", "n1", "n2"], valid)
    assert sel4 == ["n1", "n2"]
    # ids of an older spec are dropped
    sel5, _ = logic.next_selection(["n9"], [], ["n9"], valid)
    assert sel5 == []
    # clearing (double click)
    sel6, _ = logic.next_selection(["n1"], ["n1"], [], valid)
    assert sel6 == []


def test_panels_for():
    kinds = {"n0": "and", "n1": "cmp", "n2": "fair"}
    assert logic.panels_for([], kinds, {}) == []
    p = logic.panels_for(["n1", "n2"], kinds, {"n2": True})
    assert p[0] == logic.Panel("convergence", ("n1", "n2")) and p[1] == logic.Panel("rates", ("n2",))
    assert logic.panels_for(["n2"], kinds, {"n2": False}) == [logic.Panel("convergence", ("n2",))]
    assert logic.panels_for(["zz"], kinds, {}) == []


def test_default_selection_prefers_violated_comparison():
    nodes = [{"id": "n0", "kind": "and", "final": {"verdict": "false"}},
             {"id": "n1", "kind": "cmp", "final": {"verdict": "unknown"}},
             {"id": "n2", "kind": "cmp", "final": {"verdict": "false"}}]
    assert logic.default_selection(nodes) == ["n2"]
    assert logic.default_selection(nodes[:2]) == ["n1"]
    assert logic.default_selection([{"id": "n0", "kind": "and", "final": {}}]) == ["n0"]
    assert logic.default_selection([]) == []


def test_engine_choices():
    ch = {c.name: c for c in logic.engine_choices(["monitor"], has_model=True)}
    assert ch["monitor"].available
    assert not ch["fairquant"].available and ch["fairquant"].reason == "not available yet"
    none = {c.name: c for c in logic.engine_choices(["monitor"], has_model=False)}
    assert not none["monitor"].available and "model" in none["monitor"].reason
    assert not any(c.available for c in logic.engine_choices([], has_model=True))


def test_record_version_and_diff():
    h = logic.record_version([], "E[pred] < 0.5", when=1)
    h = logic.record_version(h, "E[pred] < 0.5", "false", 100, when=2)
    assert len(h) == 1 and h[0]["verdict"] == "false" and h[0]["stop_step"] == 100
    h2 = logic.record_version(h, "E[pred] < 0.55", when=3)
    assert [v["version"] for v in h2] == [1, 2] and h2[1]["verdict"] is None
    assert len(h) == 1  # the input list is not modified
    d = logic.diff_lines("E[pred] < 0.5", "E[pred] < 0.55")
    assert d == ["-E[pred] < 0.5", "+E[pred] < 0.55"]


def test_throttle():
    t = [0.0]
    th = logic.Throttle(1.0, clock=lambda: t[0])
    assert th.ready()
    t[0] = 0.5
    assert not th.ready() and th.ready(force=True)
    t[0] = 1.6
    assert th.ready()


def test_small_group_warning():
    rows = [{"attribute": "race", "group": "Other", "n": 12}, {"attribute": "race", "group": "White", "n": 900}]
    w = logic.small_group_warning(rows, 30)
    assert "race = Other (12 rows)" in w and "White" not in w
    assert logic.small_group_warning(rows[1:], 30) is None


def test_speclib(tmp_path):
    assert speclib.list_specs(tmp_path) == []
    speclib.save_spec("parity", "E[pred] < 0.5", tmp_path)
    assert speclib.list_specs(tmp_path) == ["parity"]
    assert speclib.read_spec("parity.spec", tmp_path).strip() == "E[pred] < 0.5"
    with pytest.raises(FileExistsError):
        speclib.save_spec("parity", "E[pred] < 0.7", tmp_path)
    speclib.save_spec("parity", "E[pred] < 0.6", tmp_path, overwrite=True)
    for bad in ["", "../evil", "a/b", ".hidden", "x" * 65]:
        with pytest.raises(ValueError):
            speclib.save_spec(bad, "E[pred] < 0.5", tmp_path)


def _cmp_nodes(op="<", lo=0.38, hi=0.52, verdict="unknown", threshold=0.5, name=None):
    cmp = {"id": "n0", "parent": None, "kind": "cmp", "text": f'E[pred | sex == "F"] {op} {threshold}',
           "final": {"estimate": 0.45 - threshold, "lo": lo - threshold, "hi": hi - threshold, "delta": 0.05,
                     "verdict": verdict}}
    if name:
        cmp["name"] = name
    return [cmp,
            {"id": "n1", "parent": "n0", "kind": "expect", "text": 'E[pred | sex == "F"]',
             "final": {"estimate": 0.45, "lo": lo, "hi": hi, "delta": 0.05, "verdict": None, "n": 1200.0}},
            {"id": "n2", "parent": "n0", "kind": "const", "text": str(threshold),
             "final": {"estimate": threshold, "lo": threshold, "hi": threshold, "delta": 0.0, "verdict": None}}]


def test_explain_undecided_comparison():
    text = logic.explain_node("n0", _cmp_nodes())
    assert text.startswith("Undecided:")
    assert "upper bound 0.52" in text and "above the threshold 0.5" in text and "cannot be certified yet" in text
    assert "lower bound 0.38" in text and "cannot be ruled violated either" in text
    assert "1 − δ = 0.95" in text


def test_explain_certified_and_violated_comparisons():
    ok = logic.explain_node("n0", _cmp_nodes(lo=0.30, hi=0.44, verdict="true"))
    assert ok.startswith("Certified:") and "upper bound 0.44" in ok and "below the threshold 0.5" in ok
    bad = logic.explain_node("n0", _cmp_nodes(lo=0.55, hi=0.7, verdict="false"))
    assert bad.startswith("Violated:") and "lower bound 0.55" in bad and "above the threshold 0.5" in bad
    # ">" reads the other way round
    gt = logic.explain_node("n0", _cmp_nodes(op=">", lo=0.55, hi=0.7, verdict="true"))
    assert gt.startswith("Certified:") and "lower bound 0.55" in gt and "above the threshold 0.5" in gt
    # the group of the condition names the term
    assert "of F" in ok


def test_explain_boolean_and_terms():
    nodes = [{"id": "a", "parent": None, "kind": "and", "text": "x and y", "final": {"verdict": "false"}},
             {"id": "x", "parent": "a", "kind": "cmp", "name": "sex_parity", "text": "…", "final": {"verdict": "false"}},
             {"id": "y", "parent": "a", "kind": "cmp", "name": "race_parity", "text": "…", "final": {"verdict": "unknown"}}]
    assert logic.explain_node("a", nodes) == "Violated: every part must hold and sex_parity is violated."
    nodes[0]["final"]["verdict"] = "unknown"
    nodes[1]["final"]["verdict"] = "true"
    assert "race_parity is still undecided" in logic.explain_node("a", nodes)
    leaf = logic.explain_node("n1", _cmp_nodes())
    assert leaf.startswith("A term, not a claim") and "1,200 observations" in leaf and "[0.38, 0.52]" in leaf
    assert "no observations" in logic.explain_node("n1", _cmp_nodes(lo=float("nan"), hi=float("nan")))


def test_node_facts_show_the_term_and_threshold():
    facts = logic.node_facts("n0", _cmp_nodes())
    assert facts["value"] == "0.45" and facts["interval"] == "[0.38, 0.52]" and facts["threshold"] == "< 0.5"
    assert facts["δ"] == "0.05" and facts["verdict"] == "undecided"
    assert logic.node_facts("n1", _cmp_nodes())["observations"] == "1,200"


def test_history_rows_show_verdicts_and_changes():
    h = logic.record_version([], "# c\na: E[pred] < 0.5", "false", 120, when=1.0)
    h = logic.record_version(h, "# c\na: E[pred] < 0.55", "unknown", None, when=2.0)
    h = logic.record_version(h, "# c\na: E[pred] < 0.55\nb: E[pred] > 0.1", when=3.0)
    rows = logic.history_rows(h)
    assert [r["version"] for r in rows] == ["v3", "v2", "v1"]
    assert rows[2] == {"version": "v1", "verdict": "violated", "decided at step": "120", "audited on": "–",
                       "change": "first version", "specification": "a: E[pred] < 0.5"}
    assert rows[1]["change"] == "a 0.5 → 0.55" and rows[1]["verdict"] == "undecided"
    assert rows[0]["change"] == "+1 line" and rows[0]["verdict"] == "not run"


def test_guarantee_hint():
    assert "at most 5%" in logic.guarantee_hint(0.05)
    assert "exact" in logic.guarantee_hint(0.0)


def test_verdict_summary_is_plain():
    assert logic.verdict_summary("false", 0.05, 10460, 32561) == \
        "violated with probability ≥ 0.95, decided after 10,460 observations"
    assert logic.verdict_summary("true", 0.05, 2000, 32561).startswith("certified with probability ≥ 0.95")
    text = logic.verdict_summary("unknown", 0.05, None, 32561, undecided_part="sex_parity")
    assert "32,561" in text and "sex_parity" in text and "left − right" not in text


def test_spec_headers_fill_the_row_filter_and_delta_once_and_are_undone_when_they_go():
    from fairaudit.ui.logic import apply_spec_headers

    session: dict = {}
    fed = {"where": 'workclass == "Federal-gov"', "delta": "0.15", "decision": 'income == ">50K"'}
    apply_spec_headers(session, fed)
    assert session["audit_where"] == fed["where"] and session["audit_delta"] == 0.15
    assert session["audit_header_note"].startswith("Row filter and Δ taken from")
    # the '# decision:' header is offered visibly with a button (header_decision), not buried in this note
    assert logic.header_decision(fed, None) == 'income == ">50K"'
    assert logic.header_decision(fed, 'income  ==  ">50K"') is None
    # the analyst changes Δ; re-applying the same headers (any later edit of the spec) keeps that choice
    session["audit_delta"] = 0.05
    apply_spec_headers(session, dict(fed))
    assert session["audit_delta"] == 0.05
    # a spec without headers: the header's filter goes (it was not edited); Δ was edited, so it stays
    apply_spec_headers(session, {})
    assert session["audit_where"] == "" and session["audit_delta"] == 0.05 and session["audit_header_note"] is None
    apply_spec_headers(session, {"decision": 'income  ==  ">50K"'}, model_expression='income == ">50K"')
    assert session["audit_header_note"] is None


def test_a_filter_typed_by_the_analyst_survives_a_spec_without_headers():
    from fairaudit.ui.logic import apply_spec_headers

    session = {"audit_where": 'sex == "Male"'}
    apply_spec_headers(session, {"delta": "0.1"})
    assert session["audit_where"] == 'sex == "Male"' and session["audit_delta"] == 0.1
    apply_spec_headers(session, {})
    assert session["audit_where"] == 'sex == "Male"' and session["audit_delta"] == 0.05


def test_history_names_what_changed():
    old = ('sex_parity: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1\n'
           'race_parity: E[pred | race == "White"] - E[pred | race == "Black"] < 0.2')
    rows = logic.history_rows([{"version": 1, "text": old}, {"version": 2, "text": old.replace("< 0.1", "< 0.15")},
                               {"version": 3, "text": old.replace('"Black"', '"Other"')},
                               {"version": 4, "text": "fair_sex: Fair[sex] >= 0.95\nparity: E[pred] < 0.2"},
                               {"version": 5, "text": "# a comment\nfair_sex: Fair[sex] >= 0.95\nparity: E[pred] < 0.2"}])
    assert [r["change"] for r in reversed(rows)] == [
        "first version", "sex_parity 0.1 → 0.15", "sex_parity 0.15 → 0.1; race_parity edited",
        "sex_parity → fair_sex; race_parity → parity", "comments only"]


# ---------------------------------------------------------------------------------------------- issue 11


def test_the_editor_keeps_the_analysts_text_when_its_page_is_reopened():
    """#10: the editor is seeded, on every opening of its page, from the session's own record."""
    session: dict = {}
    assert logic.entered_page(session, "Specification") is True
    assert logic.entered_page(session, "Specification") is False  # a rerun of the same page
    assert logic.entered_page(session, "Audit") is True
    demo, mine = "demo spec", "my spec"
    assert logic.editor_text(mine, {"base": mine, "text": mine}) == mine
    assert logic.editor_text(mine, {"base": mine, "text": "my spec with an err("}) == "my spec with an err("
    # the current spec was replaced elsewhere since the text was typed: show the current one
    assert logic.editor_text(demo, {"base": mine, "text": mine}) == demo
    assert logic.editor_text(demo, None) == demo


def _nodes(texts, names=None):
    names = names or {}
    return [{"id": f"n{i}", "parent": None if i == 0 else "n0", "kind": "cmp" if i else "and", "text": t,
             **({"name": names[i]} if i in names else {})} for i, t in enumerate(texts)]


def test_a_selection_follows_the_node_not_its_id_across_a_new_tree():
    """#11: n1 of the new tree is another node: the selection is keyed by the node's name or text."""
    old = _nodes(["a and b", "a < 0.1", "b < 0.2"])
    sig = logic.tree_signature(old)
    assert logic.rebase_selection(["n1"], sig, old) == ["n1"]  # same tree: kept
    new = _nodes(["c and a and b", "c < 0.3", "a < 0.1", "b < 0.2"])
    assert logic.rebase_selection(["n1"], sig, new) == ["n2"]  # "a < 0.1" moved to n2
    assert logic.rebase_selection(["n1", "n2"], sig, _nodes(["x", "a < 0.15", "b < 0.2"])) == ["n2"]  # edited: gone
    named = _nodes(["p and q", "a < 0.1", "b < 0.2"], {1: "p", 2: "q"})
    edited = _nodes(["p and q", "a < 0.15", "b < 0.2"], {1: "p", 2: "q"})
    assert logic.rebase_selection(["n1"], logic.tree_signature(named), edited) == ["n1"]  # same name: same part
    assert logic.rebase_selection(["n1"], None, new) == []  # unknown tree: reset
    assert logic.tree_key(sig) != logic.tree_key(logic.tree_signature(new))


def test_the_verdict_line_points_at_a_panel_only_when_it_is_shown():
    text = logic.verdict_summary("unknown", 0.05, None, 100, undecided_part="sex_parity", part_shown=False)
    assert "panel below" not in text and "click it in the tree" in text
    assert "panel below" in logic.verdict_summary("unknown", 0.05, None, 100, undecided_part="x")


def test_dataset_change_asks_before_discarding():
    """#14: another dataset discards the model and result: ask first; refuse a model for other columns."""
    assert logic.dataset_change(("adult",), ("adult",), True, True) == "same"
    assert logic.dataset_change(("adult",), ("compas",), True, False) == "confirm"
    assert logic.dataset_change(("adult",), ("compas",), False, True) == "confirm"
    assert logic.dataset_change(("adult",), ("compas",), False, False) == "apply"
    assert logic.dataset_change(None, ("compas",), False, False) == "apply"
    msg = logic.discard_message("compas", "adult", "logreg model on 12 features", "false")
    assert "compas" in msg and "adult" in msg and "logreg" in msg and "version history" in msg
    assert logic.missing_columns(["priors_count", "sex", "age"], ["sex", "age", "income"]) == ["priors_count"]
    assert "priors_count" in logic.model_mismatch_message(["priors_count"], "adult")


def test_a_decision_header_is_offered():
    """#15: a library spec's '# decision:' header is offered (one click), unless those decisions are in use."""
    assert logic.header_decision({"decision": 'income == ">50K"'}, None) == 'income == ">50K"'
    assert logic.header_decision({"decision": 'income == ">50K"'}, 'income==">50K"') == 'income == ">50K"'
    assert logic.header_decision({"decision": " income  ==  \">50K\" "}, 'income == ">50K"') is None
    assert logic.header_decision({"decision": "model"}, None) is None
    assert logic.header_decision({}, None) is None


def test_row_order_defaults_to_shuffle_and_a_header_sets_given():
    from fairaudit.ui import flows

    assert flows.default_options()["order"] == "shuffle"
    session: dict = {}
    logic.apply_spec_headers(session, {})
    assert session["audit_order"] == "shuffle"
    logic.apply_spec_headers(session, {"order": "given"})
    assert session["audit_order"] == "given" and "row order" in session["audit_header_note"].lower()
    logic.apply_spec_headers(session, {})
    assert session["audit_order"] == "shuffle"  # the header went, and the value was not edited


def test_run_errors_are_messages_never_tracebacks():
    from fairaudit.errors import FairauditError

    class Located(FairauditError):
        def __init__(self):
            super().__init__("1:10: unknown column 'rac'")
            self.line, self.column, self.message = 1, 10, "unknown column 'rac'; did you mean 'race'?"

        def pretty(self):
            return "E[pred | rac == 1]\n         ^^^"

    text, pretty = logic.error_text(Located())
    assert text == "line 1, column 10: unknown column 'rac'; did you mean 'race'?" and "^^^" in pretty
    assert logic.error_text(FairauditError("no rows match the filter")) == ("no rows match the filter", None)
    text, pretty = logic.error_text(ZeroDivisionError("division by zero\n  File x, line 3"))
    assert text == "internal error: ZeroDivisionError: division by zero" and pretty is None


def test_decision_hint_says_which_way_round():
    title, hint = logic.decision_hint("two_year_recid", 0)
    assert "true = favourable" in title and "two_year_recid == 0" in title
    assert "decile_score <= 4" in hint and "decile_score > 4" not in hint
    title, _ = logic.decision_hint("income", ">50K")
    assert 'income == ">50K"' in title
    title, _ = logic.decision_hint(None, None)
    assert "true = favourable" in title


def test_an_audit_on_other_data_is_a_new_history_row():
    """#14: the previous audit stays in the history when the same text is audited on another dataset."""
    h = logic.record_version([], "E[pred] < 0.5", "false", 10, when=1, audited_on="adult · logreg")
    h = logic.record_version(h, "E[pred] < 0.5", when=2)  # checked again on the Specification page
    h = logic.record_version(h, "E[pred] < 0.5", "true", 20, when=3, audited_on="compas · logreg")
    assert [(x["verdict"], x["audited_on"]) for x in h] == [("false", "adult · logreg"), ("true", "compas · logreg")]
    assert logic.history_rows(h)[0]["audited on"] == "compas · logreg"
