"""Paired comparison of models on the same rows (``compare``) and its result (``CompareResult``)."""
from fairaudit.compare.result import CompareResult, Difference
from fairaudit.compare.run import compare

__all__ = ["compare", "CompareResult", "Difference"]
