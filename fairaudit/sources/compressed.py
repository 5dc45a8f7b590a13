"""Decompressing a ``.csv.gz`` with a bound on the unpacked size — on every route, by one reader.

``gzip.decompress`` (and pyarrow's own reader of a ``.gz`` path) inflates without looking at the size: a 1.5 MB
file of CSV lines becomes 1 GiB (and ran past 120 s and 2.3 GB through the CSV reader). Here every ``.csv.gz`` —
a file, each part of a folder or glob, an upload, a Dask partition — is inflated block by block (``zlib`` with
``max_length``, so no call produces more than one block however compressible the input), and the reading stops at
the first block that takes the part's total past the limit (:func:`fairaudit.base.limits.unpacked_bytes`), with one
sentence saying so. A file whose trailer already declares more (the gzip trailer's size field, of its last member,
when deflate could produce that much from the file) is refused before anything is inflated; a trailer that lies is
caught by the count. Several gzip members one after the other (``cat a.gz b.gz``) are read as ``gzip.decompress``
reads them; zlib checks every member's CRC and length.

:func:`gunzip` gives the bytes of data held in memory (an upload); :class:`GzipReader` is a file object over a
``.gz`` path that pyarrow's CSV reader reads in blocks (``open_part``), after ``check_size`` has counted the
whole part once (inflating is cheap next to parsing: a part past the limit is refused before a row of it is
parsed). A live log is never compressed (a ``.gz``
cannot grow: ``fairaudit.engines.monitor.livelog`` refuses one).
"""
from __future__ import annotations

import io
import os
import re
import zlib

from fairaudit.base import limits
from fairaudit.base.errors import DataError

BLOCK = 1 << 20  # bytes produced (at most) and fed per call
MAX_RATIO = 1032  # deflate's largest expansion (a 258-byte match per 2 bits, roughly)
_NON_ZERO = re.compile(rb"[^\x00]")
WHAT_TO_DO = (f"(decompress it yourself and pass the .csv, or have whoever runs fairaudit raise the limit with "
              f"{limits.UNPACKED_ENV})")


def is_gzip_name(path) -> bool:
    return str(path).lower().endswith(".gz")


def declared_too_large(trailer: bytes, size: int, display: str, limit: int) -> None:
    """Refuse a gzip file whose trailer (its last 4 bytes; ``size``: the file's length) declares more than ``limit``
    unpacked bytes — when deflate could produce that much from the file (a larger claim is no gzip trailer)."""
    declared = int.from_bytes(trailer[-4:], "little") if size >= 18 and len(trailer) >= 4 else 0
    if limit < declared <= MAX_RATIO * size:
        raise DataError(f"{display} declares {limits.size_text(declared)} once decompressed (its gzip trailer), over "
                        f"the limit of {limits.size_text(limit)} for a decompressed .csv.gz; it was not decompressed "
                        f"{WHAT_TO_DO}")


def _past_limit(display: str, limit: int) -> DataError:
    return DataError(f"{display} unpacks to more than {limits.size_text(limit)}, the limit for a decompressed "
                     f".csv.gz; it was not read further {WHAT_TO_DO}")


def gunzip(data: bytes, display: str, max_bytes: int | None = None) -> bytes:
    """The decompressed bytes of gzip ``data`` (``display`` names the file in messages). ``DataError`` when they
    would pass ``max_bytes`` (default: the unpacked-size limit); ``zlib.error`` or ``EOFError`` when ``data`` is
    not valid gzip (the caller says so)."""
    limit = limits.unpacked_bytes() if max_bytes is None else int(max_bytes)
    declared_too_large(data[-4:], len(data), display, limit)
    reader = GzipReader(io.BytesIO(data), display, limit, check_trailer=False)
    parts = []
    while True:
        block = reader.read(BLOCK)
        if not block:
            break
        parts.append(block)
    return b"".join(parts)


