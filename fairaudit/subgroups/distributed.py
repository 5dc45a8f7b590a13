"""The scan of a log in parts on a Dask cluster: one part a partition, counted where it is read.

Each worker reads its part by the log's own reader (``fairaudit.sources.parts.Part``: the schema the client fixed
once), and does the scan's steps 1 and 2 on it exactly as the batches of ``fairaudit.subgroups.reading`` do: codes
(``cells.encode_arrow``, the decision and the row filter by ``reading.Decider``), then counts
(``fairaudit.core.counting.count_cells``). Its categories are its own (first seen in the part); the client maps
them onto the scan's (``value_codes``, in part order: the order in which the other routes first see them) and
merges the parts' counts (step 3) — so the cells, counts, intervals and looks equal the scan of the same rows in
memory or in batches.

The looks need each audited row's position among all the audited rows: with a history (``looks``), a partition
keeps its rows' codes on its worker (``Coded``: a few bytes a row, spread over the cluster) and returns how many
rows it audited; the client adds those up and asks each partition for its counts at its offset. Without a history
the counts come back in one round.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.subgroups import cells as cells_mod


@dataclass(frozen=True)
class Job:
    """What every partition is scanned with (small; a model travels as a Dask future)."""

    names: tuple
    bins: tuple  # ((column, edges), ...)
    pred: str | None
    where: str | None
    label: str | None
    favourable: object
    keep_rows: bool  # keep the rows' codes on the worker for the looks


@dataclass
class Coded:
    """One partition, coded on its worker: its counts (every look together), its categories, what its reader
    saw, and — for the looks — its audited rows' codes and outcomes (they stay on the worker)."""

    counts: object  # a CellCounts in the partition's own category codes
    categories: list
    read: int
    audited: int
    unknown: int
    unknown_columns: tuple
    agree: int
    codes: np.ndarray | None = None
    outcome: np.ndarray | None = None

    def summary(self) -> "Coded":
        return Coded(self.counts, self.categories, self.read, self.audited, self.unknown, self.unknown_columns,
                     self.agree)


def attributes_of(job: Job) -> list:
    import pandas as pd

    return [cells_mod.Attribute(name) for name in job.names] + [
        cells_mod.binned(name, pd.Series([], dtype=float), list(edges)) for name, edges in job.bins]


def code_part(part, job: Job, model=None) -> Coded:
    """Steps 1 and 2 on one partition (on a worker)."""
    from fairaudit.core.counting import count_cells
    from fairaudit.subgroups.reading import Decider

    attributes = attributes_of(job)
    decide = Decider(part.log, pred=job.pred, model=model, where=job.where, label=job.label,
                     favourable=job.favourable)
    columns = list(dict.fromkeys([a.name for a in attributes] + decide.columns))
    pieces, outcomes = [], []
    total = None
    for table in part.tables(columns, encoded=True):
        decisions, labels, keep = decide(table)
        codes = cells_mod.encode_arrow(table, attributes)
        outcome = 2 * decisions.astype(np.int64) + (0 if labels is None else labels.astype(np.int64))
        if keep is not None:
            codes, outcome = [c[keep] for c in codes], outcome[keep]
        piece = count_cells(codes, outcome)
        total = piece if total is None else total + piece
        if job.keep_rows:
            pieces.append(np.stack(codes, axis=1).astype(np.int32) if codes else
                          np.zeros((len(outcome), 0), np.int32))
            outcomes.append(outcome.astype(np.int8))
    from fairaudit.core.counting import CellCounts

    total = CellCounts.zero(len(attributes)) if total is None else total
    audited = total.rows
    kept = (np.concatenate(pieces) if pieces else np.zeros((0, len(attributes)), np.int32)) if job.keep_rows else None
    return Coded(total, [list(a.categories) for a in attributes], decide.read, audited, decide.unknown,
                 tuple(decide.unknown_columns), decide.agree, kept,
                 (np.concatenate(outcomes) if outcomes else np.zeros(0, np.int8)) if job.keep_rows else None)


def summary(coded: Coded) -> Coded:
    return coded.summary()


