"""The monitor beyond one machine: a decision log in parts (CSV or Parquet files), audited on a Dask cluster.

``audit_parquet(source, spec, pred=..., client=...)`` gives the same result as the in-process monitor
(``fairaudit.audit`` with the ``monitor`` engine) and the out-of-core route (``fairaudit.engines.monitor.outofcore.audit_file``) on
the same rows — the same verdict, stop step and every interval of every check — while the rows are read and
evaluated by the cluster's workers, never by the client.

The rows: one ingestion pipeline (``fairaudit.sources``)
    ``source`` is a CSV or Parquet file, a folder of parts (``*.csv``, ``*.csv.gz``, ``*.parquet``, ``*.pq``,
    recursively), a glob, a list of them, or a ``FileLog``; the client makes it a ``FileLog`` (``dask_log``), which
    lists the parts in natural name order (``part-2`` before ``part-10``) and fixes the **schema once**, here,
    before any row is counted (the first Parquet part's stored types, or the first 10,000 rows of the first CSV
    part; ``column_types`` declares a type, ``na_values`` more text read as missing). Each part is **one
    partition** (``Part``), read on a worker by the log's own reader (``FileLog.read_part``): every batch conformed
    to that schema (``fairaudit.sources.conform``: a value that does not fit — ``yes`` in a column of whole
    numbers, an infinite number, a Parquet part storing ``decision`` as text where the first part stores integers
    — is refused with its file and data row, never coerced; a renamed or missing column is refused) and made the
    engines' frame (``to_frame``) — exactly as the in-process and out-of-core routes read the same files, with the
    same messages. The partitions in ``log.parts`` order, each in row order, are the stream's **given order**.
    A URL (``s3://...``) of Parquet files is a ``RemoteLog``: the same ``FileLog`` listed and read through fsspec
    (the filesystem's package, e.g. s3fs; a CSV log in object storage is not read).

    Before any work the spec, the decision and the row filter are validated as out of core: the columns' kinds from
    the schema, the values of the text columns they read (and of the label) from one pass on the cluster
    (``part_values`` per partition: ``fairaudit.sources.values``; merged on the client in partition order), so a
    value the log never takes or a missing label is refused, positioned; the favourable label value is taken in the
    label's type from the same ``FileDataset`` (``fairaudit.data.cleaning.known_dataset``). A partition that fails
    is reported as out of core meets it, reading the parts in order: the first failing part's error.

Each worker, per partition (``partition_codes``)
    reads its part and encodes every batch with the one ``ChunkEncoder`` the out-of-core route uses
    (``fairaudit.core.codes``): the decision (``pred``: a condition over the rows; or a model the client already
    loaded, shipped to the workers by Dask — never one loaded from anywhere else), the rows matching ``where``, every
    distinct leaf of the spec — one **row code** per audited row, two bits a leaf. The codes stay on the worker.

The client combines them, in partition order, by the one counting kernel (``fairaudit.core.counting``)
    ``order="given"``: every worker counts its codes (``count``) at the checks of the stream's schedule that fall in
    its partition (``partition_counts`` at ``fairaudit.engines.monitor.stream.checks_in``, the function every route's
    checks come from), and its totals (``partition_totals``). The client fetches those ``Counted`` pieces
    partition by partition as the monitor asks for its checks (``fetched_counts``: a few partitions computed ahead)
    and the monitor's ``ChunkedObservations`` shifts each by the ``Counts`` of the partitions before it and merges
    them (``shift`` and ``+``) — exactly as it merges the chunks of a file read out of core. The monitor asks in
    increasing order, so the client forgets the checks below the lowest one it last asked for: it holds a window of
    checks, never the counts at every check, whatever the log's length. The halves test of ``OrderEvidence`` adds up
    each partition's totals before and after the stream's middle row (``_halves``).

    ``order="shuffle"``: the stream is the rows in the seeded random order of the in-process path
    (``fairaudit.engines.monitor.engine.stream_positions``), a permutation of the whole stream, which no partition
    can apply alone. The client appends the partitions' row codes in partition order and shuffles them with
    ``fairaudit.engines.monitor.stream.shuffle_codes`` — in memory (up to 1 GiB of codes) that is the in-process
    permutation — and counts them chunk by chunk for the monitor. The client holds those codes (about 2 bytes a row
    while shuffling, 1 after; with ``Fair[...]`` also the row ids shuffled with them, ``shuffle_rows``, 4 bytes a
    row), not the rows; beyond 1 GiB of codes they go to a temporary file and are shuffled by buckets (a uniform
    order: the out-of-core route's with the same limit and seed, not the in-process one).

Either way the counts go through ``fairaudit.engines.monitor.engine.monitor_batches`` and the shared driver
(``fairaudit.core.driver.drive``), as in process, so verdicts, intervals, warnings and the guarantee sentence are the
same.

``Fair[column]`` (with a model)
    The values the column is flipped to are those of the whole log, sorted, as in process
    (``fairaudit.core.observations.fair_domains``: a text, boolean or dictionary column's values as the dataset
    schema has them, a numeric column's distinct values): one pass on the cluster first (``_domains``), each
    partition sending at most ``FAIR_MAX_VALUES + 1`` distinct values; a column with more is refused. Each worker
    flips its rows and keeps its first ``KEEP`` counterexamples and their positions; the client numbers them in the
    whole stream (given order: ``_fair_flips``). Shuffled, the first ``KEEP`` in the permuted order can lie anywhere:
    their stream positions are read off the shuffled codes, their rows through the ids shuffled with them, and the
    partitions that hold them are read again to make just those (``_fair_flips_shuffled``,
    ``partition_counterexamples``). How many rows the flip changed among the rows checked is read off the leaf's
    counts (``ChunkedObservations.counterexamples``): no position of every flipped row is kept. The counterexamples
    are the in-process ones, row numbers (in the log, before ``where``) included.

The cluster
    ``dask_client(scheduler=None, workers=2, threads=1)`` starts a ``distributed.LocalCluster`` on this machine
    (``processes=True``: one process per worker, so evaluation runs in parallel) or, with ``scheduler``, attaches
    to an existing cluster (``tcp://host:8786``; unreachable within ``timeout`` seconds → ``FairauditError``); on
    exit (also on an error or Ctrl-C) the client is closed and a cluster it started is shut down. Its options,
    ``fairaudit.engines.monitor.options.DASK_OPTIONS``, declare the knobs once (the CLI's flags derive from them).
"""
from __future__ import annotations

