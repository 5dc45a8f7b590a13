"""The PDF report (fairaudit.report) and `fairaudit report`: built from a real audit (Adult, logreg, two comparisons)
with the monitor and with the dataset engine, from a synthetic result of an engine that is not installed (a sound
verifier), and from a result file in the format written before the engine contract; read back with pypdf, page 1
rasterised with pdftoppm."""
from __future__ import annotations

import io
import re
import json
import math
import os
import shutil
import struct
import zlib

import numpy as np
import pytest

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("fpdf")
pytest.importorskip("vl_convert")

from fairaudit.report import build_pdf, first_page_png, load_result, write_pdf  # noqa: E402
from fairaudit.core.guarantee import Guarantee  # noqa: E402
from fairaudit.report import content  # noqa: E402
from fairaudit.core.trace import AuditResult, NodeInfo, Trace  # noqa: E402
from tests.console import run_main  # noqa: E402

SPEC = ('E[pred | sex == "Female"] / E[pred | sex == "Male"] > 0.6 and '
        'E[pred | race == "White"] - E[pred | race == "Black"] < 0.2')


# ------------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def adult_audit():
    """A real audit: Adult, a logistic regression, a two-comparison spec (via fairaudit.api.audit when present)."""
    from fairaudit import data, models

    ds = data.load("adult")
    model = models.train(ds, "logreg", seed=0)
    try:
        from fairaudit.api import audit
    except ImportError:
        audit = None
    if audit is not None:
        result = audit(ds, SPEC, model=model, delta=0.05, batch=5)
    else:
        from fairaudit.engines.monitor.engine import monitor
        from fairaudit.spec import parse

        result = monitor(ds, parse(SPEC), model=model, delta=0.05, batch=5)
    return result, ds, model


@pytest.fixture(scope="module")
def adult_pdf(adult_audit):
    result, ds, model = adult_audit
    return build_pdf(result, dataset=ds, model=model, selected_nodes=["n2"], title="Adult income audit")


def _synthetic_verifier() -> AuditResult:
    """A verifier-style result (δ = 0, sound bounds) with a Fair node and rates, 20 refinement steps, from an
    engine ("quantfair", an engine name no registry has) that is not in the registry."""
    infos = [NodeInfo("n0", None, "Fair[sex] > 0.9", "cmp", ("n1", "n2"), op=">"),
             NodeInfo("n1", "n0", "Fair[sex]", "fair"), NodeInfo("n2", "n0", "0.9", "const", value=0.9)]
    k = 20
    steps = np.arange(1, k + 1)
    cert = np.linspace(0.5, 0.93, k)
    unfair = np.linspace(0.2, 0.02, k)
    und = 1 - cert - unfair
    nan = np.full(k, np.nan)
    est = np.stack([cert - 0.9, (cert + 1 - unfair) / 2, np.full(k, 0.9)], axis=1)
    lo = np.stack([cert - 0.9, cert, np.full(k, 0.9)], axis=1)
    hi = np.stack([1 - unfair - 0.9, 1 - unfair, np.full(k, 0.9)], axis=1)
    from fairaudit.bounds.rules import TRUE, UNKNOWN
    from fairaudit.core.trace import NO_VERDICT

    verdict = np.full((k, 3), NO_VERDICT, dtype=np.int8)
    verdict[:, 0] = np.where(cert > 0.9, TRUE, UNKNOWN)
    zeros = np.zeros((k, 3))
    fair = lambda a: np.stack([nan, a, nan], axis=1)  # noqa: E731
    trace = Trace(steps, ["n0", "n1", "n2"], est, lo, hi, zeros, verdict, np.full((k, 3), np.nan), fair(cert),
                  fair(unfair), fair(und))
    stop = int(steps[np.argmax(cert > 0.9)])
    return AuditResult("Fair[sex] > 0.9", "quantfair", {"delta": 0.0, "domain": "box", "protected": "sex"}, "true",
                       stop, k, infos, trace, guarantee=Guarantee("sound"), unit="refinement steps")


