"""Issue 29 part 2, one road: ``fairaudit.resolve`` decides which inputs an engine audits from what it requires and
what was given, and the import graph has no way back up (core and the engines never import the front ends)."""
from __future__ import annotations

import pytest

from fairaudit.core import registry
from fairaudit.base.errors import FairauditError
from fairaudit.resolve import KINDS, kind_of, resolve
from fairaudit.testing import toy_dataset


@pytest.mark.parametrize("engine,given,kind", [
    ("monitor", {}, "rows"), ("dataset", {}, "rows"), ("justicia", {"model": "logreg"}, "rows"),
    ("monitor", {"population": "x.fr"}, "population"), ("fairsquare", {"population": "x.fr"}, "population"),
    ("fairsquare", {"model": "logreg"}, "generated"), ("fairsquare", {}, "generated"),
    ("fairquant", {"model": "m.nnet"}, "domain"),
])
def test_the_inputs_follow_what_the_engine_requires(engine, given, kind):
    assert kind_of(registry.get(engine), **given) == kind and kind in KINDS


def test_a_plan_is_checked_before_any_work_and_builds_its_inputs_once():
    ds = toy_dataset(300)
    plan = resolve("dataset", ds, 'E[pred | sex == "F"] > 0.1', pred="age >= 40")
    assert plan.kind == "rows" and plan.preflight() == [] and plan.audited_spec(None) is plan.spec
    inputs = plan.inputs()
    assert inputs.has("decisions") and inputs.rows["policy"] == "all"
    with pytest.raises(FairauditError, match="where does not apply to a population generated"):
        resolve("fairsquare", ds, 'E[pred | sex == "F"] > 0.1', model="logreg", where="age > 3")


def test_an_engine_that_derives_nothing_says_what_it_needs():
    with pytest.raises(FairauditError, match="derives no inputs from a dataset and a model: give it a dataset"):
        registry.get("dataset").derive_inputs(None, None, {})


def test_core_and_the_engines_never_import_the_front_ends():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("fairaudit")
    up = ("fairaudit.api", "fairaudit.resolve", "fairaudit.cli", "fairaudit.ui")
    for module in graph.modules:
        if module.startswith(("fairaudit.core", "fairaudit.engines")):
            wrong = [m for m in graph.find_modules_directly_imported_by(module)
                     if m in up or m.startswith(tuple(u + "." for u in up))]
            assert not wrong, f"{module} imports {wrong}"
    for module in ("fairaudit.core.inputs", "fairaudit.core.preflight"):
        assert not [m for m in graph.find_modules_directly_imported_by(module) if m.startswith("fairaudit.engines")]
    for module in ("fairaudit.cli._stream_args", "fairaudit.cli._follow_args", "fairaudit.cli._dask_args",
                   "fairaudit.cli._common"):
        assert not {"fairaudit.cli.audit", "fairaudit.api"} & graph.find_modules_directly_imported_by(module)
