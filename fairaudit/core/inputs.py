"""What an engine audits: the dataset, the model or decision expression, the audited rows — and their provenance.

``Inputs.build`` resolves a model (a ``Model``, a saved-model path loaded safely, or a training kind), turns a
decision expression into decisions, chooses the audited rows (held-out by default when fairaudit trained the
model on this very dataset; restricted to ``where``) and records what identifies all of it (hashes) for the
report. Engines read these fields; none computes them. The slots ``population``, ``network`` and ``domain``
are for engines that audit a population program, a Bayesian network or an input domain instead of rows.

This module holds the data structure and what every engine shares (rows, a model, a population program read from
a file); what only one engine knows how to derive (a population program generated from a dataset, a network's
input domain) is that engine's ``Engine.derive_inputs``, which hands its pieces to ``from_generated`` /
``over_domain``. Which constructor a run needs is decided once, by ``fairaudit.resolve``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairaudit.base.errors import FairauditError

ROWS = ("held-out", "all")


@dataclass
class Inputs:
    dataset: Any = None
    model: Any = None  # a Model; for a decision expression, the expression's model (kind "expression")
    pred: str | None = None  # the decision expression, when decisions come from one
    where: str | None = None
    positions: np.ndarray | None = None  # audited row positions (file order), None before rows are chosen
    decisions: np.ndarray | None = None  # 0/1 per dataset row (true = favourable); a class model's classes (object)
    scores: np.ndarray | None = None
    labels: np.ndarray | None = None
    rows: dict = field(default_factory=dict)  # the "rows" record: policy, audited, total, text
    provenance: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    population: Any = None
    network: Any = None
    domain: Any = None
    generated: dict | None = None  # a population generated from the dataset and the model: text, variables

    def has(self, need: str) -> bool:
        """Whether the input ``need`` (``fairaudit.core.engine.INPUT_NAMES``) is present."""
        if need == "decisions":
            return self.decisions is not None
        if need == "model":
            return self.model is not None and self.pred is None
        return getattr(self, need, None) is not None

    @property
    def reprediction_model(self):
        """The model ``Fair[...]`` re-predicts with (None for decisions from an expression)."""
        return None if self.pred is not None else self.model

    def audited(self, array):
        """``array`` (one entry per dataset row) restricted to the audited rows, in file order."""
        if array is None:
            return None
        return np.asarray(array) if self.positions is None else np.asarray(array)[self.positions]

    def describe(self) -> dict:
        """The inputs part of a result's ``options`` (what was audited, as the user named it)."""
        if self.population is not None and self.dataset is not None:  # a population generated from data + model
            return {"data": getattr(self.dataset, "name", None),
                    "population": self.provenance.get("population", {}).get("name"),
                    "model": self.model.describe() if self.model is not None else None, "pred": None,
                    "where": None, "rows": self.rows.get("policy")}
        if self.population is not None:
            return {"data": None, "population": self.provenance.get("population", {}).get("name"),
                    "model": None, "pred": None, "where": None, "rows": self.rows.get("policy")}
        model = self.reprediction_model
        return {"data": getattr(self.dataset, "name", None), "model": model.describe() if model is not None else None,
                "pred": self.pred, "where": self.where, "rows": self.rows.get("policy")}

    @classmethod
    def build_population(cls, population, *, samples: int | None, warnings=()) -> "Inputs":
        """Inputs for auditing a population program (a parsed ``Program``, a ``.fr`` path or a
        ``fairaudit.programs.population.Population``): ``population`` holds the parsed program; there is no
        dataset, model or row policy. The provenance records the program's file name and the sha256 of its text."""
        from fairaudit.programs.population import load

        pop = load(population)
        if samples is None:  # an engine that reads the program itself, not individuals drawn from it
            rows = {"policy": "program", "text": f"every individual of the population program {pop.name} (no sampling)"}
        else:
            rows = {"policy": "sampled", "audited": int(samples), "total": int(samples),
                    "text": f"up to {int(samples):,} individuals sampled from {pop.name}"}
        return cls(population=pop.program, rows=rows, provenance={"dataset": None, "model": None,
                                                                  "population": pop.record()},
                   warnings=[str(w) for w in warnings])

    @classmethod
    def from_generated(cls, dataset, model, program, text: str, variables: dict, *, structure: str = "independent",
                       name: str | None = None, warnings=()) -> "Inputs":
        """Inputs for auditing ``model`` (a ``Model``) over ``program``, a population program generated from
        ``dataset`` (its text ``text``; ``variables`` maps each drawn column to its variable) by the engine that
        requires a population (``Engine.derive_inputs``: fairsquare's generator): the program in ``population``
        (its text in ``generated["text"]``), the dataset and the model kept for the report, and a provenance saying
        all three."""
        import hashlib

        name = name or f"generated from {dataset.name} ({structure})"
        facts = provenance(dataset, model)
        facts["population"] = {"name": name, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                               "generated": f"generated population ({structure})", "dataset": dataset.name}
        rows = {"policy": "program",
                "text": f"every individual of the population program {name} (each column drawn "
                        f"{'independently' if structure == 'independent' else 'within its protected group'}), "
                        f"decided by {model.describe()} (no sampling)"}
        return cls(dataset=dataset, model=model, population=program, rows=rows, provenance=facts,
                   warnings=[str(w) for w in warnings],
                   generated={"text": text, "variables": variables, "structure": structure})

    @classmethod
    def over_domain(cls, model, domain, dataset=None, *, warnings=()) -> "Inputs":
        """Inputs for auditing ``model`` (a ReLU network, a ``Model``) over its input domain ``domain`` instead of
        rows (the box the engine that requires a model computed: ``Engine.derive_inputs``, fairquant's
        ``model_domain``: a ``.nnet`` file's input bounds, else ``dataset``'s column ranges); the provenance names
        the model (and the dataset whose ranges make the domain)."""
        import math

        grid = math.prod(int(f.hi - f.lo) + 1 for f in domain.features if f.kind != "real")
        real = [f.name for f in domain.features if f.kind == "real"]
        source = "the network's input bounds" if dataset is None else f"the column ranges of {dataset.name}"
        text = (f"every individual of the input domain ({source}: {grid:,} grid points"
                + (f" × the intervals of {', '.join(real)}" if real else "") + "), not rows")
        return cls(dataset=dataset, model=model, domain=domain, rows={"policy": "domain", "text": text},
                   provenance=provenance(dataset, model), warnings=[str(w) for w in warnings])

    @classmethod
    def build(cls, dataset, *, model=None, pred: str | None = None, where: str | None = None,
              rows: str | None = None, seed: int = 0, trust_pickle: bool = False, trusted_types=(),
              warnings=(), include_protected: bool = False) -> "Inputs":
        if model is not None and pred is not None:
            raise FairauditError("give either a model or a decision expression (pred), not both")
        warnings = [str(w) for w in warnings]
        model_obj = resolve_model(model, dataset, seed, trust_pickle=trust_pickle, trusted_types=trusted_types,
                                  include_protected=include_protected)
        if pred is not None:
            from fairaudit.models import from_expression

            model_obj = from_expression(pred, dataset)
            warnings += [w for w in model_obj.warnings if w not in warnings]
        positions, record = audited_rows(dataset, model_obj if pred is None else None, rows)
        labels = dataset.labels
        decisions = scores = None
        if model_obj is not None and getattr(model_obj, "classes", None) is not None:
            decisions = model_obj.decisions_for(dataset.frame)  # each row's class; such a model has no single score
        elif model_obj is not None:
            frame = dataset.frame
            if hasattr(model_obj, "score_and_predict"):  # one pass over the rows for both (one encoding)
                scores, decisions = model_obj.score_and_predict(frame)
                scores = check_scores(np.asarray(scores, dtype=float))
            else:
                scores = check_scores(np.asarray(model_obj.score(frame), dtype=float)) \
                    if hasattr(model_obj, "score") else None
                decisions = model_obj.predict(frame)
            decisions = np.asarray(decisions).astype(np.int8)
        if where:
            from fairaudit.core.observations import event_array3, where_missing_warning
            from fairaudit.spec import parse_event
            from fairaudit.spec.events import missing_names

            base = np.arange(len(dataset)) if positions is None else positions
            event = parse_event(where)
            mask, known = event_array3(event, dataset.frame, decisions, labels, scores)
            unknown = np.zeros(len(dataset), dtype=bool)
            unknown[base] = ~known[base]  # a row the filter is unknown on is left out, and the run is told
            if unknown.any():
                columns = missing_names(event, dataset.frame, unknown, pred=decisions, label=labels, score=scores)
                warnings.append(where_missing_warning(where, int(unknown.sum()), columns))
            positions = base[mask[base]]
            record = {**record, "audited": int(len(positions)),
                      "text": f"{len(positions):,} rows matching {where}, among {record['text']}"}
            if not len(positions):
                from fairaudit.core.observations import nothing_to_audit

                raise nothing_to_audit(where)
        # (logged decisions: no model, but a column of classes is recorded with its classes, for the report)
        facts = provenance(dataset, model_obj if pred is None or getattr(model_obj, "classes", None) else None)
        return cls(dataset=dataset, model=model_obj, pred=pred, where=where, positions=positions,
                   decisions=decisions, scores=scores, labels=labels, rows=record, provenance=facts,
                   warnings=warnings)


