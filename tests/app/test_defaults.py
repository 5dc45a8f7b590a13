"""Issue 28, item 5 ("defaults that cannot invert or leak") on the pages: the Data page proposes yes for a yes/no label,
the Model page's feature picker (default: no label, protected, logged decision or identifier column) and its warning
on a feature that gives the label away, the inverted-decision warning on the Model page, the Audit page and in the
PDF, and one held-out share for the demo and the command line."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairaudit import data
from fairaudit.models.expression import inverted_warning
from tests.test_feature_defaults import loans

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _app() -> AppTest:
    return _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())


def _with_dataset(ds) -> AppTest:
    at = _app()
    at.session_state["current_dataset"] = ds
    return at


def _loans(**kwargs):
    frame = loans(**kwargs)
    return data.from_csv(frame.to_csv(index=False).encode(), name="loans.csv", label="approved", protected=["sex"])


def test_the_data_page_proposes_yes_for_a_yes_no_label_as_the_cli_does():
    """An uploaded file's yes/no label: the Favourable value box started at "no" (the first value in sorted order)
    where the command line infers "yes"."""
    at = _app()
    _ok(at.switch_page("pages/1_Data.py").run())
    at.radio(key="data_source").set_value("Upload a CSV file")
    _ok(at.run())
    at.get("file_uploader")[0].set_value(("loans.csv", loans().to_csv(index=False).encode(), "text/csv"))
    _ok(at.run())
    at.selectbox(key="label_loans").set_value("approved")
    _ok(at.run())
    favourable = at.selectbox(key="fav_loans_approved")
    assert favourable.options == ["no", "yes"] and favourable.value == "yes"
    assert at.session_state["current_dataset"].schema.favourable == "yes"
    favourable.set_value("no")  # shown and editable
    _ok(at.run())
    assert at.session_state["current_dataset"].schema.favourable == "no"


def _features_box(at: AppTest):
    return next(m for m in at.multiselect if m.key.startswith("model_features_"))


def test_the_model_page_trains_on_the_default_features_and_warns_on_a_leak():
    """The page trained on every column, an id and the logged decision included; now it shows a picker with the
    default features and says why the others are left out, and warns on a feature that gives the label away."""
    from fairaudit.models.features import default_features, leak_warnings

    frame = loans()
    frame["later"] = np.where(frame["approved"] == "yes", 1.0, 0.0)  # recorded after the decision: the label again
    ds = data.from_csv(frame.to_csv(index=False).encode(), name="leaky.csv", label="approved", protected=["sex"])
    at = _with_dataset(ds)
    _ok(at.switch_page("pages/2_Model.py").run())
    box = _features_box(at)
    assert box.value == default_features(ds) == ["x", "z", "later"]
    assert "applicant_id" in box.options and "decision" in box.options  # offered, not chosen
    notes = " ".join(c.value for c in at.caption)
    assert "applicant_id (an identifier" in notes and "decision (named like a logged decision)" in notes
    (leak,) = leak_warnings(ds, ["later"])
    assert any(leak[1:60] in w.value for w in at.warning), [w.value for w in at.warning]
    box.set_value(["x", "z"])
    _ok(at.run())
    assert not any(leak[1:60] in w.value for w in at.warning)
    at.button(key="model_train").click()
    _ok(at.run())
    model = at.session_state["model"]
    assert model.feature_names == ["x", "z"] and at.session_state["model_info"]["features"] == ["x", "z"]
    at.checkbox(key="model_include_protected").check()
    _ok(at.run())
    assert _features_box(at).value == ["sex", "x", "z", "later"]


def test_an_inverted_decision_is_warned_about_on_the_model_page_the_audit_page_and_in_the_pdf():
    """`decision == 0` agreeing with the label on a third of the rows got a green "Using ..." box on the Model page
    (the command line warned); the same sentence is now on the Model page, the Audit page and in the PDF."""
    import pypdf

    from fairaudit.report import build_pdf

    ds = _loans(decision_agreement=0.67)
    agreement = ((ds.frame["decision"] == 0) == (ds.frame["approved"] == "yes")).mean()
    assert agreement < 0.4
    sentence = inverted_warning(agreement, ds)
    at = _with_dataset(ds)
    _ok(at.switch_page("pages/2_Model.py").run())
    at.radio(key="model_mode").set_value("Decisions from a column or expression")
    _ok(at.run())
    at.text_input(key="model_expr").input("decision == 0")
    _ok(at.run())
    at.button(key="model_use_expr").click()
    _ok(at.run())
    assert any(sentence[1:] in w.value for w in at.warning), [w.value for w in at.warning]
    assert not any(s.value.startswith("Using") for s in at.success)
    _ok(at.switch_page("pages/2_Model.py").run())  # still said when the page is opened again
    assert any(sentence[1:] in w.value for w in at.warning)
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input('E[pred | sex == "M"] - E[pred | sex == "F"] < 0.3\n')
    _ok(at.run())
    _ok(at.switch_page("pages/4_Audit.py").run())
    at.button(key="audit_run").click()
    _ok(at.run())
    result = at.session_state["result"]
    assert sentence in result.warnings
    assert any(sentence[1:] in w.value for w in at.warning), [w.value for w in at.warning]
    pdf = build_pdf(result, dataset=ds, model=at.session_state["model"])
    text = " ".join(" ".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())
    assert "did you invert it?" in text and f"only {agreement:.0%} of the rows" in text


@pytest.mark.slow
def test_the_demo_and_the_cli_hold_out_the_same_share_and_decide_at_the_same_step(tmp_path, capsys):
    """The demo held out 50 % of Adult, the Model page and the command line 25 %: "the same" audit decided at 1,425
    in the dashboard and at 1,795 on the command line. One share (``HELD_OUT_SHARE``) and one feature default now
    give the same model, the same held-out rows and the same stop step; the result says which share was held out."""
    from fairaudit.cli import main
    from fairaudit.core.trace import AuditResult
    from fairaudit.ui import logic

    at = _app()
    at.button(key="load_demo").click()
    _ok(at.run())
    demo, model = at.session_state["result"], at.session_state["model"]
    spec = tmp_path / "demo.spec"
    spec.write_text(logic.DEMO_SPEC)
    path = tmp_path / "adult-logreg"
    assert main(["train", "--data", logic.DEMO_DATASET, "--kind", logic.DEMO_MODEL, "--out", str(path)]) == 0
    assert main(["audit", "--data", logic.DEMO_DATASET, "--model", str(path) + ".skops", "--spec", f"@{spec}",
                 "--json", str(tmp_path / "r.json")]) in (0, 1, 3)
    capsys.readouterr()
    cli = AuditResult.from_json(json.loads((tmp_path / "r.json").read_text()))
    assert cli.rows_text == demo.rows_text
    assert (cli.verdict, cli.stop_step, cli.steps) == (demo.verdict, demo.stop_step, demo.steps)
    assert cli.provenance["model"]["content_hash"] == model.content_hash  # the same features, share and seed
    from fairaudit.models import HELD_OUT_SHARE

    assert at.session_state["model_info"]["test_size"] == HELD_OUT_SHARE
    assert cli.rows == demo.rows and demo.rows["held_out_share"] == HELD_OUT_SHARE
    assert f"held-out share {HELD_OUT_SHARE * 100:g}%" in demo.rows_text
