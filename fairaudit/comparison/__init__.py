"""Paired comparison of models on the same rows (``compare``, re-exported as ``fairaudit.compare``) and its result (``CompareResult``)."""
from fairaudit.comparison.result import CompareResult, Difference
from fairaudit.comparison.run import compare

__all__ = ["compare", "CompareResult", "Difference"]
