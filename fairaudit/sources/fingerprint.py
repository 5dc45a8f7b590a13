"""The data's fingerprint: what it is, computed in one place, once.

A fingerprint is a SHA-256 (hex) and a sentence that says what it is of (``hash_of`` in a record); every caller
uses the constants below, so the same data is named by the same words on every route.

* A file, folder or glob of parts (``of_parts``, ``of_log``): the bytes as stored, read in blocks — a single file's
  bytes (``FILE_BYTES``), or for several parts each part's name (its last path component, UTF-8, then a NUL) and
  bytes, in order (``PARTS_BYTES``). Whatever columns a run reads, the digest is the same, and the same as a file
  read whole, out of core or by an upload of the same bytes. The result is kept in-process (``MAX_ENTRIES``, least
  recently used first out) under each part's identity — name, resolved path, device, inode, size, modification and
  change times in ns — so a file is read once per process whatever commands run on it (the dashboard runs audit,
  scan and compare in one process) and a file that changed (new size or times) is read again. A part that changes
  while it is read gives a digest that is not kept.
* An upload's bytes (``of_bytes``): their SHA-256 (``FILE_BYTES``, the same as the file they came from; a
  ``.csv.gz``'s compressed bytes, as stored); a caller that already has it passes it along. A CSV read whole into
  memory from a path (``read_file``) is hashed from the bytes read, under the same cache entry as ``of_parts``.
* A frame in memory with no file behind it (``of_frame``): SHA-256 over a canonical form of its columns
  (``ROWS``) — never a text serialisation and never a 64-bit hash per row (which can be made to collide). The
  canonical form, version 1::

      "fairaudit rows v1\\0" · rows (u64) · columns (u64) · for each column in order:
          name (type name, repr; length-prefixed) · dtype (str; length-prefixed) · SHA-256 of the column

  and a column's SHA-256 is over its kind tag and the SHA-256s of its parts: the missing values (a bit per row,
  ``numpy.packbits``), then

  - numbers, booleans, dates and durations: the values' little-endian bytes (a missing value's slot zeroed);
  - text: where each value ends in the UTF-8 bytes of the column (u64; a missing value is empty) and those bytes,
    taken from Arrow's offsets and data buffers, normalised to start at 0 (pandas' ``str`` columns hold them
    already; an ``object`` column of strings is converted once);
  - categories: the categories (as a column of their own), whether they are ordered, and each row's code;
  - anything else (a column of mixed Python objects, periods, intervals): each value's type and ``repr``,
    length-prefixed.

  The index is not part of it (as a file's rows have none). The caller keeps the result (``Dataset.content_hash``).
"""
from __future__ import annotations

import hashlib
import os
import struct
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple, Sequence

FILE_BYTES = "the file's bytes"
PARTS_BYTES = "each part's name and bytes, in order"
ROWS = "the rows (each column's name, type, missing values and values; canonical form 1)"

MAX_ENTRIES = 64  # file fingerprints kept in-process
BLOCK = 1 << 22  # bytes read at a time
_ROWS_TAG = b"fairaudit rows v1\0"


class Fingerprint(NamedTuple):
    """A data fingerprint: the SHA-256 (hex) and what it is of (one of ``FILE_BYTES``, ``PARTS_BYTES``, ``ROWS``).
    Unpacks as ``(digest, of)``."""

    digest: str
    of: str


class CacheInfo(NamedTuple):
    hits: int
    misses: int  # fingerprints computed (files read)
    size: int
    maxsize: int


# ---- files ---------------------------------------------------------------------------------------------------------

_lock = threading.Lock()
_cache: "OrderedDict[tuple, Fingerprint]" = OrderedDict()
_inflight: dict[tuple, threading.Lock] = {}
_hits = 0
_misses = 0


def _identity(part) -> tuple:
    """What names one part's stored bytes: its name (hashed for a folder), resolved path, device, inode, size and
    modification and change times (ns)."""
    st = os.stat(part)
    return (Path(part).name, os.path.realpath(part), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
            st.st_ctime_ns)


def _same(st: os.stat_result, ident: tuple) -> bool:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == ident[2:]


def _hash_parts(parts: Sequence, idents: Sequence[tuple]) -> tuple[str, bool]:
    """``(hex digest, whether every part was unchanged while read)``."""
    digest = hashlib.sha256()
    buffer = bytearray(BLOCK)
    view = memoryview(buffer)
    steady = True
    for part, ident in zip(parts, idents):
        if len(parts) > 1:
            digest.update(Path(part).name.encode("utf-8") + b"\0")
        with open(part, "rb", buffering=0) as f:
            steady = steady and _same(os.fstat(f.fileno()), ident)
            while True:
                n = f.readinto(buffer)
                if not n:
                    break
                digest.update(view[:n])
            steady = steady and _same(os.fstat(f.fileno()), ident)
    return digest.hexdigest(), steady


