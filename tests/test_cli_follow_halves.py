"""``fairaudit audit --follow --watch`` runs the halves order test as the log grows (``fairaudit.engines.monitor.halves``): a
CSV log sorted by ``decile_score`` and appended to prints the halves warning while it arrives (before the watch
ends), a shuffled log sent as JSON lines does not; either way the final intervals are the file at rest's in given
order."""
import json
import subprocess
import threading
import time

import pytest

from fairaudit import data
from tests.console import run_main
from tests.test_cli_follow import PRED, ROOT, SPEC, cli, finals, writer

GROWS = "tested as the log grows"


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("halves")
    frame = data.load("compas").frame
    ordered = frame.sort_values("decile_score", kind="stable").reset_index(drop=True)
    shuffled = frame.sample(frac=1, random_state=3).reset_index(drop=True)
    ordered.to_csv(folder / "ordered.csv", index=False)
    shuffled.to_csv(folder / "shuffled.csv", index=False)
    return folder, ordered, shuffled


def rest_finals(path, tmp_path, capsys):
    """The final intervals of ``fairaudit audit --data PATH --order given``, run in this process."""
    out = tmp_path / f"rest-{path.stem}.json"
    run_main(capsys, "audit", "--data", str(path), "--spec", SPEC, "--pred", PRED, "--order", "given", "--json",
             str(out), cwd=ROOT)
    return finals(json.loads(out.read_text()))


def test_a_sorted_csv_log_prints_the_halves_warning_as_it_arrives(logs, tmp_path, capsys):
    folder, ordered, _ = logs
    log = tmp_path / "log.csv"
    log.write_bytes(b"")
    stop = threading.Event()
    proc = cli("--follow", str(log), "--watch", "--idle-timeout", "6", "--spec", SPEC, "--pred", PRED, "--poll",
               "0.05", "--json", str(tmp_path / "live.json"))
    writer(log, (folder / "ordered.csv").read_bytes(), stop, piece=8000, pause=0.05)
    out, err = proc.communicate(timeout=150)
    stop.set()
    assert "Traceback" not in err, err
    text = out.splitlines()
    warned = [i for i, line in enumerate(text) if line.startswith("warning:") and GROWS in line]
    assert warned, out
    ended = next(i for i, line in enumerate(text) if line.startswith("ended:"))
    assert warned[0] < ended  # said while the log was arriving, not only in the final report
    assert "rows 1–2,000 of the log" in text[warned[0]]  # the epoch 4,000 (module doc of fairaudit.engines.monitor.halves)
    live = json.loads((tmp_path / "live.json").read_text())
    assert any(GROWS in w for w in live["warnings"])
    assert live["steps"] == len(ordered)
    assert finals(live) == rest_finals(folder / "ordered.csv", tmp_path, capsys)


def test_a_shuffled_log_on_stdin_does_not(logs, tmp_path, capsys):
    folder, _, shuffled = logs
    lines = shuffled.to_json(orient="records", lines=True)
    proc = cli("--follow", "-", "--watch", "--spec", SPEC, "--pred", PRED, "--poll", "0.05",
               "--json", str(tmp_path / "live.json"), stdin=subprocess.PIPE)

    def feed():
        for i in range(0, len(lines), 20000):
            proc.stdin.write(lines[i:i + 20000])
            proc.stdin.flush()
            time.sleep(0.02)
        proc.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    proc.wait(timeout=120)
    out, err = proc.stdout.read(), proc.stderr.read()
    assert "Traceback" not in err, err
    assert "ended:" in out and GROWS not in out
    live = json.loads((tmp_path / "live.json").read_text())
    assert not any(GROWS in w for w in live["warnings"])
    assert live["steps"] == len(shuffled)
    assert finals(live) == rest_finals(folder / "shuffled.csv", tmp_path, capsys)
