"""The "Repair" page (issue 32): it says what to do first without a model with scores; it repairs the current model,
shows the certificate's headline and which rows chose and which certified, compares the repaired model with the
original on the certification rows only, and saves the repaired model (JSON over its base) in the workspace, where
the Compare page reads it back (never a base model outside the workspace)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairaudit import data, models
from fairaudit.base.errors import FairauditError
from fairaudit.ui import compare as compare_page
from fairaudit.ui import repair

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240
SPEC = ('E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.1\n'
        '  and E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1\n')


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_repair_page(workspace_folder):
    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/8_Repair.py").run())
    assert any("choose a dataset" in i.value for i in at.info)
    ds = data.load("adult")
    at.session_state["current_dataset"] = ds
    at.session_state["dataset_key"] = ("adult", len(ds.frame), ds.rows_hash)
    at.session_state["spec_text"] = SPEC
    expression = models.from_expression('income == ">50K"', ds)
    at.session_state["model"] = expression
    at.session_state["model_info"] = {"source": "expression", "kind": "expression", "describe": "x",
                                      "dataset_key": at.session_state["dataset_key"]}
    _ok(at.run())
    assert any("no score" in i.value for i in at.info)

    model = models.train(ds, "logreg", seed=0)
    at.session_state["model"] = model
    at.session_state["model_info"] = {"source": "trained", "kind": "logreg", "seed": 0, "test_size": 0.25,
                                      "describe": model.describe(), "dataset_key": at.session_state["dataset_key"]}
    _ok(at.run())
    assert at.multiselect(key="repair_group_by").value == ["sex"]
    at.button(key="repair_run").click()
    _ok(at.run())
    result = at.session_state[repair.RESULTS][at.session_state[repair.CURRENT]]
    assert result.verdict == "certified"
    assert any(result.headline in s.value for s in at.success), [s.value for s in at.success]
    shown = " ".join(m.value for m in at.markdown)
    assert result.search.text in shown and result.certification.text in shown

    at.button(key="repair_compare").click()
    _ok(at.run())
    comparison = next(iter(at.session_state[repair.COMPARED].values()))
    assert comparison.names == ["original", "repaired"]
    assert comparison.rows["audited"] == result.certification.count  # never on the rows that chose the thresholds
    cert = repair.certification_rows(ds, model, result)
    assert len(cert) == result.certification.count and np.all(np.diff(cert) > 0)

    at.text_input(key="repair_save_name").input("fairer")
    at.button(key="repair_save").click()
    _ok(at.run())
    saved = sorted(p.name for p in (workspace_folder / "models").iterdir())
    assert saved == ["fairer-base.skops", "fairer.json"], saved
    assert any("Saved" in s.value for s in at.success)
    at.button(key="repair_save").click()  # again: the file exists, and is not overwritten without the tick
    _ok(at.run())
    assert any("Not saved" in e.value for e in at.error)

    # the saved repair is a model the Compare page can read back from the workspace (its base beside it) ...
    loaded = compare_page.workspace_model("fairer.json")
    assert loaded.describe() == result.model.describe()
    assert np.array_equal(loaded.predict(ds.frame.head(200)), result.model.predict(ds.frame.head(200)))
    # ... but not one whose base model lies outside the workspace
    payload = json.loads((workspace_folder / "models" / "fairer.json").read_text())
    payload["base"]["path"] = "../elsewhere.skops"
    (workspace_folder / "models" / "outside.json").write_text(json.dumps(payload))
    with pytest.raises(FairauditError, match="not a file beside it"):
        compare_page.workspace_model("outside.json")


def _texts(at: AppTest) -> list[str]:
    """Every sentence the page shows (boxes, markdown, captions)."""
    return [e.value for group in (at.success, at.error, at.warning, at.info, at.markdown, at.caption)
            for e in group]


def test_a_refused_repair_leads_with_one_line_and_adopts_nothing(workspace_folder):
    """Issue 44, the analyst walkthrough (analyst_7_repair.png): a model trained with the protected attributes on the
    analyst's hiring CSV, where no single threshold within the allowed loss satisfies the specification. The page
    leads with one line, "No repair adopted: …" (the bound named by its slider), then the candidates tried; nothing
    is called repaired, chosen or adopted; no spec text in a sentence; no compare or save buttons; a negative loss
    is a gain."""
    from tests.test_repair_adopt import (ANALYST_SPEC, INTERSECTION, SPEC_FRAGMENT, analyst_data,
                                         analyst_model)

    at = _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/8_Repair.py").run())
    ds = analyst_data()
    model = analyst_model(ds)
    at.session_state["current_dataset"] = ds
    at.session_state["dataset_key"] = ("hiring.csv", len(ds.frame), ds.rows_hash)
    at.session_state["spec_text"] = ANALYST_SPEC
    at.session_state["model"] = model
    at.session_state["model_info"] = {"source": "trained", "kind": "logreg", "seed": 0, "test_size": 0.25,
                                      "describe": model.describe(), "dataset_key": at.session_state["dataset_key"]}
    _ok(at.run())
    assert at.slider(key="repair_max_loss").label == "Largest loss allowed"
    at.button(key="repair_run").click()
    _ok(at.run())
    result = at.session_state[repair.RESULTS][at.session_state[repair.CURRENT]]
    assert not result.is_adopted and result.tried

    # 2. the refusal leads, in one line, and no box states a verdict of its own
    assert not at.error and not at.success
    lead = at.warning[0].value
    assert lead == result.refusal_for("dashboard") and lead.startswith("No repair adopted: ") and "\n" not in lead
    # 3. plain words, the slider's name, no CLI flag
    assert "no threshold that keeps accuracy within 0.1 of the original satisfies the specification on the search " \
           "rows" in lead
    assert "the 'Largest loss allowed' slider" in lead and "--max-loss" not in lead and "max_loss" not in lead
    texts = _texts(at)
    assert not any("useful" in t or "candidate(s)" in t for t in texts), texts
    # 1. sentences from the parsed specification: the groups in words, never the spec's text
    for t in texts:
        assert not SPEC_FRAGMENT.search(t), t
    shown = " ".join(texts)
    assert "**Candidates tried**" in shown and INTERSECTION in shown
    # 4. nothing repaired, chosen or adopted
    prose = shown.replace(lead, "")
    for word in ("repaired", "(chosen)", "adopted"):
        assert word not in prose, (word, prose)
    frames = [d.value for d in at.dataframe]
    thresholds = next(f for f in frames if "original" in f.columns and "rows" in f.columns)
    assert "best candidate tried" in thresholds.columns and "repaired" not in thresholds.columns
    tried = next(f for f in frames if "verdict" in f.columns)
    assert "adopted" not in tried.columns
    points = next(f for f in frames if "model" in f.columns)
    assert list(points["model"]) == ["original", "best candidate tried"]
    # 5. nothing to compare or save
    keys = {b.key for b in at.button}
    assert "repair_compare" not in keys and "repair_save" not in keys
    # 6. a negative loss is a gain
    assert any(t.startswith("Accuracy gained on the search rows: ") for t in (c.value for c in at.caption))
    assert "given up" not in shown and ": -0." not in shown
