"""Reading model files: ``load(path)`` (CLI and Python API) and ``load_bytes(data, filename)`` (uploads).

**What is trusted.** Models are stored in formats whose loading cannot run code, detected from the
file's *content* (never from its name alone):

* **skops** (a zip archive with a top-level ``schema.json``): scikit-learn models, written by
  ``Model.save`` for the kinds ``logreg``, ``tree`` and ``gbm``. Loaded with ``skops.io`` and an explicit
  list of trusted types: skops's defaults plus the two tree containers fairaudit's own kinds use
  (:data:`~fairaudit.models.skops_files.FAIRAUDIT_TYPES`). A file that needs any other type raises
  :class:`~fairaudit.models.skops_files.UntrustedTypesError` listing the type names; the caller shows them
  and, only if the user accepts, loads again with ``trusted_types=``. A skops file holding a user's own
  fitted classifier (not trained by fairaudit) becomes an :class:`~fairaudit.models.imported.ImportedSklearnModel`.
* **torch** (a zip archive with ``data.pkl`` in a sub-folder): ``mlp`` models, a ``state_dict`` plus a JSON
  config, loaded with ``torch.load(weights_only=True)`` (tensors and plain containers only).
* **.nnet** text (name ending in ``.nnet``, or text starting with ``//``): parsed as numbers, never evaluated.
* **a threshold repair** (JSON with ``kind: "thresholds"``, written by ``fairaudit repair --save``): decoded as
  JSON, never evaluated; its base model file is loaded from beside it by this same ``load`` (the same trust) and
  refused when its sha256 differs from the recorded one (:mod:`fairaudit.models.thresholds`). Only ``load`` reads
  one: an upload cannot bring the base model file it names.

**Sizes.** Before skops or torch unpacks a zip archive, :func:`fairaudit.models.archives.check_zip` bounds its
member count and unpacked size (``fairaudit.base.limits``: a compression bomb is refused in one sentence); a ``.nnet``
header is bounded before its body is parsed (:mod:`fairaudit.models.nnet`).

**What is not trusted.** Anything else may be a pickle (joblib files, written by fairaudit before
skops, are pickles): unpickling runs code chosen by whoever wrote the file. ``load`` refuses it with one
line unless the caller passes ``trust_pickle=True`` (the CLI's ``--trust-pickle``), and then only reads
it as an old fairaudit joblib model. ``load_bytes`` never unpickles anything, whatever the flag: uploads
and the dashboard go through it.
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Iterable

from fairaudit.base.errors import ModelError, first_line
from fairaudit.models import skops_files
from fairaudit.models.archives import check_zip
from fairaudit.models.base import FORMAT, Model
from fairaudit.models.skops_files import UntrustedTypesError

SAFE_FORMATS = "skops, torch state_dict or .nnet"
__all__ = ["load", "load_bytes", "detect_format", "UntrustedTypesError", "SAFE_FORMATS"]


def load(path: str | os.PathLike, *, trust_pickle: bool = False, trusted_types: Iterable[str] = ()) -> Model:
    """Load a model file from a local ``path`` (see the module docstring for what is trusted).

    ``trusted_types``: extra type names a skops file may use (after the user accepted them).
    ``trust_pickle=True`` also loads an old fairaudit joblib file; that **runs code stored in the file**:
    pass it only for files whose author you trust.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ModelError("load() takes a path to a local file, not a file-like object or bytes "
                         "(use load_bytes for uploaded content)")
    path = Path(path)
    if not path.exists():
        raise ModelError(f"no such model file: {path}")
    if path.is_dir():
        raise ModelError(f"{path} is a directory, not a model file")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ModelError(f"cannot read model file {path}: {err.strerror or err}") from None
    from fairaudit.models import thresholds

    repair = thresholds.read_payload(data)
    if repair is not None:
        return thresholds.from_payload(repair, path, lambda base: load(base, trust_pickle=trust_pickle,
                                                                       trusted_types=trusted_types))
    kind = detect_format(data, path.name)
    if kind == "unknown":
        if not trust_pickle:
            raise ModelError(f"{path} is not a model file in a safe format ({SAFE_FORMATS}); it may be a pickle "
                             "(e.g. a .joblib file from an older fairaudit), which can run code when loaded: "
                             "if you trust its author, load it with --trust-pickle (CLI) or trust_pickle=True (Python)")
        return _load_pickle(data, str(path))
    return _load_safe(kind, data, str(path), trusted_types)


