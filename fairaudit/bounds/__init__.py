"""Concentration bounds (``concentration``), inference rules (``rules``), δ allocation (``allocation``); rigorous
weighted volumes for the FairSquare engine in ``volume`` (imported on demand: ``from fairaudit.bounds import volume``)."""
from fairaudit.bounds.concentration import (BOUNDS, BettingBound, Bound, HoeffdingBound, MixtureBound,
                                            betting_interval, get_bound, hoeffding_delta, hoeffding_radius,
                                            mixture_interval)
from fairaudit.bounds.rules import FALSE, RULES, TRUE, UNKNOWN, Interval

__all__ = ["BOUNDS", "Bound", "HoeffdingBound", "MixtureBound", "BettingBound", "get_bound", "hoeffding_radius",
           "hoeffding_delta", "mixture_interval", "betting_interval", "RULES", "Interval", "TRUE", "FALSE",
           "UNKNOWN"]
