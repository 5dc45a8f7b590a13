"""Zip archives (skops files, torch ``state_dict`` files) checked against the unpacked-size limits before any
library unpacks them.

A zip archive says, in its *central directory* (at its end), which members it holds and how large each is once
unpacked. A compression bomb declares (or hides) far more bytes than it occupies: a 256 KB skops file whose one
array inflates to 950 MB. :func:`check_zip` refuses, in this order and before skops or torch sees the bytes:

1. more than :data:`fairaudit.base.limits.ARCHIVE_MEMBERS` members — counted as the central directory's entry
   signatures in the raw bytes (an upper bound on what ``zipfile`` would parse, found without parsing it) and as
   the count the directory's end record declares;
2. declared unpacked sizes (``ZipInfo.file_size``) that add up to more than the unpacked limit
   (:func:`fairaudit.base.limits.unpacked_bytes`);
3. a *metadata* member — a skops file's ``schema.json``, a torch file's ``data.pkl``, which the library parses
   into Python objects (about 6 bytes of memory per byte) — that declares more than
   :data:`fairaudit.base.limits.MODEL_METADATA_MB`, its own small cap (``is_metadata``);
4. members whose bytes, inflated block by block and counted, pass the unpacked limit, or a metadata member its
   cap, anyway (a header that lies about its size) or do not match their checksum: the reading stops at the first
   block past the limit.

Every refusal is one ``ModelError`` sentence naming the file, the size and the limit.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib

from fairaudit.base import limits
from fairaudit.base.errors import ModelError, first_line

_ENTRY = b"PK\x01\x02"           # a central directory entry
_END = b"PK\x05\x06"             # the end of central directory record
_END_SIZE = 22
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_END = b"PK\x06\x06"
BLOCK = 1 << 20                  # bytes inflated per read when counting a member's real size


def declared_members(data: bytes) -> int:
    """An upper bound on the members of the zip archive ``data``: the larger of the central directory entry
    signatures found in its bytes (``zipfile`` parses one entry per signature, so it can never parse more) and
    the count its end record declares (zip64 included). Linear in the bytes, and nothing is parsed."""
    found = data.count(_ENTRY)
    at = data.rfind(_END, max(0, len(data) - _END_SIZE - 0xFFFF))
    declared = 0
    if at >= 0 and at + _END_SIZE <= len(data):
        declared = struct.unpack_from("<H", data, at + 10)[0]
        locator = at - 20
        if declared == 0xFFFF and locator >= 0 and data[locator:locator + 4] == _ZIP64_LOCATOR:
            offset = struct.unpack_from("<Q", data, locator + 8)[0]
            if offset + 56 <= len(data) and data[offset:offset + 4] == _ZIP64_END:
                declared = struct.unpack_from("<Q", data, offset + 32)[0]
    return max(found, declared)


def check_members(data: bytes, name: str, max_members: int | None = None) -> None:
    """``ModelError`` when the archive ``data`` holds more members than allowed (before ``zipfile`` reads its
    directory, which builds one object per member)."""
    limit = limits.ARCHIVE_MEMBERS if max_members is None else int(max_members)
    count = declared_members(data)
    if count > limit:
        raise ModelError(f"{name} is a zip archive of {count:,} members, over the limit of {limit:,} for a model "
                         "file; it was not unpacked (a model file holds at most a few thousand arrays)")


def check_zip(data: bytes, name: str, *, max_bytes: int | None = None, max_members: int | None = None) -> None:
    """Refuse (``ModelError``, one sentence) the zip archive ``data`` when unpacking it would exceed the member
    count or the unpacked-size limit (``max_bytes``: default :func:`fairaudit.base.limits.unpacked_bytes`), judged from
    its directory first and then from its inflated bytes, counted block by block (see the module doc)."""
    limit = limits.unpacked_bytes() if max_bytes is None else int(max_bytes)
    check_members(data, name, max_members)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, struct.error) as err:
        raise ModelError(f"{name} is a damaged zip archive ({first_line(err)})") from None
    with archive:
        infos = archive.infolist()
        declared = sum(max(0, info.file_size) for info in infos)
        if declared > limit:
            raise ModelError(f"{name} would unpack to {limits.size_text(declared)} (the sizes its zip directory "
                             f"declares), over the limit of {limits.size_text(limit)} for an unpacked model file; it "
                             f"was not unpacked ({_raise_hint()})")
        cap = check_metadata(archive, name)
        unpacked = 0
        for info in infos:
            own = 0
            try:
                with archive.open(info) as member:
                    while True:
                        block = member.read(BLOCK)
                        if not block:
                            break
                        unpacked += len(block)
                        own += len(block)
                        if own > cap and is_metadata(info.filename):
                            raise ModelError(f"{name}: its {info.filename[:60]} unpacks to more than "
                                             f"{limits.size_text(cap)}, the limit for a model file's metadata, although "
                                             f"its zip directory declares {limits.size_text(info.file_size)}; it was not "
                                             "read any further (the file is damaged or built to exhaust memory)")
                        if unpacked > limit:
                            raise ModelError(f"{name} unpacks to more than {limits.size_text(limit)}, the limit for "
                                             "an unpacked model file, although its zip directory declares "
                                             f"{limits.size_text(declared)}; it was not unpacked any further (the "
                                             "file is damaged or built to exhaust memory)")
            except ModelError:
                raise
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
                    NotImplementedError) as err:  # a checksum, an encrypted member, an unknown compression
                raise ModelError(f"{name} is a damaged zip archive (member {info.filename[:60]!r}: "
                                 f"{first_line(err)})") from None


def check_metadata(archive: zipfile.ZipFile, name: str) -> int:
    """``ModelError`` when a metadata member (``is_metadata``) of the open ``archive`` declares more than
    :data:`fairaudit.base.limits.MODEL_METADATA_MB` unpacked; else that cap in bytes. ``zipfile`` never gives more
    bytes of a member than it declares (a member that holds more fails its checksum), so this bounds what a
    library parses."""
    cap = limits.MODEL_METADATA_MB * limits.MB
    for info in archive.infolist():
        if is_metadata(info.filename) and info.file_size > cap:
            raise ModelError(f"{name}: its {info.filename[:60]} declares {limits.size_text(info.file_size)} once "
                             f"unpacked, over the limit of {limits.size_text(cap)} for a model file's metadata "
                             "(a real model's is a few MB at most); it was not read (the file is damaged or built to "
                             "exhaust memory)")
    return cap


def is_metadata(member: str) -> bool:
    """Whether a zip member is one a model library parses into Python objects: skops's top-level ``schema.json``,
    torch's ``<folder>/data.pkl`` (read by torch's restricted unpickler: containers only, but one object each)."""
    return member == "schema.json" or (member.endswith("/data.pkl") and member.count("/") == 1)


def _raise_hint() -> str:
    return f"whoever runs fairaudit can raise the limit with {limits.UNPACKED_ENV}"