import functools
import logging
import os
import warnings
from contextlib import contextmanager
from pathlib import PurePath
from dataclasses import dataclass, replace
from typing import Iterator

import numpy as np

from fairaudit.core.codes import spec_code_dtype
from fairaudit.base.errors import DataError, FairauditError
from fairaudit.engines.monitor.stream import ChunkedObservations
from fairaudit.sources.files import FileLog
from fairaudit.sources.parts import Part, log_partitions
from fairaudit.sources.remote import RemoteLog, is_url, log_items



from fairaudit.engines import STREAMING as ENGINE  # the engine whose observations the workers evaluate


def runs_on_dask(engine) -> bool:
    """Whether ``engine`` (an ``Engine``) can audit a log on Dask (only the monitor: its leaves are counts of
    observations that partitions can be reduced to)."""
    return getattr(engine, "name", engine) == ENGINE


def dask_log(source, declared=None, na_values=(), columns=None) -> FileLog:
    """``source`` as the log the Dask route reads (a ``FileLog``, given one as it is; a ``RemoteLog`` for URLs):
    its parts listed and its schema fixed here, on the client, before any row is counted; ``columns``: the only
    ones typed and read (``fairaudit.engines.monitor.outofcore.run_columns``; None: every column)."""
    from fairaudit.engines.monitor.outofcore import log_of

    if isinstance(source, FileLog):
        return source
    items = log_items(source)
    if any(is_url(i) for i in items):
        return RemoteLog(source, declared=declared, na_values=tuple(na_values or ()),
                         columns=None if columns is None else tuple(columns))
    local = [i.removeprefix("file://") for i in items]
    return log_of(local if len(local) > 1 or not isinstance(source, (str, os.PathLike)) else local[0], declared,
                  na_values, columns)


# ---------------------------------------------------------------------------------------------------- the cluster
@contextmanager
def dask_client(scheduler: str | None = None, *, workers: int = 2, threads: int = 1,
                timeout: float = 10.0) -> Iterator:
    """A ``distributed.Client``: on a new ``LocalCluster`` of ``workers`` processes × ``threads`` threads, or
    attached to the scheduler at ``scheduler``. Closed on exit (the local cluster shut down), whatever happens."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as err:
            reason = " ".join(str(err).split())[:160]
            raise FairauditError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s ({reason})") \
                from None
        try:
            yield client
        finally:
            client.close()
        return
    with _interrupts_held() as held, warnings.catch_warnings():  # a Ctrl-C while the workers start is raised once
        # the cluster can be closed; the scheduler's HTTP server (no dashboard) takes another port if 8787 is taken,
        # which is no news for the user
        warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
        cluster = LocalCluster(n_workers=int(workers), threads_per_worker=int(threads), processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL)
    try:
        if held:  # inside the try: the cluster is closed below
            raise KeyboardInterrupt
        client = Client(cluster, timeout=timeout)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


@contextmanager
def _interrupts_held():
    """Hold a SIGINT (Ctrl-C) back while the block runs; yields the list of those held (the caller raises once it
    can clean up): a cluster half started cannot be closed cleanly (its workers are still starting), one fully
    started can. Only in the main thread (elsewhere, e.g. in the dashboard's script thread, Python delivers no
    SIGINT anyway)."""
    import signal
    import threading

    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


# ---------------------------------------------------------------------------------------------------- on a worker
@dataclass(frozen=True)
class Task:
    """What every partition is evaluated with (small; the model travels separately, as a Dask future)."""

    spec: str
    pred: str | None = None
    where: str | None = None
    label: str | None = None
    favourable: object = None
    uses_score: bool = False
    domains: tuple = ()  # ((column, (value, ...)), ...): the values a Fair[column] flips to, those of the whole log
    ranges: tuple = ()  # the declared ranges of the columns the spec averages (``Spec.ranges``)
    classes: tuple | None = None  # ``pred`` names a column of logged classes: its values (those of the whole log)


@dataclass
class PartitionCodes:
    """One partition's observation codes, made on a worker by the one ``ChunkEncoder`` every route uses
    (``fairaudit.core.codes``: one row code per audited row, in row order), and what the run reports of them."""

    codes: np.ndarray
    before: int = 0  # the partition's rows before ``where``
    flips: dict | None = None  # per Fair[...] leaf: the first ``KEEP`` flipped rows' positions (after ``where``)
    first: dict | None = None  # per Fair[...] leaf: the first ``KEEP`` of them as ``Counterexample``s (rows: local)
    missing: dict | None = None  # per leaf: the rows it leaves out for a missing value (``Missing``)
    unknown: tuple = (0, ())  # the rows the row filter is neither true nor false on, and the columns missing there

    @property
    def length(self) -> int:
        return len(self.codes)


@functools.lru_cache(maxsize=16)
def _parsed(spec_text: str, ranges: tuple = ()):
    from fairaudit.spec import parse
    from fairaudit.spec.quantities import with_ranges

    spec = parse(spec_text)
    return with_ranges(spec, {name: (lo, hi) for name, lo, hi in ranges}) if ranges else spec


@functools.lru_cache(maxsize=16)
def _event(text: str):
    from fairaudit.spec import parse_event

    return parse_event(text)


def _decider(task: Task, model):
    """What makes a partition's decisions: the model the client shipped, or the decision expression."""
    if task.pred is None:
        return model
    from fairaudit.models.expression import ClassColumnModel, ExpressionModel
    from fairaudit.spec import event_columns

    if task.classes is not None:
        return ClassColumnModel(task.pred, task.classes)
    decision = _event(task.pred)
    return ExpressionModel(task.pred, decision, event_columns(decision))


