"""Units of the engine contract: Option, Guarantee, Progress, TraceBuilder, the lazy registry."""
import subprocess
import sys

import numpy as np
import pytest

from fairaudit import engines
from fairaudit.core.engine import COMMON_OPTIONS, Option
from fairaudit.base.errors import FairauditError
from fairaudit.core.guarantee import Guarantee, verdict_sentence
from fairaudit.base.progress import Progress
from fairaudit.core.trace import Trace, TraceBuilder

DELTA = Option("delta", float, 0.05, "failure probability", min=0, max=1, exclusive=True, header=True)
BATCH = Option("batch", int, 5, "check every", min=1)
SPLIT = Option("split", str, "equal", "split", choices=("equal", "optimized"))
STOP = Option("stop", bool, False, "stop")


@pytest.mark.parametrize("option, good, expected", [
    (DELTA, 0.1, 0.1), (COMMON_OPTIONS[2], 3, 3.0), (BATCH, 3, 3), (BATCH, 4.0, 4), (SPLIT, "optimized", "optimized"),
    (STOP, True, True), (STOP, np.bool_(False), False)])
def test_option_accepts(option, good, expected):
    value = option.validate(good)
    assert value == expected and type(value) is option.type


@pytest.mark.parametrize("option, bad", [
    (DELTA, 0), (DELTA, 1.0), (DELTA, -0.1), (DELTA, "0.1"), (DELTA, float("nan")), (DELTA, True), (DELTA, None),
    (BATCH, 0), (BATCH, 2.5), (BATCH, True), (BATCH, "5"), (SPLIT, "Equal"), (SPLIT, 1), (STOP, 1), (STOP, "yes")])
def test_option_refuses_with_one_line_naming_it(option, bad):
    with pytest.raises(FairauditError) as err:
        option.validate(bad)
    text = str(err.value)
    assert text.startswith(option.name + " ") and "\n" not in text


def test_option_parse_from_text():
    assert DELTA.parse(" 0.15 ") == 0.15 and BATCH.parse("7") == 7 and SPLIT.parse("OPTIMIZED") == "optimized"
    assert STOP.parse("yes") is True and STOP.parse("false") is False
    with pytest.raises(FairauditError, match=r"delta must be a number in \(0, 1\), e.g. 0.05; got '2'"):
        DELTA.parse("2")
    with pytest.raises(FairauditError, match="batch must be a whole number"):
        BATCH.parse("five")


def test_every_engine_declares_valid_defaults_and_refuses_unknown_options():
    for engine in engines.all_engines():
        resolved = engine.resolve_options({})
        assert set(resolved) == {o.name for o in engine.all_options()}
        for option in engine.all_options():
            if option.default is not None:
                assert option.validate(option.default) == option.default
        with pytest.raises(FairauditError, match=f"the {engine.name} engine has no option 'no_such_option'"):
            engine.resolve_options({"no_such_option": 1})
    assert {o.name for o in COMMON_OPTIONS} == {"seed", "stop", "time_budget"}


def test_guarantee_kinds_word_the_verdict_differently():
    p = Guarantee("probabilistic", 0.05, assumes="random order")
    s = Guarantee("sound")
    e = Guarantee("exact", scope="on these 10 rows (not the population they were drawn from)")
    assert verdict_sentence("true", p, at=870, steps=900, unit="observations") == \
        "certified true with probability ≥ 0.95 after 870 observations"
    assert verdict_sentence("false", s, at=3, steps=5, unit="refinement rounds") == \
        "violated with certainty (sound bounds) after 3 refinement rounds"
    assert verdict_sentence("true", e, at=10, steps=10, unit="rows") == \
        "certified true exactly on these 10 rows (not the population they were drawn from)"
    assert verdict_sentence("unknown", p, at=None, steps=900, unit="observations", reason=": x") == \
        "undecided after 900 observations: x"
    assert "probability" not in s.phrase + e.phrase + s.caption + e.caption
    with pytest.raises(ValueError):
        Guarantee("sound", 0.05)
    with pytest.raises(ValueError):
        Guarantee("likely")
    assert Guarantee.from_dict(p.to_dict()) == p


def test_progress_fraction_eta_and_cancel():
    now = [0.0]
    seen = []
    progress = Progress("Training", 10, "epochs", on_progress=lambda p: seen.append(p.fraction) or p.done < 6,
                        clock=lambda: now[0])
    now[0] = 2.0
    assert progress(4) is True
    assert progress.fraction == 0.4 and progress.seconds_left == pytest.approx(3.0)
    assert "40%" in progress.text() and "about 3 s left" in progress.text()
    now[0] = 3.0
    assert progress(6) is False and progress.cancelled
    assert seen == [0.4, 0.6]
    assert Progress("x").fraction is None and Progress("x").text() == "x"


