"""``audit()``: one call from (data, spec, decisions) to an ``AuditResult`` (re-exported as ``fairaudit.audit``)."""
from __future__ import annotations

from fairaudit.errors import FairauditError
from fairaudit.trace import AuditResult

ENGINES = ("monitor",)


def _dataset(data):
    if hasattr(data, "frame") and hasattr(data, "schema"):
        return data
    from fairaudit import data as data_module

    return data_module.resolve(data) if hasattr(data_module, "resolve") else data_module.load(data)


def _spec(spec):
    if hasattr(spec, "nodes") and hasattr(spec, "root"):
        return spec
    from fairaudit.spec import parse

    return parse(str(spec))


def audit(data, spec, engine: str = "monitor", model=None, pred: str | None = None, where: str | None = None,
          delta: float = 0.05, batch: int = 5, split: str = "equal", bound: str = "hoeffding",
          order: str = "shuffle", seed: int = 0, rows: str | None = None, stop: bool = False,
          time_budget: float | None = None, on_step=None, iterate: bool = False, trust_pickle: bool = False,
          trusted_types=()) -> AuditResult:
    """Audit ``data`` (a ``Dataset`` or a built-in name / CSV path) against ``spec`` (text or ``Spec``).

    ``model``: a ``Model``, a training kind (``logreg`` ...) or a saved-model path; ``pred``: a
    condition over the rows used as the decision instead (``"decile_score <= 4"``, true = favourable).
    ``order``: ``"shuffle"`` (default, seeded by ``seed``) or ``"given"`` (file order; the guarantee then
    assumes that order is random). ``rows``: ``"held-out"`` (default when fairaudit trained the model
    on this dataset), or ``"all"``. A model path is loaded safely (``fairaudit.models.load``): a pickle only
    with ``trust_pickle=True``, a skops file's extra types only when named in ``trusted_types`` — both run
    or build code chosen by the file's author. See ``fairaudit.engines.monitor`` for the other options.

    Everything is validated first (``fairaudit.preflight``: the spec against the data, the decision,
    the row filter, the options), before a model is trained: an error raises ``FairauditError``
    (``ValidationError`` for the spec, with every problem positioned); warnings are recorded in
    ``result.warnings``. ``on_step(step, total)`` reports progress and stops the run when it returns
    ``False``. With ``iterate=True`` the call returns a generator of partial ``AuditResult``s instead
    (the last one is complete; closing it stops the run), which is how the dashboard draws the run live.
    """
    from fairaudit.preflight import Source, preflight

    check_options(engine=engine, delta=delta, batch=batch, split=split, bound=bound, order=order, seed=seed,
                  rows=rows, time_budget=time_budget)
    if model is not None and pred is not None:
        raise FairauditError("give either a model or a decision expression (pred), not both")
    ignored = _ignored_headers(spec)
    dataset, spec = _dataset(data), _spec(spec)
    found = ignored + preflight(dataset, spec, decision=Source(pred, "pred") if pred is not None else None,
                      where=Source(where, "where") if where else None, uses_model=model is not None)
    from fairaudit.engines.monitor import monitor

    return monitor(dataset, spec, model=model, pred=pred, where=where, delta=float(delta), batch=int(batch),
                   split=split, bound=bound, order=order, seed=int(seed), rows=rows, stop=stop,
                   time_budget=time_budget, on_step=on_step, iterate=iterate, warnings=[str(w) for w in found],
                   trust_pickle=trust_pickle, trusted_types=tuple(trusted_types))


def _ignored_headers(spec) -> list[str]:
    """A spec text's ``# where:`` / ``# delta:`` / ``# order:`` / ``# decision:`` headers are applied by the command
    line, not by this function (its keyword arguments are the options): say so rather than audit silently
    without them."""
    if not isinstance(spec, str):
        return []
    from fairaudit.spec.files import read_headers

    named = [key for key in read_headers(spec) if key in ("where", "delta", "order", "decision")]
    if not named:
        return []
    keywords = ", ".join(f"{'pred' if k == 'decision' else k}=..." for k in named)
    return [f"the specification's {', '.join('# ' + k + ':' for k in named)} header(s) are not applied by "
            f"fairaudit.audit(); pass {keywords} (the command line applies them)"]


def check_options(*, engine="monitor", delta=0.05, batch=5, split="equal", bound="hoeffding", order="shuffle",
                  seed=0, rows=None, time_budget=None) -> None:
    """Refuse an option value before any work (one line each, naming the option and what it takes)."""
    import math
    import numbers

    from fairaudit.bounds.allocation import SPLITS
    from fairaudit.bounds.concentration import BOUNDS
    from fairaudit.engines.monitor import ROWS
    from fairaudit.spec.files import ORDERS

    if engine not in ENGINES:
        raise FairauditError(f"unknown engine {engine!r}; available here: {', '.join(ENGINES)}")
    try:
        delta = float(delta)
    except (TypeError, ValueError):
        raise FairauditError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not 0 < delta < 1:
        raise FairauditError(f"delta must be in (0, 1), got {delta:g}")
    if isinstance(batch, bool) or not isinstance(batch, numbers.Integral) or batch < 1:
        raise FairauditError(f"batch must be a positive whole number, got {batch!r}")
    if split not in SPLITS:
        raise FairauditError(f"unknown split {split!r}; choose one of: {', '.join(SPLITS)}")
    if bound not in BOUNDS:
        raise FairauditError(f"unknown bound {bound!r}; choose one of: {', '.join(BOUNDS)}")
    if order not in ORDERS:
        raise FairauditError(f"unknown order {order!r}; choose one of: {', '.join(ORDERS)}")
    if rows is not None and rows not in ROWS:
        raise FairauditError(f"unknown rows policy {rows!r}; choose one of: {', '.join(ROWS)}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**63:
        raise FairauditError(f"seed must be a whole number from 0 to 2**63 - 1, got {seed!r}")
    if time_budget is not None:
        try:
            budget = float(time_budget)
        except (TypeError, ValueError):
            budget = math.nan
        if not budget > 0:
            raise FairauditError(f"time budget must be a positive number of seconds, got {time_budget!r}")
