"""Every limit on what an input can make fairaudit read, unpack, parse or compute, in one place.

An input from someone else (an upload on the dashboard, a file handed to the command line) must not be able to
exhaust the server: each kind of input is bounded *before* the work it would cause, and a limit that is hit is
one sentence saying what was too large, the limit, and what to do (a ``FairauditError``: exit code 2 in the CLI,
a red message on the dashboard, never a traceback). The table in the README's "Security model" lists them.

Limits a deployment may need to raise read an environment variable (a positive whole number); the others are
constants chosen far above what a real input needs.

Pure Python, no third-party import: the CLI's parser and every layer may import it.
"""
from __future__ import annotations

import os
import time
from typing import Callable, Mapping

MB = 1024 * 1024

# --------------------------------------------------------------------------------------------------------------
# uploads (the dashboard)

#: Largest upload in MB, per kind ("data": a CSV, ".csv.gz" included; "model": a model file). The dashboard checks
#: the size before reading a byte and says so in words (Streamlit's own ``server.maxUploadSize`` in
#: ``.streamlit/config.toml`` is higher and only shows a red icon). Raised with ``UPLOAD_ENV``.
UPLOAD_MB = {"data": 200, "model": 50}
UPLOAD_ENV = {"data": "FAIRAUDIT_MAX_DATA_MB", "model": "FAIRAUDIT_MAX_MODEL_MB"}

#: Largest population program (``.fr`` text) in KB, typed, uploaded or read from a file: a program is a short
#: text (FairSquare's examples are well under 1 KB; a 26 KB program already has hundreds of paths).
PROGRAM_KB = 64

# --------------------------------------------------------------------------------------------------------------
# compressed inputs: ``.csv.gz`` files and zip archives (skops models, torch state_dict files)

#: Largest *unpacked* size in MB of a compressed input: the decompressed bytes of a ``.csv.gz``, and the sum of the
#: members of a zip archive (skops, torch). A compression bomb (a 1 MB ``.csv.gz`` that inflates to 1 GiB, a
#: 256 KB skops file that inflates to 950 MB) is refused when the unpacked bytes pass it: the archive's declared
#: sizes are checked before anything is unpacked, and the bytes themselves are inflated in blocks, counted, and
#: abandoned as soon as they pass the limit (so a header that lies about the size gains nothing). 512 MB is
#: 2.5 times the data upload limit (a CSV compresses 5 to 10 times) and 10 times the model upload limit (skops and
#: torch files are mostly stored uncompressed). Raised with ``UNPACKED_ENV``.
UNPACKED_MB = 512
UNPACKED_ENV = "FAIRAUDIT_MAX_UNPACKED_MB"

#: Most members (files) in a zip archive (skops, torch). Counted in the archive's central directory before Python's
#: ``zipfile`` reads it (which builds one object per member): a skops file holds one member per array, a few
#: hundred for a large gradient-boosted model; a crafted archive of a million empty members is refused at once.
ARCHIVE_MEMBERS = 50_000

#: Largest ``schema.json`` (a skops file's list of objects) or ``data.pkl`` (a torch file's containers) in MB, the
#: member a model library parses into Python objects (about 6 bytes of memory per byte of JSON). Checked from the
#: size the zip directory declares before skops or torch opens the archive, and again on the inflated bytes. Real
#: models' are smaller (``schema.json`` of a 300-iteration gradient-boosted model: 0.9 MB, of a 200-tree random
#: forest: 3 MB; the arrays are ``.npy`` members); a 0.5 MB file whose ``schema.json`` inflated to 480 MB took
#: 2.9 GB and 17 s.
MODEL_METADATA_MB = 16

# --------------------------------------------------------------------------------------------------------------
# logs: the parts of a file, folder or glob, and what is read of them

#: Most columns of a log that one run types and reads (the columns it uses, or every column when it reads the
#: whole log into a dataset): a column costs its own arrays in every batch, so a 40 MB CSV of 100,000 columns took
#: 3 GB to audit a spec that reads two. Counted from the header (or the Parquet schema) before any row is read.
#: Raised with ``COLUMNS_ENV``.
COLUMNS = 5_000
COLUMNS_ENV = "FAIRAUDIT_MAX_COLUMNS"

#: Most values (rows × columns read) of a log read *whole* into memory (``--out-of-core off``, ``scan``,
#: ``compare``, ``repair``, the dashboard, and each file of a live Parquet folder): a Parquet file's footer declares
#: its rows, so a 2.4 MB file of 537 million identical rows (dictionary + run-length encoding) is refused before a
#: row is decoded. A streaming route (``--out-of-core on``, ``--dask``) reads in bounded batches and has no such
#: limit. Raised with ``MEMORY_VALUES_ENV``.
MEMORY_VALUES = 200_000_000
MEMORY_VALUES_ENV = "FAIRAUDIT_MAX_MEMORY_VALUES"

#: Largest size in MB of a log read whole into memory, as Arrow holds it: the uncompressed size its Parquet footers
#: declare is checked first, then the bytes decoded are counted batch by batch (a dictionary-encoded text column
#: declares little and decodes to much). Raised with ``MEMORY_MB_ENV``.
MEMORY_MB = 2_048
MEMORY_MB_ENV = "FAIRAUDIT_MAX_MEMORY_MB"

#: A folder or glob of more parts than this is read with a warning that says so (each part costs a file open, a
#: schema check and its own batches: 20,000 parts of a few rows took a minute); not a refusal.
MANY_PARTS = 1_000

