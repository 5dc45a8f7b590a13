"""The model options shared by the commands that apply a model to a dataset (audit, ...).

    --model KIND|PATH   a kind (logreg, tree, gbm, mlp): train it on the data now, seeded with --seed, as every
                        route trains one (``fairaudit.models.recipe``: the default features, without the
                        protected attributes; the default held-out share);
                        or a model file: saved by `fairaudit train` (skops / torch), a .nnet network,
                        or your own scikit-learn classifier saved with skops. These formats cannot run
                        code; anything else (a pickle, e.g. an old .joblib) is refused.
    --trust-pickle      also load a pickle/joblib model file: this RUNS CODE stored in the file, so
                        only for files whose author you trust
    --trust-type NAME   a type a skops model file may use beyond fairaudit's own (repeatable); the
                        error for such a file lists the names it needs
    --pred EXPR         no model: the decision is a condition over the data, true = the favourable
                        outcome, e.g. "decile_score <= 4" (COMPAS: low risk is favourable)
                        (for auditing logged decisions); mutually exclusive with --model
    --favourable-class C  with a --model file that decides among several classes: read it as yes/no, favourable
                        where its class is C (repeatable: several favourable classes)
    --seed S            seed of the training split and of the learner (default 0)
    --no-cache          train a --model KIND now; otherwise the same training (same data, kind, seed,
                        settings and library versions) is read back from the model cache
                        (``fairaudit.models.cache``: $FAIRAUDIT_CACHE_DIR, else ~/.cache/fairaudit)
"""
from __future__ import annotations

import argparse
from pathlib import Path

from fairaudit import models
from fairaudit.data.dataset import Dataset
from fairaudit.base.errors import ModelError
from fairaudit.models.training import KINDS, check_kind


def add_model_arguments(parser: argparse.ArgumentParser, required: bool = True,
                        seed_help: str = "seed for training a --model KIND (default 0)") -> None:
    """Add --model / --pred (one of them) and --seed to ``parser`` (--seed only if it has none yet)."""
    group = parser.add_argument_group("model")
    choice = group.add_mutually_exclusive_group(required=required)
    choice.add_argument("--model", metavar="KIND|PATH",
                        help=f"model kind to train on the data now ({', '.join(KINDS)}), or a model file: "
                             "from `fairaudit train` (.skops / .pt), a .nnet network, or your own scikit-learn "
                             "classifier saved with skops")
    choice.add_argument("--pred", metavar="EXPR",
                        help='audit logged decisions: a condition over the data that is true for the '
                             'FAVOURABLE outcome, e.g. "decile_score <= 4" (COMPAS: low risk) or '
                             '\'income == ">50K"\'; a 0/1 column also works')
    group.add_argument("--favourable-class", action="append", metavar="CLASS", dest="favourable_class",
                       help="with a --model file that decides among several classes (approve / refer / decline): "
                            "read it as yes/no, favourable where its class is CLASS (repeatable); without it, pred is "
                            "the class (E[pred == \"approve\" | ...])")
    group.add_argument("--trust-pickle", action="store_true",
                       help="also load a --model file that is a pickle (an old .joblib model): loading it RUNS CODE "
                            "stored in the file, so use this only for files whose author you trust")
    group.add_argument("--trust-type", action="append", default=[], metavar="TYPE",
                       help="a type a skops --model file may use beyond fairaudit's own (repeatable; the error for "
                            "such a file lists them): trust only types you know are harmless")
    if "--seed" not in parser._option_string_actions:
        from fairaudit.cli._values import SEED, typed

        group.add_argument("--seed", type=typed(SEED), default=0, help=seed_help)
    group.add_argument("--no-cache", action="store_true", dest="no_cache",
                       help="train a --model KIND now even if the same training ran before: a model trained on the "
                            "same data with the same kind, seed and settings is otherwise read back from the cache "
                            "($FAIRAUDIT_CACHE_DIR, else $XDG_CACHE_HOME/fairaudit or ~/.cache/fairaudit; "
                            "FAIRAUDIT_CACHE=off turns it off), the very model a new fit gives")


def model_from_args(args: argparse.Namespace, dataset: Dataset | None, on_progress=None) -> models.Model:
    """The model named by the parsed options, checked against ``dataset``'s columns."""
    if getattr(args, "pred", None) is not None:
        if dataset is None:
            raise ModelError("--pred EXPR is evaluated on the data: give --data")
        favourable_classes(args, None)  # (refused with logged decisions: they name their favourable classes)
        return models.from_expression(args.pred, dataset)
    spec = getattr(args, "model", None)
    if spec is None:
        raise ModelError("give --model KIND|PATH or --pred EXPR")
    if spec in KINDS:
        if dataset is None:
            raise ModelError(f"--model {spec} trains on the data: give --data")
        from fairaudit.models.recipe import train_model

        favourable_classes(args, None)
        return train_model(dataset, spec, seed=getattr(args, "seed", 0) or 0,
                           include_protected=bool(getattr(args, "include_protected", False)),
                           use_cache=not getattr(args, "no_cache", False), on_progress=on_progress)
    path = Path(spec)
    if not path.exists():
        if not path.suffix and len(path.parts) == 1:  # looks like a misspelt kind
            try:
                check_kind(spec)
            except ModelError as err:
                raise ModelError(f"{err}, or a model file path (no file '{spec}' here)") from None
        raise ModelError(f"no such model file: {spec}")
    model = favourable_classes(args, models.load(path, trust_pickle=bool(getattr(args, "trust_pickle", False)),
                                                 trusted_types=tuple(getattr(args, "trust_type", None) or ())))
    if dataset is not None:
        missing = [name for name in model.feature_names if name not in dataset.schema]
        if missing:
            raise ModelError(f"the model {path.name} reads column(s) {', '.join(missing[:5])}"
                             f"{' ...' if len(missing) > 5 else ''} that {dataset.name} does not have")
    return model


def favourable_classes(args: argparse.Namespace, model):
    """``model`` read as yes/no when ``--favourable-class`` names its favourable classes (``fairaudit.models.with_favourable``);
    ``model`` None (logged decisions, a kind to train): the flag is refused, with what to write instead."""
    chosen = getattr(args, "favourable_class", None)
    if not chosen:
        return model
    if model is None:
        if getattr(args, "pred", None) is not None:
            raise ModelError("--favourable-class is for a --model file with several classes; with logged decisions, "
                             "write the favourable classes as the decision: --pred 'COLUMN in {\"a\", \"b\"}'")
        raise ModelError("--favourable-class is for a --model file with several classes; a model trained here "
                         "decides yes/no")
    return models.with_favourable(model, chosen)
