"""Writing output files safely: checked before any work, never onto an input, written atomically.

``check_output(path, kind, inputs=..., force=False)`` is called by every command before it starts
working, so that a bad output path costs nothing and can never destroy what the run reads:

* the path names a file (not a directory, not ``name/``), its folder exists and is writable; an existing
  path is a regular file (never a device, a pipe or a socket, even with ``force``);
* it is not one of the run's input files (same file by ``os.path.samefile``, so ``./d.csv`` and
  ``d.csv`` and a hard link are caught), nor any part of an input that is a folder or a glob of parts (every part
  it lists, by the rule every route reads them with: ``fairaudit.sources.files.list_parts``), with ``force`` or
  without;
* an existing file is replaced only when it holds the same kind of content as the one written
  (:func:`file_kind`, decided from the whole content, never from the name or the first bytes alone): a
  fairaudit PDF report over one, an audit result over one, a full trace over one, a model file over one.
  Any other existing file — a CSV, a spec, an xlsx or docx (zip archives, as skops and torch files are),
  a pickle, someone else's PDF — needs ``force=True`` (``--force``).

An ``OSError`` met on the way (a name too long for the file system, a folder that cannot be read) is one line
(:func:`fairaudit.base.errors.path_error`), never a crash.

``write_atomically(path, data)`` writes to a temporary file of its own in the same folder (a unique name per
call, so two runs writing the same path never write into one file) and renames it over the target, so an
interrupted or failed write leaves the old file as it was and no temporary file behind.
"""
from __future__ import annotations

import glob as globmod
import io
import json
import os
import stat
import zipfile
from pathlib import Path
from typing import Iterable

from fairaudit.base.errors import DataError, FairauditError, path_error
from fairaudit.base.files import TEMP_SUFFIX, check_path, publish, temporary_beside, write_atomically  # noqa: F401

KINDS = ("pdf", "result", "model", "trace", "scan", "scan-table", "comparison", "repair")
SCAN_FORMAT = "fairaudit-scan/"  # a scan result's JSON "format" starts with this
COMPARISON_FORMAT = "fairaudit-comparison/"  # a comparison result's JSON "format" starts with this
REPAIR_FORMAT = "fairaudit-repair/"  # a repair result's JSON "format" starts with this (``fairaudit.repair``)
SCAN_TABLE_MARK = "# fairaudit scan"  # the first line of a regulatory table (CSV) written by fairaudit scan
_NAMES = {"pdf": "a PDF report made by fairaudit", "result": "an audit result (JSON)",
          "scan": "a scan result (JSON)", "comparison": "a comparison result (JSON)",
          "repair": "a repair result (JSON)", "scan-table": "a scan table (CSV) made by fairaudit scan",
          "model": "a model file (skops, torch state_dict or .nnet)", "trace": "a full trace (Parquet)",
          "data": "a data file (CSV/Parquet)", "archive": "a zip archive (such as an xlsx, a docx or a zip)",
          "pickle": "a pickle (e.g. a .joblib file)", "pdf-other": "a PDF that fairaudit did not make",
          "other": "another kind of file", "empty": "an empty file"}
REPORT_CREATOR = "fairaudit.report"  # the creator written in a PDF report's information dictionary
READ_LIMIT = 64 * 1024 * 1024  # the most bytes read to decide what an existing file (or one archive member) holds


