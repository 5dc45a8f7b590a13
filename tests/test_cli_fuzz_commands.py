"""Fuzzing every command over logs in parts (issue 43): ``fairaudit audit / scan / compare / repair / check / train /
report`` on folders and globs of CSV parts, folders of Parquet parts with odd column types (decimal128, uint64 above
2^63, dictionary-encoded text, ``timestamp[ms]`` beside ``timestamp[us]``, ``large_string``, int8, bool), single
files, built-in datasets, saved models and results — with valid and invalid options, list-valued flags in every form
(``--protected a b``, ``a,b``, mixes), and outputs that are inputs, parts of inputs, folders, devices or files of
another kind.

Every run must end with a verdict's exit code or a refusal (2, with a message on stderr): never a traceback, never
exit 4 (an internal error is a bug), never a temporary file left behind, and never an input part changed.

The cases are drawn from a seeded generator per command, so a failure names a reproducible case (its command, index
and argv). ``FAIRAUDIT_FUZZ_RUNS`` sets the number of runs per command (default ``RUNS``, ``REPORT_RUNS`` for
``report``: about two minutes in all, so that the suite stays cheap; the issue's check is
``FAIRAUDIT_FUZZ_RUNS=2000``, about an hour and a half on two cores, most of it the reports' PDFs).
``FAIRAUDIT_FUZZ_SEED`` changes the seed.
"""
from __future__ import annotations

import contextlib
import io
import os
import random
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fairaudit.cli import main

ROOT = Path(__file__).resolve().parents[1]
RUNS = 150  # per command, by default ...
REPORT_RUNS = 30  # ... and fewer reports, each a PDF with charts (about 2 s)
COMMANDS = ("audit", "scan", "compare", "repair", "check", "train", "report")
EXITS = {"audit": {0, 1, 2, 3}, "scan": {0, 1, 2, 3}, "compare": {0, 2, 3}, "repair": {0, 1, 2, 3},
         "check": {0, 2}, "train": {0, 2}, "report": {0, 2}}

# ----------------------------------------------------------------------------------------------- the workspace
N = 240


def _frame(rng: np.random.Generator, n: int = N) -> pd.DataFrame:
    return pd.DataFrame({
        "g": rng.choice(["a", "b"], n), "r": rng.choice(["n", "s", "e"], n), "x": rng.normal(size=n).round(3),
        "k": rng.integers(0, 8, n), "decision": rng.integers(0, 2, n), "label": rng.integers(0, 2, n)})


