"""Adversarial review of the fairsquare engine (issue 14): every test here reproduces a confirmed bug and fails on
the reviewed commit (eef5955). Each test names the expected behaviour; see the review report for severities."""
from __future__ import annotations

from pathlib import Path

import pytest

import fairaudit
from fairaudit.base.errors import FairauditError
from fairaudit.programs.parse import parse_program
from fairaudit.spec.errors import SpecError
from tests.console import run_main

ROOT = Path(__file__).resolve().parents[2]


def _cli(capsys, args, cwd=ROOT):
    """``(exit code, stdout + stderr)`` of ``fairaudit audit ARGS`` through ``main`` in this process, from the
    repository root (``tests.console``)."""
    done = run_main(capsys, "audit", *args, cwd=cwd)
    return done.returncode, done.stdout + done.stderr


def _leaf(result, text):
    t = result.trace_table
    nid = [n.id for n in result.node_info if n.text == text][0]
    j = t.node_ids.index(nid)
    return float(t.lo[-1, j]), float(t.hi[-1, j])


# ------------------------------------------------------------------------------------- robustness: valid programs
HUGE_PRODUCT = """
def popModel():
    x = gaussian(0, 1)
    z = gaussian(0, 1)
    y = x * 1e300 * 1e300
    sensitiveAttribute(z > 0)
def F():
    fairnessTarget(y + z > 0)
"""


def test_huge_exact_coefficient_is_not_an_internal_error():
    # a valid program (every literal finite): the exact coefficient 1e600 overflows float() in
    # polytope._Normal.__init__ (self.approx) -> OverflowError -> CLI "internal error", exit 4.
    # Truth: P[y + z > 0 | z > 0] = P[x > 0] (to within 1e-300) = 0.5 for both groups.
    try:
        r = fairaudit.audit(None, "E[pred | sensitive] >= 0", engine="fairsquare",
                            population=parse_program(HUGE_PRODUCT, "huge.fr"), time_budget=2, stop=False)
    except FairauditError:
        return  # a clear refusal would be acceptable
    lo, hi = _leaf(r, "E[pred | sensitive]")
    assert lo <= 0.5 <= hi


def test_huge_integer_literal_is_a_positioned_error():
    # float(int) overflows in parse._Parser.arith / constant (math.isfinite(float(node.value))) -> OverflowError
    text = ("def popModel():\n    x = gaussian(0, 1)\n    y = x * 1" + "0" * 400 + "\n    sensitiveAttribute(x > 0)\n"
            "def F():\n    fairnessTarget(y > 1)\n")
    with pytest.raises(SpecError) as err:
        parse_program(text, "big.fr")
    assert "3:" in str(err.value)


def test_non_utf8_population_file_is_a_clear_error_exit_2(tmp_path, capsys):
    bad = tmp_path / "latin1.fr"
    bad.write_bytes(b"def popModel():\n    x = gaussian(0, 1)  # \xe9\n    sensitiveAttribute(x > 0)\n"
                    b"def F():\n    fairnessTarget(x > 0)\n")
    code, out = _cli(capsys, ["--engine", "fairsquare", "--population", str(bad), "--timeout", "2"])
    assert code == 2, out
    assert "internal error" not in out and "latin1.fr" in out


def test_step_keyword_argument_message_is_not_self_contradictory():
    text = ("def popModel():\n    x = step(pieces=[(0, 1, 1)])\n    sensitiveAttribute(x > 0.5)\n"
            "def F():\n    fairnessTarget(x > 0.2)\n")
    with pytest.raises(SpecError) as err:
        parse_program(text, "kw.fr")
    # was: "'step' takes exactly 1 positional argument, got 1"
    assert "got 1" not in str(err.value)


# ------------------------------------------------------------------------------------- the two engines must agree
FLOAT_CONSTANTS = """
def popModel():
    s = step([(0,1,0.5), (1,2,0.5)])
    if s < 1:
        t = 0.1 + 0.2
    else:
        t = 0.3
    sensitiveAttribute(s < 1)
def F():
    fairnessTarget(t <= 0.3)
"""


def test_exact_rational_constants_fairsquare_and_monitor_do_not_contradict():
    # fairsquare evaluates literals as exact decimals (0.1 + 0.2 == 0.3: ratio 1, "certified with certainty");
    # the sampler (monitor) uses floats (0.1 + 0.2 > 0.3: ratio 0, "violated"). The two engines are each
    # other's cross-check (issue 14 §5) and must never contradict.
    prog = parse_program(FLOAT_CONSTANTS, "float.fr")
    fs = fairaudit.audit(None, None, engine="fairsquare", population=prog, time_budget=10)
    mon = fairaudit.audit(None, None, engine="monitor", population=prog, time_budget=20, seed=1)
    verdicts = {fs.verdict, mon.verdict} - {None, "unknown"}
    assert len(verdicts) <= 1, (fs.verdict, mon.verdict)


