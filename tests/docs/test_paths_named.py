"""Every module, name and file of the library that the README, the docs or a docstring names exists: a move or a
rename that leaves a page behind fails here (the old paths of ``fairaudit._moved`` are named only there)."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from fairaudit._moved import new_name

ROOT = Path(__file__).resolve().parents[2]
TEXTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("**/*.md"), *(ROOT / "fairaudit").glob("**/*.py")])
TEXTS = [p for p in TEXTS if p.name != "_moved.py"]
DOTTED = re.compile(r"(?<![\w/.])fairaudit(?:\.\w+)+")
FILE = re.compile(r"(?<![\w/.])fairaudit/[\w/]+(?:\.\w+)?")


def _resolves(name: str) -> bool:
    """``fairaudit.a.b.c``: the longest importable module, then attributes."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        if module.endswith("__main__"):
            return True
        if new_name(module) is not None:  # an old path, kept working for one release: a page names the new one
            return False
        try:
            obj = importlib.import_module(module)
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_named_module_and_file_exists(path):
    text = path.read_text(encoding="utf-8")
    missing = sorted({m.group(0) for m in DOTTED.finditer(text) if not _resolves(m.group(0))}
                     | {m.group(0) for m in FILE.finditer(text)
                        if "NAME" not in m.group(0) and not (ROOT / m.group(0).rstrip("/")).exists()})
    assert not missing, f"{path.relative_to(ROOT)} names what does not exist: {', '.join(missing)}"
