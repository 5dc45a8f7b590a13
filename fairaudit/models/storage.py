"""``load(path)``: read a model saved by ``Model.save`` (or a ``.nnet`` network).

Formats, detected from the file itself:

* ``.nnet`` text (by extension, or text starting with ``//``) -> :class:`NNetModel`;
* a zip archive (torch's format) -> ``mlp``, loaded with ``torch.load(weights_only=True)``;
* anything else -> a joblib file holding a scikit-learn model.

**Security**: a joblib file is a pickle and loading it runs code chosen by whoever wrote the file.
Only load files you trust, from paths you name yourself (``--model PATH``, the dashboard's "load from
a path"). ``load`` refuses file-like objects so that uploaded bytes can never reach it.
"""
from __future__ import annotations

import os
from pathlib import Path

from fairaudit.errors import ModelError
from fairaudit.models.base import FORMAT, Model

ZIP_MAGIC = b"PK\x03\x04"


def load(path: str | os.PathLike) -> Model:
    """Load a saved model from a trusted local path (see the module docstring: joblib files run code)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ModelError("load() takes a path to a trusted local file, not a file-like object or bytes "
                         "(a model file can run code when loaded)")
    path = Path(path)
    if not path.exists():
        raise ModelError(f"no such model file: {path}")
    if path.is_dir():
        raise ModelError(f"{path} is a directory, not a model file")
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
    except OSError as err:
        raise ModelError(f"cannot read model file {path}: {err.strerror or err}") from None

    if path.suffix.lower() == ".nnet" or head.startswith(b"//"):
        from fairaudit.models.nnet import NNetModel, read_nnet

        return NNetModel(read_nnet(path), source=str(path))
    if head == ZIP_MAGIC:
        return _load_torch(path)
    return _load_joblib(path)


def _load_torch(path: Path) -> Model:
    import torch

    from fairaudit.models.mlp import MLPModel

    try:
        payload = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as err:  # torch raises many types for a foreign or corrupt archive
        raise ModelError(f"{path} is not a fairaudit model ({_first_line(err)})") from None
    _check_payload(payload, path)
    try:
        return MLPModel.from_payload(payload)
    except (KeyError, ValueError, RuntimeError) as err:
        raise ModelError(f"{path} is a damaged mlp model file ({_first_line(err)})") from None


def _load_joblib(path: Path) -> Model:
    import joblib

    from fairaudit.models.sklearn_models import SklearnModel

    try:
        payload = joblib.load(path)
    except Exception as err:  # unpickling garbage raises anything from EOFError to UnpicklingError
        raise ModelError(f"{path} is not a fairaudit model ({_first_line(err)})") from None
    _check_payload(payload, path)
    try:
        return SklearnModel.from_payload(payload)
    except (KeyError, TypeError, ValueError) as err:
        raise ModelError(f"{path} is a damaged model file ({_first_line(err)})") from None


def _check_payload(payload, path: Path) -> None:
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ModelError(f"{path} is not a fairaudit model file (save one with `fairaudit train`)")


def _first_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:160]