def of_parts(parts: Sequence) -> Fingerprint:
    """The fingerprint of a file (one part: ``FILE_BYTES``) or of several parts in order (``PARTS_BYTES``), read
    once per process while the parts are unchanged (module doc)."""
    global _hits, _misses
    parts = [str(p) for p in parts]
    if not parts:
        raise ValueError("no parts to fingerprint")
    of = FILE_BYTES if len(parts) == 1 else PARTS_BYTES
    idents = tuple(_identity(p) for p in parts)
    key = (of, idents)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            _hits += 1
            return found
        gate = _inflight.setdefault(key, threading.Lock())
    with gate:  # one reader per key: a second caller waits for the first's result
        with _lock:
            found = _cache.get(key)
            if found is not None:
                _cache.move_to_end(key)
                _hits += 1
                return found
        try:
            digest, steady = _hash_parts(parts, idents)
            result = Fingerprint(digest, of)
            with _lock:
                _misses += 1
                if steady:
                    _cache[key] = result
                    while len(_cache) > MAX_ENTRIES:
                        _cache.popitem(last=False)
        finally:
            with _lock:
                _inflight.pop(key, None)
    return result


def read_file(path) -> tuple[bytes, Fingerprint]:
    """A file's bytes as stored and their fingerprint (``FILE_BYTES``): the bytes read once, hashed only where this
    process has not hashed the file unchanged before (kept as ``of_parts`` keeps it: the same entry)."""
    global _hits, _misses
    ident = _identity(path)
    key = (FILE_BYTES, (ident,))
    with open(path, "rb") as f:
        steady = _same(os.fstat(f.fileno()), ident)
        data = f.read()
        steady = steady and _same(os.fstat(f.fileno()), ident)
    with _lock:
        found = _cache.get(key) if steady else None
        if found is not None:
            _cache.move_to_end(key)
            _hits += 1
            return data, found
    result = Fingerprint(hashlib.sha256(data).hexdigest(), FILE_BYTES)
    with _lock:
        _misses += 1
        if steady:
            _cache[key] = result
            while len(_cache) > MAX_ENTRIES:
                _cache.popitem(last=False)
    return data, result


def of_bytes(data, digest: str | None = None) -> Fingerprint:
    """The fingerprint of an upload's bytes (``FILE_BYTES``: the same as the file they came from); ``digest``:
    their SHA-256 (hex) where the caller has it already."""
    if digest is None:
        digest = hashlib.sha256(data).hexdigest()
    return Fingerprint(digest, FILE_BYTES)


def of_log(log) -> Fingerprint:
    """The fingerprint of a ``fairaudit.sources.FileLog``'s bytes as stored: its upload's bytes, or its parts'."""
    if getattr(log, "data", None) is not None:
        return of_bytes(log.data, getattr(log, "data_sha256", None))
    return of_parts(log.parts)


def cache_info() -> CacheInfo:
    with _lock:
        return CacheInfo(_hits, _misses, len(_cache), MAX_ENTRIES)


def clear_cache() -> None:
    global _hits, _misses
    with _lock:
        _cache.clear()
        _hits = _misses = 0


# ---- a frame in memory ---------------------------------------------------------------------------------------------

