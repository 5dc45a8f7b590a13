"""``fairaudit audit --follow`` reads a log as ``--data`` reads the file (issue 27 "one input, one meaning"): the
same refusals with the same one line, a value that does not fit a later row ends the watch (exit 2, the file and
row named, the verdict so far not given as an answer), and a complete log followed to its end gives the verdict,
stop step and intervals of ``--data`` in given order."""
import json

import pytest

from fairaudit import data
from tests.console import run_main
from tests.test_cli_follow import PRED, ROOT, SPEC, cli, finals


@pytest.fixture
def run(capsys):
    """``fairaudit audit ARGS`` through ``main`` in this process, from the repository root: for a log complete
    before it is read (the log being appended to is followed by a process of its own, ``cli``)."""
    return lambda *args: run_main(capsys, "audit", *args, cwd=ROOT)


def test_a_value_that_does_not_fit_a_later_row_ends_the_watch(tmp_path):
    """``yes`` among the 1/0 decisions at data row 601, after the first poll: exit 2 with one line naming the log
    and row 601; the verdict so far is said to be incomplete, and no JSON result is written."""
    log = tmp_path / "log.csv"
    log.write_text("decision,group\n" + "".join(f"{i % 2},{'A' if i % 3 else 'B'}\n" for i in range(600)))
    proc = cli("--follow", str(log), "--watch", "--spec", 'E[pred | group == "A"] >= 0.5', "--pred", "decision == 1",
               "--poll", "0.05", "--idle-timeout", "30", "--json", str(tmp_path / "live.json"))
    seen = []
    for line in proc.stdout:  # the first poll is audited
        seen.append(line)
        if line.startswith("live:"):
            break
    with open(log, "a") as fh:
        fh.write("yes,A\n1,B\n")
    out, err = proc.communicate(timeout=60)
    out = "".join(seen) + out
    assert proc.returncode == 2, (out, err)
    assert err.strip().splitlines() == [f"fairaudit audit: error: {log}, data row 601: column 'decision' holds 'yes', "
                                        "which is not a whole number as its type, fixed by the first 600 data rows "
                                        f"of {log}; fix the row, or declare the column's type (--column-type "
                                        "decision=text)"]
    assert "stopped:   the log could not be read on after 600 rows" in out and "not the log's final answer" in out
    assert "verdict:" not in out and not (tmp_path / "live.json").exists()


@pytest.mark.parametrize("text,spec", [
    ("decision,group\nyes,A\n0,B\n1,A\n", 'E[pred | group == "A"] >= 0.1'),  # decision is text: == 1 is refused
    ("decision,group\n1,True\n0,False\n1,True\n", 'E[pred | group == "true"] >= 0.1'),  # group is true/false
])
def test_a_value_of_another_type_is_refused_live_as_at_rest(tmp_path, text, spec, run):
    """The first rows type the log's columns as the file at rest types them, and a literal of another type than
    its column is refused with the one line ``--data`` gives (they were accepted live, and audited as matching no
    row)."""
    log = tmp_path / "log.csv"
    log.write_text(text)
    rest = run("--data", str(log), "--spec", spec, "--pred", "decision == 1")
    live = run("--follow", str(log), "--idle-timeout", "1", "--poll", "0.05", "--spec", spec, "--pred",
               "decision == 1")
    assert rest.returncode == live.returncode == 2, (rest.stderr, live.stdout, live.stderr)
    assert live.stderr == rest.stderr and "never takes the value" in live.stderr


def test_a_complete_log_followed_to_its_end_is_the_file_at_rest(tmp_path, run):
    """A complete CSV log (its last line without a line end) followed until the idle timeout: the verdict, stop
    step, steps, final intervals and the checks at the stop step of ``--data`` with ``--order given``."""
    log = tmp_path / "log.csv"
    log.write_bytes(data.load("compas").frame.to_csv(index=False).encode().rstrip(b"\n"))
    rest = run("--data", str(log), "--spec", SPEC, "--pred", PRED, "--order", "given", "--json",
               str(tmp_path / "rest.json"))
    live = run("--follow", str(log), "--watch", "--idle-timeout", "1", "--poll", "0.05", "--spec", SPEC, "--pred",
               PRED, "--json", str(tmp_path / "live.json"))
    assert rest.returncode == live.returncode == 1, (rest.stderr, live.stderr)
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("live", "rest"))
    assert (a["verdict"], a["stop_step"], a["steps"]) == (b["verdict"], b["stop_step"], b["steps"])
    assert b["steps"] == 6172 and b["stop_step"] is not None  # every row, the last one too
    assert finals(a) == finals(b)
    at_stop = [{k: v for k, v in r.items()} for r in a["trace"] if r["step"] == a["stop_step"]]
    assert at_stop and at_stop == [r for r in b["trace"] if r["step"] == b["stop_step"]]
    assert a["complete"] and "ended:     no new row for 1 s (the idle timeout)" in live.stdout
