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
          order: str = "given", seed: int = 0, stop: bool = False, time_budget: float | None = None,
          on_step=None, iterate: bool = False) -> AuditResult:
    """Audit ``data`` (a ``Dataset`` or a built-in name / CSV path) against ``spec`` (text or ``Spec``).

    ``model``: a ``Model``, a training kind (``logreg`` ...) or a saved-model path; ``pred``: a
    condition over the rows used as the decision instead (``"decile_score > 3"``). See
    ``fairaudit.engines.monitor`` for the meaning of every option. ``on_step(step, total)`` reports
    progress and stops the run when it returns ``False``. With ``iterate=True`` the call returns a
    generator of partial ``AuditResult``s instead (the last one is complete; closing it stops the run),
    which is how the dashboard draws the run live.
    """
    if engine not in ENGINES:
        raise FairauditError(f"unknown engine {engine!r}; available here: {', '.join(ENGINES)}")
    if not 0 < float(delta) < 1:
        raise FairauditError(f"delta must be in (0, 1), got {delta}")
    from fairaudit.engines.monitor import monitor

    return monitor(_dataset(data), _spec(spec), model=model, pred=pred, where=where, delta=float(delta),
                   batch=int(batch), split=split, bound=bound, order=order, seed=seed, stop=stop,
                   time_budget=time_budget, on_step=on_step, iterate=iterate)
