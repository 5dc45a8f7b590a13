"""Issue 27 (part 5): outputs and state. Each test here failed on the code before the fix, except where it says so."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from fairaudit.cli import main
from fairaudit.core.outputs import file_kind
from tests.test_hardening import _run

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ["audit", "--data", "ricci", "--pred", "combine > 70", "--spec", "E[pred] > 0.1"]
TRAIN = ["train", "--data", "ricci", "--kind", "logreg"]


def _zip(path: Path, members: dict) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


# ---- 1: "a model file" is decided from the whole content; one check for every output path

NOT_MODELS = {
    "book.xlsx": lambda p: _zip(p, {"[Content_Types].xml": "<Types/>", "xl/workbook.xml": "<workbook/>"}),
    "letter.docx": lambda p: _zip(p, {"[Content_Types].xml": "<Types/>", "word/document.xml": "<document/>"}),
    "photos.zip": lambda p: _zip(p, {"a.jpg": b"\xff\xd8"}),
    # a schema.json that is not a skops object tree, or beside a member skops never writes
    "fake.skops": lambda p: _zip(p, {"schema.json": "{}", "0.npy": b""}),
    "mixed.skops": lambda p: _zip(p, {"schema.json": '{"__class__": "dict", "__module__": "builtins", "__loader__": '
                                                     '"DictNode", "protocol": 2, "_skops_version": "0.16"}',
                                      "run.py": "print(1)"}),
    # a torch-like layout whose pickle is not fairaudit's state_dict + JSON config
    "other.pt": lambda p: _zip(p, {"archive/data.pkl": pickle.dumps({"x": 1}, protocol=2), "archive/version": "3"}),
    "old.joblib": lambda p: p.write_bytes(pickle.dumps({"format": "fairaudit-model"})),
    "notes.txt": lambda p: p.write_text("// my notes, not a network\n"),
}


@pytest.mark.parametrize("name", list(NOT_MODELS))
def test_train_out_keeps_a_file_that_is_not_a_model(capsys, tmp_path, name):
    path = tmp_path / name
    NOT_MODELS[name](path)
    before = path.read_bytes()
    assert file_kind(path) != "model"
    code, out, err = _run(capsys, [*TRAIN, "--out", str(path)])
    assert code == 2 and out == "" and "refusing to overwrite" in err and "--force" in err
    assert len(err.splitlines()) == 1 and path.read_bytes() == before


def test_train_out_replaces_a_model_file_and_anything_with_force(capsys, tmp_path):
    model = tmp_path / "m.skops"
    assert _run(capsys, [*TRAIN, "--out", str(model)])[0] == 0
    assert file_kind(model) == "model"
    assert _run(capsys, [*TRAIN, "--out", str(model), "--seed", "1"])[0] == 0  # a model over a model
    book = NOT_MODELS["book.xlsx"](tmp_path / "book.xlsx")
    assert _run(capsys, [*TRAIN, "--out", str(book), "--force"])[0] == 0
    assert file_kind(book) == "model"


def test_every_model_format_is_a_model_file(tmp_path):
    from fairaudit import data, models

    mlp = models.train(data.load("ricci"), "mlp", epochs=1, hidden=[4])
    mlp.save(tmp_path / "m.pt")
    (tmp_path / "n.nnet").write_bytes((ROOT / "tests" / "fixtures" / "example.nnet").read_bytes())
    (tmp_path / "n.txt").write_bytes((ROOT / "tests" / "fixtures" / "example.nnet").read_bytes())  # any name
    for name in ("m.pt", "n.nnet", "n.txt"):
        assert file_kind(tmp_path / name) == "model", name


def test_json_and_pdf_replace_only_their_own_kind(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"spec": "mine", "engine": "v8", "other": 1}')  # looks like a result in its first bytes
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(b"%PDF-1.4\n1 0 obj << /Creator (LaTeX) >> endobj\ntrailer << >>\n%%EOF\n")
    for option, path in (("--json", config), ("--pdf", paper)):
        before = path.read_bytes()
        code, _, err = _run(capsys, [*AUDIT, option, str(path)])
        assert code == 2 and "refusing to overwrite" in err and path.read_bytes() == before
    result, report = tmp_path / "r.json", tmp_path / "r.pdf"
    assert _run(capsys, [*AUDIT, "--json", str(result), "--pdf", str(report)])[0] in (0, 1, 3)
    assert (file_kind(result), file_kind(report)) == ("result", "pdf")
    assert _run(capsys, [*AUDIT, "--json", str(result), "--pdf", str(report)])[0] in (0, 1, 3)  # rerun: replaced


def test_an_output_is_never_a_device_or_a_pipe_even_with_force(capsys, tmp_path):
    fifo = tmp_path / "pipe.out"
    os.mkfifo(fifo)
    for option in ("--json", "--pdf", "--full-trace"):
        code, _, err = _run(capsys, [*AUDIT, option, str(fifo), "--force"])
        assert code == 2 and "not a regular file" in err
    code, _, err = _run(capsys, [*TRAIN, "--out", str(fifo), "--force"])
    assert code == 2 and "not a regular file" in err
    assert fifo.is_fifo() and [p.name for p in tmp_path.iterdir()] == ["pipe.out"]


def test_a_path_ending_in_a_slash_names_a_folder(capsys, tmp_path):
    code, _, err = _run(capsys, [*AUDIT, "--json", f"{tmp_path / 'r.json'}/"])
    assert code == 2 and "ends with '/'" in err and not (tmp_path / "r.json").exists()


# ---- 2: the dashboard's trained models: per session, keyed by the rows in order

def test_trained_models_are_per_session_and_keyed_by_the_rows_in_order(monkeypatch):
    from fairaudit import data
    from fairaudit.data.dataset import Dataset
    from fairaudit.ui import state

    trained = []
    monkeypatch.setattr(state.fa_models, "train_model", lambda dataset, kind, **kw: trained.append(dataset) or object())
    monkeypatch.setattr(state, "st", SimpleNamespace(session_state={}))
    ricci = data.load("ricci")
    permuted = Dataset(ricci.name, ricci.frame.sample(frac=1, random_state=0).reset_index(drop=True), ricci.schema,
                       ricci.source)
    assert state.dataset_key(permuted) != state.dataset_key(ricci)  # same rows, another order: another dataset
    assert state.dataset_key(Dataset(ricci.name, ricci.frame.copy(), ricci.schema)) == state.dataset_key(ricci)

    def model(dataset):
        return state.trained_model(dataset, state.dataset_key(dataset), "logreg", 0, 0.25)

    first = model(ricci)
    assert model(ricci) is first and len(trained) == 1  # cached in the session
    assert model(permuted) is not first and trained[-1] is permuted
    monkeypatch.setattr(state, "st", SimpleNamespace(session_state={}))  # another browser session
    assert model(ricci) is not first and len(trained) == 3


# ---- 3: '# dataset:' names a built-in dataset or a file in the spec file's folder, wherever it is read

@pytest.fixture()
def outside(tmp_path, monkeypatch):
    """A spec two folders down from the current folder, and a CSV beside the current folder's top."""
    (tmp_path / "x.csv").write_text("a,g,y\n1,u,1\n0,v,0\n")
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.mark.parametrize("header, message", [("../../x.csv", "climbs out"), ("link.csv", "symbolic link")])
def test_dataset_header_never_leaves_the_spec_folder(capsys, outside, header, message):
    (outside / "link.csv").symlink_to(outside.parent.parent / "x.csv")
    spec = outside / "s.spec"
    spec.write_text(f"# dataset: {header}\n# decision: a == 1\nE[pred] > 0.1\n")
    for argv in (["check", f"@{spec}"], ["audit", "--spec", f"@{spec}"], ["check", "--no-header-data", f"@{spec}"]):
        code, _, err = _run(capsys, argv)
        assert code == 2 and message in err and "1:12" in err, argv