def partition_codes(part: Part, task: Task, model=None) -> PartitionCodes:
    """Evaluate ``task`` on one partition, read here by the log's reader: its batches encoded by the
    ``ChunkEncoder`` the out-of-core route uses (``fairaudit.core.codes``: the decision, the row filter, every leaf;
    without ``Fair[...]`` the text kept dictionary-encoded and each distinct combination evaluated once), so a part's
    codes are those of the same rows read anywhere else."""
    from fairaudit.core.codes import ChunkEncoder, fair_keys
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.core.observations import FirstFlips

    spec = _parsed(task.spec, task.ranges)
    keys = compile_spec(spec).leaf_keys
    fair = bool(fair_keys(spec))
    firsts = FirstFlips() if fair else None
    encoder = ChunkEncoder(spec, keys, part.columns, part.log.schema, _decider(task, model), model=model,
                           where_event=None if task.where is None else _event(task.where), label=task.label,
                           favourable=task.favourable, domains=dict(task.domains) or None, first_flips=firsts,
                           origin=f" of {PurePath(part.path).name}")  # rows numbered in their part (its file)
    chunks = [encoder.codes(table) for table in part.tables(encoded=not fair)]
    codes = np.concatenate(chunks) if chunks else np.zeros(0, dtype=spec_code_dtype(spec))
    flips = first = None
    if firsts is not None:
        flips = {k: np.asarray(positions, dtype=np.int64) for k, (_, _, positions, _) in firsts.kept.items()}
        first = {k: tuple(examples) for k, (_, _, _, examples) in firsts.kept.items()}
    return PartitionCodes(codes, encoder.total, flips, first, encoder.missing or None,
                          (encoder.unknown, tuple(encoder.unknown_columns)))


def partition_counterexamples(part: Part, task: Task, model, key: str, local) -> tuple:
    """The ``Counterexample``s of the Fair[...] leaf ``key`` at the partition's audited rows ``local`` (positions
    after ``where``, in the order wanted; rows: positions in the partition) — the out-of-core route's second read
    (``fairaudit.engines.monitor.outofcore.counterexamples_at``) of this one part."""
    from fairaudit.engines.monitor.outofcore import counterexamples_at

    return counterexamples_at(part.log, _parsed(task.spec, task.ranges), model, dict(task.domains), {key: local},
                              where=task.where, label=task.label, favourable=task.favourable)[key]


def partition_counts(codes: PartitionCodes, keys, offset: int, length: int, batch: int, thin_after: int = 0):
    """The partition's counts at the checks that fall in it (``fairaudit.engines.monitor.stream.checks_in``: the
    stream's schedule, of ``length`` rows, from the partition's first row at ``offset``), by the one kernel
    (``fairaudit.core.counting.count``), as a ``Counted`` piece the client shifts and merges."""
    from fairaudit.core.counting import count
    from fairaudit.engines.monitor.stream import Counted, checks_in

    points = checks_in(offset, codes.length, batch, thin_after, end=length)
    at, total = count(codes.codes, keys, points)
    return Counted(codes.length, points, at, total)


def partition_totals(codes: PartitionCodes, keys) -> tuple:
    """``(totals, missing, unknown)``: the partition's ``Counts`` (``fairaudit.core.counting.count``), the rows each
    leaf leaves out for a missing value, and the rows the row filter is unknown on."""
    from fairaudit.core.counting import count

    return count(codes.codes, keys)[1], codes.missing or {}, codes.unknown


def partition_row_codes(codes: PartitionCodes) -> np.ndarray:
    """The partition's row codes (a shuffled stream is made of them on the client)."""
    return codes.codes


# ---------------------------------------------------------------------------------------------------- on the client
LOOKAHEAD = 2  # partitions whose counts are computed ahead of the monitor, per worker thread


