"""Batches of rows as observation codes: the first step of the one counting kernel (``fairaudit.core.counting``).

The monitor needs of a row only two bits per distinct leaf (``encode``): whether it counts for the leaf and whether
it is a success there. ``ChunkEncoder`` turns each conformed batch of a source (an Arrow table: a chunk of a file, a
Dask partition's batch, a live log's poll) into its audited rows' codes — the decision and the row filter evaluated,
every leaf observed (``fairaudit.core.observations.observe``), the rows the filter keeps encoded — and sums what a run
reports of them (rows read, rows left out for a missing value, the first ``Fair[...]`` counterexamples). Every route
calls it; ``fairaudit.core.counting.count`` turns its codes into counts.
"""
from __future__ import annotations

import numpy as np

from fairaudit.base.errors import FairauditError
from fairaudit.core.counting import encode


def decode(codes: np.ndarray, keys):
    """The ``Observations`` of a run of codes (values already restricted to their masks)."""
    from fairaudit.core.observations import Observations

    from fairaudit.core.counting import QUANTUM, amounts, bits_of

    codes = np.asarray(codes)
    bits = bits_of(codes)
    one = bits.dtype.type(1)
    values, masks, ranges = {}, {}, {}
    for i, k in enumerate(keys):
        amount = amounts(codes, i)
        values[k] = ((bits >> bits.dtype.type(2 * i)) & one).astype(bool) if amount is None else amount * QUANTUM
        masks[k] = ((bits >> bits.dtype.type(2 * i + 1)) & one).astype(bool)
        if amount is not None:  # a quantity leaf's values, on [0, 1] as the codes hold them
            ranges[k] = (0.0, 1.0)
    return Observations(values, masks, len(codes), ranges=ranges)


def spec_code_dtype(spec) -> np.dtype:
    """``fairaudit.core.counting.code_dtype`` of a specification's distinct leaves (its quantity leaves' fields
    included)."""
    from fairaudit.core.counting import code_dtype
    from fairaudit.core.evaluate import compile_spec

    cs = compile_spec(spec)
    return code_dtype(cs.leaf_keys, cs.leaf_range)


def fair_keys(spec) -> dict:
    """``{leaf key: column}`` of the specification's ``Fair[column]`` leaves."""
    from fairaudit.core.evaluate import compile_spec

    cs = compile_spec(spec)
    return {k: cs.leaf_node[k].node.column for k in cs.leaf_keys if cs.leaf_node[k].node.kind == "fair"}


