"""The spec library (no Streamlit; unit-tested): the bundled ``specs/*.spec`` (read-only) and the specifications
saved in the workspace (``workspace/specs/``, the only place the dashboard writes one).

Only text that parses as a specification is saved; the name is a bare file name (letters, digits, ``_``, ``-``).
"""
from __future__ import annotations

import re
from pathlib import Path

from fairaudit.base.paths import bundled
from fairaudit.base.errors import FairauditError

SPEC_DIR = bundled("specs")
BUNDLED, WORKSPACE = "bundled", "workspace"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")


def workspace_dir() -> Path:
    from fairaudit.ui import workspace

    return workspace.folder("specs")


def list_specs(directory: Path = SPEC_DIR) -> list[str]:
    """Names (without ``.spec``) of the specifications in ``directory``, sorted (links are not followed)."""
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.glob("*.spec") if p.is_file() and not p.is_symlink()
                  and _NAME.match(p.stem))


def library(bundled_dir: Path = SPEC_DIR, workspace: Path | None = None) -> list[tuple[str, str]]:
    """``(origin, name)`` of every specification the Library offers: the workspace's first, then the bundled ones."""
    workspace = workspace_dir() if workspace is None else workspace
    return ([(WORKSPACE, n) for n in list_specs(workspace)] + [(BUNDLED, n) for n in list_specs(bundled_dir)])


def entry_label(entry: tuple[str, str]) -> str:
    origin, name = entry
    return f"{name} (saved, workspace/specs)" if origin == WORKSPACE else f"{name} (bundled example, read-only)"


def read_entry(entry: tuple[str, str], bundled_dir: Path = SPEC_DIR, workspace: Path | None = None) -> str:
    origin, name = entry
    directory = bundled_dir if origin == BUNDLED else (workspace_dir() if workspace is None else workspace)
    return read_spec(name, directory)


def read_spec(name: str, directory: Path = SPEC_DIR) -> str:
    path = _path(name, directory)
    if path.is_symlink():
        raise ValueError(f"{path.name} is a link; only files inside the folder are read")
    return path.read_text(encoding="utf-8")


def parse_problem(text: str) -> str | None:
    """Why ``text`` is not a specification (one line, with line and column), or None when it parses."""
    from fairaudit.spec import parse

    if not text.strip():
        return "the specification is empty"
    try:
        parse(text)
    except FairauditError as err:
        line = getattr(err, "line", None)
        where = f"line {line}, column {getattr(err, 'column', '?')}: " if line else ""
        return f"{where}{getattr(err, 'message', str(err))}"
    return None


def save_spec(name: str, text: str, directory: Path | None = None, overwrite: bool = False) -> Path:
    """Write ``text`` to ``<workspace>/specs/<name>.spec`` (atomically). The name is letters, digits, ``_`` and
    ``-`` only (no paths); ``text`` must parse as a specification (``ValueError`` otherwise); the bundled
    ``specs/`` folder is never written."""
    from fairaudit.ui import workspace

    directory = workspace_dir() if directory is None else directory
    if SPEC_DIR.exists() and directory.resolve() == SPEC_DIR.resolve():
        raise PermissionError("the bundled specs/ folder is read-only; specifications are saved in the workspace")
    path = _path(name, directory)
    problem = parse_problem(text)
    if problem is not None:
        raise ValueError(f"not saved: only a specification that parses is saved ({problem})")
    if path.is_symlink():
        raise ValueError(f"{path.name} is a link; not overwritten")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path.name} exists already; tick 'overwrite' to replace it")
    directory.mkdir(parents=True, exist_ok=True)
    workspace.write_text(path, text.rstrip() + "\n")
    return path


def _path(name: str, directory: Path) -> Path:
    name = name.strip()
    if name.endswith(".spec"):
        name = name[:-5]
    if not _NAME.match(name):
        raise ValueError("a spec name is 1–64 letters, digits, '_' or '-', starting with a letter or digit")
    return directory / f"{name}.spec"
