"""The repaired model: a ``ThresholdModel`` (``fairaudit.models.thresholds``) over the original, and how it is saved.

A threshold repair is saved as JSON naming its base model's file and that file's sha256, so the base must be a file:
a model loaded from a file is named by its path; a model fairaudit trained in memory is saved first, beside the JSON
(``<name>-base.skops``, or ``.pt`` for an mlp), in its own safe format. Every output is checked before anything is
written (``fairaudit.core.outputs.check_output``): never onto an input, never over a file of another kind.
"""
from __future__ import annotations

from pathlib import Path

from fairaudit.base.errors import FairauditError
from fairaudit.models.thresholds import ThresholdModel, file_sha256


def repaired_model(base, group_by, thresholds: dict, default: float, *, base_path=None) -> ThresholdModel:
    """The wrapper over ``base`` (``base_path``: the file it was loaded from, if any, with its current hash)."""
    sha = file_sha256(base_path) if base_path is not None else None
    return ThresholdModel(base, group_by, thresholds, default, base_path=base_path, base_sha256=sha,
                          note="chosen by fairaudit repair on search rows; certified on other rows")


def check_save(model: ThresholdModel, path, *, inputs=(), force: bool = False) -> list[Path]:
    """The files ``save`` will write (the JSON, and the base model's file when it has none), checked as outputs
    first; ``FairauditError`` (one line) otherwise."""
    from fairaudit.core.outputs import check_output

    target = check_output(path, "model", inputs=inputs, force=force, what="repaired model")
    out = [target]
    if model.base_path is None:
        base = base_target(target, getattr(model.base, "kind", ""))
        if base.resolve() == target.resolve():
            raise FairauditError(f"the repaired model and its base model would both be written to {target}")
        out.append(check_output(base, "model", inputs=inputs, force=force, what="base model"))
    return out


def save(model: ThresholdModel, path, *, inputs=(), force: bool = False) -> list[Path]:
    """Save ``model`` to ``path`` (and its base model beside it when the base has no file); the paths written."""
    written = check_save(model, path, inputs=inputs, force=force)
    if model.base_path is None:
        if not hasattr(model.base, "save"):
            raise FairauditError(f"the base model ({model.base.describe()}) cannot be saved, so neither can its repair")
        base = written[1]
        model.base.save(base)
        model.base_path, model.base_sha256 = str(base), file_sha256(base)
    model.save(written[0])
    return written


def base_target(path, kind: str) -> Path:
    """Where the base model (of training ``kind``) of a repair saved to ``path`` goes when it has no file yet."""
    path = Path(path)
    return path.with_name(f"{path.stem}-base.{'pt' if kind == 'mlp' else 'skops'}")
