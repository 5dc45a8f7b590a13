"""Generated decision logs and the routes that read them, for the route-equivalence property test.

A log (``make_log(seed)``) is a few parts of CSV text (or Parquet tables) with what real logs hold: text with
spaces, empty cells, the strings NA / None / null, codes with leading zeros, integers past 2^53, NaN and ``inf``,
a BOM, CRLF or CR-only line ends, quoted values holding the delimiter and line ends, and — with some probability —
the drifts that used to change verdicts between routes: a ``yes`` among 0/1 decisions (early or late), a part that
stores ``decision`` as text, a part with a renamed column, a truncated last line, an empty part.

Each route (``ROUTES``) runs ``fairaudit audit`` in this process (``fairaudit.cli.main``) and gives
``("result", key)`` — the verdict, stop step, steps and every node's final interval, from ``--json`` — or
``("error", exit code, message)``. The test asserts every route gives the same.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

SPECS = (
    'E[pred | g == "A"] - E[pred | g == "B"] < 0.1',
    'E[pred | g == "A"] > 0.3 and E[pred | x > 0.5] < 0.9',
    'E[pred | code == 1152921504606846976] >= 0.1',
    'E[pred | g in {"NA", "01"}] - E[pred | g == "?"] < 0.2',
    'E[pred | not (x <= 0.5)] - E[pred | x > 0.5] < 0.05',
)
BIG = 1 << 60


def _text_value(rng) -> str:
    return str(rng.choice(np.array(["A", "B", " A", "B ", "", "NA", "None", "01", "1", "null", "A"], dtype=object)))


def make_log(seed: int) -> dict:
    """``{"parts": [(name, bytes)], "format": "csv"|"parquet", "spec": text, "pred": text, "drift": what}``."""
    rng = np.random.default_rng(seed)
    parts = int(rng.integers(1, 4))
    rows = [int(rng.integers(20, 160)) for _ in range(parts)]
    drift = str(rng.choice(np.array(["none", "none", "none", "yes_late", "yes_first", "text_part", "renamed",
                                     "truncated", "empty_part", "inf", "big_gap"], dtype=object)))
    fmt = "parquet" if rng.random() < 0.3 else "csv"
    if fmt == "parquet" and drift == "truncated":
        drift = "none"
    if fmt == "csv" and drift == "text_part":  # (CSV has no stored types: a text part is a "yes" in it)
        drift = "yes_late"
    newline = str(rng.choice(np.array(["\n", "\r\n", "\r"], dtype=object)))
    bom = rng.random() < 0.15
    columns = ["g", "decision", "x", "code", "note"]
    frames = []
    for p, n in enumerate(rows):
        g = [_text_value(rng) for _ in range(n)]
        decision = [str(int(v)) for v in rng.integers(0, 2, n)]
        x = ["" if rng.random() < 0.08 else f"{v:.3f}" for v in rng.random(n)]
        code = [str(BIG + int(v)) for v in rng.integers(0, 2, n)]
        note = [str(rng.choice(np.array(["plain", "one, two", "multi\nline", 'say "hi"'], dtype=object)))
                for _ in range(n)]
        frames.append({"g": g, "decision": decision, "x": x, "code": code, "note": note})
    last = len(frames) - 1
    if drift == "yes_late":
        f = frames[last]
        f["decision"][len(f["decision"]) // 2] = "yes"
    elif drift == "yes_first":
        frames[0]["decision"][0] = "yes"
    elif drift == "inf":
        frames[last]["x"][-1] = "inf"
    elif drift == "big_gap":
        frames[0]["code"][0] = str(BIG + 1)
    spec = str(rng.choice(np.array(SPECS, dtype=object)))
    out = []
    for p, f in enumerate(frames):
        names = list(columns)
        if drift == "renamed" and p == last and parts > 1:
            names[0] = "group"
        n = len(f["g"])
        if drift == "empty_part" and p == last and parts > 1:
            n = 0
        name = f"part-{p + 1}.{'csv' if fmt == 'csv' else 'parquet'}"
        if fmt == "csv":
            buf = io.StringIO()
            buf.write(",".join(names) + newline)
            for i in range(n):
                cells = [f["g"][i], f["decision"][i], f["x"][i], f["code"][i], _quoted(f["note"][i])]
                buf.write(",".join(cells) + newline)
            text = buf.getvalue()
            if drift == "truncated" and p == last and n:
                text = text[: text.rstrip("\r\n").rfind(",")]  # the last line loses its last field
            data = text.encode("utf-8")
            out.append((name, (b"\xef\xbb\xbf" if bom and p == 0 else b"") + data))
        else:
            text = ((drift == "text_part" and p == last and parts > 1) or (drift == "yes_late" and p == last)
                    or (drift == "yes_first" and p == 0))  # a Parquet part holding "yes" stores the column as text
            out.append((name, _parquet(f, names, n, text_decision=text)))
    where = str(rng.choice(np.array(["", "", "x > 0.2", 'g != "B"'], dtype=object)))
    return {"parts": out, "format": fmt, "spec": spec, "pred": "decision == 1", "drift": drift, "where": where}


def _quoted(value: str) -> str:
    if any(ch in value for ch in ',"\n\r'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _parquet(f: dict, names, n: int, text_decision: bool) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def text(values):
        return pa.array([v.strip() if v.strip() else None for v in values[:n]], pa.string())

    arrays = [text(f["g"]),
              pa.array([v for v in f["decision"][:n]], pa.string()) if text_decision else
              pa.array([int(v) if v.isdigit() else None for v in f["decision"][:n]], pa.int64()),
              pa.array([float(v) if v else None for v in f["x"][:n]], pa.float64()),
              pa.array([int(v) for v in f["code"][:n]], pa.int64()),
              pa.array(f["note"][:n], pa.string())]
    sink = io.BytesIO()
    pq.write_table(pa.table(arrays, names=names), sink)
    return sink.getvalue()


def write_log(log: dict, folder: Path) -> Path:
    """The parts written under ``folder/log/``; returns that folder (or the one file when there is one part)."""
    target = folder / "log"
    target.mkdir(parents=True, exist_ok=True)
    for name, data in log["parts"]:
        (target / name).write_bytes(data)
    return target if len(log["parts"]) > 1 else target / log["parts"][0][0]


def run_cli(argv, tmp: Path, capsys) -> tuple:
    """``fairaudit audit`` in this process: ``("result", key)`` or ``("error", code, message)``."""
    from fairaudit.cli import main

    out = tmp / "result.json"
    if out.exists():
        out.unlink()
    capsys.readouterr()
    code = main(["audit", *argv, "--json", str(out)])
    err = capsys.readouterr().err
    if code not in (0, 1, 3):
        lines = [line for line in err.splitlines() if "error" in line]
        return ("error", code, _route_free(lines[0] if lines else err))
    return ("result", result_key(json.loads(out.read_text())))


def _route_free(message: str) -> str:
    return message.strip()


def result_key(payload: dict) -> tuple:
    nodes = tuple((n["id"], n["final"].get("verdict"), _r(n["final"].get("lo")), _r(n["final"].get("hi")),
                   _r(n["final"].get("estimate"))) for n in payload["nodes"])
    said = tuple(sorted(w for w in payload.get("warnings", ()) if "missing" in w or "neither true nor false" in w))
    return (payload["verdict"], payload.get("stop_step"), payload.get("steps"), nodes, said)


def _r(x):
    return None if x is None else round(float(x), 12)


def common_args(log: dict, path: Path) -> list[str]:
    where = ["--where", log["where"]] if log.get("where") else []
    return ["--data", str(path), "--spec", log["spec"], "--pred", log["pred"], "--order", "given", "--batch", "10",
            *where]