def file_kind(path) -> str:
    """What an existing file holds, decided from its content (the name plays no part):

    * ``pdf``: a PDF report written by fairaudit (``%PDF-`` ... ``%%EOF``, with fairaudit as its creator);
      ``pdf-other`` any other PDF;
    * ``result``: JSON that decodes to an object with an audit result's fields;
    * ``model``: a skops archive (a zip whose central directory lists ``schema.json`` and ``.npy`` arrays only,
      the schema a skops object tree), a torch file as ``Model.save`` writes it (one folder with ``data.pkl``
      and ``version``; the pickle, read opcode by opcode and never run, is a dict with fairaudit's format marker,
      a JSON config and a ``state_dict`` of tensors, and names no other global), or a ``.nnet`` network that
      parses, or a threshold repair (JSON, ``fairaudit.models.thresholds``); ``archive`` any other zip (xlsx,
      docx, ...); ``pickle`` a file starting with the pickle opcode;
    * ``trace``: a Parquet full trace written by fairaudit (``data`` any other Parquet);
    * ``scan`` / ``comparison`` / ``repair``: JSON that decodes to an object whose ``format`` is a scan result's / a
      comparison's / a repair result's; ``scan-table``: text whose first line is the mark of a regulatory table
      written by ``fairaudit scan --csv``;
    * ``empty`` or ``other``.
    """
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a device or a pipe is never opened (reading a pipe would wait)
            return "other"
        size = info.st_size
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return "other"
    if not head:
        return "empty"
    if head.startswith(b"%PDF-"):
        return "pdf" if _is_report(path, size) else "pdf-other"
    if head.startswith(b"PK"):
        return "model" if _is_model_archive(path) else ("archive" if zipfile.is_zipfile(path) else "other")
    if head.startswith(b"\x80"):
        return "pickle"
    if head.startswith(b"PAR1"):  # Parquet: a full trace written by fairaudit, or data
        from fairaudit.core.fulltrace import is_full_trace

        return "trace" if is_full_trace(path) else "data"
    text = _text(path, size)
    if text is None:
        return "other"
    if _is_result(text):
        return "result"
    fmt = _json_format(text)
    if fmt.startswith(SCAN_FORMAT):
        return "scan"
    if fmt.startswith(COMPARISON_FORMAT):
        return "comparison"
    if fmt.startswith(REPAIR_FORMAT):
        return "repair"
    if text.startswith(SCAN_TABLE_MARK):
        return "scan-table"
    if _is_nnet(text, path.name) or _is_threshold_model(text):
        return "model"
    return "other"


def _text(path: Path, size: int) -> str | None:
    if size > READ_LIMIT:
        return None
    try:
        return path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


def _is_report(path: Path, size: int) -> bool:
    """A whole PDF (it ends with ``%%EOF``) whose information dictionary names fairaudit's report as its creator."""
    if size > READ_LIMIT:
        return False
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return b"%%EOF" in data[-1024:] and b"/Creator (" + REPORT_CREATOR.encode("ascii") + b")" in data


_RESULT_FIELDS = ("spec", "engine", "verdict", "guarantee", "nodes", "trace")


def _json_object(text: str) -> dict | None:
    """``text`` decoded, when it is a JSON object (else None)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _is_result(text: str) -> bool:
    data = _json_object(text)
    return data is not None and all(key in data for key in _RESULT_FIELDS)


def _json_format(text: str) -> str:
    """A JSON object's ``format`` field ("" when there is none)."""
    data = _json_object(text)
    return str(data.get("format", "")) if data is not None else ""


def _is_threshold_model(text: str) -> bool:
    """A threshold repair saved by ``fairaudit repair --save`` (``fairaudit.models.thresholds``)."""
    from fairaudit.models.thresholds import read_payload

    return read_payload(text.encode("utf-8")) is not None


def _is_nnet(text: str, name: str) -> bool:
    """A ``.nnet`` network that parses; first, cheaply, a header line of four whole numbers (a CSV is not parsed)."""
    from fairaudit.base.errors import ModelError
    from fairaudit.models.nnet import parse_nnet

    lines = (line.strip() for line in io.StringIO(text))
    header = next((line for line in lines if line and not line.startswith("//")), "")
    values = [x.strip() for x in header.split(",") if x.strip()]
    if len(values) != 4 or not all(x.isdigit() for x in values):
        return False
    try:
        parse_nnet(text, name=name)
    except (ModelError, ValueError, OverflowError, MemoryError):
        return False
    return True