def split_audited(inputs: Inputs, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The audited rows of ``inputs`` split at random (``seed``) into two parts: ``(first, second)``, sorted dataset
    positions, the first with ``round(share × rows)`` of them. What a threshold chosen on part of the rows and
    certified on the rest reads (``fairaudit.confirm``, ``fairaudit.repair``); ``FairauditError`` when either part
    would be empty."""
    if not 0 < float(share) < 1:
        raise FairauditError(f"share must be in (0, 1): the part of the rows that chooses the threshold, got {share!r}")
    from fairaudit.models.training import split_positions

    audited = np.arange(len(inputs.dataset)) if inputs.positions is None else np.asarray(inputs.positions)
    first, second = split_positions(audited, share, seed)
    if not len(first) or not len(second):
        raise FairauditError(f"{len(audited):,} audited rows cannot be split into two non-empty parts at {share:g}")
    return first, second


def part(inputs: Inputs, positions: np.ndarray, text: str) -> Inputs:
    """``inputs`` restricted to the dataset rows ``positions`` (a part of its audited rows), described by ``text``."""
    from dataclasses import replace

    return replace(inputs, positions=positions, rows={**inputs.rows, "audited": int(len(positions)), "text": text})


def check_scores(scores: np.ndarray) -> np.ndarray:
    """``scores``, or ``FairauditError`` where one is not a finite number (NaN scores would silently decide 0)."""
    if not np.isfinite(scores).all():
        bad = np.flatnonzero(~np.isfinite(scores))
        raise FairauditError(f"the model's score is not a number for {len(bad):,} row(s) (first: row "
                             f"{bad[0] + 1:,}); check those rows for missing or extreme values, or drop them")
    return scores


def resolve_model(model, dataset, seed: int = 0, *, trust_pickle: bool = False, trusted_types=(),
                  include_protected: bool = False):
    """A ``Model``: passed through; a string: a saved-model path (loaded safely: ``fairaudit.models.load``
    with the given trust), else a training kind, trained as everywhere a model is trained here
    (``fairaudit.models.recipe.train_model``: the default features — no label, identifier or logged-decision column,
    and the protected attributes only with ``include_protected`` — the default held-out share, ``seed``)."""
    if model is None or hasattr(model, "predict"):
        return model
    from fairaudit import models

    if os.path.exists(str(model)):
        return models.load(str(model), trust_pickle=trust_pickle, trusted_types=trusted_types)
    from fairaudit.models.recipe import train_model

    return train_model(dataset, str(model), seed=seed, include_protected=include_protected)


def audited_rows(dataset, model, rows: str | None) -> tuple[np.ndarray | None, dict]:
    """``(positions or None for all rows, the "rows" record of the result)`` for a rows policy.

    ``rows=None`` means held-out when fairaudit trained ``model`` on this very dataset (the rows it did
    not train on, ``fairaudit.models.held_out_positions``), else all. Label-based metrics measured on
    training rows are optimistic, so ``"all"`` with such a model says how many training rows it includes.
    """
    from fairaudit.models import held_out_positions

    if rows is not None and rows not in ROWS:
        raise FairauditError(f"unknown rows policy {rows!r}; choose one of: {', '.join(ROWS)}")
    held = held_out_positions(model, dataset) if model is not None else None
    total = len(dataset)
    if rows is None:
        rows = "held-out" if held is not None else "all"
    if rows == "held-out":
        if held is None:
            why = ("the decisions come from an expression, not a trained model" if model is None
                   or getattr(model, "kind", "") == "expression" else
                   "the model was not trained by fairaudit on this dataset, so which rows it trained on is unknown")
            raise FairauditError(f"cannot audit held-out rows only: {why}; use rows 'all' (--rows all)")
        params = getattr(model, "params", None) or {}
        chosen = params.get("chosen_on")
        from fairaudit.models.training import chosen_on_matches

        if chosen_on_matches(chosen, dataset):
            trained = "trained the model nor " if chosen.get("base_rows") != "all" else ""
            return held, {"policy": "held-out", "audited": int(len(held)), "total": total,
                          "chosen_share": float(chosen["share"]), "split_seed": int(chosen["seed"]),
                          "text": f"{len(held):,} rows of {dataset.name} that neither {trained}chose the repair's "
                                  f"thresholds (the certification part of its split, seed {int(chosen['seed'])})"}
        from fairaudit.models.recipe import held_out

        return held, held_out(model, dataset).record()  # the one record of a trained model's held-out rows
    if held is not None:
        text = (f"all {total:,} rows of {dataset.name}, including the {total - len(held):,} the model was "
                "trained on (label-based metrics such as TPR, FPR and accuracy are optimistic on them)")
    elif model is not None and getattr(model, "kind", "") != "expression":
        record = (getattr(model, "params", None) or {}).get("trained_on")
        where = (f"on {record.get('dataset')}, not on exactly these rows" if isinstance(record, dict)
                 else "outside fairaudit")
        text = (f"all {total:,} rows of {dataset.name} (the model was trained {where}: if some of them trained "
                "it, label-based metrics are optimistic on those)")
    else:
        text = f"all {total:,} rows of {dataset.name}"
    return None, {"policy": "all", "audited": total, "total": total, "text": text}


def provenance(dataset, model) -> dict:
    """The facts that identify what was audited, recorded in the result for the report."""
    facts: dict = {"dataset": None, "model": None}
    if dataset is not None:
        s = dataset.schema
        facts["dataset"] = {"name": dataset.name, "rows": len(dataset), "content_hash": dataset.content_hash,
                            "hash_of": getattr(dataset, "hash_of", None),
                            "source": dataset.source, "label": s.label,
                            "favourable": None if s.favourable is None else str(s.favourable),
                            "protected": list(s.protected)}
    if model is not None:
        facts["model"] = {"kind": model.kind, "params": getattr(model, "params", {}),
                          "content_hash": getattr(model, "content_hash", None), "description": model.describe()}
    return facts
