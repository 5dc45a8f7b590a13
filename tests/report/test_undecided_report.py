"""The PDF's Fair[...] section says how the undecided share shrank (under the rates chart) and, when the run
recorded it, shows where the undecided individuals are (issue 33 item 5); a run with none undecided shows no such
figure."""
import io
from pathlib import Path

import pytest

from fairaudit import audit
from fairaudit.core import undecided_view as uv
from fairaudit.report import build_pdf, charts

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "example.nnet"


def _text(pdf: bytes) -> str:
    return " ".join("\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


def test_where_the_undecided_are_in_the_pdf(tmp_path):
    from fairaudit.engines.fairquant.engine import _long_net

    path = tmp_path / "random.nnet"
    path.write_text(_long_net())
    r = audit(None, "Fair[x1] >= 0.5", engine="fairquant", model=str(path), max_depth=3, sample_depth=1,
              batch_partitions=2)
    text = _text(build_pdf(r))
    assert "The grey band on top is the undecided share" in text
    fair = next(n.id for n in r.node_info if n.kind == "fair")
    figure = charts.undecided_where_figure(r, fair)  # the chart (its title is drawn inside the image)
    assert figure.png and not figure.error
    record = uv.for_node(r, fair)
    assert " ".join(uv.caption(record).split()) in text  # the dashboard's sentence under the figure


def test_no_figure_when_nothing_is_undecided():
    r = audit(None, "Fair[x1] >= 0.75", engine="fairquant", model=str(EXAMPLE), batch_partitions=1)
    text = _text(build_pdf(r))
    assert "still undecided" not in text and "The grey band on top is the undecided share" in text
    assert charts.undecided_where_figure(r, next(n.id for n in r.node_info if n.kind == "fair")) is None
