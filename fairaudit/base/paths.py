"""Where the bundled folders (``data/``, ``specs/``) are: in a checkout, next to the package; in a
wheel install, under ``<prefix>/share/fairaudit/`` (pyproject's ``data-files``)."""
from __future__ import annotations

import os
import sysconfig
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2]


def bundled(name: str) -> Path:
    """The folder ``name`` (``"data"`` or ``"specs"``). ``FAIRAUDIT_DATA`` overrides ``data``."""
    if name == "data" and os.environ.get("FAIRAUDIT_DATA"):
        return Path(os.environ["FAIRAUDIT_DATA"])
    local = _CHECKOUT / name
    if local.is_dir():
        return local
    installed = Path(sysconfig.get_path("data")) / "share" / "fairaudit" / name
    return installed if installed.is_dir() else local
