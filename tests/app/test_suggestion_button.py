"""The Audit page's node panel offers refinement suggestions on an undecided comparison; its button adds the
suggested threshold as a new version of the specification, shown in the history as a refinement."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from fairaudit.core import suggest
from fairaudit.spec import parse

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_suggested_threshold_becomes_a_refinement_version():
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    text = at.text_area(key="audit_spec_editor").value
    undecided = text.replace("< 0.1", "< 0.17").replace("< 0.2", "< 0.3")  # sex_parity undecided, race certified
    at.text_area(key="audit_spec_editor").input(undecided)
    at.button(key="audit_run").click()
    _ok(at.run())
    result = at.session_state["result"]
    assert result.verdict == "unknown"
    (found,) = suggest.suggestions(result)
    assert found.name == "sex_parity"
    assert any("Certifiable now" in m.value for m in at.markdown)
    assert any(suggest.POST_HOC == c.value for c in at.caption)
    before = [h["version"] for h in at.session_state["spec_history"]]
    at.button(key=f"suggest_certify_{found.node_id}").click()
    _ok(at.run())
    versions = at.session_state["spec_history"]
    assert len(versions) == len(before) + 1
    new = versions[-1]
    audited = next(h for h in versions if h["text"].strip() == undecided.strip())
    assert new["refines"] == audited["version"]
    assert new["text"] == at.session_state["spec_text"].strip() == suggest.apply(undecided, found, "certify",
                                                                                            result=result).strip()
    assert f"< {found.certify.value:g}" in new["text"] and "race_parity" in new["text"]
    assert parse(new["text"]).nodes[1].name == "sex_parity"
    table = at.dataframe[-1].value
    assert list(table["change"])[0].startswith(f"refinement of v{audited['version']} (suggested threshold)")


def test_an_applied_suggestion_is_exploratory_until_confirmed_on_fresh_rows():
    """Threshold shopping is not one click: the suggested threshold, audited on the rows it was chosen from, gets an
    exploratory verdict (its own badge, never the certified colour, exploratory in the history); "Confirm on fresh
    rows" chooses it on one half of the rows and certifies it on the other half."""
    from fairaudit.viz.palette import VERDICTS

    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    text = at.text_area(key="audit_spec_editor").value
    undecided = text.replace("< 0.1", "< 0.17").replace("< 0.2", "< 0.3")
    at.text_area(key="audit_spec_editor").input(undecided)
    at.button(key="audit_run").click()
    _ok(at.run())
    (found,) = suggest.suggestions(at.session_state["result"])
    at.button(key=f"suggest_certify_{found.node_id}").click()
    _ok(at.run())
    assert "# threshold-chosen-from:" in at.session_state["spec_text"]
    at.button(key="audit_run").click()
    _ok(at.run())
    result = at.session_state["result"]
    assert result.verdict == "true" and result.claim.status == "exploratory"
    # only the clause whose threshold was chosen (and the "and" above it) is exploratory: race_parity, untouched,
    # keeps its own verdict (issue 44, item 8)
    shown = {n.get("name") or n["id"]: n["final"]["verdict"] for n in result.shown_nodes if n["kind"] in ("cmp", "and")}
    assert shown["sex_parity"] == "exploratory" and shown["race_parity"] == "true"
    assert shown[result.nodes[0]["id"]] == "exploratory"
    badge = next(m.value for m in at.markdown if m.value.startswith("**Verdict:**"))
    assert VERDICTS["exploratory"][1] in badge and VERDICTS["true"][1] not in badge
    assert at.session_state["spec_history"][-1]["verdict"] == "exploratory"
    # the honest route: back to the undecided audit, then confirm its suggestion on fresh rows
    at.text_area(key="audit_spec_editor").input(undecided)
    at.button(key="audit_run").click()
    _ok(at.run())
    audited_rows = at.session_state["result"].rows["audited"]
    at.button(key=f"confirm_certify_{found.node_id}").click()
    _ok(at.run())
    confirmed = at.session_state["result"]
    assert confirmed.exploratory is None and confirmed.claim.status in ("certified", "undecided", "violated")
    split = confirmed.info["confirmation"]
    assert split["chosen_on"] + split["certified_on"] == audited_rows and confirmed.rows["audited"] == \
        split["certified_on"]
    assert "not used to choose the threshold" in confirmed.rows_text
    assert at.session_state["spec_text"].strip() == split["spec_text"].strip()
    # the mark, the "threshold chosen" line, the headline and every caption name the clause, never a node id
    import re

    said = [m.value for m in at.markdown] + [c.value for c in at.caption] + [w.value for w in at.warning] + \
        [e.value for e in at.error] + [confirmed.claim.headline, confirmed.claim.summary, split["spec_text"]]
    assert not [t for t in said if re.search(r"\bn\d+\b", str(t))], [t for t in said if re.search(r"\bn\d+\b", str(t))]
    assert any("sex_parity: threshold" in str(t) for t in said)
    assert "race_parity: " in split["spec_text"] and "< 0.3" in split["spec_text"]  # untouched clause, as written