def _odd_table(rng: np.random.Generator, n: int, part: int, big: bool = False) -> pa.Table:
    """The odd Parquet types: decimal128, uint64, dictionary text, timestamp[ms] in part 0 and [us] in part 1,
    large_string, int8 and bool; ``big``: decimals past 2^53 and uint64 past 2^63 in part 1."""
    from decimal import Decimal

    base = _frame(rng, n)
    large = big and part == 1
    dec = [Decimal(int(v) + (2 ** 53 + 1 if large and i % 5 == 0 else 0)) for i, v in enumerate(rng.integers(0, 10, n))]
    u64 = [int(v) + (2 ** 63 + 5 if large and i % 7 == 0 else 0) for i, v in enumerate(rng.integers(0, 50, n))]
    stamps = pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 10 ** 6, n), unit="ms")
    unit = "ms" if part == 0 else "us"
    return pa.table({
        "g": pa.array(base["g"]).dictionary_encode(), "r": pa.array(base["r"], type=pa.large_string()),
        "x": pa.array(base["x"]), "k": pa.array(base["k"], type=pa.int8()),
        "decision": pa.array(base["decision"].astype(bool)), "label": pa.array(base["label"], type=pa.int64()),
        "dec": pa.array(dec, type=pa.decimal128(38, 0)), "u64": pa.array(u64, type=pa.uint64()),
        "ts": pa.array(stamps.values.astype(f"datetime64[{unit}]"), type=pa.timestamp(unit)),
        "b": pa.array(rng.integers(0, 2, n).astype(bool))})


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Folders, globs and files of parts, odd Parquet parts, a saved model, a threshold repair, a result, a spec."""
    d = tmp_path_factory.mktemp("fuzz43")
    rng = np.random.default_rng(43)
    (d / "csv").mkdir()
    for i, n in ((1, 90), (2, 1), (10, 149)):  # natural order, a one-row part
        _frame(rng, n).to_csv(d / "csv" / f"part-{i}.csv", index=False)
    (d / "csv_head").mkdir()  # a header-only first part beside a part with rows
    _frame(rng, 0).to_csv(d / "csv_head" / "part-1.csv", index=False)
    _frame(rng, 120).to_csv(d / "csv_head" / "part-2.csv", index=False)
    (d / "pq").mkdir()
    for i in range(3):
        pq.write_table(pa.Table.from_pandas(_frame(rng, 80), preserve_index=False), d / "pq" / f"part-{i}.parquet")
    for name, big in (("odd", False), ("odd_big", True)):
        (d / name).mkdir()
        for i in range(2):
            pq.write_table(_odd_table(rng, 100, i, big), d / name / f"part-{i}.parquet")
    (d / "mixed").mkdir()  # float64 x in one part, uint64 past 2^63 in the next
    frame = _frame(rng, 60)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), d / "mixed" / "part-1.parquet")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.set_column(table.schema.get_field_index("x"), "x", pa.array([2 ** 63 + 9] * 60, type=pa.uint64()))
    pq.write_table(table, d / "mixed" / "part-2.parquet")
    pq.write_table(_odd_table(rng, 150, 0), d / "odd.parquet")
    _frame(rng).to_csv(d / "one.csv", index=False)
    _frame(rng).to_csv(d / "one.csv.gz", index=False)
    (d / "empty.csv").write_text("")
    (d / "notes.txt").write_text("not a model, not a result\n")
    (d / "spec.spec").write_text('# decision: decision == 1\nE[pred | g == "a"] - E[pred | g == "b"] < 0.3\n')
    quiet = (contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()))
    with quiet[0], quiet[1]:
        assert main(["train", "--data", str(d / "one.csv"), "--label", "label", "--kind", "logreg",
                     "--out", str(d / "m.skops")]) == 0
        code = main(["audit", "--data", str(d / "one.csv"), "--pred", "decision == 1",
                     "--spec", 'E[pred | g == "a"] > 0.2', "--json", str(d / "result.json")])
        assert code in (0, 1, 3)
        code = main(["repair", "--data", str(d / "one.csv"), "--label", "label", "--model", str(d / "m.skops"),
                     "--spec", 'E[pred | g == "a"] - E[pred | g == "b"] < 0.2', "--objective", "favourable",
                     "--save", str(d / "repair.json")])
        assert code in (0, 1, 3)
    text = (d / "result.json").read_text()
    r = random.Random(3)
    for i in range(3):
        (d / f"result{i}.json").write_text(_mutate(r, text, ["{", "}", "null", '"', "nan", ",", "[", "]", "1e999"]))
    (d / "garbage.model").write_bytes(bytes(r.randrange(256) for _ in range(200)))
    return d


# ----------------------------------------------------------------------------------------------- the generator
PIECES = ["E", "Fair", "[", "]", "(", ")", "|", "and", "or", "not", "in", "{", "}", "<", "<=", "==", "!=", ">", "+",
          "-", "/", "*", "0", "1.5", "1e999", "nan", "pred", "label", "score", "g", "r", "k", '"a"', "é", "\x00", " "]
SPECS = ['E[pred | g == "a"] - E[pred | g == "b"] < 0.3',
         'E[pred | g == "a"] / E[pred | g == "b"] >= 0.8 and E[pred | g == "b"] / E[pred | g == "a"] >= 0.8',
         'E[pred | r in {"n", "s"}] > 0.2', 'E[pred == label | g == "a"] > 0.3', 'E[pred | k > 3] > 0.1',
         "Fair[g] >= 0.9", "E[pred] > 0.2", 'E[label | g == "a"] < 0.9', 'E[pred | x > 0 and g == "b"] > 0.1']
ODD_SPECS = ['E[pred | b] > 0.1', 'E[pred | u64 > 100] - E[pred | u64 <= 100] < 0.5', 'E[pred | dec > 5] > 0.1',
             'E[pred | k >= 4 and r == "s"] > 0.1', 'E[pred | dec == 9007199254740993] >= 0',
             'E[pred | u64 > 9223372036854775808] >= 0']
PREDS = ["decision == 1", "decision", "k > 3", "x > 0", 'g == "a"']
ODD_PREDS = ["b", "u64 > 10", "dec >= 2", "decision", "k > 3"]
NAMES = [["g"], ["g", "r"], ["g,r"], ["g,", "r"], ["r", "g,k"], ["r"]]
BAD_NAMES = [[""], ["nope"], ["g", "g"], ["label"], ["u64", "dec"], [","]]
BAD_NUMBERS = ["0", "1", "-1", "nan", "inf", "-inf", "1e308", "1e-300", "abc", "", "2**64", "1e999"]
BAD_COUNTS = ["0", "-2", "1e3", str(2 ** 70), "x", "", "nan"]
FLOATS = {"--delta": ["0.05", "0.2"], "--time-budget": ["5", "30"], "--confirm-share": ["0.5", "0.3"],
          "--split": ["0.5", "0.4"], "--test-size": ["0.25", "0.3"], "--threshold": ["0.8", "0.5"],
          "--min-share": ["0.02", "0.1"], "--margin": ["auto", "0", "0.01"], "--poll": ["0.01"],
          "--idle-timeout": ["0.05"]}
COUNT_FLAGS = {"--batch": ["1", "5"], "--seed": ["0", "7"], "--trace-every": ["1", "3"], "--trace-points": ["0", "10"],
               "--depth": ["1", "2"], "--burn-in": ["10", "50"]}


def _mutate(rng: random.Random, text: str, pieces=PIECES) -> str:
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        x = rng.random()
        if x < 0.3 and text:
            text = text[:i] + text[min(len(text), i + rng.randint(1, 5)):]
        elif x < 0.8:
            text = text[:i] + rng.choice(pieces) + text[i:]
        else:
            text = text[:i]
    return text


def _pick(rng: random.Random, good, bad, p_good: float = 0.75):
    return rng.choice(good) if rng.random() < p_good else rng.choice(bad)


def _data(rng: random.Random, d: Path) -> tuple[str, bool]:
    """``(--data, whether it has the odd Parquet columns)``: mostly a log that reads, else one that does not."""
    good = [("csv", False), ("csv", False), ("csv/part-*.csv", False), ("pq", False), ("pq/*.parquet", False),
            ("odd", True), ("odd", True), ("odd.parquet", True), ("one.csv", False), ("one.csv.gz", False),
            ("csv_head", False), ("odd_big", True)]
    bad = [("mixed", False), ("empty.csv", False), ("nothing", False), ("notes.txt", False)]
    name, odd = _pick(rng, good, bad, 0.9)
    return str(d / name), odd


def _roles(rng: random.Random) -> list[str]:
    out = []
    if rng.random() < 0.6:
        out += ["--label", _pick(rng, ["label"], ["g", "nope", "decision", ""], 0.9)]
    if rng.random() < 0.5:
        out += ["--protected", *_pick(rng, NAMES, BAD_NAMES, 0.85)]
    if rng.random() < 0.05:
        out += ["--favourable", rng.choice(["1", "0", "yes", "a"])]
    if rng.random() < 0.05:
        out += ["--na-values", *rng.choice([["NA", "null"], ["NA,null"], [""], ["a"]])]
    if rng.random() < 0.04:
        out += ["--column-type", rng.choice(["k=integer", "x=text", "g=float", "k=nope", "=x"])]
    return out


def _spec(rng: random.Random, odd: bool = False) -> str:
    text = rng.choice(SPECS + (ODD_SPECS * 2 if odd else [])) if rng.random() < 0.95 else rng.choice(ODD_SPECS)
    return text if rng.random() < 0.75 else _mutate(rng, text)


def _pred(rng: random.Random, odd: bool = False) -> str:
    text = rng.choice(PREDS + (ODD_PREDS if odd else []))
    return text if rng.random() < 0.85 else _mutate(rng, text)


def _options(rng: random.Random, flags, p: float) -> list[str]:
    """Some of ``flags`` (from ``FLOATS`` / ``COUNT_FLAGS``), each with probability ``p``: mostly a valid value."""
    out = []
    for flag in flags:
        if rng.random() < p:
            good = FLOATS.get(flag) or COUNT_FLAGS[flag]
            out += [flag, _pick(rng, good, BAD_COUNTS if flag in COUNT_FLAGS else BAD_NUMBERS, 0.7)]
    return out


def _choices(rng: random.Random, table: dict, p: float) -> list[str]:
    out = []
    for flag, values in table.items():
        if rng.random() < p:
            out += [flag, rng.choice(values)]
    return out


def _model(rng: random.Random, d: Path, kinds=("logreg", "tree")) -> str:
    good = [str(d / "m.skops"), str(d / "repair.json"), *kinds]
    bad = [str(d / "garbage.model"), str(d / "notes.txt"), "svm", str(d / "nothing.skops"), str(d / "csv"),
           str(d / "one.csv")]
    return _pick(rng, good, bad, 0.85)


def _output(rng: random.Random, d: Path, name: str) -> str:
    """An output path: mostly a fresh file, else an input, a part of one, a folder, a device, a file of another
    kind, a path that is no file name."""
    return _pick(rng, [str(d / "out" / name)], [str(d / "csv" / "part-2.csv"), str(d / "pq" / "part-1.parquet"),
                                                 str(d / "odd" / "part-0.parquet"), str(d / "one.csv"), str(d),
                                                 str(d / "out") + "/", "/dev/null", "", ".", str(d / "notes.txt"),
                                                 str(d / "result.json"), str(d / "m.skops"),
                                                 str(d / "no" / "x.out")], 0.75)


def _force(rng: random.Random) -> list[str]:
    return ["--force"] if rng.random() < 0.3 else []


def _audit(rng: random.Random, d: Path) -> list[str]:
    data, odd = _data(rng, d)
    argv = ["audit", "--data", data, *_roles(rng), "--spec", _spec(rng, odd)]
    x = rng.random()
    argv += ["--pred", _pred(rng, odd)] if x < 0.8 else ["--model", _model(rng, d)] if x < 0.97 else []
    argv += _options(rng, ("--delta", "--batch", "--seed", "--time-budget", "--trace-every", "--trace-points"), 0.06)
    argv += _choices(rng, {"--order": ["shuffle", "given", "random"], "--out-of-core": ["on", "off", "auto"],
                           "--engine": ["monitor", "monitor", "dataset", "dataset", "justicia", "fvgm"],
                           "--rows": ["all", "held-out"],
                           "--bound": ["mixture", "hoeffding", "normal"], "--missing": ["keep", "drop"],
                           "--split": ["equal", "directed", "best"]}, 0.07)
    if rng.random() < 0.03:
        argv += ["--confirm", rng.choice(["n0", "n1", "n0:refute", "n9", "x:y"])]
        argv += _options(rng, ["--confirm-share"], 0.5)
    if rng.random() < 0.12:
        argv += ["--where", _pred(rng, odd)]
    if rng.random() < 0.03:  # the follow-only timing without --follow
        argv += _options(rng, ["--poll", "--idle-timeout"], 0.7)
    if rng.random() < 0.04:  # the same log followed live (read whole, then the idle timeout ends the watch)
        argv[1:3] = ["--follow", data, "--idle-timeout", "0.05", "--poll", "0.01"]
        argv += ["--watch"] if rng.random() < 0.3 else []
    if rng.random() < 0.25:
        argv += ["--json", _output(rng, d, "a.json"), *_force(rng)]
    if rng.random() < 0.04:
        argv += ["--full-trace", _output(rng, d, "t.parquet")]
    if rng.random() < 0.03:
        argv += ["--stop"]
    return argv


def _scan(rng: random.Random, d: Path) -> list[str]:
    data, odd = _data(rng, d)
    argv = ["scan", "--data", data, *_roles(rng)]
    if "--protected" not in argv or rng.random() < 0.1:
        argv += ["--protected", *_pick(rng, NAMES + ([["k", "b"], ["b"]] if odd else []), BAD_NAMES, 0.85)]
    argv += ["--pred", _pred(rng, odd)] if rng.random() < 0.85 else ["--model", _model(rng, d)]
    argv += _options(rng, ("--depth", "--delta", "--threshold", "--min-share", "--seed"), 0.06)
    argv += _choices(rng, {"--mode": ["anytime", "one-look", "exact", "x"], "--rate": ["selection", "scoring", "best"],
                           "--bound": ["mixture", "hoeffding", "x"], "--order": ["shuffle", "given"],
                           "--allocation": ["decisive", "equal", "x"],
                           "--bins": ["x=3", "k=0,2,4", "k=1", "k=4,2", "g=2", "nope=2", "x", "u64=3", "dec=2"],
                           "--template": ["ll144", "eeoc", "osha"]}, 0.06)
    if rng.random() < 0.03:  # the follow-only flags without --follow
        argv += _options(rng, ["--poll", "--idle-timeout", "--burn-in"], 0.7)
    if rng.random() < 0.04:  # the same log followed live
        argv[1:3] = ["--follow", data, "--idle-timeout", "0.05", "--poll", "0.01", "--mode", "anytime"]
    if rng.random() < 0.12:
        argv += ["--where", _pred(rng, odd)]
    if rng.random() < 0.2:
        argv += ["--json", _output(rng, d, "s.json"), *_force(rng)]
    if rng.random() < 0.12:
        argv += ["--csv", _output(rng, d, "s.csv"), *_force(rng)]
    return argv


def _compare(rng: random.Random, d: Path) -> list[str]:
    data, odd = _data(rng, d)
    argv = ["compare", "--data", data, *_roles(rng), "--spec", _spec(rng, odd)]
    for _ in range(rng.choice([1, 2, 2, 2, 2, 2, 2, 3, 3])):
        argv += ["--pred", _pred(rng, odd)] if rng.random() < 0.8 else ["--model", _model(rng, d)]
    argv += _options(rng, ("--delta", "--seed", "--time-budget"), 0.06)
    argv += _choices(rng, {"--stop": ["decided", "all", "x"], "--order": ["shuffle", "given", "x"],
                           "--engine": ["monitor", "monitor", "dataset", "fairquant", "x"],
                           "--rows": ["all", "held-out"], "--name": ["A", "B", "", "A,B"]}, 0.06)
    if rng.random() < 0.1:
        argv += ["--where", _pred(rng, odd)]
    if rng.random() < 0.2:
        argv += ["--json", rng.choice(["-", _output(rng, d, "c.json")]), *_force(rng)]
    return argv


REPAIR_SPECS = ['E[pred | g == "a"] - E[pred | g == "b"] < 0.2', 'E[pred | r == "n"] - E[pred | r == "s"] < 0.1',
                'E[pred | g == "a"] / E[pred | g == "b"] >= 0.8 and E[pred | g == "b"] / E[pred | g == "a"] >= 0.8']


def _repair(rng: random.Random, d: Path) -> list[str]:
    data, odd = _data(rng, d) if rng.random() < 0.5 else (str(d / rng.choice(["one.csv", "csv"])), False)
    argv = ["repair", "--data", data, *_roles(rng)]
    if "--label" not in argv and rng.random() < 0.8:
        argv += ["--label", "label"]
    spec = rng.choice(REPAIR_SPECS) if rng.random() < 0.7 else _spec(rng, odd)
    argv += ["--spec", spec if rng.random() < 0.85 else _mutate(rng, spec)]
    argv += ["--model", _model(rng, d)] if rng.random() < 0.95 else ["--pred", _pred(rng, odd)]
    argv += _options(rng, ("--split", "--delta", "--seed", "--margin"), 0.08)
    argv += _choices(rng, {"--objective": ["accuracy", "favourable", "favourable", "x"],
                           "--thresholds": ["both", "group", "global"], "--rows": ["all", "held-out"]}, 0.15)
    if rng.random() < 0.25:
        argv += ["--group-by", *_pick(rng, NAMES, BAD_NAMES, 0.7)]
    if rng.random() < 0.15:
        argv += ["--save", _output(rng, d, "rep.json"), *_force(rng)]
    if rng.random() < 0.15:
        argv += ["--json", rng.choice(["-", _output(rng, d, "r.json")])]
    return argv


def _check(rng: random.Random, d: Path) -> list[str]:
    argv, odd = ["check"], False
    if rng.random() < 0.7:
        data, odd = _data(rng, d)
        argv += ["--data", data, *_roles(rng)]
    if rng.random() < 0.1:
        argv += ["--no-header-data"]
    spec = _pick(rng, [_spec(rng, odd), f"@{d / 'spec.spec'}", str(d / "spec.spec")],
                 [f"@{d / 'nothing.spec'}", f"@{d / 'csv'}", f"@{d / 'one.csv'}"], 0.9)
    return ["check", spec, *argv[1:]] if rng.random() < 0.5 else argv + ["--", spec]


def _train(rng: random.Random, d: Path) -> list[str]:
    data, _ = _data(rng, d)
    argv = ["train", "--data", data, *_roles(rng), "--kind", _pick(rng, ["logreg", "tree"], ["mlp", "svm", ""], 0.9),
            "--out", _output(rng, d, rng.choice(["m1.skops", "m2", "m3.joblib"])), *_force(rng)]
    if "--label" not in argv and rng.random() < 0.8:
        argv += ["--label", "label"]
    if rng.random() < 0.2:
        argv += [rng.choice(["--features", "--exclude"]), *_pick(rng, NAMES + [["x", "k"], ["x,k"]], BAD_NAMES, 0.8)]
    if rng.random() < 0.1:
        argv += ["--param", rng.choice(["max_depth=2", "C=-1", "C=nan", "=", "x", "hidden=[4]", "epochs=1"])]
    argv += _options(rng, ("--test-size", "--seed"), 0.1)
    return argv


def _report(rng: random.Random, d: Path) -> list[str]:
    result = _pick(rng, ["result.json"], ["result0.json", "result1.json", "result2.json", "one.csv", "notes.txt",
                                          "nothing.json", "csv", "m.skops"], 0.7)
    argv = ["report", str(d / result) if rng.random() < 0.97 else rng.choice(["", ".", "/dev/null"])]
    if rng.random() < 0.9:
        argv += ["--pdf", _output(rng, d, "r.pdf"), *_force(rng)]
    if rng.random() < 0.3:
        data, odd = _data(rng, d)
        argv += ["--data", data, *_roles(rng)]
        if rng.random() < 0.5:
            argv += ["--model", _model(rng, d)] if rng.random() < 0.5 else ["--pred", _pred(rng, odd)]
    if rng.random() < 0.15:
        argv += ["--node", rng.choice(["n0", "n1", "n99", ""])]
    if rng.random() < 0.3:
        argv += ["--no-data"]
    return argv


CASES = {"audit": _audit, "scan": _scan, "compare": _compare, "repair": _repair, "check": _check, "train": _train,
         "report": _report}


# ----------------------------------------------------------------------------------------------- the runs
def _run(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals (a bad value, an unknown flag): exit 2
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


def _files(d: Path) -> dict:
    """The workspace's files (outside ``out/``) and their bytes."""
    return {p: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and "out" not in p.relative_to(d).parts}


