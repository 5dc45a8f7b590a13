"""The dashboard's pure functions (selection, history, options, page logic) and the library's explanations."""
import pytest

from fairaudit.core import explain
from fairaudit.core.guarantee import Guarantee
from fairaudit.ui import history, logic, selection, speclib
from fairaudit.ui import options as ui_options


def test_event_ids_from_streamlit_shapes():
    assert selection.event_ids(None) == []
    assert selection.event_ids({"selection": {"node": [{"id": "n3"}, {"id": "n5"}]}}) == ["n3", "n5"]
    assert selection.event_ids({"selection": {"node": [{"id": None}, {"id": "n3"}, {"id": "n3"}]}}) == ["n3"]
    assert selection.event_ids({"selection": {}}) == []

    class Sel:
        node = [{"id": "n1"}]

    class Ev:
        selection = Sel()

    assert selection.event_ids(Ev()) == ["n1"]


def test_next_selection_only_reacts_to_changed_events():
    valid = ["n0", "n1", "n2", "n3"]
    sel, last = selection.next_selection([], [], ["n1"], valid)
    assert sel == ["n1"] and last == ["n1"]
    # the same event reported again on a later rerun: keep what the user has now
    sel2, last2 = selection.next_selection(["n2"], ["n1"], ["n1"], valid)
    assert sel2 == ["n2"] and last2 == ["n1"]
    # shift-click: two nodes
    sel3, _ = selection.next_selection(["n1"], ["n1"], ["n1", "n3"], valid)
    assert sel3 == ["n1", "n3"]
    # three ids (should not happen) -> the last two
    sel4, _ = selection.next_selection([], [], ["n0", "n1", "n2"], valid)
    assert sel4 == ["n1", "n2"]
    # ids of an older spec are dropped
    sel5, _ = selection.next_selection(["n9"], [], ["n9"], valid)
    assert sel5 == []
    # clearing (double click)
    sel6, _ = selection.next_selection(["n1"], ["n1"], [], valid)
    assert sel6 == []


def test_panels_for():
    kinds = {"n0": "and", "n1": "cmp", "n2": "fair"}
    assert selection.panels_for([], kinds, {}) == []
    p = selection.panels_for(["n1", "n2"], kinds, {"n2": True})
    assert p[0] == selection.Panel("convergence", ("n1", "n2")) and p[1] == selection.Panel("rates", ("n2",))
    assert selection.panels_for(["n2"], kinds, {"n2": False}) == [selection.Panel("convergence", ("n2",))]
    assert selection.panels_for(["zz"], kinds, {}) == []


def test_default_selection_prefers_violated_comparison():
    nodes = [{"id": "n0", "kind": "and", "final": {"verdict": "false"}},
             {"id": "n1", "kind": "cmp", "final": {"verdict": "unknown"}},
             {"id": "n2", "kind": "cmp", "final": {"verdict": "false"}}]
    assert selection.default_selection(nodes) == ["n2"]
    assert selection.default_selection(nodes[:2]) == ["n1"]
    assert selection.default_selection([{"id": "n0", "kind": "and", "final": {}}]) == ["n0"]
    assert selection.default_selection([]) == []


def test_record_version_and_diff():
    h = history.record_version([], "E[pred] < 0.5", when=1)
    h = history.record_version(h, "E[pred] < 0.5", "false", 100, when=2)
    assert len(h) == 1 and h[0]["verdict"] == "false" and h[0]["stop_step"] == 100
    h2 = history.record_version(h, "E[pred] < 0.55", when=3)
    assert [v["version"] for v in h2] == [1, 2] and h2[1]["verdict"] is None
    assert len(h) == 1  # the input list is not modified
    d = history.diff_lines("E[pred] < 0.5", "E[pred] < 0.55")
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


PROB = Guarantee("probabilistic", 0.05)
EXACT = Guarantee("exact", scope="on these 1,200 rows (not the population they were drawn from)")


def _cmp_nodes(op="<", lo=0.38, hi=0.52, verdict="unknown", threshold=0.5, name=None, delta=0.05):
    # the text is deliberately not what op/value say: the explanation must read op and value, never the text
    cmp = {"id": "n0", "parent": None, "kind": "cmp", "text": "some comparison", "op": op,
           "final": {"estimate": 0.45 - threshold, "lo": lo - threshold, "hi": hi - threshold, "delta": delta,
                     "verdict": verdict}}
    if name:
        cmp["name"] = name
    return [cmp,
            {"id": "n1", "parent": "n0", "kind": "expect", "text": 'E[pred | sex == "F"]',
             "final": {"estimate": 0.45, "lo": lo, "hi": hi, "delta": delta, "verdict": None, "n": 1200.0}},
            {"id": "n2", "parent": "n0", "kind": "const", "text": "a threshold", "value": threshold,
             "final": {"estimate": threshold, "lo": threshold, "hi": threshold, "delta": 0.0, "verdict": None}}]