def load_bytes(data: bytes, filename: str) -> Model:
    """Load a model from uploaded ``data`` (``filename`` names it in messages and marks ``.nnet`` text).

    Accepts only skops, torch state_dict and ``.nnet`` content; **never unpickles**, and trusts no type
    beyond fairaudit's own list: a skops file can name any importable callable (``pandas.to_pickle``,
    ``posix.system``) and have it called, so an upload is never a reason to trust more. A skops file that
    needs other types raises :class:`UntrustedTypesError` (``err.types``) saying to load it from the command
    line with ``--trust-type`` if its author is trusted.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ModelError(f"load_bytes() takes the file's bytes, got {type(data).__name__}")
    data, name = bytes(data), Path(str(filename)).name or "upload"
    from fairaudit.models.thresholds import read_payload

    if read_payload(data) is not None:
        raise ModelError(f"{name} is a threshold repair, which names its base model file on disk: load it by its "
                         "path (fairaudit audit --model FILE), not as an upload")
    kind = detect_format(data, name)
    if kind == "unknown":
        raise ModelError(f"{name} is not a model file in a safe format ({SAFE_FORMATS}); it may be a pickle, "
                         "which can run code, so it is never loaded from an upload: if you trust its author, "
                         "load it from the command line with --trust-pickle")
    try:
        return _load_safe(kind, data, name, ())
    except UntrustedTypesError as err:
        raise UntrustedTypesError(name, err.types, upload=True) from None


def detect_format(data: bytes, name: str = "") -> str:
    """``"skops"``, ``"torch"``, ``"zip"`` (another archive), ``"nnet"`` or ``"unknown"`` (maybe a pickle),
    from the content (the name only marks ``.nnet`` text, which is parsed and never executed)."""
    archive = skops_files.open_zip(data, name or "the model file") if data[:2] == b"PK" else None
    if archive is not None:
        with archive:
            if skops_files.is_skops_archive(archive):
                return "skops"
            if any(n.endswith("/data.pkl") for n in archive.namelist()):
                return "torch"
        return "zip"
    if name.lower().endswith(".nnet") or data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"//"):
        return "nnet"
    return "unknown"


def _load_safe(kind: str, data: bytes, name: str, trusted_types: Iterable[str]) -> Model:
    if kind in ("skops", "torch"):  # before skops or torch unpacks anything: the unpacked size and member count
        check_zip(data, name)
    if kind == "skops":
        return _from_skops(data, name, trusted_types)
    if kind == "torch":
        return _from_torch(data, name)
    if kind == "nnet":
        from fairaudit.models.nnet import NNetModel, parse_nnet

        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ModelError(f"cannot read .nnet file {name}: it is not UTF-8 text") from None
        return NNetModel(parse_nnet(text, name=Path(name).name), source=name)
    raise ModelError(f"{name} is a zip archive but neither a skops nor a torch model file")


def _from_skops(data: bytes, name: str, trusted_types: Iterable[str]) -> Model:
    obj = skops_files.load_bytes(data, name, trusted_types)
    if isinstance(obj, dict):
        _check_payload(obj, name)
        return _sklearn_from_payload(obj, name)
    from fairaudit.models.imported import ImportedSklearnModel

    return ImportedSklearnModel(obj, data, name)


def _from_torch(data: bytes, name: str) -> Model:
    import torch

    from fairaudit.models.mlp import MLPModel

    try:
        payload = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as err:  # torch raises many types for a foreign or corrupt archive
        raise ModelError(f"{name} is not a fairaudit model ({first_line(err)})") from None
    _check_payload(payload, name)
    try:
        return MLPModel.from_payload(payload)
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise ModelError(f"{name} is a damaged mlp model file ({first_line(err)})") from None


def _load_pickle(data: bytes, name: str) -> Model:
    """An old (joblib) fairaudit model. Runs code from the file: only reached with trust_pickle=True."""
    import joblib

    try:
        payload = joblib.load(io.BytesIO(data))
    except Exception as err:  # unpickling garbage raises anything from EOFError to UnpicklingError
        raise ModelError(f"{name} is not a fairaudit model ({first_line(err)})") from None
    _check_payload(payload, name)
    return _sklearn_from_payload(payload, name)


def _sklearn_from_payload(payload: dict, name: str) -> Model:
    from fairaudit.models.sklearn_models import SklearnModel

    try:
        return SklearnModel.from_payload(payload)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ModelError(f"{name} is a damaged model file ({first_line(err)})") from None


def _check_payload(payload, name: str) -> None:
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ModelError(f"{name} is not a fairaudit model file (save one with `fairaudit train`)")