def fetched_counts(client, codes, lengths, keys, batch: int, ahead: int, thin_after: int = 0) -> Iterator:
    """Each partition's ``Counted`` piece (``partition_counts``), in partition order, for the monitor's
    ``ChunkedObservations`` (which shifts and merges them by the one kernel): computed on the workers ``ahead``
    partitions before the monitor reaches them and fetched one partition at a time; a partition's codes are released
    once its counts are fetched."""
    length = int(sum(lengths))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    pending: dict = {}

    def submit(p: int):
        return client.submit(partition_counts, codes[p], list(keys), int(offsets[p]), length, batch, thin_after,
                             pure=False)

    try:
        for p in range(len(codes)):
            for q in range(p, min(len(codes), p + max(1, ahead))):
                if q not in pending:
                    pending[q] = submit(q)
            future = pending.pop(p)
            counted = future.result()
            future.release()
            codes[p].release()
            yield counted
    finally:
        for future in pending.values():
            future.release()


def _threads(client) -> int:
    """The cluster's worker threads (at least 1)."""
    try:
        return max(1, int(sum(client.nthreads().values())))
    except (OSError, TimeoutError, AttributeError, ValueError):  # a scheduler that does not say: assume one
        return 1


def _halves(client, codes, lengths, keys) -> dict:
    """Per leaf ``(n1, s1, n2, s2)`` of the stream's two halves (the halves test of ``OrderEvidence``): the
    kernel's totals of the partitions before the middle, of the middle partition cut at the stream's middle row,
    and of those after (``fairaudit.core.counting``; one small task per partition)."""
    from fairaudit.core.counting import Counts

    length = int(sum(lengths))
    half = length // 2
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    first, rest = Counts.zero(keys), Counts.zero(keys)
    for p, future in enumerate([client.submit(_split_totals, c, list(keys), int(half - offsets[p]), pure=False)
                                for p, c in enumerate(codes)]):
        a, b = future.result()
        future.release()
        first, rest = first + a, rest + b
    return {k: (first.of(k)[1], first.of(k)[0], rest.of(k)[1], rest.of(k)[0]) for k in keys}


def _split_totals(codes: PartitionCodes, keys, cut: int):
    """The ``Counts`` of a partition's first ``cut`` rows and of the rest (``cut`` clipped to the partition)."""
    from fairaudit.core.counting import count

    cut = min(max(int(cut), 0), codes.length)
    return count(codes.codes[:cut], keys)[1], count(codes.codes[cut:], keys)[1]


def _shuffled_in_memory(dtype, length: int) -> bool:
    """Whether the row codes (of type ``dtype``) of a stream of ``length`` rows are shuffled in memory
    (``shuffle_codes``: the in-process permutation) rather than by buckets in a temporary file."""
    from fairaudit.engines.monitor import stream

    return length * dtype.itemsize <= stream.MEMORY_SHUFFLE_BYTES


def _shuffled(client, codes, lengths, keys, dtype, seed: int, rows: bool = False):
    """``(folder, observations, codes, ids)`` of the stream shuffled with ``seed``: every partition's row codes (of type
    ``dtype``, ``fairaudit.core.codes.spec_code_dtype``)
    appended in partition order to a ``CodeStore`` — in memory up to ``MEMORY_SHUFFLE_BYTES`` (1 byte a row for up to
    four leaves), else in a file of the temporary ``folder`` — and shuffled by ``shuffle_codes``, the out-of-core
    route's shuffle: in memory it is the in-process permutation, so the stream is the in-process one row for row;
    beyond, a uniform bucket shuffle (another order, the out-of-core route's with the same memory limit). With
    ``rows`` (``Fair[...]``: its counterexamples are found again) the row ids are shuffled with the codes
    (``shuffle_rows``, the same order) and returned as ``ids``, else None."""
    import tempfile

    from fairaudit.engines.monitor import stream

    folder = None
    ids_spill = rows and int(sum(lengths)) * 4 > stream.MEMORY_SHUFFLE_BYTES  # ``shuffle_rows`` keeps its ids in files
    if not _shuffled_in_memory(dtype, int(sum(lengths))) or ids_spill:
        folder = tempfile.TemporaryDirectory(prefix="fairaudit-dask-")
    try:
        store = stream.CodeStore(dtype, path=None if folder is None else stream._fresh(folder.name, "codes-"))
        made = [client.submit(partition_row_codes, c, pure=False) for c in codes]
        for future in made:
            store.append(future.result())
            future.release()
        ids = None
        if rows:
            store, ids, _ = stream.shuffle_rows(store.close(), seed, memory_bytes=stream.MEMORY_SHUFFLE_BYTES,
                                                folder=None if folder is None else folder.name)
        else:
            store, _ = stream.shuffle_codes(store.close(), seed, memory_bytes=stream.MEMORY_SHUFFLE_BYTES,
                                            folder=None if folder is None else folder.name)
        return folder, ChunkedObservations(keys, store.chunks(1 << 16), store.rows), store, ids
    except BaseException:
        if folder is not None:
            folder.cleanup()
        raise


def few_values(part: Part, column: str, cap: int) -> tuple:
    """The sorted distinct values of one partition's column as the engines read it (``distinct_values`` of its
    ``to_frame`` column), at most ``cap + 1`` of them (``cap + 1`` already says the column has too many)."""
    from fairaudit.data.roles import distinct_values

    return distinct_values(part.frame([column])[column])[:cap + 1]


