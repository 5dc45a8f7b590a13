"""The import paths before 0.2 keep working for one release (CHANGELOG.md): the old name is the new module, and
says so with a DeprecationWarning."""
from __future__ import annotations

import importlib
import sys

import pytest

from fairaudit._moved import MOVED, new_name


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_gives_the_new_module(old):
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}"):
        sys.modules.pop(old, None)
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_a_moved_package_takes_its_modules_along():
    assert new_name("fairaudit.commands.audit") == "fairaudit.cli.audit"
    assert new_name("fairaudit.core.driver") is None  # a new path is not moved


def test_an_engine_package_reads_its_engine_lazily():
    from fairaudit.engines.monitor import Monitor
    from fairaudit.engines.monitor.engine import Monitor as Same

    assert Monitor is Same
    with pytest.raises(AttributeError):
        importlib.import_module("fairaudit.engines.justicia").no_such_name
