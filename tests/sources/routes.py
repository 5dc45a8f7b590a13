"""Generated decision logs and the routes that read them, for the route-equivalence property test.

A log (``make_log(seed)``) is a few parts of CSV text (or Parquet tables) with what real logs hold: text with
spaces, empty cells, the strings NA / None / null, codes with leading zeros, integers past 2^53, NaN and ``inf``,
a BOM, CRLF or CR-only line ends, quoted values holding the delimiter and line ends, and — with some probability —
the drifts that used to change verdicts between routes: a ``yes`` among 0/1 decisions (early or late), a part that
stores ``decision`` as text, a part with a renamed column, a truncated last line, an empty part.

Its shapes aim at what real logs hold and random logs rarely do (``log["cases"]`` names those a log reaches,
``CASES`` all of them; ``test_the_generator_reaches_every_case`` counts them): a part where a condition is true on
every row or false on every row, a group present in one part only, single-row and empty parts, part boundaries on
check boundaries (multiples of the batch), streams that cross ``--thin-after``, Parquet columns stored as decimals,
unsigned integers, dictionaries and timestamps (milliseconds in one part, microseconds in another), ``.csv.gz``
parts. ``REGRESSIONS`` keeps, by name, the logs on which a route once gave another answer (shrunk by hand).

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


CASES = ("condition always true in a part", "condition always false in a part", "a group in one part only",
         "a single-row part", "an empty part", "a part boundary on a check boundary", "crosses --thin-after",
         "decimal column", "unsigned column", "dictionary column", "timestamp column", "a .csv.gz part")
BATCH = 10


def _part_rows(rng, first: bool) -> int:
    r = rng.random()
    if r < 0.12:
        return 1
    if r < 0.22 and not first:
        return 0
    if r < 0.45:
        return BATCH * int(rng.integers(2, 15))  # ends on a check boundary when the parts before do
    return int(rng.integers(20, 160))


def make_log(seed: int) -> dict:
    """``{"parts": [(name, bytes)], "format": "csv"|"parquet", "spec": text, "pred": text, "drift": what,
    "where": text, "thin_after": rows or None, "cases": {name of ``CASES``}}``."""
    rng = np.random.default_rng(seed)
    parts = int(rng.integers(1, 5))
    rows = [_part_rows(rng, p == 0) for p in range(parts)]
    rows[-1] = rows[-1] or int(rng.integers(1, 40))  # (an empty last part is the "empty_part" drift's)
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
    cases: set = set()
    for p, f in enumerate(frames):  # constant parts: a condition the spec reads holds on every row, or on none
        n = len(f["g"])
        if n and rng.random() < 0.35:
            value = str(rng.choice(np.array(["A", "B"], dtype=object)))
            f["g"] = [value] * n
            cases.add("condition always true in a part" if value == "A" else "condition always false in a part")
            if rng.random() < 0.5:
                f["decision"] = [str(int(rng.integers(0, 2)))] * n
        if n and rng.random() < 0.2:
            high = rng.random() < 0.5
            f["x"] = [f"{0.5 + 0.4 * rng.random() if high else 0.4 * rng.random():.3f}" for _ in range(n)]
            cases.add("condition always true in a part" if high else "condition always false in a part")
    if parts > 1 and rng.random() < 0.25:  # "A" only in one part
        only = int(rng.integers(0, parts))
        for p, f in enumerate(frames):
            if p != only:
                f["g"] = ["B" if v.strip() == "A" else v for v in f["g"]]
        if any(v.strip() == "A" for v in frames[only]["g"]):
            cases.add("a group in one part only")
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
    gz = fmt == "csv" and rng.random() < 0.25
    kinds = {"code": str(rng.choice(np.array(["int64", "int64", "decimal", "unsigned"], dtype=object))),
             "g": "dictionary" if rng.random() < 0.3 else "string", "t": rng.random() < 0.3}
    out = []
    for p, f in enumerate(frames):
        names = list(columns)
        if drift == "renamed" and p == last and parts > 1:
            names[0] = "group"
        n = len(f["g"])
        if drift == "empty_part" and p == last and parts > 1:
            n = 0
        name = f"part-{p + 1}.{'csv' if fmt == 'csv' else 'parquet'}"
        if gz and p == last:
            name += ".gz"
        if fmt == "csv":
            buf = io.StringIO()
            buf.write(",".join(names) + newline)
            for i in range(n):
                cells = [f["g"][i], f["decision"][i], f["x"][i], f["code"][i], _quoted(f["note"][i])]
                buf.write(",".join(cells) + newline)
            text = buf.getvalue()
            if drift == "truncated" and p == last and n:
                text = text[: text.rstrip("\r\n").rfind(",")]  # the last line loses its last field
            data = (b"\xef\xbb\xbf" if bom and p == 0 else b"") + text.encode("utf-8")
            if name.endswith(".gz"):
                import gzip

                data = gzip.compress(data, mtime=0)
            out.append((name, data))
        else:
            text = ((drift == "text_part" and p == last and parts > 1) or (drift == "yes_late" and p == last)
                    or (drift == "yes_first" and p == 0))  # a Parquet part holding "yes" stores the column as text
            out.append((name, _parquet(f, names, n, text_decision=text, kinds=kinds, part=p)))
    where = str(rng.choice(np.array(["", "", "x > 0.2", 'g != "B"'], dtype=object)))
    thin_after = int(rng.choice(np.array([0, 0, 30, 50, 100]))) or None
    sizes = [0 if (drift == "empty_part" and p == last and parts > 1) else len(f["g"]) for p, f in enumerate(frames)]
    cases |= _shape_cases(sizes, thin_after, fmt, kinds, gz)
    return {"parts": out, "format": fmt, "spec": spec, "pred": "decision == 1", "drift": drift, "where": where,
            "thin_after": thin_after, "cases": cases}


def _shape_cases(sizes, thin_after, fmt: str, kinds: dict, gz: bool) -> set:
    """The ``CASES`` a log of parts of ``sizes`` rows reaches by its shape and its columns' types."""
    cases = set()
    if any(n == 1 for n in sizes):
        cases.add("a single-row part")
    if len(sizes) > 1 and any(n == 0 for n in sizes):
        cases.add("an empty part")
    ends = np.cumsum(sizes)[:-1]
    if any(e and e % BATCH == 0 for e in ends):
        cases.add("a part boundary on a check boundary")
    if thin_after and sum(sizes) > thin_after:
        cases.add("crosses --thin-after")
    if fmt == "parquet":
        cases |= {"decimal column"} if kinds["code"] == "decimal" else set()
        cases |= {"unsigned column"} if kinds["code"] == "unsigned" else set()
        cases |= {"dictionary column"} if kinds["g"] == "dictionary" else set()
        cases |= {"timestamp column"} if kinds["t"] else set()
    if gz:
        cases.add("a .csv.gz part")
    return cases