def _read(argv) -> set:
    """The files a run reads: every part of its ``--data``, its ``--model`` files, a report's result."""
    from fairaudit.sources.files import list_parts

    named = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--data", "--model")]
    if argv[0] == "report":
        named.append(argv[1])
    out = set()
    for name in named:
        try:
            out.update(Path(p).resolve() for p in list_parts(name))
        except Exception:  # noqa: BLE001 - not a log: the path itself, if it is one
            out.add(Path(name).resolve())
    return out


def fuzz(command: str, d: Path, runs: int, seed: int) -> dict:
    """``runs`` cases of ``command``; the exit codes counted, the first failure raised (an AssertionError naming the
    case and its argv). A workspace file that a run replaced (with ``--force``, an output over a file that is not
    one of its inputs: allowed) is put back, so that every case starts from the same files."""
    (d / "out").mkdir(exist_ok=True)
    rng = random.Random(f"{seed}:{command}")
    pristine = _files(d)
    counts: dict = {}
    for index in range(runs):
        argv = CASES[command](rng, d)
        code, err = _run(argv)
        where = f"{command} case {index}: fairaudit {shlex.join(argv)}"
        assert code in EXITS[command], f"{where}\nexit {code}\n{err}"
        assert "Traceback" not in err, f"{where}\n{err}"
        if code == 2:
            assert err.strip(), f"{where}: exit 2 without a message"
        left = list(d.rglob("*.tmp"))
        assert not left, f"{where}: temporary files left behind: {left}"
        now = _files(d)
        changed = [p for p, data in pristine.items() if now.get(p) != data]
        read = _read(argv)
        assert not [p for p in changed if p.resolve() in read], f"{where}: an input changed: {changed}"
        for p in changed:
            p.write_bytes(pristine[p])
        for p in set(now) - set(pristine):  # a new file beside the inputs (a folder of parts would read it)
            p.unlink()
        counts[code] = counts.get(code, 0) + 1
    return counts


def _runs(command: str) -> int:
    if "FAIRAUDIT_FUZZ_RUNS" in os.environ:
        return int(os.environ["FAIRAUDIT_FUZZ_RUNS"])
    return REPORT_RUNS if command == "report" else RUNS


@pytest.fixture(autouse=True)
def _no_model_cache(monkeypatch):
    monkeypatch.setenv("FAIRAUDIT_CACHE", "off")


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_no_command_crashes_on_logs_in_parts(workspace, command):
    runs = _runs(command)
    counts = fuzz(command, workspace, runs, int(os.environ.get("FAIRAUDIT_FUZZ_SEED", "43")))
    print(f"{command}: {runs} runs, exit codes {dict(sorted(counts.items()))}")
    if command != "check" and runs >= REPORT_RUNS:  # the generator reaches past the refusals
        assert sum(n for code, n in counts.items() if code != 2) > 0, counts
