"""Issue 12, dashboard items: the workspace folder (no server path anywhere in the UI), saving only specs that
parse, model files through ``load_bytes`` only, upload size limits with a sentence, uploads kept per session,
protected-attribute warnings with keep/drop, and the pickle attack failing through every loading path."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairaudit.ui import logic, speclib, workspace

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180
PAGES = ["pages/0_Overview.py", "pages/1_Data.py", "pages/2_Model.py", "pages/3_Specification.py",
         "pages/4_Audit.py", "pages/5_Report.py"]
PATHISH = re.compile(r"\b(path|paths|file|files|folder|directory|dir)\b", re.I)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _app() -> AppTest:
    return _ok(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run())


def _pickle_payload(marker: Path) -> bytes:
    """The attack: a protocol-0 pickle that runs ``touch MARKER`` when unpickled."""
    return f"cos\nsystem\n(S'touch {marker}'\ntR.".encode()


# ------------------------------------------------------------------------------------------- workspace


def test_the_workspace_is_configurable_and_created_on_first_use(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(workspace.ENV, raising=False)
    assert workspace.root() == (tmp_path / "workspace").resolve() and (tmp_path / "workspace").is_dir()
    other = tmp_path / "elsewhere" / "ws"
    monkeypatch.setenv(workspace.ENV, str(other))
    assert workspace.folder("models") == other.resolve() / "models" and (other / "models").is_dir()
    assert workspace.display(workspace.folder("specs") / "a.spec") == "ws/specs/a.spec"


def test_workspace_files_are_bare_names_inside_the_folder(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "good.skops").write_bytes(b"x" * 10)
    (models / ".hidden").write_bytes(b"x")
    (tmp_path / "secret.txt").write_text("outside")
    (models / "link.skops").symlink_to(tmp_path / "secret.txt")
    (models / "sub").mkdir()
    assert workspace.list_files(models) == ["good.skops"]
    assert workspace.read_bytes(models, "good.skops") == b"x" * 10
    for bad in ["../secret.txt", "/etc/passwd", "sub/x", "..", "", "link.skops", "a\\b"]:
        with pytest.raises(workspace.WorkspaceError):
            workspace.read_bytes(models, bad)
    with pytest.raises(workspace.WorkspaceError, match=r"good\.skops is 10 B|over the limit"):
        workspace.read_bytes(models, "good.skops", limit_bytes=5)


def test_the_dashboard_never_writes_a_pickle(tmp_path):
    class PickleSaver:
        kind = "logreg"

        def save(self, path):
            Path(path).write_bytes(b"\x80\x04\x95 a pickle")

    with pytest.raises(workspace.WorkspaceError, match="pickle"):
        workspace.save_model(PickleSaver(), "m", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_specs_are_saved_in_the_workspace_only_when_they_parse(tmp_path):
    ws = tmp_path / "ws-specs"
    with pytest.raises(ValueError, match="only a specification that parses"):
        speclib.save_spec("evil", "cos\nsystem\n(S'touch x'\ntR.", ws)
    assert not ws.exists() or list(ws.iterdir()) == []
    with pytest.raises(PermissionError, match="read-only"):
        speclib.save_spec("mine", "E[pred] < 0.5", speclib.SPEC_DIR)
    speclib.save_spec("mine", "E[pred] < 0.5", ws)
    entries = speclib.library(workspace=ws)
    assert entries[0] == ("workspace", "mine") and ("bundled", "avoir_adult_refined") in entries
    assert speclib.read_entry(("workspace", "mine"), workspace=ws).strip() == "E[pred] < 0.5"
    assert "read-only" in speclib.entry_label(("bundled", "x")) and "workspace" in speclib.entry_label(entries[0])


def test_a_saved_spec_appears_in_the_library_at_once(workspace_folder):
    at = _app()
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_input(key="spec_save_name").input("my_parity")
    _ok(at.run())
    at.button(key="spec_save").click()
    _ok(at.run())
    assert any("my_parity.spec" in s.value and "Library" in s.value for s in at.success), [s.value for s in at.success]
    assert at.selectbox(key="spec_lib_pick").value == ("workspace", "my_parity")
    assert (workspace_folder / "specs" / "my_parity.spec").read_text().strip() == at.session_state["spec_text"].strip()


# ------------------------------------------------------------------------------------------- limits


def test_upload_limits_are_configurable_and_stay_under_streamlits_cap():
    assert logic.upload_limit_mb("data", {}) == 200 and logic.upload_limit_mb("model", {}) == 50
    assert logic.upload_limit_mb("data", {"FAIRAUDIT_MAX_DATA_MB": "20"}) == 20
    assert logic.upload_limit_mb("data", {"FAIRAUDIT_MAX_DATA_MB": "lots"}) == 200
    assert logic.upload_limit_mb("data", {"FAIRAUDIT_MAX_DATA_MB": "900"}, server_max_mb=256) == 256
    assert logic.widget_limit_mb(200, 256) == 200  # the widget states our limit: one number on the page
    assert logic.widget_limit_mb(900, 256) == 256
    message = logic.upload_problem("big.csv", 230 * logic.MB, 200, "data")
    assert "big.csv is 230 MB" in message and "limit of 200 MB" in message and "FAIRAUDIT_MAX_DATA_MB" in message
    assert logic.upload_problem("ok.csv", 10, 200, "data") is None


def test_the_server_config_binds_to_localhost_with_an_upload_cap_above_the_limits():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["maxUploadSize"] > max(logic.UPLOAD_LIMITS_MB.values())


# ------------------------------------------------------------------------------------------- no paths


def _text_inputs(at: AppTest) -> list[str]:
    return [w.label for w in at.text_input] + [w.label for w in at.text_area]


def _walk(at: AppTest) -> list[tuple[str, str]]:
    seen = []
    for page in PAGES:
        _ok(at.switch_page(page).run())
        seen += [(page, label) for label in _text_inputs(at)]
        if page == "pages/2_Model.py" and at.session_state["current_dataset"] is not None:
            for mode in at.radio(key="model_mode").options:
                at.radio(key="model_mode").set_value(mode)
                _ok(at.run())
                seen += [(f"{page} / {mode}", label) for label in _text_inputs(at)]
                if mode == "Load a model file":
                    for source in at.radio(key="model_from").options:
                        at.radio(key="model_from").set_value(source)
                        _ok(at.run())
                        seen += [(f"{page} / {source}", label) for label in _text_inputs(at)]
        if page == "pages/1_Data.py":
            at.radio(key="data_source").set_value("Upload a CSV file")
            _ok(at.run())
            seen += [(f"{page} / upload", label) for label in _text_inputs(at)]
            at.radio(key="data_source").set_value("Built-in dataset")
            _ok(at.run())
    return seen


def test_no_page_has_a_path_input():
    """Item 12: walk every page (fresh, then with the demo loaded, every Model mode): no text input asks for a
    path, file, folder or directory (the old Model page had "Path to a model file")."""
    at = _app()
    inputs = _walk(at)
    at.switch_page("pages/0_Overview.py").run()
    at.button(key="load_demo").click()
    _ok(at.run())
    inputs += _walk(at)
    assert inputs, "the walk found no text input at all"
    offending = [(page, label) for page, label in inputs if PATHISH.search(label)]
    assert not offending, offending


FORBIDDEN = [
    (r"\b(fa_)?models\.load\s*\(", "models.load(path)"),
    (r"\bstorage\.load\s*\(|from\s+fairaudit\.models(\.storage)?\s+import\s+[^\n]*\bload\b(?!_)", "models.load"),
    (r"^\s*(import|from)\s+(pickle|joblib|dill|cloudpickle|shelve)\b", "a pickle module"),
    (r"\b(pickle|joblib|dill|cloudpickle)\.(loads?|Unpickler)\b", "unpickling"),
    (r"\btorch\.load\s*\(", "torch.load"),
    (r"\b(eval|exec)\s*\(", "eval/exec"),
    (r"st\.cache_data", "a cross-session cache of user data"),
]


def test_no_dashboard_source_loads_by_path_or_unpickles():
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "fairaudit" / "ui").glob("*.py"))]
    problems = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        for pattern, what in FORBIDDEN:
            for m in re.finditer(pattern, text, re.M):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not problems, problems


# ------------------------------------------------------------------------------------------- uploads


CSV = b"age,sex,race,income\n" + b"".join(
    f"{20 + i % 50},{['Male', 'Female', ''][i % 3]},{'White' if i % 4 else 'Black'},{i % 2}\n".encode()
    for i in range(300))


def _data_upload(at: AppTest, name: str, content: bytes) -> AppTest:
    _ok(at.switch_page("pages/1_Data.py").run())
    at.radio(key="data_source").set_value("Upload a CSV file")
    _ok(at.run())
    at.get("file_uploader")[0].set_value((name, content, "text/csv"))
    return _ok(at.run())


def test_an_upload_is_kept_in_the_session_and_its_uploader_emptied():
    at = _data_upload(_app(), "people.csv", CSV)
    uploaded = at.session_state["uploaded_dataset"]
    assert uploaded.name == "people" and len(uploaded) == 300
    assert at.session_state["data_upload_gen"] == 1  # a new, empty uploader: the bytes are not kept
    assert any("people.csv" in c.value and "300 rows" in c.value for c in at.caption)
    assert at.session_state["current_dataset"].name == "people"


def test_an_oversized_upload_is_refused_with_a_sentence(monkeypatch):
    monkeypatch.setenv("FAIRAUDIT_MAX_DATA_MB", "1")
    big = CSV + b"".join(b"30,Male,White,1\n" for _ in range(80_000))  # ~1.2 MB
    at = _data_upload(_app(), "big.csv", big)
    assert any(re.search(r"big\.csv is 1\.\d MB, over the limit of 1\.0 MB", e.value) for e in at.error), \
        [e.value for e in at.error]
    assert at.session_state["uploaded_dataset"] is None
    assert at.session_state["current_dataset"].name != "big"


def test_missing_protected_values_are_warned_about_and_can_be_dropped():
    at = _data_upload(_app(), "people.csv", CSV)
    at.selectbox(key="label_people").set_value("income")
    at.multiselect(key="protected_people").set_value(["sex"])
    _ok(at.run())
    assert any("'sex' is missing in 100 of 300 rows" in w.value and "choose below" in w.value for w in at.warning), \
        [w.value for w in at.warning]
    assert at.radio(key="missing_people").value == "keep" and len(at.session_state["current_dataset"]) == 300
    at.radio(key="missing_people").set_value("drop")
    _ok(at.run())
    assert len(at.session_state["current_dataset"]) == 200
    assert "?" not in set(at.session_state["current_dataset"].frame["sex"])
    assert any("100 rows dropped" in c.value for c in at.caption)
    # away and back: the page shows the upload and the choice still in use (nothing switches silently)
    _ok(at.switch_page("pages/0_Overview.py").run())
    _ok(at.switch_page("pages/1_Data.py").run())
    assert at.radio(key="data_source").value == "Upload a CSV file"
    assert at.radio(key="missing_people").value == "drop"
    assert at.session_state["current_dataset"].name == "people" and len(at.session_state["current_dataset"]) == 200


def test_a_protected_attribute_with_one_group_is_warned_about():
    one = b"age,country,income\n" + b"".join(f"{20 + i},US,{i % 2}\n".encode() for i in range(40))
    at = _data_upload(_app(), "one.csv", one)
    at.selectbox(key="label_one").set_value("income")
    at.multiselect(key="protected_one").set_value(["country"])
    _ok(at.run())
    assert any("'country' has a single group" in w.value for w in at.warning), [w.value for w in at.warning]


# ------------------------------------------------------------------------------------------- models


def _model_page(at: AppTest, source: str) -> AppTest:
    _ok(at.switch_page("pages/2_Model.py").run())
    at.radio(key="model_mode").set_value("Load a model file")
    _ok(at.run())
    at.radio(key="model_from").set_value(source)
    return _ok(at.run())


def test_models_load_from_the_workspace_list_through_load_bytes(workspace_folder, monkeypatch):
    from fairaudit import data, models

    adult_model = models.train(data.load("adult"), "logreg", seed=0)
    calls = []

    def load_bytes(data, filename, *, trusted_types=()):
        calls.append((data, filename, tuple(trusted_types)))
        return adult_model

    monkeypatch.setattr("fairaudit.models.load_bytes", load_bytes, raising=False)
    (workspace_folder / "models").mkdir(parents=True)
    (workspace_folder / "models" / "adult.skops").write_bytes(b"model bytes")
    at = _app()
    at.button(key="load_demo").click()
    _ok(at.run())
    at = _model_page(at, "The workspace folder")
    assert at.selectbox(key="model_ws_pick").options == ["adult.skops"]
    at.button(key="model_ws_load").click()
    _ok(at.run())
    assert calls == [(b"model bytes", "adult.skops", ())]  # bytes, never a path
    assert at.session_state["model"] is adult_model
    assert at.session_state["model_info"]["file"] == "adult.skops"


def test_untrusted_types_are_refused_from_the_dashboard(monkeypatch):
    """A skops file can name any callable (pandas.to_pickle, posix.system) and have it called: the dashboard
    never trusts more types, whatever the file asks for; the message points to the command line."""
    from fairaudit.models.skops_files import UntrustedTypesError

    calls = []

    def load_bytes(data, filename, **kwargs):
        calls.append(kwargs)
        raise UntrustedTypesError(filename, ["custom.Thing"], upload=True)

    monkeypatch.setattr("fairaudit.models.load_bytes", load_bytes, raising=False)
    at = _app()
    at.button(key="load_demo").click()
    _ok(at.run())
    before = at.session_state["model"]
    at = _model_page(at, "Upload a file")
    at.get("file_uploader")[0].set_value(("m.skops", b"skops bytes", "application/octet-stream"))
    _ok(at.run())
    assert any("custom.Thing" in e.value and "--trust-type" in e.value for e in at.error)
    assert not [c for c in at.checkbox if "trust" in c.label.lower()] and calls == [{}]
    assert at.session_state["model"] is before


def test_saving_a_trained_model_writes_a_safe_file_in_the_workspace(workspace_folder, monkeypatch):
    saved = []

    class Fake:
        pass

    monkeypatch.setattr("fairaudit.models.load_bytes", lambda *a, **k: Fake(), raising=False)
    monkeypatch.setattr("fairaudit.models.sklearn_models.SklearnModel.save",
                        lambda self, path: (saved.append(path), Path(path).write_bytes(b"PK\x03\x04skops")),
                        raising=True)
    at = _app()
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/2_Model.py").run())
    at.text_input(key="model_save_name").input("demo_logreg")
    _ok(at.run())
    at.button(key="model_save").click()
    _ok(at.run())
    assert (workspace_folder / "models" / "demo_logreg.skops").read_bytes() == b"PK\x03\x04skops"
    assert any("demo_logreg.skops" in s.value for s in at.success)


# ------------------------------------------------------------------------------------------- the attack


def test_the_pickle_attack_fails_through_every_path_of_the_dashboard(tmp_path, workspace_folder, monkeypatch):
    """Save the pickle through the Specification page (refused: it does not parse), then try it as a model
    through the upload and the workspace list under every model file ending: the marker never appears, and
    nothing in the process unpickles it."""
    import pickle

    marker = tmp_path / "MARKER"
    payload = _pickle_payload(marker)
    unpickled = []
    real_loads, real_load = pickle.loads, pickle.load
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: unpickled.append("loads") or real_loads(*a, **k))
    monkeypatch.setattr(pickle, "load", lambda *a, **k: unpickled.append("load") or real_load(*a, **k))

    at = _app()
    at.button(key="load_demo").click()
    _ok(at.run())
    _ok(at.switch_page("pages/3_Specification.py").run())
    at.text_area(key="spec_editor").input(payload.decode())
    _ok(at.run())
    at.text_input(key="spec_save_name").input("evil")
    _ok(at.run())
    at.button(key="spec_save").click()
    _ok(at.run())
    assert any("not saved" in e.value for e in at.error), [e.value for e in at.error]
    assert not list((workspace_folder / "specs").glob("*"))

    models_dir = workspace_folder / "models"
    models_dir.mkdir(parents=True, exist_ok=True)
    names = ["evil.skops", "evil.pt", "evil.nnet", "evil.joblib", "evil.pkl"]
    for name in names:
        (models_dir / name).write_bytes(payload)
    before = at.session_state["model"]
    at = _model_page(at, "Upload a file")
    assert at.get("file_uploader")[0].allowed_type == [".skops", ".pt", ".nnet"]  # the browser refuses others
    for name in names[:3]:
        at.get("file_uploader")[0].set_value((name, payload, "application/octet-stream"))
        _ok(at.run())
        assert at.error, name  # refused with a message
    at.radio(key="model_from").set_value("The workspace folder")
    _ok(at.run())
    for name in names:
        at.selectbox(key="model_ws_pick").set_value(name)
        at.button(key="model_ws_load").click()
        _ok(at.run())
        assert at.error, name
    assert not marker.exists()
    assert not unpickled
    assert at.session_state["model"] is before


def test_the_toolbar_shows_no_deploy_button():
    """Issue 44: Streamlit's "Deploy" button is shown. ``client.toolbarMode = "minimal"`` hides it (and the
    developer options); the option is one Streamlit knows."""
    import tomllib

    from streamlit import config as st_config

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["toolbarMode"] in ("minimal", "viewer")
    assert "client.toolbarMode" in st_config._config_options_template