def count_looks(coded: Coded, offset: int, order: str, seed: int):
    """The partition's counts per look slot, its rows at audited positions ``offset …`` (on its worker)."""
    from fairaudit.core.counting import count_cells
    from fairaudit.subgroups import looks as looks_mod

    n = len(coded.outcome)
    return count_cells(coded.codes, coded.outcome, looks_mod.look_of(offset, n, order, seed), looks_mod.LOOKS)


def on_scan_codes(counts, mappings):
    """A partition's ``CellCounts`` in the scan's category codes (``mappings``: per attribute, each of the
    partition's codes → the scan's)."""
    from fairaudit.core.counting import CellCounts, group_sum

    if not len(counts.keys):
        return counts
    keys = np.stack([np.take(np.append(m, cells_mod.MISSING), counts.keys[:, j]) for j, m in enumerate(mappings)],
                    axis=1) if mappings else counts.keys
    return CellCounts(*group_sum(keys, counts.counts))


def scan_on_dask(source, protected, *, client=None, scheduler: str | None = None, workers: int = 2,
                 threads: int = 1, timeout: float = 10.0, depth: int = 2, bins: dict | None = None,
                 pred: str | None = None, model=None, label: str | None = None, favourable=None,
                 where: str | None = None, delta: float = 0.05, mode: str = "anytime", threshold: float = 0.8,
                 min_share: float = 0.02, bound: str = "mixture", order: str = "shuffle", seed: int = 0,
                 rate: str = "selection", allocation: str = "decisive", looks: int = 1, declared=None,
                 na_values=()):
    """The scan (``fairaudit.subgroups.reading.scan_log``'s options) of ``source`` on a Dask cluster: ``client`` (kept
    open), else one attached to ``scheduler`` or a local one of ``workers`` × ``threads`` started for the run."""
    from fairaudit.engines.monitor.distributed import dask_client, dask_log

    from fairaudit.subgroups.reading import prepare

    plan = prepare(source, protected, depth=depth, bins=bins, pred=pred, model=model, label=label,
                   favourable=favourable, where=where, delta=delta, mode=mode, threshold=threshold,
                   min_share=min_share, bound=bound, order=order, seed=seed, rate=rate, allocation=allocation,
                   looks=looks, declared=declared, na_values=na_values, open_log=dask_log)
    if client is not None:
        return _on_cluster(plan, client)
    with dask_client(scheduler, workers=workers, threads=threads, timeout=timeout) as own:
        return _on_cluster(plan, own)


def _on_cluster(plan, client):
    from fairaudit.engines.monitor.distributed import _earliest
    from fairaudit.sources.parts import log_partitions

    job = Job(tuple(plan.names), tuple((k, tuple(v)) for k, v in plan.bins.items()), plan.pred, plan.where,
              plan.label, plan.favourable, plan.history_wanted)
    parts = log_partitions(plan.log, plan.read_columns, plan.label)
    model = client.scatter(plan.model, broadcast=True) if plan.model is not None else None
    coded = [client.submit(code_part, part, job, model, pure=False) for part in parts]
    summaries = [client.submit(summary, c, pure=False) for c in coded]
    done: set = set()
    got = []
    for i, future in enumerate(summaries):
        try:
            got.append(future.result())
        except FairauditError as err:
            raise _earliest(summaries, i, err, done) from None
        done.add(i)
    attributes = plan.scanner.attributes
    mappings = []
    for s in got:  # the parts' categories onto the scan's, in part order (the order every route first sees them)
        mappings.append([np.arange(len(cats), dtype=np.int64) if a.binned else a.value_codes(cats)
                         for a, cats in zip(attributes, s.categories)])
    if plan.history_wanted:
        offsets = np.concatenate([[0], np.cumsum([s.audited for s in got])[:-1]]).astype(np.int64)
        looked = [client.submit(count_looks, c, int(o), plan.order, plan.seed, pure=False)
                  for c, o in zip(coded, offsets)]
        pieces = [f.result() for f in looked]
    else:
        pieces = [s.counts for s in got]
    for piece, m in zip(pieces, mappings):
        plan.scanner.add_counts(on_scan_codes(piece, m))
    for s in got:
        plan.tally(read=s.read, unknown=s.unknown, unknown_columns=s.unknown_columns, agree=s.agree)
    return plan.finish()