def _domains(client, parts, spec, fair_keys) -> tuple:
    """``((column, values), ...)`` for the Fair[...] leaves: the distinct values of each column over the whole log,
    sorted (``fairaudit.data.roles.distinct_values``) — a text, boolean or dictionary column's values as the dataset
    schema has them, a numeric column's as ``fairaudit.core.observations.fair_domains`` gives them in process.
    One pass on the cluster, each partition sending at most ``FAIR_MAX_VALUES + 1`` values; a column with more is
    refused (``FairauditError``), as in process."""
    import pandas as pd

    from fairaudit.data.roles import distinct_values
    from fairaudit.core.observations import FAIR_MAX_VALUES
    from fairaudit.core.evaluate import compile_spec

    leaves = {}
    for k in fair_keys:
        leaves.setdefault(compile_spec(spec).leaf_node[k].node.column, k)
    out = []
    for column, key in leaves.items():
        found = _in_order([client.submit(few_values, p, column, FAIR_MAX_VALUES, pure=False) for p in parts])
        values = distinct_values(pd.Series([v for part in found for v in part], dtype=object))
        if len(values) > FAIR_MAX_VALUES:
            raise FairauditError(f"{key}: column {column!r} has more than {FAIR_MAX_VALUES} values in the log; "
                                 f"Fair[...] flips a column between its values (at most {FAIR_MAX_VALUES})")
        out.append((column, values))
    return tuple(out)


def _in_order(futures) -> list:
    """The results of one task per partition, in partition order: the first partition (in log order) that failed
    raises its error — as the out-of-core route, reading the parts in order, meets it; the futures are released."""
    try:
        return [f.result() for f in futures]
    finally:
        for f in futures:
            f.release()


def codes_flips(codes: PartitionCodes) -> tuple:
    return codes.before, codes.flips or {}, codes.first or {}


def _fair_flips(client, spec, fair_keys, task, codes, lengths):
    """The Fair[...] leaves' first ``KEEP`` counterexamples in a given-order stream, as a ``FirstFlips`` (stream
    positions; rows numbered in the whole log, before ``where``): the partitions' own first ones, in partition
    order."""
    from fairaudit.core.observations import FirstFlips, Flips

    facts = client.gather([client.submit(codes_flips, c, pure=False) for c in codes])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    before = np.concatenate([[0], np.cumsum([f[0] for f in facts])]).astype(np.int64)
    domains, columns = dict(task.domains), _fair_columns(spec, fair_keys)
    firsts = FirstFlips()
    for i, (_, positions, first) in enumerate(facts):
        firsts.add({key: Flips(key, columns[key], tuple(domains[columns[key]]),
                               positions.get(key, np.zeros(0, np.int64)),
                               tuple(replace(c, row=int(before[i] + c.row)) for c in first.get(key, ())))
                    for key in fair_keys}, int(offsets[i]))
    return firsts


def _fair_columns(spec, fair_keys) -> dict:
    from fairaudit.core.evaluate import compile_spec

    cs = compile_spec(spec)
    return {key: cs.leaf_node[key].node.column for key in fair_keys}


def _fair_flips_shuffled(client, spec, fair_keys, task, parts, codes, lengths, shipped, store, ids):
    """The Fair[...] leaves' first ``KEEP`` counterexamples in a shuffled stream as a ``FirstFlips`` (``store``: the
    shuffled codes, ``ids``: each stream position's row in partition order,
    ``fairaudit.engines.monitor.stream.shuffle_rows``): their stream positions read off the codes, their rows found through
    ``ids`` and made by the partitions that hold them, read again (``partition_counterexamples``)."""
    from fairaudit.core.counterexamples import KEEP
    from fairaudit.core.observations import FirstFlips, Flips
    from fairaudit.core.evaluate import compile_spec

    facts = client.gather([client.submit(codes_flips, c, pure=False) for c in codes])
    before = np.concatenate([[0], np.cumsum([f[0] for f in facts])]).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    at = store.first_flipped(compile_spec(spec).leaf_keys, list(fair_keys), KEEP)
    domains, columns = dict(task.domains), _fair_columns(spec, fair_keys)
    firsts = FirstFlips()
    for key in fair_keys:
        chosen = ids.take(at[key]).astype(np.int64)
        part_of = np.searchsorted(offsets, chosen, side="right") - 1
        wanted = {int(p): chosen[part_of == p] - offsets[p] for p in np.unique(part_of)}
        made = _in_order([client.submit(partition_counterexamples, parts[p], task, shipped, key, local, pure=False)
                          for p, local in wanted.items()])
        by_row = {}
        for p, examples in zip(wanted, made):
            for local, c in zip(wanted[p], examples):
                by_row[int(offsets[p] + local)] = replace(c, row=int(before[p] + c.row))
        firsts.add({key: Flips(key, columns[key], tuple(domains[columns[key]]), at[key],
                               tuple(by_row[int(g)] for g in chosen))})
    return firsts


