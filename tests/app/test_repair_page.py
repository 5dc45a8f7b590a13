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