def test_dataset_header_is_refused_by_the_dashboard_and_the_api(tmp_path):
    import fairaudit
    from fairaudit.spec.errors import SpecError
    from fairaudit.ui import flows

    for header in ("../x.csv", "/etc/passwd", "sub/../../x.csv"):
        text = f"# dataset: {header}\nE[pred] > 0.1\n"
        assert any("# dataset:" in p for p in flows.header_problems(text)), header
        with pytest.raises(SpecError, match="# dataset:"):
            fairaudit.audit("ricci", text, pred="combine > 70")
    assert flows.header_problems("# dataset: adult\nE[pred] > 0.1\n") == []


# ---- 4: a population program's error lines are capped as a specification's are

@pytest.mark.parametrize("line", [
    "    z = gaussian(0, 1, {long}=1)",           # a keyword's name was echoed whole
    "    x = gaussian(0, 1)  {long}",             # the source line under the message was printed whole
])
def test_program_error_lines_are_capped(capsys, tmp_path, line):
    program = tmp_path / "p.fr"
    program.write_text("def popModel():\n    s = step([(0,1,0.3), (1,2,0.7)])\n    x = gaussian(0, 1)\n"
                       f"{line.format(long='y' * 3000)}\n    sensitiveAttribute(s < 1)\n\n"
                       "def F():\n    fairnessTarget(x > 0)\n")
    code, _, err = _run(capsys, ["audit", "--population", str(program)])
    assert code == 2 and "p.fr:4:" in err and max(len(x) for x in err.splitlines()) < 200