# --------------------------------------------------------------------------------------------------------------
# .nnet networks: what the header may declare, checked before the body is parsed

#: Most weight layers (hidden + output) a ``.nnet`` header may declare (FairQuant's and ACAS Xu's have 7 or fewer).
NNET_LAYERS = 1_000
#: Largest layer size a ``.nnet`` header may declare.
NNET_LAYER_SIZE = 100_000
#: Most numbers (weights and biases) a ``.nnet`` header may declare in all: a million numbers is about 20 MB of
#: text and a few seconds of parsing. The header must also fit the file: every number takes at least two
#: characters (a digit and a separator), so a header that declares more numbers than the text can hold is refused
#: before the body is read.
NNET_PARAMETERS = 1_000_000
#: Most points of the integer grid that a ``.nnet`` file's input bounds span (the product over integer-bounded
#: inputs of ``max − min + 1``), and the widest real-valued input range: FairQuant's domains span about 10^20 points.
#: A header whose bounds span more (inputs in [0, 1e300]) or whose range overflows a float ([-1e308, 1e308]) is
#: refused at its line: such a domain's counts cannot be computed or written.
NNET_GRID_DIGITS = 100

# --------------------------------------------------------------------------------------------------------------
# specification text

#: Longest specification (or ``--where`` / ``--pred`` / ``# decision:`` event) in characters, comments included.
#: A spec with every template of the library is under 5,000 characters.
SPEC_CHARS = 100_000
#: Most set members (``col in {a, b, ...}``) in one specification, all sets together: the parser builds one node
#: per member and an engine one test per member (``age in {0, 1, ..., 199999}`` took 51 s and 520 MB).
SPEC_SET_MEMBERS = 10_000

# --------------------------------------------------------------------------------------------------------------
# time

#: How often (in iterations of an inner loop that has no natural pause: a sampled program's statements, a batch
#: of path volumes) a long computation asks whether the run's time budget (``--timeout`` / ``--time-budget``) has
#: run out. Asking costs a clock read; the loops it guards take microseconds to milliseconds per iteration, so the
#: budget is honoured within a fraction of a second of work, not after the whole computation.
DEADLINE_EVERY = 16


class OutOfTime(Exception):
    """Raised inside a long computation when the run's time budget has run out (``Deadline.check``). Never
    reaches the user: the engine that started the computation catches it and ends the run with its bounds so far,
    which keep their guarantee (the driver then reports the run as stopped by the time budget)."""


class Deadline:
    """A cheap "has the time run out?" for inner loops: ``check()`` reads the clock every ``every`` calls and
    raises :class:`OutOfTime` once ``expired()`` says so. ``Deadline(None)`` never raises."""

    def __init__(self, expired: Callable[[], bool] | None, every: int = DEADLINE_EVERY):
        self.expired = expired
        self.every = max(1, int(every))
        self._count = 0

    def check(self) -> None:
        if self.expired is None:
            return
        self._count += 1
        if self._count >= self.every:
            self._count = 0
            if self.expired():
                raise OutOfTime()


def deadline_after(seconds: float | None, clock=time.perf_counter) -> Callable[[], bool] | None:
    """An ``expired()`` callable true ``seconds`` from now (None for no limit)."""
    if seconds is None:
        return None
    end = clock() + float(seconds)
    return lambda: clock() >= end


# --------------------------------------------------------------------------------------------------------------
# reading the environment


def from_env(name: str, default: int, env: Mapping[str, str] | None = None) -> int:
    """The positive whole number in environment variable ``name``, else ``default`` (an unreadable value is
    ignored rather than refused: a limit must never stop the tool from starting)."""
    raw = ((os.environ if env is None else env).get(name) or "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


def unpacked_bytes(env: Mapping[str, str] | None = None) -> int:
    """The unpacked-size limit in bytes (:data:`UNPACKED_MB`, or ``FAIRAUDIT_MAX_UNPACKED_MB``)."""
    return from_env(UNPACKED_ENV, UNPACKED_MB, env) * MB


def columns_limit(env: Mapping[str, str] | None = None) -> int:
    """The most columns one run types and reads (:data:`COLUMNS`, or ``FAIRAUDIT_MAX_COLUMNS``)."""
    return from_env(COLUMNS_ENV, COLUMNS, env)


def memory_values(env: Mapping[str, str] | None = None) -> int:
    """The most values a log read whole may hold (:data:`MEMORY_VALUES`, or ``FAIRAUDIT_MAX_MEMORY_VALUES``)."""
    return from_env(MEMORY_VALUES_ENV, MEMORY_VALUES, env)


def memory_bytes(env: Mapping[str, str] | None = None) -> int:
    """The largest size in bytes of a log read whole (:data:`MEMORY_MB`, or ``FAIRAUDIT_MAX_MEMORY_MB``)."""
    return from_env(MEMORY_MB_ENV, MEMORY_MB, env) * MB


def size_text(n_bytes: int) -> str:
    """``n_bytes`` for a message: "300 bytes", "1.2 KB", "1.5 MB", "950 MB", "4.6 GB"."""
    if n_bytes < 1024:
        return f"{n_bytes:,} bytes"
    if n_bytes < MB:
        return f"{n_bytes / 1024:,.1f} KB"
    mb = n_bytes / MB
    if mb >= 1024:
        return f"{mb / 1024:,.1f} GB"
    return f"{mb:,.1f} MB" if mb < 100 else f"{mb:,.0f} MB"