def _text(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    return struct.pack("<Q", len(data)) + data


def _digest(*chunks) -> bytes:
    h = hashlib.sha256()
    for c in chunks:
        h.update(c)
    return h.digest()


def _mask_bytes(mask) -> bytes:
    import numpy as np

    return np.packbits(np.asarray(mask, dtype=bool)).tobytes()


def _numbers(values, mask) -> bytes:
    """Column digest of a NumPy array of numbers, booleans, dates or durations (``mask``: missing)."""
    import numpy as np

    values = np.asarray(values)
    if values.dtype.kind in "mM":
        values = values.view("i8")
    if values.dtype.byteorder == ">" or (values.dtype.byteorder == "=" and not _LITTLE):
        values = values.astype(values.dtype.newbyteorder("<"))
    if mask is not None and mask.any():
        values = np.where(mask, np.zeros((), dtype=values.dtype), values)
    values = np.ascontiguousarray(values)
    return _digest(b"numbers\0", _digest(_mask_bytes(mask) if mask is not None else b""),
                   _digest(memoryview(values).cast("B")))


def _strings(chunks) -> bytes:
    """Column digest of Arrow string arrays (string or large_string, in order): missing values, where each value
    ends in the UTF-8 bytes of the whole column (u64), and the bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ends, data = hashlib.sha256(), hashlib.sha256()
    bits = []
    base = 0
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        offsets = _offsets(chunk)
        if chunk.null_count:
            missing = chunk.is_null().to_numpy(zero_copy_only=False)
            at = np.flatnonzero(missing)
            if (offsets[at + 1] != offsets[at]).any():  # a missing value that still holds bytes: drop them
                chunk = pc.fill_null(chunk, pa.scalar("", chunk.type))
                offsets = _offsets(chunk)
        else:
            missing = np.zeros(len(chunk), dtype=bool)
        bits.append(missing)
        first, last = int(offsets[0]), int(offsets[-1])
        if first == base == 0 and offsets.dtype == np.dtype("<i8"):
            ends.update(memoryview(offsets[1:]).cast("B"))  # as stored: no copy
        else:
            ends.update(memoryview(offsets[1:].astype("<i8") + (base - first)).cast("B"))
        base += last - first
        if last > first:
            data.update(memoryview(chunk.buffers()[2])[first:last])
    mask = np.concatenate(bits) if bits else np.zeros(0, dtype=bool)
    return _digest(b"text\0", _digest(_mask_bytes(mask)), ends.digest(), data.digest())


def _offsets(chunk):
    """An Arrow string array's offsets (n + 1 of them, as stored: int32 or int64 little-endian)."""
    import numpy as np
    import pyarrow as pa

    wide = pa.types.is_large_string(chunk.type)
    offsets = np.frombuffer(chunk.buffers()[1], dtype="<i8" if wide else "<i4")
    return offsets[chunk.offset:chunk.offset + len(chunk) + 1]


def _objects(values, mask) -> bytes:
    """Column digest of anything else: each value's type and ``repr`` (missing values: their mask only)."""
    h = hashlib.sha256()
    for value, missing in zip(values, mask):
        if missing:
            h.update(b"\0" * 8)
            continue
        kind = type(value)
        h.update(_text(f"{kind.__module__}.{kind.__qualname__}:{value!r}"))
    return _digest(b"objects\0", _digest(_mask_bytes(mask)), h.digest())


def _column(series) -> bytes:
    """The SHA-256 (raw) of one column's values and missing values (module doc)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    dtype = series.dtype
    array = series.array
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(series.cat.codes.to_numpy())
        categories = pd.Series(dtype.categories, copy=False)
        return _digest(b"categories\0", _text(str(categories.dtype)), _column(categories),
                       b"ordered" if dtype.ordered else b"unordered", _numbers(codes, codes < 0))
    if isinstance(dtype, pd.StringDtype) or (isinstance(dtype, pd.ArrowDtype)
                                             and (pa.types.is_string(dtype.pyarrow_dtype)
                                                  or pa.types.is_large_string(dtype.pyarrow_dtype))):
        return _strings(_arrow_chunks(series))
    if isinstance(dtype, pd.DatetimeTZDtype):
        return _numbers(array.asi8, np.asarray(series.isna()))
    if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
        values = series.to_numpy()
        mask = np.isnan(values) if dtype.kind in "fc" else (np.isnat(values) if dtype.kind in "mM" else None)
        return _numbers(values, mask)
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and getattr(dtype, "numpy_dtype", None) is not None \
            and not isinstance(dtype, pd.ArrowDtype) and np.dtype(dtype.numpy_dtype).kind in "biufc":
        mask = np.asarray(array.isna(), dtype=bool)  # pandas' masked Int64 / Float64 / boolean
        return _numbers(array.to_numpy(dtype=dtype.numpy_dtype, na_value=0), mask)
    if isinstance(dtype, pd.ArrowDtype):
        kind = dtype.pyarrow_dtype
        if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
            mask = np.asarray(series.isna(), dtype=bool)
            return _numbers(series.to_numpy(dtype=dtype.numpy_dtype, na_value=0), mask)
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        inferred = pd.api.types.infer_dtype(series, skipna=True)
        if inferred in ("string", "empty"):  # str values (and missing ones) only
            mask = np.asarray(pd.isna(series), dtype=bool)
            values = series.to_numpy(dtype=object)
            if mask.any():
                values = values.copy()
                values[mask] = None
            try:
                return _strings([pa.array(values, type=pa.large_string())])
            except (UnicodeError, pa.ArrowException):  # a lone surrogate: not UTF-8
                pass
    values = series.to_numpy(dtype=object)
    return _objects(values, np.asarray(pd.isna(series), dtype=bool))


def _arrow_chunks(series) -> list:
    import pyarrow as pa

    found = pa.array(series.array) if not hasattr(series.array, "__arrow_array__") else \
        series.array.__arrow_array__()
    chunks = found.chunks if isinstance(found, pa.ChunkedArray) else [found]
    out = []
    for chunk in chunks:
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
            chunk = chunk.cast(pa.large_string())
        out.append(chunk)
    return out


def _name(name) -> bytes:
    kind = type(name)
    return _text(f"{kind.__module__}.{kind.__qualname__}:{name!r}")


def of_frame(frame, threads: int = 1) -> Fingerprint:
    """The fingerprint of a pandas frame in memory: SHA-256 over the canonical form of its columns (``ROWS``;
    module doc). ``threads`` > 1 hashes columns side by side (hashing, Arrow and NumPy release the GIL; on a busy
    machine it gains nothing)."""
    columns = [frame.iloc[:, i] for i in range(frame.shape[1])]
    if threads > 1 and len(columns) > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(columns))) as pool:
            digests = list(pool.map(_column, columns))
    else:
        digests = [_column(c) for c in columns]
    h = hashlib.sha256(_ROWS_TAG + struct.pack("<QQ", frame.shape[0], frame.shape[1]))
    for name, series, digest in zip(frame.columns, columns, digests):
        h.update(_name(name))
        h.update(_text(str(series.dtype)))
        h.update(digest)
    return Fingerprint(h.hexdigest(), ROWS)


_LITTLE = struct.pack("=H", 1) == struct.pack("<H", 1)