def _text(pdf: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return "\n".join(page.extract_text() or "" for page in reader.pages)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _png_pixels(png: bytes) -> np.ndarray:
    """Greyscale-ish pixel values of an 8-bit RGB/gray PNG (no Pillow needed)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(png):
        length = struct.unpack(">I", png[pos:pos + 4])[0]
        kind = png[pos + 4:pos + 8]
        body = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(height, width, channels)


# ------------------------------------------------------------------------------------------------ the real audit


def test_real_audit_pdf_contents(adult_audit, adult_pdf):
    result, ds, model = adult_audit
    reader = pypdf.PdfReader(io.BytesIO(adult_pdf))
    assert len(reader.pages) >= 3
    text = _flat(_text(adult_pdf))
    assert "Adult income audit" in text
    # the specification text (canonical form, as written in the result)
    assert _flat(result.spec) in text
    # the verdict sentence with its guarantee (the result's own), and the banner word
    sentence = content.headline(result)["sentence"]
    assert sentence.lower().startswith(result.headline.lower()[:40])
    assert _flat(sentence) in text
    assert content.headline(result)["word"] in text
    assert "with probability ≥ 0.95" in text
    # the dataset: name, rows, content hash; the model: kind and hash
    assert "adult" in text and f"{len(ds):,}" in text
    assert ds.content_hash in text.replace(" ", "")
    assert model.content_hash in text.replace(" ", "")
    # no node id anywhere (issue 44: a reader names a clause by its name or its words), the methods and footer
    assert not [node.id for node in result.node_info if re.search(rf"\b{node.id}\b", text)]
    assert "ε(δ, n)" in text and "Kleene" in text and "page 1 of" in text
    assert f"page {len(reader.pages)} of {len(reader.pages)}" in text
    assert content.spec_hash(result)[:16] in text
    # per-group base statistics
    assert "Groups in the data" in text and "Female" in text and "base rate" in text


def test_real_audit_pdf_has_images(adult_pdf):
    reader = pypdf.PdfReader(io.BytesIO(adult_pdf))
    images = [img for page in reader.pages for img in page.images]
    # tree + 2 comparisons + selected node n2 + group bars
    assert len(images) >= 5
    assert all(img.image.width > 200 for img in images)


def test_first_page_renders_not_blank(adult_pdf):
    if shutil.which("pdftoppm") is None:
        if os.environ.get("CI"):
            pytest.fail("pdftoppm (poppler-utils) is required in CI")
        pytest.skip("pdftoppm is not installed")
    png = first_page_png(adult_pdf, dpi=50)
    assert png is not None
    px = _png_pixels(png).astype(float)
    assert px.shape[0] > px.shape[1] > 300  # portrait A4 at 50 dpi ≈ 413 × 585
    assert px.std() > 20  # not blank
    assert (px < 128).mean() > 0.02  # some dark ink (text), not only a coloured box


def test_first_page_banner_colour(adult_audit, adult_pdf):
    if shutil.which("pdftoppm") is None:
        if os.environ.get("CI"):
            pytest.fail("pdftoppm (poppler-utils) is required in CI")
        pytest.skip("pdftoppm is not installed")
    result = adult_audit[0]
    px = _png_pixels(first_page_png(adult_pdf, dpi=50))[..., :3].astype(int)
    hexc = content.headline(result)["colour"].lstrip("#")
    target = np.array([int(hexc[i:i + 2], 16) for i in (0, 2, 4)])
    top = px[: px.shape[0] // 3]
    close = (np.abs(top - target).sum(axis=2) < 40).mean()
    assert close > 0.08, f"only {close:.1%} of the top third has the verdict colour"


def test_write_pdf_and_bad_path(adult_audit, tmp_path):
    from fairaudit.base.errors import FairauditError

    result = adult_audit[0]
    out = write_pdf(result, tmp_path / "r.pdf", load_dataset=False)
    assert out.read_bytes()[:5] == b"%PDF-"
    with pytest.raises(FairauditError, match="does not exist"):
        write_pdf(result, tmp_path / "missing" / "r.pdf")
    with pytest.raises(FairauditError, match="unknown node"):
        build_pdf(result, selected_nodes=["n99"], load_dataset=False)


# ------------------------------------------------------------------------------------------------ JSON round trip


def test_report_from_json_alone(adult_audit, tmp_path):
    """Rebuilt from the JSON: the built-in dataset is reloaded by name for the group statistics."""
    result = adult_audit[0]
    pdf = build_pdf(result.to_json(trace_every=10))
    text = _flat(_text(pdf))
    assert _flat(content.headline(result)["sentence"]) in text
    assert "Groups in the data" in text and "Female" in text and "base rate" in text


def _cli(capsys, *args, cwd=None):
    """``fairaudit ARGS`` through ``main`` in this process (``tests.console``)."""
    return run_main(capsys, *args, cwd=cwd)


@pytest.mark.slow
def test_cli_round_trip(adult_audit, tmp_path, capsys):
    result = adult_audit[0]
    src = tmp_path / "audit.json"
    result.to_json(src, trace_every=5)
    out = tmp_path / "audit.pdf"
    proc = _cli(capsys, "report", str(src), "--pdf", str(out), "--no-data", "--node", "n2")
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and out.exists()
    text = _flat(_text(out.read_bytes()))
    assert _flat(result.spec) in text
    assert _flat(content.headline(result)["sentence"]) in text
    # default output path: RESULT with .pdf
    proc = _cli(capsys, "report", str(src), "--no-data")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "audit.pdf").exists()


@pytest.mark.parametrize("body", ['{"spec": 1', "[1, 2]", '{"spec": "x"}', ""])
def test_cli_bad_json_exit_2(tmp_path, body, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(body)
    proc = _cli(capsys, "report", str(bad), "--pdf", str(tmp_path / "x.pdf"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fairaudit report: error:"), proc.stderr
    assert not (tmp_path / "x.pdf").exists()


def test_cli_missing_file_exit_2(tmp_path, capsys):
    proc = _cli(capsys, "report", str(tmp_path / "nope.json"))
    assert proc.returncode == 2 and "no such audit result file" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------ synthetic verifier


def test_verifier_result_sound_bound_and_rates():
    result = _synthetic_verifier()
    pdf = build_pdf(result, load_dataset=False)
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) >= 3
    text = _flat(_text(pdf))
    assert "CERTIFIED TRUE" in text
    assert "sound" in text.lower() and "with certainty" in text
    assert "certified / unfair / undecided" in text
    assert "No dataset was given" in text
    assert "not recorded" in text  # model facts absent: said, not guessed
    images = [img for page in reader.pages for img in page.images]
    assert len(images) >= 3  # tree, convergence of n0, rates of n1


def test_undecided_headline_is_not_a_pass():
    result = _synthetic_verifier()
    result.verdict = "unknown"
    result.stop_step = None
    head = content.headline(result)
    assert head["word"] == "UNDECIDED" and "not a pass" in head["explanation"]


def test_number_formatting():
    assert content.num(-0.30281) == "−0.3028"
    assert content.num(math.inf) == "∞" and content.num("-inf") == "−∞"
    assert content.num(None) == "—" and content.num(math.nan) == "—"
    assert content.interval(0.1, 0.2) == "[0.1, 0.2]" and content.interval(0.25, 0.25) == "0.25"  # one rule
    assert content.num(0.123456) == "0.1235" and content.num(7) == "7"
    assert content.count(32561) == "32,561"


def test_model_facts_from_expression():
    result = _synthetic_verifier()
    result.options = dict(result.options, pred="decile_score > 3")
    rows = dict(content.model_lines(content.model_facts(result)))
    assert "decile_score > 3" in rows["decisions"]


def test_load_result_accepts_dict_and_text(adult_audit):
    result = adult_audit[0]
    text = result.to_json(trace_every=50)
    assert load_result(text).verdict == result.verdict
    assert load_result(json.loads(text)).spec == result.spec


def test_node_table_names_the_parts_of_a_named_conjunction():
    from fairaudit import audit, data

    spec = ('fpr_a: E[decile_score > 4 | race == "African-American" and two_year_recid == 0] < 0.5\n'
            'fpr_c: E[decile_score > 4 | race == "Caucasian" and two_year_recid == 0] < 0.5')
    r = audit(data.load("compas"), spec, pred="decile_score > 4", delta=0.1)
    rows = {row["id"]: row for row in content.node_rows(r)}
    assert rows["n0"]["expression"] == "fpr_a and fpr_c"
    assert rows["n1"]["expression"].startswith("fpr_a: E[decile_score > 4")
    assert rows["n1"]["kind"] == "comparison"
    assert rows["n1"]["estimate"].endswith("(< 0.5)")  # the compared probability beside its threshold


# ------------------------------------------------------------------------------------------------ issue 11 (#16)


def test_a_subnormal_bound_prints_as_zero_everywhere():
    """An outward-rounded bound of 0 is a subnormal (-4.9e-324): the report and the tooltips print 0 (one rule,
    ``fairaudit.base.numbers.clean``)."""
    from fairaudit.viz import _format

    tiny = -5e-324
    assert content.num(tiny) == "0" and content.interval(tiny, 0.413) == "[0, 0.413]"
    assert _format.interval(tiny, 0.413).startswith("[0") and "e" not in _format.interval(tiny, 0.413)
    assert content.num(1e-300) != "0"  # a small normal number is still itself


def _ratio_nodes(estimate_ratio=0.139, threshold=0.8):
    return [
        {"id": "n0", "parent": None, "kind": "cmp", "op": ">=", "text": f"E[a] / E[b] >= {threshold}",
         "final": {"estimate": estimate_ratio - threshold, "lo": 0.1 - threshold, "hi": 0.2 - threshold,
                   "delta": 0.05, "verdict": "false"}},
        {"id": "n1", "parent": "n0", "kind": "div", "op": "/", "text": "E[a] / E[b]",
         "final": {"estimate": estimate_ratio, "lo": 0.1, "hi": 0.2, "delta": 0.05, "verdict": None}},
        {"id": "n2", "parent": "n1", "kind": "expect", "text": "E[a]", "final": {"estimate": 0.1}},
        {"id": "n3", "parent": "n1", "kind": "expect", "text": "E[b]", "final": {"estimate": 0.7}},
        {"id": "n4", "parent": "n0", "kind": "const", "value": threshold, "text": str(threshold),
         "final": {"estimate": threshold, "lo": threshold, "hi": threshold}},
    ]


def test_a_comparison_shows_its_left_side_beside_the_threshold_not_lhs_minus_threshold():
    from fairaudit.viz.tree import tree_frame

    nodes = _ratio_nodes()
    frame, _ = tree_frame(nodes)
    tip = frame.set_index("id").loc["n0"]
    assert tip["estimate"].startswith("0.139") and "≥ 0.8" in tip["estimate"] and "0.661" not in tip["estimate"]
    assert tip["interval"].startswith("[0.1") and "0.7" not in tip["interval"]

    class _R:  # the node table reads result.nodes and result.node(id).children
        def __init__(self, nodes):
            self.nodes = nodes

        def node(self, nid):
            return type("I", (), {"children": tuple(n["id"] for n in nodes if n["parent"] == nid)})()

    rows = {r["id"]: r for r in content.node_rows(_R(nodes))}
    assert rows["n0"]["estimate"] == "0.139 (≥ 0.8)" and rows["n0"]["interval"] == "[0.1, 0.2]"
    assert rows["n0"]["margin"] == "−0.661"  # the difference only under its own label


def test_a_figure_caption_is_never_orphaned_on_a_page_of_its_own():
    """The group figure's two-line caption used to spill its last line ("is the rate over all rows.") onto a
    page of its own: a figure is placed only where it fits together with its caption."""
    from fairaudit.report import charts
    from fairaudit.report.pdf import ReportPDF

    png = struct.pack(">II", 1000, 800)  # only the header is read for the size
    fig = charts.Figure(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + png + b"\x08\x02\x00\x00\x00", "x " * 200)
    pdf = ReportPDF("footer", "header")
    pdf.add_page()
    width, height = pdf.fit(fig)
    caption = pdf.para_height(fig.caption, size=8, style="I")
    assert caption > 4  # two lines at least
    # place the cursor where the image fits but its caption does not
    pdf.set_y(pdf.page_break_trigger - height - 2 - caption / 2)
    placed = []
    pdf.image = lambda *a, **k: placed.append(pdf.page_no())  # no real PNG decoding needed
    pdf.image_block(fig)
    assert placed == [2] and pdf.page_no() == 2  # image and caption went to the next page together


def test_parameter_table_comes_from_the_engine_declarations(adult_audit):
    """Every option's title, shown value and meaning are the engine's declarations (``Option.title`` / ``show`` /
    ``help``), the engine row its title and summary; an unset option is listed with its meaning."""
    from fairaudit import engines

    result = adult_audit[0]
    engine = engines.get(result.engine)
    rows = {title: (value, meaning) for title, value, meaning in content.option_rows(result)}
    assert rows["Engine"] == (engine.title, engine.summary)
    for option in engine.all_options():
        value = result.options.get(option.name)
        if value is not None:
            assert rows[option.title] == (option.show(value), option.help)  # one format: base.numbers.option_value
    unset_titles, unset_help = rows["not set"]
    budget = engine.option("time_budget")
    assert budget.title in unset_titles and budget.help in unset_help
    assert rows["Rows"][0] == "held-out" and "held-out" in rows["Rows"][1]


def test_an_engine_not_installed_here_lists_its_options_as_recorded():
    result = _synthetic_verifier()
    rows = {title: (value, meaning) for title, value, meaning in content.option_rows(result)}
    assert rows["Engine"][0] == "quantfair" and "not installed" in rows["Engine"][1]
    assert rows["domain"] == ("box", "") and rows["protected"] == ("sex", "")


def test_first_page_lists_rows_assumption_and_warnings(adult_audit):
    import dataclasses

    result, ds, model = adult_audit
    changed = dataclasses.replace(
        result, rows={"text": "8,141 held-out rows of adult (not used to train the model)", "audited": 8141},
        guarantee=Guarantee("probabilistic", 0.05, assumes="the rows arrive in random order (shuffled with seed 0)"),
        warnings=["the verdict changed after it was first decided"])
    pdf = build_pdf(changed, dataset=ds, model=model)
    first = pypdf.PdfReader(io.BytesIO(pdf)).pages[0].extract_text()
    flat = " ".join(first.split())
    assert "8,141 held-out rows of adult" in flat
    assert "random order (shuffled with seed 0)" in flat
    assert "Warning" in flat and "the verdict changed after it was first decided" in flat


# ------------------------------------------------------------------------------------------------ issue 13


def test_monitor_pdf_words_its_guarantee_as_a_probability(adult_audit, adult_pdf):
    result = adult_audit[0]
    text = _flat(_text(adult_pdf))
    assert result.guarantee.kind == "probabilistic"
    assert "with probability ≥ 0.95" in text
    assert _flat(result.guarantee.interval_meaning) in text
    assert f"step: the number of {result.unit} processed" in text  # the glossary in the result's unit


@pytest.fixture(scope="module")
def dataset_audit(adult_audit):
    from fairaudit.api import audit

    _, ds, model = adult_audit
    return audit(ds, SPEC, engine="dataset", model=model)


def test_dataset_engine_pdf_says_exact_and_never_a_probability(dataset_audit):
    result = dataset_audit
    assert result.guarantee.kind == "exact"
    pdf = build_pdf(result, load_dataset=False)
    text = _flat(_text(pdf))
    assert _flat(content.headline(result)["sentence"]) in text
    assert "exactly on these" in text and "not the population" in text
    assert _flat(result.guarantee.interval_meaning) in text
    assert "probability ≥" not in text and "confidence sequence" not in text
    assert "observations" not in text
    # the engine's own methods text and the glossary in its unit
    from fairaudit import engines

    for heading, _ in engines.get("dataset").methods(result.options):
        assert _flat(heading) in text
    assert "step: the number of rows processed" in text
    # one step: no δ column, no convergence plots
    assert "Convergence of every comparison" not in text and "single step" in text
    assert " δ " not in _flat(pypdf.PdfReader(io.BytesIO(pdf)).pages[2].extract_text() or "")


def test_sound_result_of_an_unknown_engine_is_worded_as_sound():
    result = _synthetic_verifier()
    text = _flat(_text(build_pdf(result, load_dataset=False)))
    assert "with certainty (sound bounds)" in text
    assert _flat(Guarantee("sound").interval_meaning) in text
    assert "probability ≥" not in text
    assert "step: the number of refinement steps processed" in text
    assert "quantfair engine is not installed" in text


def test_partial_result_says_why_it_stopped(adult_audit):
    import dataclasses

    result = dataclasses.replace(adult_audit[0], complete=False, timed_out=True,
                                 options={**adult_audit[0].options, "time_budget": 2.0})
    text = _flat(_text(build_pdf(result, load_dataset=False)))
    assert "This result is partial" in text and _flat(result.stopped_reason) in text


def test_build_pdf_reports_progress_and_can_be_cancelled():
    from fairaudit.base.errors import FairauditError

    result = _synthetic_verifier()
    seen = []
    build_pdf(result, load_dataset=False, on_progress=lambda p: seen.append((p.done, p.total, p.text())))
    dones = [d for d, _, _ in seen]
    total = seen[0][1]
    assert total == 1 + 1 + 1 + 1  # the tree, one comparison, one Fair node's rates, the pages
    assert dones == sorted(dones) and len(set(dones)) == len(dones)  # increasing
    assert dones[0] == 0 and dones[-1] == total and all(t == total for _, t, _ in seen)
    assert all(text.startswith("Building the PDF report") for _, _, text in seen)
    calls = []
    with pytest.raises(FairauditError, match="cancelled"):
        build_pdf(result, load_dataset=False, on_progress=lambda p: calls.append(p.done) or len(calls) < 2)
    assert len(calls) == 2


def _old_format() -> dict:
    """A result as `fairaudit audit --json` wrote it before the engine contract: the guarantee, unit, rows,
    warnings and provenance in ``info``, no ``guarantee`` / ``unit`` / ``provenance`` fields, no node ``op``."""
    nodes = [
        {"id": "n0", "parent": None, "text": "E[pred | sex == \"Female\"] < 0.9", "kind": "cmp",
         "final": {"estimate": -0.6, "lo": -0.7, "hi": -0.5, "delta": 0.05, "verdict": "true"}},
        {"id": "n1", "parent": "n0", "text": "E[pred | sex == \"Female\"]", "kind": "expect",
         "final": {"estimate": 0.3, "lo": 0.2, "hi": 0.4, "delta": 0.05, "verdict": None, "n": 40}},
        {"id": "n2", "parent": "n0", "text": "0.9", "kind": "const",
         "final": {"estimate": 0.9, "lo": 0.9, "hi": 0.9, "delta": 0, "verdict": None}},
    ]
    trace = []
    for step, (lo, hi) in zip((10, 20, 30), ((0.0, 0.95), (0.1, 0.6), (0.2, 0.4))):
        trace += [
            {"step": step, "node": "n0", "estimate": 0.3 - 0.9, "lo": lo - 0.9, "hi": hi - 0.9, "delta": 0.05,
             "verdict": "unknown" if hi >= 0.9 else "true"},
            {"step": step, "node": "n1", "estimate": 0.3, "lo": lo, "hi": hi, "delta": 0.05, "verdict": None,
             "n": step // 2},
            {"step": step, "node": "n2", "estimate": 0.9, "lo": 0.9, "hi": 0.9, "delta": 0, "verdict": None},
        ]
    return {
        "spec": "E[pred | sex == \"Female\"] < 0.9", "engine": "monitor",
        "options": {"data": "toy", "model": None, "pred": "income == 1", "where": None, "order": "shuffle",
                    "seed": 0, "rows": "all", "time_budget": None, "delta": 0.05, "batch": 10, "split": "equal",
                    "bound": "hoeffding", "stop": False},
        "verdict": "true", "stop_step": 20, "steps": 30, "nodes": nodes, "trace": trace,
        "info": {"unit": "observations", "checks": 3, "stream_length": 30, "complete": True, "timed_out": False,
                 "guarantee_delta": 0.05, "verdict_step": 20, "warnings": ["an old warning"],
                 "assumption_broken": False, "rows": {"policy": "all", "audited": 30, "total": 30,
                                                      "text": "all 30 rows of toy"},
                 "assumption": "the rows were shuffled (seed 0) before streaming",
                 "dataset": {"name": "toy", "rows": 30, "content_hash": "ab" * 32, "source": "toy.csv",
                             "label": "income", "favourable": "1", "protected": ["sex"]},
                 "model": None},
    }


def test_a_result_file_of_the_old_format_still_makes_a_report(tmp_path, capsys):
    old = _old_format()
    result = load_result(old)
    assert result.unit == "observations" and result.rows_text == "all 30 rows of toy"
    text = _flat(_text(build_pdf(old, load_dataset=False)))
    assert "Certified true with probability ≥ 0.95 after 20 observations" in text
    assert "all 30 rows of toy" in text and "an old warning" in text
    assert "shuffled (seed 0)" in text and "ab" * 32 in text.replace(" ", "")
    src = tmp_path / "old.json"
    src.write_text(json.dumps(old))
    proc = _cli(capsys, "report", str(src), "--pdf", str(tmp_path / "old.pdf"))
    assert proc.returncode == 0, proc.stderr
    assert "verdict certified" in proc.stdout and (tmp_path / "old.pdf").read_bytes()[:5] == b"%PDF-"


def test_no_report_file_names_an_engine_or_words_a_monitor_concept():
    """The report takes every engine-specific word from the engine and the guarantee (issue 13)."""
    import pathlib
    import re

    import fairaudit.report as report

    words = r"engine\s*[!=]=|monitor|observation|hoeffding|betting|\bbatch\b|δ split|optimi[sz]"
    forbidden = re.compile(rf"(?i:{words})|Δ")  # Δ on its own: δ (a trace column of every engine) is allowed
    folder = pathlib.Path(report.__file__).parent
    files = sorted(folder.glob("*.py")) + [folder.parent / "cli" / "report.py"]
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            words_only = re.sub(r"fairaudit(\.\w+)+", "", line)  # a module's path is not a word the reader sees
            assert not forbidden.search(words_only), f"{path.name}:{number}: {line.strip()}"