def test_trace_builder_equals_concatenation():
    rng = np.random.default_rng(0)
    ids = ["n0", "n1"]

    def part(a, b):
        k = b - a
        f = lambda: rng.random((k, 2))  # noqa: E731
        return Trace(np.arange(a, b) + 1, ids, f(), f(), f(), f(), rng.integers(-1, 2, (k, 2)).astype(np.int8),
                     f(), f(), f(), f())

    parts = [part(a, a + k) for a, k in ((0, 3), (3, 100), (103, 1), (104, 0), (104, 50))]
    builder = TraceBuilder(ids)
    views = []
    for p in parts:
        builder.append(p)
        views.append(builder.view())
    whole = Trace.concat(parts)
    got = builder.view()
    for name in ("steps", "estimate", "lo", "hi", "delta", "verdict", "n", "certified", "unfair", "undecided"):
        np.testing.assert_array_equal(getattr(got, name), getattr(whole, name))
    assert len(views[0]) == 3 and np.array_equal(views[0].lo, parts[0].lo)  # an early view is not overwritten


def test_registry_is_lazy_and_knows_its_engines():
    code = ("import sys, fairaudit.engines as e; [e.get(n) for n in e.names()]; e.available(); "
            "print(sorted(m for m in ('z3', 'torch', 'pgmpy', 'streamlit', 'pyomo') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert engines.DEFAULT == engines.names()[0] == "monitor" and "dataset" in engines.names()
    assert all(a.available for a in engines.available())
    with pytest.raises(FairauditError, match="unknown engine 'nope'; engines: monitor, dataset"):
        engines.get("nope")


def test_a_search_cut_by_the_time_budget_is_said():
    """The optimised split's search for a decision stopped by the time budget is a warning, not silence, even
    when the batch that ran out is the last one (the run is then complete)."""
    from fairaudit import data
    from fairaudit.core.engine import Context
    from fairaudit.engines.monitor.engine import Monitor, monitor_batches
    from fairaudit.core.observations import observe_inputs
    from fairaudit.core.guarantee import Guarantee
    from fairaudit.core.inputs import Inputs
    from fairaudit.core.driver import drive, last
    from fairaudit.spec import parse

    ds = data.load("adult")
    spec = parse('E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.55 and '
                 'E[pred | race == "White"] - E[pred | race != "White"] < 0.55')
    inputs = Inputs.build(ds, pred='income == ">50K"', where='workclass == "Federal-gov"', rows="all")
    obs = observe_inputs(spec, inputs)
    ticks = iter(range(10**9))
    ctx = Context(time_budget=0.5, clock=lambda: float(next(ticks)))  # every reading is a second later
    batches = monitor_batches(spec, obs, delta=0.15, split="optimized", bound="hoeffding", order="given", ctx=ctx,
                              chunk=10**6)
    r = last(drive(Monitor(), spec, batches, options={}, guarantee=Guarantee("probabilistic", 0.15), ctx=ctx))
    assert r.complete and len(r.trace_table) == len(obs.values[next(iter(obs.values))]) // 5
    assert any("time budget ran out while the optimized δ split was searching" in w for w in r.warnings)
    assert not r.assumption_broken and r.stop_step == 960  # the equal split's decision, not the optimised 870


def test_headers_of_another_engine_are_noted(capsys, tmp_path):
    from fairaudit.cli import main

    spec = tmp_path / "s.spec"
    spec.write_text('# dataset: adult\n# decision: income == ">50K"\n# order: given\nE[pred | sex == "Male"] > 0.1\n')
    assert main(["audit", "--engine", "dataset", "--spec", f"@{spec}"]) == 0
    out = capsys.readouterr().out
    assert "'# order:' header is an option of another engine, not of dataset: not applied" in out


def test_a_slow_preparation_is_said_before_the_first_batch():
    import fairaudit

    messages = []
    fairaudit.audit("german", "Fair[sex] > 0.5", model="logreg", on_progress=lambda p: messages.append(p.message))
    assert any(m and "re-predicting" in m and "Fair[sex]" in m for m in messages)


def test_the_declared_options_are_the_engines_own():
    """Issue 30: each engine's title and options are read from its package's options.py without importing the
    engine (fairaudit check's headers, fairaudit audit --help); they are the very ones the engine has."""
    from fairaudit.core import registry

    for name in registry.names():
        engine = registry.get(name)
        assert registry.declared_title(name) == engine.title
        assert registry.declared_options(name) == tuple(engine.options)
        assert registry.header_options(name) == engine.header_options()


def test_check_and_audit_help_import_no_engine():
    import subprocess
    import sys

    code = ("import sys\nfrom fairaudit.cli import main\n"
            "for argv in (['check', 'specs/demographic_parity.spec'], ['audit', '--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in sys.modules if m.endswith('.engine') and m.startswith('fairaudit.engines')))\n")
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