# ---------------------------------------------------------------------------------------------------- the audit
def _check_spec(spec, columns, pred, where, model, label) -> bool:
    """Refuse, before any work, what the Dask route cannot audit; returns whether the score is needed."""
    from fairaudit.core.preflight import Source, preflight
    from fairaudit.spec import event_columns, parse_event, spec_columns

    if pred is not None and model is not None:
        raise FairauditError("give either a model or a decision expression (pred), not both")
    preflight(None, spec, decision=Source(pred, "pred") if pred is not None else None,
              where=Source(where, "where") if where else None, uses_model=model is not None)
    named = spec_columns(spec, reserved=True)
    for text in (pred, where):
        if text:
            named += event_columns(parse_event(text), reserved=True)
    if "label" in named and label is None:
        raise FairauditError("the specification uses 'label': name the label column (label=..., --label COL)")
    wanted = [c for c in named if c not in ("pred", "score", "label")]
    if label is not None:
        wanted.append(label)
    missing = [c for c in dict.fromkeys(wanted) if c not in columns]
    if missing:
        raise FairauditError(f"the log has no column {missing[0]!r} (its columns: "
                             f"{', '.join(columns[:12])}{' ...' if len(columns) > 12 else ''})")
    if model is not None:
        absent = [c for c in getattr(model, "feature_names", ()) if c not in columns]
        if absent:
            raise FairauditError(f"the model reads column(s) {', '.join(absent[:5])} that the log does not have")
    return "score" in named


def part_values(part: Part, wanted, label=None, literals=frozenset()) -> tuple[dict, set, int, int]:
    """``(values, wide, rows, unlabelled)`` of one partition's ``wanted`` columns (``fairaudit.sources.values``:
    ``chunk_values`` over its conformed batches, merged): per column its distinct values as the engines see them (a
    wide one narrowed to ``literals`` and a few others), the wide columns, the part's rows and its rows without a
    label. With no column wanted the log's first column is read (every part's columns and rows are still checked, as
    out of core)."""
    from fairaudit.sources.values import distinct_pass

    read = list(wanted) or list(part.log.schema.names[:1])
    return distinct_pass(part.tables(read, encoded=True), part.log.schema, list(wanted), label, literals)


def _check_values(client, log: FileLog, parts, spec, task, model, sources=None):
    """The log's ``FileDataset`` and the spec, the decision and the row filter validated against it, as out of core
    (``fairaudit.engines.monitor.outofcore.file_dataset``, ``fairaudit.core.preflight``): the kinds of the columns from the schema fixed
    once (``log.schema.dataset_kinds``), and the values the text columns they read (and the label) take — one pass
    on the cluster over those columns (``part_values`` per partition, ``merge`` here, in partition order). A value
    the log never takes (``race == "Caucasain"``, which would match no row, or every row with ``!=``) is refused,
    positioned, before any work; so is a missing label."""
    from fairaudit.data.cleaning import known_dataset
    from fairaudit.core.preflight import Source, preflight
    from fairaudit.sources.values import merge
    from fairaudit.spec import event_columns, spec_columns
    from fairaudit.spec.events import literals as written

    kinds = log.schema.dataset_kinds
    named = spec_columns(spec)
    for text in (task.pred, task.where):
        if text:
            named += event_columns(_event(text))
    if task.label is not None:
        named.append(task.label)
    wanted = [c for c in dict.fromkeys(named) if kinds.get(c) == "categorical" or c == task.label]
    literals = written(spec, *(_event(t) for t in (task.pred, task.where) if t))
    known: dict = {c: set() for c in wanted}
    wide: set = set()
    rows = unlabelled = 0
    for values, many, n, missing in _in_order([client.submit(part_values, p, wanted, task.label, literals,
                                                             pure=False) for p in parts]):
        rows += n
        unlabelled += missing
        merge(known, wide, values, many, literals, task.label)
    if rows == 0:
        raise DataError(f"{log.name} has no data rows")
    if unlabelled:
        from fairaudit.data.roles import missing_labels

        raise missing_labels(task.label, unlabelled)
    dataset = known_dataset(log.stem, log.name, kinds, known, label=task.label, favourable=task.favourable,
                            wide=wide)
    decision, where = sources or (None, None)
    decision = decision or (Source(task.pred, "pred") if task.pred is not None else None)
    where = where or (Source(task.where, "where") if task.where else None)
    preflight(dataset, spec, decision=decision, where=where, uses_model=model is not None)
    return dataset


