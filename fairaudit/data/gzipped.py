"""Decompressing a ``.csv.gz`` with a bound on the unpacked size: :func:`gunzip` is
``fairaudit.sources.compressed.gunzip``, the one bounded reader every route's ``.csv.gz`` goes through."""
from __future__ import annotations

from fairaudit.sources.compressed import BLOCK, MAX_RATIO, gunzip

__all__ = ["BLOCK", "MAX_RATIO", "gunzip"]