def distinct_rows(batch, names, limit: int):
    """``(first, inverse)``: each distinct combination of the columns ``names`` in ``batch`` (as stored), by the
    position of one of its rows (they all hold the same values there), and each row's combination — or None when
    there are more than ``limit``. Every
    event, decision and leaf is a function of a row's columns, so evaluating them on the distinct combinations and
    spreading the answers by ``inverse`` gives every row's answer exactly."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pac

    n = batch.num_rows
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for name in names:
        arr = batch.column(name)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        enc = arr if pa.types.is_dictionary(arr.type) else pac.dictionary_encode(arr, null_encoding="encode")
        codes = enc.indices.to_numpy(zero_copy_only=False)
        if enc.indices.null_count:  # a dictionary array's nulls: one more code
            codes = np.where(np.asarray(enc.indices.is_null()), len(enc.dictionary), codes)
        card = len(enc.dictionary) + 1
        if span * card > (1 << 62):
            return None
        key += codes.astype(np.int64) * span
        span *= card
    inverse, uniques = pd.factorize(key)
    if len(uniques) > limit:
        return None
    first = np.zeros(len(uniques), dtype=np.int64)
    first[inverse] = np.arange(n)  # some row of each combination (any one: they agree on these columns)
    return first, inverse


class ChunkEncoder:
    """Each conformed chunk of a log as its audited rows' codes (``codes``), in stream order, with what the run
    reports of them summed over the chunks: ``total`` rows read, ``agree`` rows whose decision equals the label,
    ``unknown`` rows the row filter is neither true nor false on (and the columns missing there), ``missing`` per
    leaf. One chunk's code is the same whoever reads it: out of core (``encode_file``) and a Dask worker
    (``fairaudit.engines.monitor.distributed.partition_codes``). Without ``Fair[...]`` leaves the decision, the
    filter and the leaves are evaluated on the chunk's distinct combinations of the columns read (``distinct_rows``)
    and spread to the rows: exact, since each is a function of a row's columns; a chunk read with its text
    dictionary-encoded (``conform(..., encoded=True)``) gives those combinations without comparing text."""

    def __init__(self, spec, keys, columns, schema, decider, *, model=None, where_event=None, label=None,
                 favourable=None, domains=None, first_flips=None, origin: str = ""):
        self.spec, self.keys, self.columns, self.schema = spec, list(keys), list(columns), schema
        self.origin = origin  # where its rows are numbered from, in a sentence: " of part-3.parquet" (a Dask part)
        from fairaudit.core.evaluate import compile_spec

        self.averages = bool(compile_spec(spec).leaf_range)  # an amount's out-of-range error names its row
        self.decider, self.model, self.where_event = decider, model, where_event
        self.label, self.favourable, self.domains, self.first_flips = label, favourable, domains, first_flips
        self.fair = bool(fair_keys(spec))
        self.total = self.agree = self.unknown = self.audited = 0
        self.unknown_columns: dict = {}
        self.missing: dict = {}  # leaf key -> Missing: the audited rows each leaf leaves out for a missing value

    def codes(self, table) -> np.ndarray:
        """The codes of one chunk's audited rows (``table``: conformed, the columns ``columns``)."""
        from fairaudit.core.observations import add_missing, event_array3, observe
        from fairaudit.sources import to_frame
        from fairaudit.sources.conform import decoded
        from fairaudit.spec.events import missing_names

        n = table.num_rows
        if getattr(self.decider, "check_missing", None) is not None:  # a column of classes: every row has one
            column = self.decider.column
            self.decider.check_missing(to_frame(decoded(table.select([column])), self.schema, None)[column],
                                       self.total, self.origin)
        found = None if self.fair else distinct_rows(table, self.columns, limit=max(1, n // 4))
        if found is not None:  # evaluate on the distinct combinations, spread to the rows (exact)
            first, inverse = found
            frame = to_frame(decoded(table.take(first)), self.schema, self.label)
        else:
            frame, inverse = to_frame(decoded(table), self.schema, self.label), None
        decided, scores, labels = chunk_inputs(frame, self.decider, self.model, self.label, self.favourable)
        weight = None if inverse is None else np.bincount(inverse, minlength=len(frame))
        keep = None
        if self.where_event is not None:  # a row the filter is unknown on (a missing value) is left out, and counted
            keep, known = event_array3(self.where_event, frame, decided, labels, scores)
            if not known.all():
                self.unknown += int((~known).sum() if weight is None else weight[~known].sum())
                self.unknown_columns.update(dict.fromkeys(missing_names((self.where_event,), frame, ~known,
                                                                        pred=decided, label=labels, score=scores)))
        if labels is not None and decided is not None and decided.dtype != object:  # (classes: no yes/no agreement)
            same = decided == labels
            self.agree += int(same.sum() if weight is None else weight[same].sum())
        if self.fair:  # the audited rows only, as in memory: the flips' positions are theirs
            codes = _encode_fair(self.spec, self.keys, frame, keep, decided, labels, scores, self.model,
                                 self.domains, self.total, self.audited, self.first_flips, self.missing)
        else:
            weights = weight if keep is None else (keep.astype(np.int64) if weight is None else weight * keep)
            rows = None  # the rows' numbers, for an amount's out-of-range error only (not built per chunk else)
            if self.averages:
                rows = self.total + (np.arange(n) if found is None else first)
            obs = observe(self.spec, frame, pred=decided, label=labels, score=scores, weights=weights, rows=rows,
                          where=self.origin)
            add_missing(self.missing, obs.missing)
            codes = encode(obs, self.keys)
            if inverse is not None:
                codes = codes[inverse]
                keep = None if keep is None else keep[inverse]
            if keep is not None:
                codes = codes[keep]
        self.total += n
        self.audited += len(codes)
        return codes


def chunk_inputs(frame, decider, model, label, favourable):
    """``(decisions, scores, labels)`` of one chunk's rows, as ``fairaudit.core.inputs.Inputs.build`` has them in memory:
    the decider's 0/1 decisions (its classes, for a decision among several), the model's scores (every row scored), the label as 0/1 (None where absent)."""
    decided = None if decider is None else decider.decisions_for(frame)
    scores = None
    if model is not None and getattr(model, "classes", None) is None and hasattr(model, "score"):
        scores = np.asarray(model.score(frame), dtype=float)
        if not np.isfinite(scores).all():
            raise FairauditError(f"the model's score is not a number for {int((~np.isfinite(scores)).sum()):,} "
                                 "row(s) of a chunk; check those rows for missing or extreme values")
    labels = None if label is None else (frame[label] == favourable).to_numpy(dtype=np.int8)
    return decided, scores, labels


def _encode_fair(spec, keys, frame, keep, decided, labels, scores, model, domains, start: int, audited: int,
                 firsts, missing: dict | None = None) -> np.ndarray:
    """The codes of one chunk's audited rows (``keep``; file rows ``start``, ``start + 1``, …) for a spec with
    ``Fair[...]`` leaves, their flipped rows given to ``firsts`` (a ``FirstFlips``, or None; ``audited``: the
    audited rows before the chunk)."""
    from fairaudit.core.observations import observe

    rows = np.arange(start, start + len(frame), dtype=np.int64)
    if keep is not None:
        pick = lambda a: None if a is None else np.asarray(a)[keep]  # noqa: E731
        frame, rows = frame[keep].reset_index(drop=True), rows[keep]
        decided, labels, scores = pick(decided), pick(labels), pick(scores)
    obs = observe(spec, frame, pred=decided, label=labels, score=scores, model=model, column_values=domains,
                  rows=rows)
    if missing is not None:
        from fairaudit.core.observations import add_missing

        add_missing(missing, obs.missing)
    if firsts is not None:
        firsts.add(obs.flips, audited)
    return encode(obs, keys)
