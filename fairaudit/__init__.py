"""fairaudit: iterative fairness auditing with guarantees.

The library works without Streamlit. Entry points:

* ``fairaudit.data.load(name)`` / ``fairaudit.data.from_csv(...)`` -> ``Dataset``
* ``fairaudit.models.train(dataset, kind)`` -> ``Model``
* ``fairaudit.spec.parse(text)`` -> ``Spec``
* ``fairaudit.audit(data, spec, engine=..., model=..., pred=..., **options)`` -> ``AuditResult``
  (engines: ``fairaudit.engines.names()``; an engine's options: ``fairaudit.engines.get(name).options``)
* ``fairaudit.scan(data, protected, depth=2, pred=..., ...)`` -> ``ScanResult``: every intersection of the protected
  attributes, each cell's rate and impact ratio with intervals that hold at once (``fairaudit.subgroups``)
* ``fairaudit.compare(data, spec, models=[...], preds=[...], ...)`` -> ``CompareResult``: two or more models on the
  same rows, each one's values and paired anytime-valid intervals on their differences (``fairaudit.comparison``)
* ``fairaudit.confirm(data, spec, node, ...)`` -> ``AuditResult``: a threshold chosen on part of the rows, certified
  on the rest
* ``fairaudit.repair(data, spec, model, group_by=..., objective=...)`` -> ``RepairResult``: decision thresholds on the
  model's score that make the spec hold, chosen on part of the rows and certified by the monitor on the rest
  (``fairaudit.repairs``, ``docs/methods/repair.md``)
* ``fairaudit.report.build_pdf(result)`` -> PDF bytes
"""
__version__ = "0.1.0"

from fairaudit import _moved

_moved.install()  # the import paths before 0.2 keep working for one release (CHANGELOG.md)

__all__ = ["audit", "compare", "confirm", "repair", "scan", "AuditResult", "__version__"]


def __getattr__(name):  # lazy: ``import fairaudit`` stays cheap, ``fairaudit.audit`` loads the engine
    if name == "audit":
        from fairaudit.api import audit

        return audit
    if name == "scan":
        from fairaudit.api import scan

        return scan
    if name == "compare":
        from fairaudit.api import compare

        return compare
    if name == "confirm":
        from fairaudit.api import confirm

        return confirm
    if name == "repair":
        from fairaudit.api import repair

        return repair
    if name == "AuditResult":
        from fairaudit.core.trace import AuditResult

        return AuditResult
    raise AttributeError(f"module 'fairaudit' has no attribute {name!r}")
