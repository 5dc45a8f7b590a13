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
        speclib.save_spec("parity", "x", tmp_path)
    speclib.save_spec("parity", "E[pred] < 0.6", tmp_path, overwrite=True)
    for bad in ("../evil", "a/b", "", ".hidden"):
        with pytest.raises(ValueError):
            speclib.save_spec(bad, "x", tmp_path)