def test_explain_undecided_comparison():
    text = explain.explain_node("n0", _cmp_nodes(), PROB, "observations")
    assert text.startswith("Undecided:")
    assert "upper bound 0.52" in text and "above the threshold 0.5" in text and "cannot be certified yet" in text
    assert "lower bound 0.38" in text and "cannot be ruled violated either" in text
    assert text.endswith("These bounds hold with probability ≥ 0.95.")  # Guarantee.phrase at the node's δ


def test_explain_certified_and_violated_comparisons():
    ok = explain.explain_node("n0", _cmp_nodes(lo=0.30, hi=0.44, verdict="true"), PROB)
    assert ok.startswith("Certified:") and "upper bound 0.44" in ok and "below the threshold 0.5" in ok
    bad = explain.explain_node("n0", _cmp_nodes(lo=0.55, hi=0.7, verdict="false"), PROB)
    assert bad.startswith("Violated:") and "lower bound 0.55" in bad and "above the threshold 0.5" in bad
    # ">" reads the other way round (from the node's op, not its text)
    gt = explain.explain_node("n0", _cmp_nodes(op=">", lo=0.55, hi=0.7, verdict="true"), PROB)
    assert gt.startswith("Certified:") and "lower bound 0.55" in gt and "above the threshold 0.5" in gt
    # the compared term is named
    assert 'of the favourable rate of sex = F ' in ok and 'E[' not in ok  # words, never the spec's text
    # the threshold is the constant's value, not its text
    assert "0.25" in explain.explain_node("n0", _cmp_nodes(threshold=0.25, lo=0.1, hi=0.2, verdict="true"), PROB)


def test_explain_an_exact_value_in_its_own_words():
    nodes = _cmp_nodes(lo=0.45, hi=0.45, verdict="true", threshold=0.5, delta=0.0)
    text = explain.explain_node("n0", nodes, EXACT, "rows")
    assert text == ('Certified: the value 0.45 of the favourable rate of sex = F is below the threshold 0.5. The value is '
                    "computed exactly on these 1,200 rows (not the population they were drawn from).")
    assert "probability" not in text and "bound" not in text
    leaf = explain.explain_node("n1", nodes, EXACT, "rows")
    assert leaf.startswith("A term, not a claim: its value is 0.45 from 1,200 rows.")
    facts = explain.node_facts("n0", nodes, EXACT, "rows")
    assert "δ" not in facts and "interval" not in facts and facts["value"] == "0.45"
    # an exact difference whose bounds were rounded outwards in the last bit is still one value
    lo, hi = 0.18080000000000002, 0.18080000000000004
    nodes = _cmp_nodes(lo=lo, hi=hi, verdict="false", threshold=0.1, delta=0.0)
    assert explain.explain_node("n0", nodes, EXACT).startswith("Violated: the value 0.1808 of")
    assert "interval" not in explain.node_facts("n0", nodes, EXACT)


def test_explain_boolean_and_terms():
    nodes = [{"id": "a", "parent": None, "kind": "and", "text": "x and y", "final": {"verdict": "false"}},
             {"id": "x", "parent": "a", "kind": "cmp", "name": "sex_parity", "text": "…", "final": {"verdict": "false"}},
             {"id": "y", "parent": "a", "kind": "cmp", "name": "race_parity", "text": "…", "final": {"verdict": "unknown"}}]
    assert explain.explain_node("a", nodes) == "Violated: every part must hold and sex_parity is violated."
    nodes[0]["final"]["verdict"] = "unknown"
    nodes[1]["final"]["verdict"] = "true"
    assert "race_parity is still undecided" in explain.explain_node("a", nodes)
    leaf = explain.explain_node("n1", _cmp_nodes(), PROB, "observations")
    assert leaf.startswith("A term, not a claim") and "1,200 observations" in leaf and "[0.38, 0.52]" in leaf
    assert "no value yet" in explain.explain_node("n1", _cmp_nodes(lo=float("nan"), hi=float("nan")))


def test_node_facts_show_the_term_and_threshold():
    facts = explain.node_facts("n0", _cmp_nodes(), PROB, "observations")
    assert facts["value"] == "0.45" and facts["interval"] == "[0.38, 0.52]" and facts["threshold"] == "< 0.5"
    assert facts["δ"] == "0.05" and facts["verdict"] == "undecided"
    assert explain.node_facts("n1", _cmp_nodes(), PROB, "observations")["observations"] == "1,200"