class GzipReader(io.RawIOBase):
    """A read-only file object of the inflated bytes of the gzip stream ``raw`` (a binary file object), counted:
    ``DataError`` at the first block past ``max_bytes`` (default: the unpacked-size limit); ``zlib.error`` or
    ``EOFError`` for bytes that are not valid gzip. ``check_trailer``: refuse first what the trailer declares
    (``raw`` must be seekable)."""

    def __init__(self, raw, display: str, max_bytes: int | None = None, check_trailer: bool = True):
        super().__init__()
        self.raw, self.display = raw, display
        self.limit = limits.unpacked_bytes() if max_bytes is None else int(max_bytes)
        if check_trailer:
            size = raw.seek(0, os.SEEK_END)
            raw.seek(max(0, size - 4))
            declared_too_large(raw.read(4), size, display, self.limit)
            raw.seek(0)
        self.total = 0
        self.inflater = None  # the current member's
        self.pending = b""  # compressed bytes read but not fed yet
        self.left = b""  # inflated bytes not handed out yet
        self.done = False
        self.members = 0  # gzip members started

    def readable(self) -> bool:
        return True

    def _feed(self) -> bytes:
        if self.pending:
            out, self.pending = self.pending, b""
            return out
        return self.raw.read(BLOCK)

    def _inflate(self) -> bytes:
        """The next inflated block (b"" at the end of the stream)."""
        while not self.done:
            if self.inflater is None:  # a member starts (after the first: zero padding skipped, ``cat a.gz b.gz``)
                feed = self._feed()
                if self.members:
                    while feed and _NON_ZERO.search(feed) is None:
                        feed = self._feed()
                    feed = feed[_NON_ZERO.search(feed).start():] if feed else feed
                if not feed:
                    self.done = True
                    return b""
                if self.members and len(feed) >= 2 and feed[:2] != b"\x1f\x8b":
                    raise zlib.error("data after the last gzip member is not gzip")
                self.members += 1
                self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # a gzip header and trailer, checked
            else:
                feed = self.inflater.unconsumed_tail or self._feed()
                if not feed:
                    raise EOFError("the compressed data ends before its end marker")
            block = self.inflater.decompress(feed, BLOCK)
            if self.inflater.eof:
                self.pending = self.inflater.unused_data
                self.inflater = None
            if block:
                return self._count(block)
        return b""

    def _count(self, block: bytes) -> bytes:
        self.total += len(block)
        if self.total > self.limit:
            raise _past_limit(self.display, self.limit)
        return block

    def readinto(self, buffer) -> int:
        want = len(buffer)
        if not self.left:
            self.left = self._inflate()
        n = min(want, len(self.left))
        buffer[:n] = self.left[:n]
        self.left = self.left[n:]
        return n

    def close(self) -> None:
        try:
            self.raw.close()
        finally:
            super().close()


def check_size(path, display: str | None = None) -> int:
    """The unpacked size of the ``.gz`` file at ``path``, inflated once and counted without keeping a byte: a part
    past the limit is refused before any row of it is parsed (parsing 512 MB of CSV first took 20 s and, read whole,
    2.8 GB). ``DataError`` past the limit; ``zlib.error`` or ``EOFError`` for bytes that are not gzip."""
    with open_part(path, display) as f:
        while f.read(BLOCK):
            pass
        return f.raw.total


def open_part(path, display: str | None = None):
    """A part's bytes as a binary file object: a ``.gz`` path inflated by a counting :class:`GzipReader`, any other
    path as it is. ``DataError`` (one line) when it cannot be opened."""
    display = str(path) if display is None else display
    try:
        raw = open(path, "rb")
    except OSError as err:
        raise DataError(f"cannot read {display}: {err.strerror or err}") from None
    if not is_gzip_name(path):
        return raw
    try:
        return io.BufferedReader(GzipReader(raw, display), BLOCK)
    except BaseException:
        raw.close()
        raise