def _is_model_archive(path: Path) -> bool:
    """A skops file or a fairaudit torch file (``file_kind``), from the zip's central directory and the one member
    that describes the rest (skops's ``schema.json``, torch's ``data.pkl``), each read up to ``READ_LIMIT``."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            return _is_skops(archive, infos) or _is_torch(archive, infos)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, NotImplementedError,
            RuntimeError):  # RuntimeError: an encrypted member
        return False


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes | None:
    return None if info.file_size > READ_LIMIT else archive.read(info)


SKOPS_FIELDS = ("__class__", "__module__", "__loader__", "protocol", "_skops_version")  # the schema's root node
SKOPS_MEMBERS = (".npy", ".npz", ".bin")  # what skops stores beside its schema: arrays, sparse matrices, bytes


def _is_skops(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> bool:
    from fairaudit.models.skops_files import SCHEMA

    names = [i.filename for i in infos]
    if SCHEMA not in names or not all(n == SCHEMA or (n.endswith(SKOPS_MEMBERS) and "/" not in n) for n in names):
        return False
    data = _member(archive, archive.getinfo(SCHEMA))
    try:
        schema = json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        return False
    return isinstance(schema, dict) and all(key in schema for key in SKOPS_FIELDS)


# the globals a torch state_dict's pickle names: the ordered dict and the tensor rebuilders with their storages
_TORCH_GLOBALS = ("collections OrderedDict", "torch._utils _rebuild_tensor_v2", "torch._utils _rebuild_parameter")


def _is_torch(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> bool:
    import pickletools

    from fairaudit.models.base import FORMAT

    names = [i.filename for i in infos]
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) != 1 or any("/" not in n for n in names):
        return False
    top = tops.pop()
    if f"{top}/data.pkl" not in names or f"{top}/version" not in names:
        return False
    data = _member(archive, archive.getinfo(f"{top}/data.pkl"))
    if data is None:
        return False
    strings = []
    try:
        for op, arg, _ in pickletools.genops(data):  # reads the opcodes; nothing is built or called
            if op.name in ("GLOBAL", "STACK_GLOBAL", "INST", "OBJ", "EXT1", "EXT2", "EXT4"):
                text = str(arg)
                if op.name != "GLOBAL" or not (text in _TORCH_GLOBALS or
                                               (text.startswith("torch ") and text.endswith("Storage"))):
                    return False
            elif isinstance(arg, str):
                strings.append(arg)
    except (ValueError, EOFError, KeyError, IndexError, UnicodeDecodeError):
        return False

    def value(key: str) -> str | None:  # the string that follows ``key`` (a dict's value after its key)
        return next((strings[i + 1] for i in range(len(strings) - 1) if strings[i] == key), None)

    if value("format") != FORMAT or "state_dict" not in strings:
        return False
    try:
        return isinstance(json.loads(value("config")), dict)
    except (TypeError, ValueError, RecursionError):
        return False


def input_files(inputs: Iterable) -> list:
    """The files a run reads among ``inputs``: a file (or a name that is none, such as a built-in dataset's) as it
    is, a folder or a glob of parts as each of its parts (``fairaudit.sources.files.list_parts``) and itself."""
    from fairaudit.sources.files import list_parts  # here: it imports pyarrow, which checking a path needs not

    out = []
    for source in inputs:
        out.append(source)
        if not isinstance(source, (str, os.PathLike)):
            continue
        text = os.fspath(source)
        try:
            several = Path(text).is_dir() or (globmod.has_magic(text) and not Path(text).exists())
            if several:
                out += list_parts(text)
        except (DataError, OSError, ValueError):  # no part (or no such folder): nothing of it can be replaced
            pass
    return out


def check_output(path, kind: str, *, inputs: Iterable = (), force: bool = False, what: str = "output") -> Path:
    """``path`` checked as the destination of ``kind`` content (module doc); ``FairauditError`` otherwise.
    The one decision of whether an existing file may be replaced."""
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    path = check_path(path, inputs=input_files(inputs), what=what)
    try:
        if not force and path.exists():
            found = file_kind(path)
            if found not in (kind, "empty"):
                raise FairauditError(f"refusing to overwrite {path}: it holds {_NAMES.get(found, found)}, not "
                                     f"{_NAMES[kind]}; choose another path, or add --force to replace it")
    except OSError as err:
        raise path_error(err, f"write the {what} to") from None
    return path
