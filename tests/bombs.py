"""Compression bombs for the input-bound tests, built in a fraction of a second without inflating anything.

``deflate_zeros(n)`` is a raw deflate stream of ``n`` zero bytes (about n / 1000 bytes long): one megabyte of
zeros compressed once with a full flush (so the piece refers to nothing before it) and repeated. ``gzip_zeros``
wraps it as a ``.gz`` file and ``zip_archive`` writes a zip archive by hand, so that a member may declare a size
other than its real one (a lying header). The CRCs are left at 0: every bomb must be refused before anything
reaches the end of a member and checks it.
"""
from __future__ import annotations

import struct
import zlib

MIB = 1 << 20


def deflate_zeros(n: int) -> bytes:
    full, rest = divmod(int(n), MIB)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = packer.compress(bytes(MIB)) + packer.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15)
    return piece * full + last.compress(bytes(rest)) + last.flush(zlib.Z_FINISH)


def gzip_zeros(n: int, prefix: bytes = b"") -> bytes:
    """A gzip file of ``prefix`` (e.g. a CSV header, stored) then zeros: ``n`` bytes in all (CRC left at 0)."""
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    body = b""
    if prefix:
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        body = packer.compress(prefix) + packer.flush(zlib.Z_FULL_FLUSH)
    body += deflate_zeros(n - len(prefix))
    return header + body + struct.pack("<LL", 0, n & 0xFFFFFFFF)


def zip_archive(members) -> bytes:
    """A zip archive of ``members``: ``(name, payload, method, declared size)`` with ``payload`` raw deflate
    (method 8) or stored bytes (method 0), written as given (the declared size may lie)."""
    out, central = bytearray(), bytearray()
    for name, payload, method, size in members:
        raw = name.encode()
        offset = len(out)
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0x21, 0, len(payload), size, len(raw), 0)
        out += raw + payload
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, 0, len(payload), size,
                               len(raw), 0, 0, 0, 0, 0, offset) + raw
    count = min(len(members), 0xFFFF)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(central), len(out), 0)
    return bytes(out + central + end)


def skops_bomb(n: int, declared: int | None = None) -> bytes:
    """A skops-looking archive (``schema.json`` plus one ``.npy`` member of ``n`` zeros, deflated), whose array
    member declares ``declared`` bytes (default: its real size)."""
    schema = b'{"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode", "file": "a.npy"}'
    return zip_archive([("a.npy", deflate_zeros(n), 8, n if declared is None else declared),
                        ("schema.json", schema, 0, len(schema))])
