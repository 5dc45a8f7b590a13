"""``fairaudit audit --follow`` / ``--watch`` as a subprocess on a log that a writer thread appends to: it decides
while the log grows (CSV with partial lines, a Parquet directory, JSON lines on stdin), ``--watch`` ends on SIGINT
with the final report, and the verdict, stop step and intervals equal the file-at-rest run in given order."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from fairaudit import data

ROOT = Path(__file__).resolve().parents[1]
SPEC = ('E[pred | race == "African-American"] - E[pred | race == "Caucasian"] >= -0.1 and '
        'E[pred | sex == "Female"] >= 0.3')
PRED = "decile_score <= 4"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# a writer thread races the follower and Ctrl-C ends a watch: alone, after the tests that run side by side
pytestmark = pytest.mark.serial


def cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "fairaudit", "audit", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT, **kw)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rest")
    path = folder / "compas.csv"
    data.load("compas").frame.to_csv(path, index=False)
    return path


def at_rest(rows, tmp_path, *extra):
    out = tmp_path / "rest.json"
    done = subprocess.run([sys.executable, "-m", "fairaudit", "audit", "--data", str(rows), "--spec", SPEC, "--pred",
                           PRED, "--order", "given", "--json", str(out), *extra], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=120)
    assert done.returncode == 1, done.stderr
    return json.loads(out.read_text())


def finals(result):
    return {n["id"]: (n["final"]["lo"], n["final"]["hi"], n["final"]["verdict"]) for n in result["nodes"]}


def writer(path: Path, text: bytes, stop: threading.Event, piece=4000, pause=0.02):
    """Append ``text`` to ``path`` in pieces that cut lines in the middle."""
    def run():
        with open(path, "ab") as fh:
            for i in range(0, len(text), piece):
                if stop.is_set():
                    return
                fh.write(text[i:i + piece])
                fh.flush()
                time.sleep(pause)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_follow_decides_on_a_csv_being_appended_to(rows, tmp_path):
    log = tmp_path / "log.csv"
    log.write_bytes(b"")
    stop = threading.Event()
    proc = cli("--follow", str(log), "--spec", SPEC, "--pred", PRED, "--poll", "0.05", "--idle-timeout", "30",
               "--json", str(tmp_path / "live.json"))
    writer(log, rows.read_bytes(), stop, piece=2000, pause=0.05)
    out, err = proc.communicate(timeout=120)
    stop.set()
    written = log.stat().st_size
    assert proc.returncode == 1, err
    assert "verdict violated: violated with probability ≥ 0.95" in out and "live:" in out
    live = json.loads((tmp_path / "live.json").read_text())
    rest = at_rest(rows, tmp_path, "--stop")
    assert (live["verdict"], live["stop_step"]) == (rest["verdict"], rest["stop_step"])
    assert rest["verdict"] == "false" and 0 < rest["stop_step"] < 6172  # decided before the log's end
    assert finals(live) == finals(rest)
    assert written < rows.stat().st_size  # it decided while the log was still growing


def test_follow_decides_on_a_parquet_directory_being_filled(rows, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    frame = pd.read_csv(rows)
    proc = cli("--follow", str(folder), "--spec", SPEC, "--pred", PRED, "--poll", "0.05", "--idle-timeout", "30",
               "--json", str(tmp_path / "live.json"))

    def fill():
        for i, start in enumerate(range(0, len(frame), 250)):
            if proc.poll() is not None:
                return
            tmp = folder / f".part-{i:04d}.parquet"
            frame.iloc[start:start + 250].to_parquet(tmp)
            os.replace(tmp, folder / f"part-{i:04d}.parquet")  # appears complete
            time.sleep(0.05)
    threading.Thread(target=fill, daemon=True).start()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    live = json.loads((tmp_path / "live.json").read_text())
    rest = at_rest(rows, tmp_path, "--stop")
    assert (live["verdict"], live["stop_step"]) == (rest["verdict"], rest["stop_step"])
    assert finals(live) == finals(rest)


def test_watch_json_lines_on_stdin_to_the_end_equals_the_file_at_rest(rows, tmp_path):
    frame = pd.read_csv(rows)
    lines = frame.to_json(orient="records", lines=True)
    proc = cli("--follow", "-", "--watch", "--spec", SPEC, "--pred", PRED, "--poll", "0.05",
               "--json", str(tmp_path / "live.json"), stdin=subprocess.PIPE)

    def feed():
        for i in range(0, len(lines), 20000):
            proc.stdin.write(lines[i:i + 20000])
            proc.stdin.flush()
            time.sleep(0.02)
        proc.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    out, err = proc.wait(timeout=120), proc.stderr.read()
    text = proc.stdout.read()
    assert proc.returncode == 1, err
    assert "ended:     the log's input ended" in text
    live = json.loads((tmp_path / "live.json").read_text())
    rest = at_rest(rows, tmp_path)
    assert (live["verdict"], live["stop_step"], live["steps"]) == (rest["verdict"], rest["stop_step"], rest["steps"])
    assert live["steps"] == len(frame)
    assert finals(live) == finals(rest)


def test_watch_ends_on_sigint_with_the_final_report(rows, tmp_path):
    log = tmp_path / "log.csv"
    text = rows.read_bytes()
    log.write_bytes(b"")
    stop = threading.Event()
    proc = cli("--follow", str(log), "--watch", "--spec", SPEC, "--pred", PRED, "--poll", "0.05",
               "--json", str(tmp_path / "live.json"))
    writer(log, text, stop, piece=2000, pause=0.05)
    seen = []
    deadline = time.monotonic() + 90
    for line in proc.stdout:  # wait for the decision while the log still grows
        seen.append(line)
        if "verdict violated" in line or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    stop.set()
    out = "".join(seen) + out
    assert proc.returncode == 1, err
    rest = at_rest(rows, tmp_path, "--stop")  # the same rows at rest, in file order
    assert "ended:     interrupted" in out and "verdict:   violated" in out
    assert f"stop step: {rest['stop_step']:,}" in out
    live = json.loads((tmp_path / "live.json").read_text())
    assert live["verdict"] == "false" and live["stop_step"] == rest["stop_step"]
    assert live["steps"] < len(text.splitlines())  # it ended at the interrupt, before the writer was done


@pytest.mark.parametrize("args,message", [
    (["--pred", "decile_scor <= 4"], "has no column 'decile_scor'; did you mean 'decile_score'"),
    (["--pred", PRED, "--order", "shuffle"], "--order shuffle applies to a file at rest"),
    (["--model", "logreg"], "train one first (fairaudit train)"),
    (["--pred", PRED, "--rows", "all"], "--rows does not apply"),
    (["--pred", PRED, "--engine", "dataset"], "the dataset engine audits data at rest"),
    (["--pred", 'decile_score <= "a"'], "compare it with a number"),
    (["--pred", PRED, "--poll", "0"], "argument --poll: poll must be a number in (0, 3600)"),
])
def test_bad_input_exits_2_with_one_line(rows, tmp_path, args, message):
    proc = cli("--follow", str(rows), "--spec", SPEC, "--idle-timeout", "5", *args)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, (out, err)
    assert message in err and "Traceback" not in err
    assert err.strip().splitlines()[0].startswith("fairaudit audit: error:")


def test_a_log_truncated_while_followed_is_an_error(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("y,g\n" + "".join(f"{i % 2},{i % 3}\n" for i in range(50)))
    proc = cli("--follow", str(log), "--watch", "--spec", "E[pred] >= 0.01", "--pred", "y == 1", "--poll", "0.05",
               "--idle-timeout", "30")
    for line in proc.stdout:
        if "live:" in line:
            break
    log.write_text("y,g\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "was truncated" in err and "Traceback" not in err


def test_drift_is_printed_live_and_the_run_is_not_a_pass(tmp_path):
    # the favourable rate drops from 0.9 to 0.1 halfway: the warnings come while the rows arrive, the verdict
    # decided on the first half does not stand, and a gate does not pass (exit 3)
    import numpy as np

    rng = np.random.default_rng(4)
    y = np.r_[rng.random(3000) < 0.9, rng.random(3000) < 0.1].astype(int)
    lines = [json.dumps({"y": int(v), "g": int(i % 2)}) + "\n" for i, v in enumerate(y)]
    proc = cli("--follow", "-", "--watch", "--spec", "E[pred] >= 0.5", "--pred", "y == 1", "--poll", "0.05",
               stdin=subprocess.PIPE)

    def feed():
        for i in range(0, len(lines), 250):
            proc.stdin.write("".join(lines[i:i + 250]))
            proc.stdin.flush()
            time.sleep(0.05)
        proc.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    proc.wait(timeout=120)
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 3, err
    text = out.splitlines()
    warned = next(i for i, line in enumerate(text) if line.startswith("warning:") and "became empty" in line)
    assert warned < next(i for i, line in enumerate(text) if line.startswith("ended:"))  # said before the end
    assert "verdict certified" in out and "changed after a decision" in out  # decided true on the first half
    assert "--order shuffle" not in out and "what changed in the deployed model" in out

