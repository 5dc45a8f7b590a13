"""Load a script that is not part of the package (``bench/``, ``tools/``) as a module, to test its functions."""
from __future__ import annotations

import importlib.util
from pathlib import Path


def load_script(path: Path, name: str):
    """The module that running ``path`` defines, under ``name`` (not added to ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
