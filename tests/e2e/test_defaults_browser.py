"""Issue 28 item 5 in a real browser: upload a loans CSV with a yes/no label, an id column and a logged decision; the
Data page proposes "yes" as favourable; the Model page's feature picker leaves out the id, the decision and the
protected attribute and says why; a trained model reads the chosen features; the decisions `decision == 0`, which
agree with the label on a third of the rows, get the inverted-decision warning instead of a green box.
Screenshots go to ``tests/e2e/screenshots/defaults_*.png``."""
from __future__ import annotations

import pytest

from tests.e2e.server import SHOT_GRACE_MS, SHOTS, browser_page, goto, wait_idle
from tests.test_feature_defaults import loans

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]
LONG = 180_000


def _shot(page, name: str) -> None:
    wait_idle(page, grace_ms=SHOT_GRACE_MS)
    page.screenshot(path=str(SHOTS / f"defaults_{name}.png"), full_page=True)


def _pick(page, label: str, option: str) -> None:
    box = page.locator("[data-testid='stSelectbox']").filter(has_text=label).first
    box.click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")
    wait_idle(page)


def test_yes_is_favourable_features_leave_out_id_and_decision_and_an_inverted_decision_is_warned(browser_ready, app_url,
                                                                                                 tmp_path):
    path = tmp_path / "loans.csv"
    loans(decision_agreement=0.67).to_csv(path, index=False)
    with browser_page(1400, 1000) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(app_url)
        page.get_by_role("button", name="Load demo audit").wait_for()
        goto(page, "Data")
        wait_idle(page)
        page.get_by_text("Upload a CSV file").click()
        page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(path))
        page.get_by_text("Using loans.csv").first.wait_for(timeout=LONG)
        _pick(page, "Label", "approved")
        favourable = page.locator("[data-testid='stSelectbox']").filter(has_text="Favourable value").first
        shown = " ".join(i.input_value() for i in favourable.locator("input").all())  # the chosen value
        assert shown.strip() == "yes", shown
        protected = page.locator("[data-testid='stMultiSelect']").first
        if not protected.get_by_text("sex", exact=True).count():  # the upload's role guess may have chosen it
            protected.click()
            page.get_by_role("option", name="sex", exact=True).click()
            page.keyboard.press("Escape")
        protected.get_by_text("sex", exact=True).first.wait_for(timeout=60_000)
        wait_idle(page)
        _shot(page, "1_data")

        goto(page, "Model")
        wait_idle(page)
        picker = page.locator("[data-testid='stMultiSelect']").filter(has_text="Features the model reads").first
        chosen = picker.inner_text()
        assert "x" in chosen and "z" in chosen and "applicant_id" not in chosen and "decision" not in chosen, chosen
        page.get_by_text("applicant_id (an identifier", exact=False).first.wait_for()
        page.get_by_role("button", name="Train", exact=True).click()
        page.get_by_text("Trained.").first.wait_for(timeout=LONG)
        page.get_by_text("Reads: x, z.").first.wait_for()
        _shot(page, "2_model_trained")

        page.get_by_text("Decisions from a column or expression").click()
        wait_idle(page)
        box = page.locator("input[aria-label^='Decision (true = favourable']").first
        box.fill("decision == 0")
        box.press("Enter")
        wait_idle(page)
        page.get_by_role("button", name="Use these decisions").click()
        page.get_by_text("did you invert it?", exact=False).first.wait_for(timeout=LONG)
        assert not page.get_by_text("Using decision expression", exact=False).count()
        _shot(page, "3_model_inverted")
        assert not errors, errors