# ------------------------------------------------------------------------------------- spec over program variables
SHADOW = """
def popModel():
    sensitive = gaussian(0, 1)
    sensitiveAttribute(sensitive > 1)
def F():
    fairnessTarget(sensitive > 0)
"""


def test_program_variable_named_sensitive_is_not_silently_read_as_the_tag():
    # the program is valid (parse accepts 'sensitive' as a variable name); 'E[sensitive > 0.5]' silently reads
    # the 0/1 annotation tag instead (0.1587 = P[sensitive > 1]); the variable's value is P[N(0,1) > 0.5] =
    # 0.3085. Either refuse the ambiguity (check) or read the variable — never answer silently about the tag.
    prog = parse_program(SHADOW, "shadow.fr")
    try:
        r = fairaudit.audit(None, "E[sensitive > 0.5] >= 0", engine="fairsquare", population=prog,
                            time_budget=5, stop=False)
    except FairauditError:
        return
    lo, hi = _leaf(r, "E[sensitive > 0.5]")
    assert lo <= 0.3085375387 <= hi or r.warnings, (lo, hi)


NUMERIC = """
def popModel():
    s = step([(2, 4, 1)])
    z = gaussian(0, 1)
    sensitiveAttribute(z < 0)
def F():
    fairnessTarget(s > 3)
"""


def test_numeric_variable_as_an_event_is_refused_like_the_other_engines():
    # 'E[s]' with s uniform on [2, 4]: the monitor (and the dataset engine) refuse it ("'s' holds numbers ...
    # E[...] is a probability, not the mean"); fairsquare silently reads it as P[s != 0] = 1 and reports
    # "E[s] > 2.5: violated with certainty" although the mean of s is 3.
    prog = parse_program(NUMERIC, "numeric.fr")
    with pytest.raises(FairauditError):
        fairaudit.audit(None, "E[s] > 2.5", engine="fairsquare", population=prog, time_budget=5)


PARTLY_ASSIGNED = """
def popModel():
    s = step([(0,1,0.5), (1,2,0.5)])
    x = gaussian(0, 1)
    if s < 1:
        y = x
    sensitiveAttribute(s < 1)
def F():
    fairnessTarget(x > 0)
"""


def test_spec_reading_a_variable_assigned_on_some_paths_only_is_not_silent():
    # the .fr parser refuses to read 'y' where it may be unassigned; a spec reading it is accepted silently and
    # 'y <= 0' and 'not (y > 0)' then differ (0.25 vs 0.75): half the population has no y and counts as false.
    # Expected: a refusal (check) or at least a warning naming y.
    prog = parse_program(PARTLY_ASSIGNED, "partly.fr")
    try:
        r = fairaudit.audit(None, "E[y <= 0] >= 0 and E[not (y > 0)] >= 0", engine="fairsquare", population=prog,
                            time_budget=5, stop=False)
    except FairauditError:
        return
    assert any("y" in w for w in r.warnings), r.warnings


# ------------------------------------------------------------------------------------- CLI wording and ignored flags
T1 = ROOT / "bench" / "fairsquare" / "examples" / "toy_t1.fr"


def test_population_model_flag_with_a_population_program_is_not_silently_ignored(capsys):
    # --population-model only shapes a population generated from --data/--model; with --population it has no
    # effect, and nothing says so (the analyst believes a BN population was audited)
    code, out = _cli(capsys, ["--engine", "fairsquare", "--population", str(T1), "--population-model", "bn",
                      "--timeout", "5"])
    assert code == 2 or "population-model" in out or "population_model" in out, out


def test_population_with_model_error_does_not_say_sampled_for_the_sound_engine(capsys):
    # commands/audit.py words a monitor-only concept for every engine: fairsquare samples nothing
    code, out = _cli(capsys, ["--engine", "fairsquare", "--population", str(T1), "--model", "logreg"])
    assert code == 2
    assert "sampled" not in out, out


ALL_SENSITIVE_UNDECIDED = """
def popModel():
    x = step([(0, 1, 1)])
    z = gaussian(0, 1)
    w = gaussian(0, 1)
    sensitiveAttribute(z < 0)
def F():
    fairnessTarget(x * w * z > 0.1)
"""


def test_undecided_ratio_of_probabilities_is_not_reported_as_minus_infinity():
    # both leaves are probabilities in [0, 1]; after a very short run the ratio node is shown as
    # "left side 1 in [-inf, inf]": a lower bound below 0 (and a point value of 1 that nothing measured)
    # tells the analyst nothing; the quotient of two intervals inside [0, 1] is at least 0.
    prog = parse_program(ALL_SENSITIVE_UNDECIDED, "u.fr")
    r = fairaudit.audit(None, None, engine="fairsquare", population=prog, time_budget=0.001)
    t = r.trace_table
    root = r.node_info[0].id
    ratio = [n.id for n in r.node_info if n.parent == root][0]
    j = t.node_ids.index(ratio)
    assert t.lo[-1, j] >= 0.0, (t.lo[-1, j], t.hi[-1, j])
