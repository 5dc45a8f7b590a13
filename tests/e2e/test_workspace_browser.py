"""Issue 12 in a real browser, as a newcomer walks it: upload a CSV (the uploader empties, the data stays), an
oversized CSV (a sentence naming the limit and the size, not a bare red icon), missing protected values (warning
and keep/drop), a model file that is a pickle (refused), the workspace list, and saving a spec (refused when it
does not parse; saved in the workspace when it does). Screenshots go to ``tests/e2e/screenshots/``."""
from __future__ import annotations

import re

import pytest

from tests.e2e.server import SHOT_GRACE_MS, SHOTS, browser_page, goto, serve, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.serial, pytest.mark.slow]
LONG = 180_000


def _goto(page, title: str) -> None:
    goto(page, title)
    wait_idle(page)


def _shot(page, name: str) -> None:
    wait_idle(page, grace_ms=SHOT_GRACE_MS)
    page.screenshot(path=str(SHOTS / f"ws_{name}.png"), full_page=True)


def test_workspace_uploads_and_limits(browser_ready, tmp_path, workspace_folder, monkeypatch):
    monkeypatch.setenv("FAIRAUDIT_MAX_DATA_MB", "1")
    marker = tmp_path / "MARKER"
    rows = "".join(f"{20 + i % 50},{['Male', 'Female', ''][i % 3]},{i % 2}\n" for i in range(600))
    good = tmp_path / "people.csv"
    good.write_text("age,sex,income\n" + rows)
    big = tmp_path / "big.csv"
    big.write_text("age,sex,income\n" + "30,Male,1\n" * 150_000)  # 1.5 MB, over the 1 MB limit
    evil = tmp_path / "evil.skops"
    evil.write_bytes(f"cos\nsystem\n(S'touch {marker}'\ntR.".encode())
    (workspace_folder / "models").mkdir(exist_ok=True)
    (workspace_folder / "models" / "evil.skops").write_bytes(evil.read_bytes())

    with serve() as url, browser_page(1400, 900) as page:
        page.goto(url)
        page.get_by_role("button", name="Load demo audit").wait_for()
        _goto(page, "Data")
        page.get_by_text("Upload a CSV file").click()
        chooser = page.locator("[data-testid='stFileUploader'] input[type='file']")
        chooser.set_input_files(str(big))
        # the widget's own limit is the app's (one number): Streamlit refuses the file in the widget itself
        page.get_by_text(re.compile(r"big\.csv is 1\.\d MB, over the limit of 1\.0 MB|File must be 1(\.0)? ?MB or "
                                    r"smaller")).first.wait_for(timeout=LONG)
        _shot(page, "1_data_oversized")
        chooser.set_input_files(str(good))
        page.get_by_text("Using people.csv").first.wait_for(timeout=LONG)
        page.get_by_text(re.compile("^Label")).first.wait_for()
        _shot(page, "2_data_uploaded")
        # protected: sex (missing values) -> a warning and the keep/drop choice
        protected = page.locator("[data-testid='stMultiSelect']").first
        if not protected.get_by_text("sex", exact=True).count():  # the upload's role guess may have chosen it
            protected.click()
            page.get_by_role("option", name="sex", exact=True).click()
            page.keyboard.press("Escape")
        page.get_by_text(re.compile(r"'sex' is missing in 200 of 600 rows")).wait_for(timeout=LONG)
        page.get_by_text("drop those rows", exact=True).click()
        page.get_by_text("200 rows dropped; 400 remain").wait_for(timeout=LONG)
        _shot(page, "3_data_missing_dropped")
        # back and forth: the upload is still the data
        _goto(page, "Overview")
        _goto(page, "Data")
        page.get_by_text("Using people.csv").first.wait_for(timeout=LONG)

        # the demo again (adult), then the Model page: a pickle named .skops is refused, upload and workspace
        _goto(page, "Overview")
        page.get_by_role("button", name="Load demo audit").click()
        page.get_by_text("Next:", exact=False).first.wait_for(timeout=LONG)
        _goto(page, "Model")
        page.get_by_text("Load a model file").click()
        page.get_by_text("Pickle and joblib files are refused", exact=False).wait_for()
        wait_idle(page)  # the page has finished drawing: the boxes counted are the boxes read
        labels = page.locator("input[type='text']").evaluate_all(  # no path to type (a workspace file *name* is fine)
            "els => els.map(e => e.getAttribute('aria-label') || '')")
        assert not [label for label in labels if re.search(r"path|file|folder|director", label, re.I)], labels
        page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(evil))
        page.get_by_text("evil.skops cannot be loaded", exact=False).wait_for(timeout=LONG)
        _shot(page, "4_model_upload_refused")
        page.get_by_text("The workspace folder").click()
        page.get_by_role("button", name="Load", exact=True).click()
        page.get_by_text("evil.skops cannot be loaded", exact=False).wait_for(timeout=LONG)
        _shot(page, "5_model_workspace_refused")

        # the Specification page: the pickle text is not saved; a real spec is, in the workspace
        _goto(page, "Specification")
        editor = page.locator("textarea[aria-label^='Specification (press']")
        demo_text = editor.input_value()
        editor.fill(evil.read_text())
        editor.press("Control+Enter")
        page.get_by_text("line 1", exact=False).first.wait_for(timeout=LONG)  # the parse error is shown
        wait_idle(page)
        name = page.locator(".st-key-spec_save_name input")
        if not name.is_visible():
            page.get_by_text("Save to the library").click()
        name.fill("evil")
        name.press("Enter")
        page.get_by_role("button", name="Save", exact=True).click()
        page.get_by_text("not saved: only a specification that parses", exact=False).wait_for(timeout=LONG)
        _shot(page, "6_spec_save_refused")
        editor.fill(demo_text)
        editor.press("Control+Enter")
        page.get_by_text("OK —").first.wait_for(timeout=LONG)
        wait_idle(page)
        if not name.is_visible():
            page.get_by_text("Save to the library").click()
        name.fill("my_parity")
        name.press("Enter")
        page.get_by_role("button", name="Save", exact=True).click()
        page.get_by_text("it is in the Library list now", exact=False).first.wait_for(timeout=LONG)
        _shot(page, "7_spec_saved")
        assert "my_parity (saved, workspace/specs)" in page.locator(".st-key-spec_lib_pick").inner_html()
        _shot(page, "7_spec_saved")
    assert (workspace_folder / "specs" / "my_parity.spec").read_text().strip() == demo_text.strip()
    assert not (workspace_folder / "specs" / "evil.spec").exists()
    assert not marker.exists()
