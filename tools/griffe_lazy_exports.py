"""Griffe extension for the documentation build (``mkdocs.yml``): document a package's public names as Python
sees them at run time.

Griffe reads the source without running it, which misses two things in fairaudit:

* ``fairaudit/__init__.py`` keeps ``import fairaudit`` cheap by importing ``audit``, ``confirm`` and
  ``AuditResult`` only on first access (a module ``__getattr__``): griffe does not see them at all;
* ``fairaudit.spec`` exports the function ``validate``, imported from its submodule of the same name: griffe
  takes the name for the submodule (its "member-submodule shadowing").

Once the package is loaded, this extension imports it, asks each documented package for every name in its
``__all__``, and where griffe's member is missing or is a module that Python does not return, makes the name an
alias of the object Python returns (found in griffe's tree by its ``__module__`` and ``__qualname__``). The API
reference can therefore name only ``fairaudit.X`` and ``fairaudit.spec.X``, whichever module defines them today.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

import griffe

PACKAGES = ("fairaudit", "fairaudit.spec")   # the packages whose __all__ the API reference documents


def _walk(root: griffe.Module, path: str) -> griffe.Object | griffe.Alias:
    """The object at a dotted path under ``root`` (``fairaudit.api.audit``), before any alias is resolved."""
    parts = path.split(".")
    if parts[0] != root.name:
        raise KeyError(path)
    obj: Any = root
    for part in parts[1:]:
        obj = obj.members[part]
    return obj


class LazyExports(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != PACKAGES[0].split(".")[0]:
            return
        root = str(Path(pkg.filepath).resolve().parent.parent)   # the checkout being documented
        if root not in sys.path:
            sys.path.insert(0, root)
        for name in PACKAGES:
            self._fix(pkg, _walk(pkg, name), importlib.import_module(name))

    def _fix(self, root: griffe.Module, package: griffe.Module, module: Any) -> None:
        where = Path(module.__file__).resolve()
        if where != Path(package.filepath).resolve():
            raise RuntimeError(f"{package.path} imports from {where}, not from the checkout being documented "
                               f"({package.filepath}); run mkdocs from the repository root")
        for export in package.exports or ():
            name = str(export)
            value = getattr(module, name)
            member = package.members.get(name)
            if member is not None and not (member.is_module and not inspect.ismodule(value)):
                continue   # griffe already sees what Python sees
            if inspect.ismodule(value):
                continue
            target = _walk(root, f"{value.__module__}.{value.__qualname__}")
            if member is not None:
                # a submodule shadows the name: first resolve the package's aliases that go through it, since
                # its path will lead to the function from now on
                prefix = member.path + "."
                for alias in list(package.members.values()):
                    if alias.is_alias and alias.target_path.startswith(prefix):
                        alias.target = _walk(root, alias.target_path)
            package.set_member(name, griffe.Alias(name, target, parent=package))