def test_the_explanations_read_no_node_text():
    """Issue 13: op and value come from the nodes; nothing in the library re-parses node text."""
    import inspect

    source = inspect.getsource(explain)
    for parser in ("comparison_operator", "\nimport re\n", "_OPS", "fairaudit.viz", "streamlit"):
        assert parser not in source, parser


def test_history_rows_show_verdicts_and_changes():
    h = history.record_version([], "# c\na: E[pred] < 0.5", "false", 120, when=1.0)
    h = history.record_version(h, "# c\na: E[pred] < 0.55", "unknown", None, when=2.0)
    h = history.record_version(h, "# c\na: E[pred] < 0.55\nb: E[pred] > 0.1", when=3.0)
    rows = history.history_rows(h)
    assert [r["version"] for r in rows] == ["v3", "v2", "v1"]
    assert rows[2] == {"version": "v1", "verdict": "violated", "decided at step": "120", "audited on": "–",
                       "change": "first version", "specification": "a: E[pred] < 0.5"}
    assert rows[1]["change"] == "a 0.5 → 0.55" and rows[1]["verdict"] == "undecided"
    assert rows[0]["change"] == "+1 line" and rows[0]["verdict"] == "not run"


def test_history_names_what_changed():
    old = ('sex_parity: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1\n'
           'race_parity: E[pred | race == "White"] - E[pred | race == "Black"] < 0.2')
    rows = history.history_rows([{"version": 1, "text": old}, {"version": 2, "text": old.replace("< 0.1", "< 0.15")},
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
    sig = selection.tree_signature(old)
    assert selection.rebase_selection(["n1"], sig, old) == ["n1"]  # same tree: kept
    new = _nodes(["c and a and b", "c < 0.3", "a < 0.1", "b < 0.2"])
    assert selection.rebase_selection(["n1"], sig, new) == ["n2"]  # "a < 0.1" moved to n2
    assert selection.rebase_selection(["n1", "n2"], sig, _nodes(["x", "a < 0.15", "b < 0.2"])) == ["n2"]  # edited: gone
    named = _nodes(["p and q", "a < 0.1", "b < 0.2"], {1: "p", 2: "q"})
    edited = _nodes(["p and q", "a < 0.15", "b < 0.2"], {1: "p", 2: "q"})
    assert selection.rebase_selection(["n1"], selection.tree_signature(named), edited) == ["n1"]  # same name: same part
    assert selection.rebase_selection(["n1"], None, new) == []  # unknown tree: reset
    assert selection.tree_key(sig) != selection.tree_key(selection.tree_signature(new))


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


def test_run_errors_are_messages_never_tracebacks():
    from fairaudit.base.errors import FairauditError

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
    h = history.record_version([], "E[pred] < 0.5", "false", 10, when=1, audited_on="adult · logreg")
    h = history.record_version(h, "E[pred] < 0.5", when=2)  # checked again on the Specification page
    h = history.record_version(h, "E[pred] < 0.5", "true", 20, when=3, audited_on="compas · logreg")
    assert [(x["verdict"], x["audited_on"]) for x in h] == [("false", "adult · logreg"), ("true", "compas · logreg")]
    assert history.history_rows(h)[0]["audited on"] == "compas · logreg"


def test_a_suggested_threshold_audited_on_its_own_data_is_flagged():
    on = "adult · logreg · Online monitor (AVOIR)"
    h = history.record_version([], "a: E[pred] < 0.17", "unknown", None, when=1.0, audited_on=on)
    h = history.record_version(h, "a: E[pred] < 0.214", when=2.0, refines=1)
    assert history.post_hoc_source(h, "a: E[pred] < 0.214", None) is None  # not audited yet
    assert history.post_hoc_source(h, "a: E[pred] < 0.17", on) is None  # the version the suggestion came from
    assert history.post_hoc_source(h, "a: E[pred] < 0.214", on) == 1
    assert history.post_hoc_source(h, "a: E[pred] < 0.214", "adult · logreg · Exact on the dataset") == 1
    assert history.post_hoc_source(h, "a: E[pred] < 0.214", "adult · gbm · Online monitor (AVOIR)") is None
    assert history.post_hoc_source(h, "a: E[pred] < 0.3", on) is None  # typed by hand, not suggested
    assert "v1" in history.post_hoc_note(1) and "fresh rows" in history.post_hoc_note(1)


def test_the_same_text_audited_again_is_not_called_a_comment_change():
    h = history.record_version([], "a: E[pred] < 0.5", "false", 10, when=1.0, audited_on="compas · logreg · A")
    h = history.record_version(h, "a: E[pred] < 0.5", "false", 20, when=2.0, audited_on="compas · logreg · B")
    h = history.record_version(h, "# note\na: E[pred] < 0.5", when=3.0)
    assert [r["change"] for r in history.history_rows(h)] == ["comments only", "same text, audited again",
                                                              "first version"]
