"""The monitor on individuals sampled from a population program (``--population FILE.fr``, issue 14 item 5)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import fairaudit
from fairaudit import engines
from fairaudit.cli import main
from fairaudit.base.errors import FairauditError
from fairaudit.core.inputs import Inputs
from fairaudit.programs import parse_file
from fairaudit.engines.monitor.population import PopulationObservations
from fairaudit.programs.population import ratio_spec
from fairaudit.spec import parse

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fairsquare"
ORIGINAL = BENCH / "examples" / "fig1_original.fr"  # exact ratio 0.48412: unfair
FIXED = BENCH / "examples" / "fig1_fixed.fr"  # exact ratio 0.94901: fair


def _root(result):
    return result.trace_table.node_ids.index("n0")


def _consistent(result):
    """Steps increase, lo ≤ estimate ≤ hi on the root, and the stop step is the first step the root is decided
    with the reported verdict."""
    t = result.trace_table
    assert np.all(np.diff(t.steps) > 0)
    i = _root(result)
    est, lo, hi = t.estimate[:, i], t.lo[:, i], t.hi[:, i]
    ok = np.isfinite(est)
    assert np.all(lo[ok] <= est[ok] + 1e-12) and np.all(est[ok] <= hi[ok] + 1e-12)
    if result.verdict in ("true", "false"):
        assert result.stop_step is not None and result.stop_step <= result.steps
        assert int(t.steps[-1]) == result.steps


def test_ratio_spec_is_one_place():
    assert ratio_spec(0.15) == "E[pred | sensitive and qualified] / E[pred | not sensitive and qualified] > 0.85"
    parse(ratio_spec(0.1))
    with pytest.raises(FairauditError):
        ratio_spec(1.5)


def test_fig1_original_is_violated():
    r = fairaudit.audit(None, population=ORIGINAL, stop=True)
    assert r.verdict == "false"
    assert r.unit == "observations" and r.stop_step < 200_000
    assert "individuals drawn independently from the population program fig1_original.fr (seed 0)" in r.assumption
    assert "individuals sampled from fig1_original.fr" in r.rows_text
    _consistent(r)
    pop = r.provenance["population"]
    assert pop["name"] == "fig1_original.fr"
    import hashlib

    assert pop["sha256"] == hashlib.sha256(ORIGINAL.read_bytes()).hexdigest()


def test_fig1_fixed_is_fair_at_the_papers_epsilon():
    r = fairaudit.audit(None, population=FIXED, epsilon=0.1, stop=True)
    assert r.verdict == "true"
    _consistent(r)


def test_runs_to_the_end_without_stop_and_is_consistent():
    r = fairaudit.audit(None, population=FIXED, samples=120_000, batch=50)
    assert r.steps == 120_000 and r.verdict == "true"
    _consistent(r)


def test_same_seed_same_result_other_seed_other_stream():
    a = fairaudit.audit(None, population=ORIGINAL, stop=True, seed=3)
    b = fairaudit.audit(None, population=ORIGINAL, stop=True, seed=3)
    c = fairaudit.audit(None, population=ORIGINAL, stop=True, seed=4)
    assert a.stop_step == b.stop_step
    assert np.array_equal(a.trace_table.estimate, b.trace_table.estimate, equal_nan=True)
    assert a.verdict == c.verdict == "false"
    assert not np.array_equal(a.trace_table.estimate, c.trace_table.estimate, equal_nan=True)


def test_lazy_stream_matches_one_draw_and_draws_in_chunks():
    spec = parse(ratio_spec(0.1))
    program = parse_file(FIXED)
    ends = np.arange(99, 3000, 100)
    lazy = PopulationObservations(spec, program, 3000, seed=7, chunk=700)
    stats = lazy.stats(ends)
    key = next(iter(stats))
    first = stats[key].at(slice(0, 3))
    assert lazy.drawn == 700  # only the first chunk was drawn
    whole = PopulationObservations(spec, program, 3000, seed=7, chunk=700)
    all_stats = whole.stats(ends)
    full = all_stats[key].at(slice(0, len(ends)))
    assert whole.drawn == 3000
    assert np.array_equal(first.n, full.n[:3]) and np.array_equal(first.successes, full.successes[:3])
    # the reference: the same draws counted directly
    direct = PopulationObservations(spec, program, 3000, seed=7, chunk=700)
    obs = [direct.draw(700) for _ in range(4)] + [direct.draw(200)]
    v = np.concatenate([o.values[key] for o in obs])
    m = np.concatenate([o.masks[key] for o in obs])
    assert np.array_equal(np.cumsum(m)[ends], full.n)
    assert np.array_equal(np.cumsum(v & m)[ends], full.successes)


# the paper's verdicts (FairSquare Fig. 8, ε = 0.1): Ind programs fair; BN1/BN2 DT4 and SVM3 unfair, SVM4α fair
@pytest.mark.parametrize("name, fair", [("ind_dt4", True), ("bn1_dt4", False), ("bn1_svm3", False),
                                        ("bn2_svm4a", True)])
def test_benchmarks_agree_with_the_paper(name, fair):
    r = fairaudit.audit(None, population=BENCH / f"{name}.fr", epsilon=0.1, stop=True)
    assert r.verdict == ("true" if fair else "false")
    _consistent(r)


def test_user_spec_over_the_programs_variables():
    r = fairaudit.audit(None, 'E[pred | ethnicity > 10] > 0.05 and E[colRank > 25] > 0.4', population=FIXED,
                        stop=True)
    assert r.verdict == "true"
    with pytest.raises(FairauditError, match="unknown column"):
        fairaudit.audit(None, "E[pred | nosuch > 1] > 0.1", population=FIXED)


def test_refusals():
    with pytest.raises(FairauditError, match="not both"):
        fairaudit.audit(None, ratio_spec(0.1), population=FIXED, epsilon=0.1)
    with pytest.raises(FairauditError, match="does not apply"):
        fairaudit.audit("adult", population=FIXED)
    with pytest.raises(FairauditError, match="needs a dataset"):
        fairaudit.audit(None, population=FIXED, engine="dataset")
    inputs = Inputs.build_population(FIXED, samples=10)
    assert inputs.has("population") and not inputs.has("dataset")
    for engine in engines.all_engines():
        reasons = engine.check(parse(ratio_spec(0.1)), inputs)
        assert (not reasons) == ("population" in engine.accepts or "population" in engine.requires), engine.name
    assert engines.get("monitor").check(parse("Fair[sex] > 0.9"), inputs)


def test_cli_exit_codes(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["audit", "--population", str(ORIGINAL), "--stop", "--json", str(out)]) == 1
    data = json.loads(out.read_text())
    assert data["verdict"] == "false"
    assert main(["audit", "--population", str(FIXED), "--epsilon", "0.1", "--stop"]) == 0
    text = capsys.readouterr().out
    assert "individuals drawn independently from the population program fig1_fixed.fr" in text
    assert main(["audit", "--population", str(FIXED), "--spec", "E[pred] > 0.1", "--epsilon", "0.1"]) == 2
    assert main(["audit", "--population", str(FIXED), "--data", "adult"]) == 2
    assert main(["audit", "--population", str(FIXED), "--engine", "dataset"]) == 2
    assert "needs a dataset" in capsys.readouterr().err
    bad = tmp_path / "bad.fr"
    bad.write_text("def popModel():\n    x = gaussian(0, 1\n")
    assert main(["audit", "--population", str(bad)]) == 2
    assert "bad.fr:2:" in capsys.readouterr().err
    assert main(["audit", "--data", "adult", "--epsilon", "0.1", "--spec", "E[pred] > 0.1"]) == 2
