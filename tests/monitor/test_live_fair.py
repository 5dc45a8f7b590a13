"""``Fair[...]`` on a live log (``fairaudit.engines.monitor.livelog`` with a model, ``fairaudit.engines.monitor.live.FirstFlips``): however the
rows are cut into arriving chunks, the verdict, every interval and the counterexamples (first 100 in arrival order,
their count at every check, rows numbered in the log) equal the file at rest in given order; a value of the
attribute that the first rows did not have is told once."""
import json

import numpy as np
import pytest

from fairaudit import api, data, engines, models
from fairaudit.engines.monitor.livelog import live_audit, log_dataset
from fairaudit.core.observations import fair_domains
from fairaudit.core.driver import last
from fairaudit.spec import parse
from tests.monitor.test_live import cut, same

SPEC = 'Fair[race] >= 0.97 and E[pred | sex == "Female"] >= 0.3'


@pytest.fixture(scope="module")
def setup():
    compas = data.load("compas")
    return compas, models.train(compas, "logreg", seed=0)


def run_live(spec_text, frames, model, domains, where=None, **options):
    opts = engines.get("monitor").resolve_options({"order": "given", **options})
    from fairaudit.spec import parse_event

    return last(live_audit(parse(spec_text), iter(frames), decide=model.predict, score=model.score, model=model,
                           domains=domains, where=parse_event(where) if where else None, options=opts,
                           trace_points=None))


@pytest.mark.parametrize("pieces,seed,where", [(7, 0, None), (40, 1, None), (15, 2, "priors_count > 1")])
def test_live_fair_equals_the_file_at_rest(setup, pieces, seed, where):
    compas, model = setup
    spec = parse(SPEC)
    domains = fair_domains(spec, compas.frame, compas.schema)
    rest = api.audit(compas, SPEC, model=model, rows="all", order="given", where=where, trace_points=None)
    got = run_live(SPEC, cut(compas.frame, pieces, seed, empty=seed == 1), model, domains, where=where)
    same(got, rest)
    assert (got.verdict, got.stop_step) == (rest.verdict, rest.stop_step)
    assert got.counterexamples.to_dict() == rest.counterexamples.to_dict()
    assert got.counterexamples.leaves[0].total > 0
    assert json.dumps(got.counterexamples.to_dict())  # plain JSON


def test_counterexamples_count_the_rows_checked_so_far(setup):
    """Each partial result counts the flipped rows among the rows checked so far (an independent count: the flip
    test on the whole frame)."""
    compas, model = setup
    spec = parse("Fair[race] >= 0.5")
    domains = fair_domains(spec, compas.frame, compas.schema)
    opts = engines.get("monitor").resolve_options({"order": "given"})
    pred = np.asarray(model.predict(compas.frame))
    flipped = np.zeros(len(compas.frame), dtype=bool)
    for value in domains["race"]:
        flipped |= np.asarray(model.predict(compas.frame.assign(race=value))) != pred
    seen = 0
    for result in live_audit(spec, iter(cut(compas.frame, 9, 4)), decide=model.predict, model=model,
                             domains=domains, options=opts, trace_points=None):
        done = int(result.info["stream_length"]) if not len(result.trace_table) else int(result.trace_table.steps[-1])
        leaf = result.counterexamples.leaves[0]
        assert leaf.total == int(flipped[:done].sum())
        assert [c.row for c in leaf.examples] == np.flatnonzero(flipped[:done])[:100].tolist()
        seen += 1
    assert seen > 3


def test_values_first_seen_later_are_told_once_each(setup):
    compas, model = setup
    frame = compas.frame
    first = frame[~frame["race"].isin(["Asian", "Native American"])].iloc[:2000]
    later = frame.iloc[2000:]
    spec = parse("Fair[race] >= 0.5")
    dataset = log_dataset(first, "log", spec)
    domains = fair_domains(spec, dataset.frame, dataset.schema)
    assert "Asian" not in domains["race"] and "Native American" not in domains["race"]
    result = run_live("Fair[race] >= 0.5", [first, later.iloc[:1500], later.iloc[1500:]], model, domains)
    told = [w for w in result.warnings if "first rows did not have" in w]
    for value in ("Asian", "Native American"):
        about = [w for w in told if repr(value) in w]
        assert len(about) == 1
        row = 2000 + int(np.flatnonzero(later["race"].to_numpy() == value)[0]) + 1  # rows counted from 1
        assert f"{value!r} (row {row:,})" in about[0]
