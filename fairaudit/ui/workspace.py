"""The dashboard's workspace folder: the only place it reads and writes files (no Streamlit; unit-tested).

``$FAIRAUDIT_WORKSPACE``, or ``./workspace`` relative to the app's working directory, created on first use:

    workspace/models/   model files the analyst put there or saved from the dashboard (listed on the Model page)
    workspace/specs/    specifications saved from the Specification page
    workspace/logs/     live decision logs the Audit page can attach to (a CSV file being appended to, or a
                        folder that Parquet files are added to; ``fairaudit.ui.live``)

A file is named by its bare name (letters, digits, ``_ - .``), never by a path; symbolic links and names that
would lead outside the folder are refused. The bundled ``specs/`` are read, never written (``speclib``).
Reading a model file gives its bytes: the caller hands them to ``fairaudit.models.load_bytes``, which accepts only
formats that cannot run code.
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Mapping

ENV = "FAIRAUDIT_WORKSPACE"
DEFAULT = "workspace"
_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")
PICKLE_MAGIC = b"\x80"  # pickle protocol 2+ (joblib files): never written by the dashboard


class WorkspaceError(ValueError):
    """A name or file the workspace refuses; the message is for the analyst."""


def root(env: Mapping[str, str] | None = None) -> Path:
    """The workspace folder (absolute), created if missing."""
    env = os.environ if env is None else env
    path = Path(env.get(ENV) or DEFAULT).expanduser()
    path = (Path.cwd() / path) if not path.is_absolute() else path
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


def folder(kind: str, env: Mapping[str, str] | None = None) -> Path:
    """``workspace/models``, ``workspace/specs`` or ``workspace/logs``, created if missing."""
    if kind not in ("models", "specs", "logs"):  # logs: Parquet decision logs (``fairaudit.ui.live``, ``fairaudit.ui.dask_run``)
        raise ValueError(f"no workspace folder {kind!r}")
    path = root(env) / kind
    path.mkdir(exist_ok=True)
    return path


def display(path: Path, env: Mapping[str, str] | None = None) -> str:
    """``workspace/models/x.skops``: a path as the analyst should read it (relative to the workspace's parent)."""
    base = root(env)
    try:
        return str(Path(base.name) / path.relative_to(base))
    except ValueError:
        return path.name


def list_files(directory: Path) -> list[str]:
    """Names of the regular files in ``directory`` (no links, no hidden files), sorted."""
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir()
                  if _FILE.match(p.name) and not p.is_symlink() and p.is_file())


def path_in(directory: Path, name: str) -> Path:
    """``directory/name`` for a bare file name; ``WorkspaceError`` for anything that is not one."""
    name = (name or "").strip()
    if not _FILE.match(name) or ".." in name:
        raise WorkspaceError(f"{name!r} is not a file name here: use letters, digits, '_', '-' and '.', "
                             "starting with a letter or digit (no folders)")
    path = directory / name
    if path.is_symlink():
        raise WorkspaceError(f"{name} is a link; the dashboard reads only files inside its workspace")
    if path.resolve().parent != directory.resolve():
        raise WorkspaceError(f"{name} is outside the workspace")
    return path


def read_bytes(directory: Path, name: str, limit_bytes: int | None = None) -> bytes:
    """The bytes of the file ``name`` in ``directory``; ``WorkspaceError`` when it is missing or too large."""
    path = path_in(directory, name)
    if not path.is_file():
        raise WorkspaceError(f"{name} is not in {directory.name}/ (any more)")
    size = path.stat().st_size
    if limit_bytes is not None and size > limit_bytes:
        from fairaudit.ui.logic import too_large_message

        raise WorkspaceError(too_large_message(name, size, limit_bytes, "model"))
    return path.read_bytes()


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (a temporary file in the same folder, then a rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def model_suffix(model) -> str:
    """The file ending of a model saved by ``Model.save`` in a format that cannot run code."""
    kind = getattr(model, "kind", "")
    if kind == "mlp":
        return ".pt"
    if kind == "nnet" or type(model).__name__ == "NNetModel":
        return ".nnet"
    return ".skops"


def save_model(model, name: str, directory: Path, overwrite: bool = False) -> Path:
    """Save ``model`` as ``directory/<name><suffix>`` (atomically). A file that came out as a pickle is deleted
    and refused: the dashboard never writes a file that would run code when loaded."""
    stem = (name or "").strip()
    for suffix in (".skops", ".pt", ".nnet"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    path = path_in(directory, stem + model_suffix(model))
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path.name} exists already; tick 'overwrite' to replace it")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=path.suffix)
    os.close(fd)
    try:
        model.save(tmp)
        with open(tmp, "rb") as fh:
            head = fh.read(2)
        if head.startswith(PICKLE_MAGIC):
            raise WorkspaceError("this model can only be written as a pickle, which could run code when loaded; "
                                 "not saved (a fairaudit with skops model files is needed)")
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path