def _quoted(value: str) -> str:
    if any(ch in value for ch in ',"\n\r'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _parquet(f: dict, names, n: int, text_decision: bool, kinds: dict | None = None, part: int = 0) -> bytes:
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = kinds or {"code": "int64", "g": "string", "t": False}

    def text(values):
        return pa.array([v.strip() if v.strip() else None for v in values[:n]], pa.string())

    codes = [int(v) for v in f["code"][:n]]
    code = {"int64": lambda: pa.array(codes, pa.int64()),
            "unsigned": lambda: pa.array(codes, pa.uint64()),
            "decimal": lambda: pa.array([decimal.Decimal(v) for v in codes], pa.decimal128(38, 0))}[kinds["code"]]()
    g = text(f["g"])
    arrays = [g.dictionary_encode() if kinds["g"] == "dictionary" else g,
              pa.array([v for v in f["decision"][:n]], pa.string()) if text_decision else
              pa.array([int(v) if v.isdigit() else None for v in f["decision"][:n]], pa.int64()),
              pa.array([float(v) if v else None for v in f["x"][:n]], pa.float64()),
              code,
              pa.array(f["note"][:n], pa.string())]
    names = list(names)
    if kinds["t"]:  # one instant, stored in milliseconds in even parts and in microseconds in odd ones
        unit = "ms" if part % 2 == 0 else "us"
        arrays.append(pa.array([1_700_000_000_000 + i for i in range(n)], pa.timestamp("ms")).cast(
            pa.timestamp(unit)))
        names.append("t")
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
    thin = ["--thin-after", str(log["thin_after"])] if log.get("thin_after") else []
    return ["--data", str(path), "--spec", log["spec"], "--pred", log["pred"], "--order", "given", "--batch",
            str(BATCH), *thin, *where]


def _csv(rows) -> bytes:
    return ("\n".join(",".join(str(c) for c in r) for r in rows) + "\n").encode()


# Logs on which a route once answered differently from the others, each shrunk to what it needs (by name; the
# test runs every route on each).
REGRESSIONS = {
    # issue 43: the Dask route counted a leaf's n from the stream step once a partition's rows all satisfied its
    # condition (2,000 rows certified in memory, violated on Dask); 40 rows keep the shape
    "dask: a condition true on every row of a part": {
        "parts": [("part-1.csv", _csv([("g", "decision")] + [("a", 1) if i % 2 == 0 else ("b", 0) for i in range(20)])),
                  ("part-2.csv", _csv([("g", "decision")] + [("a", 1)] * 20))],
        "format": "csv", "spec": 'E[pred | g == "a"] > 0.8', "pred": "decision == 1", "drift": "none", "where": "",
        "thin_after": None, "cases": {"condition always true in a part"}},
    "dask: the same, 1,000 rows a part (the issue's reproducer)": {
        "parts": [("part-1.csv", _csv([("g", "decision")] + [("a", 1) if i % 2 == 0 else ("b", 0)
                                                            for i in range(1000)])),
                  ("part-2.csv", _csv([("g", "decision")] + [("a", 1)] * 1000))],
        "format": "csv", "spec": 'E[pred | g == "a"] > 0.8', "pred": "decision == 1", "drift": "none", "where": "",
        "thin_after": None, "cases": {"condition always true in a part"}},
}