def test_spec_error_lines_are_capped(capsys, tmp_path):
    spec = tmp_path / "s.spec"
    spec.write_text(f'E[pred | sex == "{"a" * 3000}"] > 0.1 +\n')
    code, _, err = _run(capsys, ["check", f"@{spec}"])
    assert code == 2 and max(len(x) for x in err.splitlines()) < 200 and err.rstrip().endswith("^")


# ---- 5: bad input that crashed (exit 4) is one line and exit 2

@pytest.mark.parametrize("samples", ["1", "3"])
def test_a_few_samples_of_a_population_is_undecided_not_a_crash(capsys, samples):
    program = ROOT / "fairaudit" / "programs" / "examples" / "toy_t1.fr"
    code, out, err = _run(capsys, ["audit", "--population", str(program), "--samples", samples])
    assert code == 3 and err == "" and "verdict:   undecided" in out


LONG = "a" * 400


@pytest.mark.parametrize("argv", [
    [*AUDIT, "--json", f"{LONG}.json"], [*AUDIT, "--pdf", f"{LONG}.pdf"], [*AUDIT, "--full-trace", f"{LONG}.pq"],
    [*TRAIN, "--out", LONG], ["report", f"{LONG}.json"],
    ["audit", "--data", f"{LONG}.csv", "--pred", "x == 1", "--spec", "E[pred] > 0.1"],
    ["check", "E[pred] > 0.1", "--data", f"{LONG}.csv"], ["audit", "--population", f"{LONG}.fr"],
    ["audit", "--data", "ricci", "--model", f"{LONG}.skops", "--spec", "E[pred] > 0.1"],
])
def test_a_name_too_long_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, argv)
    assert code == 2 and "internal error" not in err, err
    assert len(err.splitlines()) == 1 and len(err) < 250 and "too long" in err


def test_an_os_error_on_a_user_path_is_bad_input(capsys, monkeypatch):
    import errno

    from fairaudit import data

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", "secret.csv")
    monkeypatch.setattr(data, "resolve", refuse)
    code, _, err = _run(capsys, ["check", "E[pred] > 0.1", "--data", "secret.csv"])
    assert code == 2 and err.strip() == ("fairaudit check: error: cannot use secret.csv: Permission denied (choose "
                                         "a path you may use, or change its permissions)")


# ---- 6: an interrupted run leaves no temporary file; runs never mix their outputs

_TERMINATE = """
import os, signal, sys
from fairaudit.core import fulltrace
from fairaudit.cli import main

def append(self, part):  # SIGTERM while the full trace is being written
    os.kill(os.getpid(), signal.SIGTERM)
fulltrace.FullTraceWriter.append = append
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_leaves_no_temporary_file(tmp_path):
    done = subprocess.run([sys.executable, "-c", _TERMINATE, *AUDIT, "--batch", "5", "--full-trace", "t.parquet",
                           "--json", "r.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 143 and done.stderr.strip() == "fairaudit: terminated"
    assert list(tmp_path.iterdir()) == []


def test_a_run_that_never_starts_leaves_no_temporary_file(tmp_path):
    import fairaudit

    run = fairaudit.audit("ricci", "E[pred] > 0.1", pred="combine > 70", iterate=True,
                          full_trace=tmp_path / "t.parquet")
    run.close()
    assert list(tmp_path.iterdir()) == []


def _part(rows: int):
    import numpy as np

    from fairaudit.core.trace import Trace

    z = np.zeros((rows, 1))
    return Trace(np.arange(1, rows + 1), ["n0"], z, z, z, z, z.astype(np.int8), z, z, z, z)


def test_runs_writing_one_path_never_mix(tmp_path):
    """Passed before the fix too (each run has a temporary file of its own): kept as a guard."""
    from fairaudit.core.fulltrace import FullTraceWriter, read_full_trace
    from fairaudit.core.outputs import write_atomically

    path = tmp_path / "t.parquet"
    older = FullTraceWriter(path)
    older.append(_part(5))
    older.close()
    first, second = FullTraceWriter(path), FullTraceWriter(path)
    first.append(_part(3))
    second.append(_part(2))
    second.close()  # finishes while the first run still writes
    assert len(read_full_trace(path)) == 2  # its own rows, nothing appended to the older file's
    first.close()
    assert len(read_full_trace(path)) == 3
    write_atomically(tmp_path / "r.json", b"1")
    write_atomically(tmp_path / "r.json", b"2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "t.parquet"]


def test_a_long_legal_name_can_be_written(capsys, tmp_path):
    name = "b" * 245  # within the file system's 255, while '.NAME.RANDOM.tmp' was not
    for option, suffix in (("--json", ".json"), ("--full-trace", ".pq")):
        code, _, err = _run(capsys, [*AUDIT, option, str(tmp_path / (name + suffix))])
        assert code in (0, 1, 3), err
    assert sorted(p.name for p in tmp_path.iterdir()) == [name + ".json", name + ".pq"]
