"""The subgroup scan: every cell of every intersection of the protected attributes, with intervals that hold at once.

``scan(data, protected, depth=2, ...)`` -> ``ScanResult`` (also ``fairaudit.scan``); ``ScanStream`` for a growing
log. One job per module: ``cells`` (the attributes, the tables and their counts), ``allocation`` (Δ shared among the
intervals), ``intervals`` (rates, ratios, flags, rows to decide), ``wording`` (the guarantee sentence),
``result`` (``ScanResult``, ``Cell``, the JSON), ``regulatory`` (the NYC LL144 and EEOC tables, CSV) and ``scan``
(the driver). The mathematics and its proof: ``docs/methods/scan.md``.
"""
__all__ = ["scan", "ScanStream", "ScanResult", "Cell"]


def __getattr__(name):  # lazy: importing the package loads no numpy-heavy module
    if name in ("scan", "ScanStream"):
        from fairaudit.subgroups import scan as module

        return getattr(module, name)
    if name in ("ScanResult", "Cell"):
        from fairaudit.subgroups import result

        return getattr(result, name)
    raise AttributeError(f"module 'fairaudit.subgroups' has no attribute {name!r}")
