"""The spec library: ``specs/*.spec`` files (no Streamlit; unit-tested)."""
from __future__ import annotations

import re
from pathlib import Path

from fairaudit._paths import bundled

SPEC_DIR = bundled("specs")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")


def list_specs(directory: Path = SPEC_DIR) -> list[str]:
    """Names (without ``.spec``) of the saved specifications, sorted."""
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.glob("*.spec") if p.is_file())


def read_spec(name: str, directory: Path = SPEC_DIR) -> str:
    return _path(name, directory).read_text(encoding="utf-8")


def save_spec(name: str, text: str, directory: Path = SPEC_DIR, overwrite: bool = False) -> Path:
    """Write ``text`` to ``specs/<name>.spec``. The name is letters, digits, ``_`` and ``-`` only (no paths)."""
    path = _path(name, directory)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path.name} exists already; tick 'overwrite' to replace it")
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip() + "\n", encoding="utf-8")
    return path


def _path(name: str, directory: Path) -> Path:
    name = name.strip()
    if name.endswith(".spec"):
        name = name[:-5]
    if not _NAME.match(name):
        raise ValueError("a spec name is 1–64 letters, digits, '_' or '-', starting with a letter or digit")
    return directory / f"{name}.spec"
