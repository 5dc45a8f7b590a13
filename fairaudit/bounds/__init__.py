"""What several engines share: concentration bounds (``concentration``), inference rules (``rules``) and the
fixed-sample interval (``fixed_sample``). The δ allocation over a spec's leaves is ``fairaudit.core.allocation``."""
from fairaudit.bounds.concentration import (BOUNDS, BettingBound, Bound, HoeffdingBound, MixtureBound,
                                            betting_interval, get_bound, hoeffding_delta, hoeffding_radius,
                                            mixture_interval)
from fairaudit.bounds.rules import FALSE, RULES, TRUE, UNKNOWN, Interval

__all__ = ["BOUNDS", "Bound", "HoeffdingBound", "MixtureBound", "BettingBound", "get_bound", "hoeffding_radius",
           "hoeffding_delta", "mixture_interval", "betting_interval", "RULES", "Interval", "TRUE", "FALSE",
           "UNKNOWN"]
