"""The PDF report of an audit of a population program (issue 14): with the sound engine that reads the program and
with the sampling one, from the API, from `fairaudit audit --population F.fr --pdf` and from a saved JSON result
(`fairaudit report RESULT.json --population F.fr`). The report names the program and its sha256, prints its text,
says the verdict and the guarantee in the library's words, has the engine's methods text, and no dataset / model /
group sections (there are no rows). No engine is named in the report's code: it branches on the inputs."""
from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("fpdf")
pytest.importorskip("vl_convert")
pytest.importorskip("z3")

from fairaudit import engines  # noqa: E402
from fairaudit.report import build_pdf, content  # noqa: E402
from tests.console import run_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "bench" / "fairsquare" / "examples" / "fig1_original.fr"
FIXED = ROOT / "bench" / "fairsquare" / "examples" / "fig1_fixed.fr"
SHA = hashlib.sha256(FIG1.read_text(encoding="utf-8").encode("utf-8")).hexdigest()


def _text(pdf: bytes) -> str:
    return "\n".join(page.extract_text() or "" for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _cli(capsys, *args, cwd=ROOT):
    """``fairaudit ARGS`` through ``main`` in this process, from the repository root (``tests.console``)."""
    return run_main(capsys, *args, cwd=cwd)


@pytest.fixture(scope="module")
def sound_result():
    from fairaudit.api import audit

    return audit(None, None, engine="fairsquare", population=FIG1)


@pytest.fixture(scope="module")
def sampled_result():
    from fairaudit.api import audit

    return audit(None, None, engine="monitor", population=FIG1, samples=40_000)


@pytest.fixture(scope="module")
def sound_pdf(sound_result):
    return build_pdf(sound_result, population=FIG1)


def _says_what_was_audited(result, text: str):
    flat = _flat(text)
    assert result.provenance["population"] == {"name": FIG1.name, "sha256": SHA}
    assert FIG1.name in flat
    assert SHA[:16] in flat.replace(" ", "")
    assert _flat(content.headline(result)["sentence"]) in flat  # the library's one verdict sentence
    assert _flat(result.rows["text"]) in flat
    for heading, _ in engines.get(result.engine).methods(result.options):  # the engine's own methods text
        assert _flat(heading) in flat
    assert "Population program" in flat
    # nothing about rows of a dataset or a model: they do not apply
    for absent in ("Decisions audited", "Groups in the data", "not recorded", "held-out"):
        assert absent not in flat, absent


def test_sound_audit_of_a_program_makes_a_report_with_the_program(sound_result, sound_pdf):
    text = _text(sound_pdf)
    _says_what_was_audited(sound_result, text)
    flat = _flat(text)
    assert "fairnessTarget(hire > 0.5)" in flat and "sensitiveAttribute(ethnicity > 10)" in flat  # its text
    assert f"x axis: step (the number of {sound_result.unit} processed)" in flat  # the plots' unit
    assert "probability ≥" not in flat


def test_sampled_audit_of_a_program_makes_a_report_with_the_program(sampled_result):
    text = _text(build_pdf(sampled_result, population=FIG1))
    _says_what_was_audited(sampled_result, text)
    assert "fairnessTarget(hire > 0.5)" in _flat(text)


def test_the_parameter_table_has_the_program_and_no_row_inputs(sound_result):
    rows = {title: (value, meaning) for title, value, meaning in content.option_rows(sound_result)}
    assert rows["Population program"][0] == FIG1.name
    assert not {"Rows", "Decisions", "Rows matching", "Dataset", "Model"} & set(rows)
    assert "not set" not in rows or "Rows" not in rows["not set"][0]
    engine = engines.get(sound_result.engine)
    for option in engine.all_options():
        value = sound_result.options.get(option.name)
        if value is not None:
            assert rows[option.title] == (option.show(value), option.help)


def test_the_program_is_printed_only_when_its_sha256_is_the_recorded_one(sound_result):
    other = _flat(_text(build_pdf(sound_result, population=FIXED)))
    assert "is not the one audited" in other and SHA[:16] in other.replace(" ", "")
    assert "fairnessTarget(" not in other
    without = _flat(_text(build_pdf(sound_result)))
    assert "--population FILE.fr" in without and "fairnessTarget(" not in without
    assert FIG1.name in without and SHA[:16] in without.replace(" ", "")


def test_a_parsed_program_is_printed_by_the_printer(sound_result):
    from fairaudit.programs.population import load
    from fairaudit.programs.printer import format_program

    pop = load(FIG1)
    facts = content.population_facts(sound_result, pop)
    assert facts["text"] == format_program(pop.program) and facts["sha256"] == SHA
    assert "comments" in facts["origin"]  # the file's comments are not in the printed program


def test_the_program_text_itself_may_be_given(sound_result):
    facts = content.population_facts(sound_result, FIG1.read_text(encoding="utf-8"))
    assert facts["text"] == FIG1.read_text(encoding="utf-8") and facts["note"] is None


def test_a_long_program_is_cut_with_a_note():
    text = "\n".join(f"x{i} = {i}" for i in range(content.MAX_PROGRAM_LINES + 7))
    shown, note = content.program_listing(text)
    assert len(shown.splitlines()) == content.MAX_PROGRAM_LINES
    assert "7 are left out" in note
    assert content.program_listing("a\nb\n") == ("a\nb", None)


def test_cli_audit_population_pdf_and_json_round_trip(tmp_path, capsys):
    """`fairaudit audit --engine E --population F --json J --pdf P`, then `fairaudit report J --pdf Q
    --population F`: both PDFs say what was audited; the report refuses a dataset for a population result."""
    out, res = tmp_path / "audit.pdf", tmp_path / "audit.json"
    proc = _cli(capsys, "audit", "--engine", "fairsquare", "--population", FIG1, "--json", res, "--pdf", out)
    assert proc.returncode == 1, proc.stderr  # Fig. 1 is unfair
    assert f"wrote {out}" in proc.stdout and out.read_bytes()[:5] == b"%PDF-"
    result = json.loads(res.read_text())
    direct = _flat(_text(out.read_bytes()))
    assert FIG1.name in direct and SHA[:16] in direct.replace(" ", "") and "fairnessTarget(" in direct

    again = tmp_path / "again.pdf"
    proc = _cli(capsys, "report", res, "--pdf", again, "--population", FIG1)
    assert proc.returncode == 0, proc.stderr
    assert "verdict violated" in proc.stdout
    flat = _flat(_text(again.read_bytes()))
    from fairaudit.report import load_result

    loaded = load_result(res)
    assert _flat(content.headline(loaded)["sentence"]) in flat and result["rows"]["text"] in flat
    assert SHA[:16] in flat.replace(" ", "") and "fairnessTarget(hire > 0.5)" in flat
    for heading, _ in engines.get(loaded.engine).methods(loaded.options):
        assert _flat(heading) in flat

    bare = tmp_path / "bare.pdf"
    proc = _cli(capsys, "report", res, "--pdf", bare)  # without the program: its name and hash, and how to print it
    assert proc.returncode == 0, proc.stderr
    assert "--population FILE.fr" in _flat(_text(bare.read_bytes()))

    proc = _cli(capsys, "report", res, "--pdf", tmp_path / "y.pdf", "--population", FIXED)  # another program: refused
    assert proc.returncode == 2 and "not the one audited" in proc.stderr and not (tmp_path / "y.pdf").exists()
    proc = _cli(capsys, "report", res, "--pdf", tmp_path / "x.pdf", "--data", "adult")
    assert proc.returncode == 2 and "population program" in proc.stderr


def test_cli_sampled_audit_of_a_program_writes_a_pdf(tmp_path, capsys):
    out = tmp_path / "sampled.pdf"
    proc = _cli(capsys, "audit", "--engine", "monitor", "--population", FIG1, "--samples", "30000", "--pdf", out)
    assert proc.returncode in (1, 3), proc.stderr
    flat = _flat(_text(out.read_bytes()))
    assert FIG1.name in flat and SHA[:16] in flat.replace(" ", "") and "fairnessTarget(" in flat


def test_population_pdf_may_not_replace_the_program(tmp_path, capsys):
    copy = tmp_path / "p.fr"
    copy.write_text(FIG1.read_text())
    proc = _cli(capsys, "audit", "--engine", "fairsquare", "--population", copy, "--pdf", copy)
    assert proc.returncode == 2 and copy.read_text() == FIG1.read_text()


def test_no_front_end_file_words_a_monitor_concept():
    """fairaudit/viz and fairaudit/cli, like fairaudit/report (test_report.py), take every engine-specific
    word from the engine's declarations; no file branches on an engine's name."""
    import re

    words = r"engine\s*[!=]=|monitor|observation|hoeffding|betting|\bbatch\b|δ split|optimi[sz]"
    forbidden = re.compile(rf"(?i:{words})|Δ")
    files = [path for folder in ("viz", "cli", "report")
             for path in sorted((ROOT / "fairaudit" / folder).glob("*.py"))]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            words_only = re.sub(r"fairaudit(\.\w+)+", "", line)  # a module's path is not a word the reader sees
            assert not forbidden.search(words_only), f"{path.name}:{number}: {line.strip()}"
        for name in engines.names():
            if name != "dataset":  # also the name of an input ("dataset" provenance, `fairaudit datasets`)
                assert not re.search(rf"[\"']{re.escape(name)}[\"']", text), f"{path.name} names the engine {name!r}"


def test_a_program_generated_from_data_keeps_the_dataset_and_model_and_prints_the_program():
    """``audit(dataset, spec, engine=<one requiring a population>, model=...)`` generates the program: the report
    has the program (regenerated from the dataset and the model, checked by its sha256) and the dataset and model
    sections too; without them, it says how to print it."""
    from fairaudit import models
    from fairaudit.api import audit
    from fairaudit.testing import toy_dataset

    ds = toy_dataset(2000)
    model = models.train(ds, "tree", seed=0, max_depth=3)
    engine = next(e.name for e in engines.all_engines() if "population" in e.requires)
    result = audit(ds, 'E[pred | sex == "F"] > 0.01', engine=engine, model=model, time_budget=20)
    assert content.generated_from_data(result)
    flat = _flat(_text(build_pdf(result, dataset=ds, model=model)))
    sha = result.provenance["population"]["sha256"]
    assert sha[:16] in flat.replace(" ", "") and "def popModel():" in flat and "fairnessTarget(" in flat
    assert "Dataset the program was generated from" in flat and "Decisions audited" in flat
    assert _flat(content.headline(result)["sentence"]) in flat
    bare = _flat(_text(build_pdf(result, load_dataset=False)))
    assert "--data NAME --model KIND|PATH" in bare and "def popModel():" not in bare
