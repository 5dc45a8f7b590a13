"""The architecture page's layout and the README's engine package are the code's: a module added, moved or removed
without the page fails here."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fairaudit"


def _modules() -> dict[str, set[str]]:
    """folder (``fairaudit/`` or ``core/``) → its modules, without ``__init__``."""
    out = {}
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        label = "fairaudit/" if folder == PACKAGE else f"{folder.relative_to(PACKAGE).as_posix()}/"
        out[label] = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
    return out


def _layout_block() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layout", 1)[1]
    return re.search(r"```\n(.*?)```", section, re.S).group(1)


def test_the_layout_lists_every_module_of_every_folder():
    listed: dict[str, set[str]] = {}
    folder = None
    for line in _layout_block().splitlines():
        head = re.match(r"\s*(\S+/)(.*)", line)
        if head:
            folder, rest = head.group(1), head.group(2)
        else:
            rest = line
        listed.setdefault(folder, set()).update(rest.split())
    assert listed == _modules()


def test_the_readme_shows_an_engine_package_file_by_file():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(fairaudit/engines/(\w+)/\n.*?)```", readme, re.S)
    assert block, "the README's architecture section shows one engine's package"
    engine = block.group(2)
    files = set(re.findall(r"^\s+(\w+\.py)\b", block.group(1), re.M))
    assert files == {p.name for p in (PACKAGE / "engines" / engine).glob("*.py")}
    registry = (PACKAGE / "core" / "registry.py").read_text(encoding="utf-8")
    line = re.search(rf'"{engine}": "[^"]+"', block.group(1))
    assert line and line.group(0) in registry, "the README quotes the engine's registry line as it is"


def test_the_changelog_lists_every_moved_module():
    from fairaudit._moved import MOVED

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for old, new in MOVED.items():
        assert f"| `{old}` | `{new}` |" in changelog, f"CHANGELOG.md does not say {old} moved to {new}"
