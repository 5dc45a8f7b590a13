"""Decompressing a ``.csv.gz`` with a bound on the unpacked size.

``gzip.decompress`` inflates the whole file before anyone can look at its size: a 1 MB file of CSV lines becomes
1 GiB (and ran past 120 s and 2.3 GB through the CSV reader). :func:`gunzip` inflates block by block
(``zlib.decompressobj`` with ``max_length``, so no call produces more than one block however compressible the
input) and stops at the first block that takes the total past the limit
(:func:`fairaudit.base.limits.unpacked_bytes`), with one sentence saying so. A file whose trailer already declares
more (the gzip trailer's size field, of its last member, when deflate could produce that much from the file) is
refused before anything is inflated; a trailer that lies is caught by the count. Several gzip members one after
the other (``cat a.gz b.gz``) are read as ``gzip.decompress`` reads them; zlib checks every member's CRC and
length.
"""
from __future__ import annotations

import re
import zlib

from fairaudit.base import limits
from fairaudit.base.errors import DataError

BLOCK = 1 << 20  # bytes produced (at most) and fed per call
MAX_RATIO = 1032  # deflate's largest expansion (a 258-byte match per 2 bits, roughly)
_NON_ZERO = re.compile(rb"[^\x00]")
_WHAT_TO_DO = (f"(decompress it yourself and pass the .csv, or have whoever runs fairaudit raise the limit with "
               f"{limits.UNPACKED_ENV})")


def gunzip(data: bytes, display: str, max_bytes: int | None = None) -> bytes:
    """The decompressed bytes of gzip ``data`` (``display`` names the file in messages). ``DataError`` when they
    would pass ``max_bytes`` (default: the unpacked-size limit); ``zlib.error`` or ``EOFError`` when ``data`` is
    not valid gzip (the caller says so)."""
    limit = limits.unpacked_bytes() if max_bytes is None else int(max_bytes)
    declared = int.from_bytes(data[-4:], "little") if len(data) >= 18 else 0  # the last member's size mod 2^32
    if limit < declared <= MAX_RATIO * len(data):  # (a larger claim is no gzip trailer: a cut or damaged file)
        raise DataError(f"{display} declares {limits.size_text(declared)} once decompressed (its gzip trailer), over "
                        f"the limit of {limits.size_text(limit)} for a decompressed .csv.gz; it was not decompressed "
                        f"{_WHAT_TO_DO}")
    parts: list[bytes] = []
    total = 0
    view = memoryview(data)
    start = 0  # where the current member starts in ``data``
    while start < len(data):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # a gzip header and trailer, checked by zlib
        fed = start
        while not inflater.eof:
            if inflater.unconsumed_tail:
                feed = inflater.unconsumed_tail
            else:
                feed = view[fed:fed + BLOCK]
                fed += len(feed)
            block = inflater.decompress(feed, BLOCK)
            if not block and not feed:
                raise EOFError("the compressed data ends before its end marker")
            total += len(block)
            if total > limit:
                raise DataError(f"{display} unpacks to more than {limits.size_text(limit)}, the limit for a "
                                f"decompressed .csv.gz; it was not read further {_WHAT_TO_DO}")
            parts.append(block)
        # the next member, if any, after zero padding (as gzip.decompress reads ``cat a.gz b.gz``)
        after = _NON_ZERO.search(data, fed - len(inflater.unused_data))
        start = after.start() if after else len(data)
        if start < len(data) and data[start:start + 2] != b"\x1f\x8b":
            raise zlib.error("data after the last gzip member is not gzip")
    return b"".join(parts)