def audit_parquet(source, spec, *, pred: str | None = None, model=None, where: str | None = None,
                  label: str | None = None, favourable=None, client=None, scheduler: str | None = None,
                  workers: int = 2, threads: int = 1, timeout: float = 10.0, iterate: bool = False,
                  on_progress=None, trace_points: int | None | str = "auto", full_trace=None, column_types=None,
                  na_values=(), sources=None, ranges=None, **options):
    """Audit the log ``source`` against ``spec`` with the monitor, on a Dask cluster (module doc): a CSV or Parquet
    file, a folder of parts, a glob, a list of them, an fsspec URL of Parquet files, or a ``FileLog`` (its schema
    already fixed); one part is one partition. (The name is historical: CSV parts are read too.)

    ``pred`` (a condition over the rows, true = favourable) or ``model`` (a ``Model`` already loaded in this
    process) makes the decisions; ``where`` keeps the matching rows; ``label``/``favourable`` name the label column
    and its favourable value when the spec reads ``label``. ``column_types`` (``{column: kind}`` or
    ``["column=kind", ...]``) declares column types and ``na_values`` the text read as missing besides an empty
    cell, as on every route (``fairaudit.sources.schema``); ``sources``: the ``(decision, where)``
    ``fairaudit.core.preflight.Source``s errors are positioned in (the command line's ``--pred``, ``--where``). ``client``: a ``distributed.Client`` to use (kept open);
    without one a cluster is started for the run (``dask_client(scheduler, workers=, threads=, timeout=)``) and
    shut down after it. ``options``: the monitor's options (``delta``, ``batch``, ``order``, ``seed``, ``stop``, ...).
    ``on_progress(Progress)`` is told the cluster's progress (message "Dask: i of P partitions") and then the
    monitor's. Returns the ``AuditResult`` (``iterate=True``: the generator of partial results, the cluster work
    done when it is first advanced)."""
    from fairaudit.core.preflight import check_options
    from fairaudit.spec.files import parsed_with_ranges

    engine, resolved = check_options(ENGINE, **options)
    spec = parsed_with_ranges(spec, ranges)  # ``ranges``: of the columns the spec averages (``fairaudit.audit``'s)
    from fairaudit.core.preflight import check_decisions

    check_decisions(spec, model)  # what ``pred`` is compared with, against a loaded model's decisions
    log = dask_log(source, column_types, na_values)  # the schema, fixed once, here
    uses_score = _check_spec(spec, list(log.schema.names), pred, where, model, label)
    task = Task(spec.text, pred, where, label, favourable, uses_score, ranges=tuple(spec.ranges))
    results = _results(engine, spec, log, task, model, resolved, client=client, scheduler=scheduler,
                       workers=workers, threads=threads, timeout=timeout, on_progress=on_progress,
                       trace_points=trace_points, full_trace=full_trace, sources=sources)
    if iterate:
        return results
    from fairaudit.core.driver import last

    return last(results)


def _results(engine, spec, log, task, model, options, *, client, scheduler, workers, threads, timeout,
             on_progress, trace_points, full_trace, sources=None):
    if client is not None:
        yield from _on_cluster(engine, spec, log, task, model, options, client, on_progress, trace_points,
                               full_trace, sources)
        return
    with dask_client(scheduler, workers=workers, threads=threads, timeout=timeout) as own:
        yield from _on_cluster(engine, spec, log, task, model, options, own, on_progress, trace_points, full_trace,
                               sources)


def _needed_columns(columns, task: Task, model) -> list[str]:
    """The columns the workers read, as out of core (``fairaudit.engines.monitor.outofcore.encode_file``): those of the spec's
    leaves, the decision, the row filter, the label, and a model's features (every column for a model that does not
    name its features)."""
    from fairaudit.engines.monitor.outofcore import used_columns

    features = list(getattr(model, "feature_names", None) or ()) if model is not None else []
    if model is not None and not features:
        return list(columns)
    wanted = set(used_columns(_parsed(task.spec, task.ranges), task.pred, task.where, columns)
                 + ([task.label] if task.label else []) + features)
    return [c for c in columns if c in wanted] or list(columns[:1])


def _log_name(log: FileLog) -> str:
    """The log as results name it: its file, or its folder (glob) and how many parts it has."""
    from fairaudit.base.numbers import count

    if len(log.parts) == 1:
        return log.parts[0]
    where = (os.path.dirname(log.parts[0]) or ".") if isinstance(log.source, (list, tuple)) else str(log.source)
    return f"{where} ({count(len(log.parts), ('Parquet' if log.format == 'parquet' else 'CSV') + ' files')})"


def _earliest(futures, i: int, err, done) -> BaseException:
    """The error to report when partition ``i`` failed with ``err``: that of the first partition in log order that
    fails (``done``: those known to have succeeded) — the one the out-of-core route meets, reading the parts in
    order."""
    for j in range(i):
        if j in done:
            continue
        try:
            futures[j].result()
        except FairauditError as earlier:
            return earlier
    return err


def _on_cluster(engine, spec, log, task, model, options, client, on_progress, trace_points, full_trace,
                sources=None):
    """Evaluate the partitions on ``client``'s cluster, combine them, and drive the monitor (module doc)."""
    from distributed import as_completed

    from fairaudit.core.engine import Context
    from fairaudit.engines.monitor.engine import monitor_batches, order_assumption
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.core.guarantee import Guarantee
    from fairaudit.base.numbers import count
    from fairaudit.base.progress import Progress
    from fairaudit.core.driver import _writing, drive

    progress = Progress(f"Auditing with {engine.title} on Dask", None, engine.unit, on_progress)
    ctx = Context(seed=int(options.get("seed") or 0), time_budget=options.get("time_budget"), progress=progress)
    keys = compile_spec(spec).leaf_keys
    parts = log_partitions(log, _needed_columns(list(log.schema.names), task, model), task.label)
    dataset = _check_values(client, log, parts, spec, task, model, sources)
    task = replace(task, favourable=dataset.schema.favourable)  # in the label's type, as out of core
    if task.pred is not None:  # a column of logged classes: its values, read on the client (one ``decider`` rule)
        from fairaudit.models.expression import decider

        task = replace(task, classes=decider(task.pred, dataset.schema).classes)
    total = len(parts)
    fair_keys = [k for k in keys if compile_spec(spec).leaf_node[k].kind == "fair"]
    if fair_keys:  # the values each Fair[...] column is flipped to: those of the whole log, sorted (as in process)
        task = replace(task, domains=_domains(client, parts, spec, fair_keys))
    shipped = client.scatter(model, broadcast=True) if model is not None else None
    codes = [client.submit(partition_codes, part, task, shipped, pure=False) for part in parts]
    summaries = [client.submit(partition_totals, c, list(keys), pure=False) for c in codes]
    index = {f.key: i for i, f in enumerate(summaries)}
    lengths = [0] * total
    missing, unknown = [{}] * total, [(0, ())] * total
    done: set = set()
    folder = None  # a temporary folder for the codes of a shuffled stream too big to shuffle in memory
    feed = None  # the partitions' counts, fetched as the monitor advances (given order)
    progress(0, total, message=f"Dask: 0 of {count(total, 'partitions')}")
    try:
        for future in as_completed(summaries):
            i = index[future.key]
            try:
                counted, missing[i], unknown[i] = future.result()
                lengths[i] = counted.rows
            except FairauditError as err:  # a value that does not fit, a part's columns: the first part's, in order
                raise _earliest(summaries, i, err, done) from None
            future.release()
            done.add(i)
            progress(len(done), total, message=f"Dask: {len(done):,} of {count(total, 'partitions')}")
            if progress.cancelled:
                raise FairauditError("stopped while the Dask cluster was reading the partitions")
            if ctx.expired():  # no check has run yet: there is no partial result to give
                raise FairauditError(f"the time budget ran out while the Dask cluster was reading the partitions "
                                     f"({len(done):,} of {total:,} read)")
        length = int(sum(lengths))
        if length == 0:
            from fairaudit.core.observations import nothing_to_audit

            raise nothing_to_audit(task.where)
        batch, order, seed = int(options["batch"]), options["order"], int(options["seed"])
        if order == "given":  # counts at the checks, fetched as the monitor advances
            found = _fair_flips(client, spec, fair_keys, task, codes, lengths) if fair_keys else None
            thin_after = int(options["thin_after"])
            halves = _halves(client, codes, lengths, keys)
            feed = fetched_counts(client, codes, lengths, keys, batch, LOOKAHEAD * _threads(client), thin_after)
            obs = ChunkedObservations(keys, feed, length, halves=halves)
        else:  # every row's code on the client (1 byte a row up to four leaves), shuffled as out of core
            folder, obs, store, ids = _shuffled(client, codes, lengths, keys, spec_code_dtype(spec), seed,
                                                   rows=bool(fair_keys))
            found = (_fair_flips_shuffled(client, spec, fair_keys, task, parts, codes, lengths, shipped, store, ids)
                     if fair_keys else None)
        obs.flips = found  # the Fair[...] leaves' first counterexamples (their count: from the leaves' counts)
        from fairaudit.core.observations import add_missing, where_missing_warning

        obs.missing = {}
        for part_missing in missing:  # in partition order, as the other routes sum their chunks
            add_missing(obs.missing, part_missing)
        left_out = sum(u[0] for u in unknown)
        notes = list(getattr(log, "warnings", ())) + (
            [where_missing_warning(task.where, left_out, tuple(dict.fromkeys(c for u in unknown for c in u[1])))]
            if left_out else [])
        assumes = order_assumption(order, seed)
        batches = monitor_batches(spec, obs, delta=options["delta"], batch=batch,
                                  thin_after=int(options["thin_after"]), split=options["split"],
                                  bound=options["bound"], order=order, ctx=ctx, assumes=assumes,
                                  stop=bool(options.get("stop")))
        kind = "Parquet" if log.format == "parquet" else "CSV"
        name = _log_name(log)
        rows = {"policy": "all", "audited": length, "total": length,
                "text": f"{'all ' if not task.where else ''}{length:,} rows of the {kind} log {name}"
                        + (f" matching {task.where}" if task.where else "")
                        + f", read in {count(total, 'partitions')} by a Dask cluster"}
        described = {"data": name, "model": model.describe() if model is not None else None, "pred": task.pred,
                     "where": task.where, "rows": "all", "dask_partitions": total}
        provenance = {"dataset": {"name": name, "rows": length, "source": ", ".join(log.parts[:3]) +
                                  (" ..." if len(log.parts) > 3 else ""), "parts": len(log.parts),
                                  "format": log.format, "columns": log.schema.describe()},
                      "model": None if model is None else {"kind": model.kind, "description": model.describe(),
                                                           "content_hash": getattr(model, "content_hash", None)}}
        writer = None
        if full_trace is not None:
            from fairaudit.core.fulltrace import FullTraceWriter

            writer = FullTraceWriter(full_trace, spec.text)
        results = drive(engine, spec, batches, options={**described, **engine.used_options(options, None)},
                        guarantee=Guarantee("probabilistic", options["delta"], assumes=assumes), ctx=ctx,
                        stop=bool(options.get("stop")), on_progress=on_progress, progress=progress, rows=rows,
                        provenance=provenance, trace_points=trace_points, full_trace=writer, warnings=notes)
        yield from (results if writer is None else _writing(results, writer))
    finally:
        if feed is not None:
            feed.close()  # the counts computed ahead are released while the client is open
        for f in codes + summaries:
            f.release()
        if folder is not None:
            folder.cleanup()
