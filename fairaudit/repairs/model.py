"""The repaired model: a ``ThresholdModel`` (``fairaudit.models.thresholds``) over the original, and how it is saved.

A threshold repair is saved as JSON naming its base model's file (in the JSON's folder or below) and that file's
sha256, so the base must be a file there: a model loaded from a file in that folder is named by its path; one from
elsewhere is copied beside the JSON (``<name>-base`` with its suffix); a model fairaudit trained in memory is saved
first, beside the JSON (``<name>-base.skops``, or ``.pt`` for an mlp), in its own safe format. Every output is
checked before anything is written (``fairaudit.core.outputs.check_output``): never onto an input, never over a file
of another kind.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from fairaudit.base.errors import FairauditError
from fairaudit.models.thresholds import ThresholdModel, file_sha256, inside


def repaired_model(base, group_by, thresholds: dict, default: float, *, base_path=None) -> ThresholdModel:
    """The wrapper over ``base`` (``base_path``: the file it was loaded from, if any, with its current hash)."""
    sha = file_sha256(base_path) if base_path is not None else None
    return ThresholdModel(base, group_by, thresholds, default, base_path=base_path, base_sha256=sha,
                          note="chosen by fairaudit repair on search rows; certified on other rows")


def check_save(model: ThresholdModel, path, *, inputs=(), force: bool = False) -> list[Path]:
    """The files ``save`` will write (the JSON, and the base model's file when it has none in the JSON's folder),
    checked as outputs first; ``FairauditError`` (one line) otherwise."""
    from fairaudit.core.outputs import check_output

    target = check_output(path, "model", inputs=inputs, force=force, what="repaired model")
    out = [target]
    base = base_destination(target, model.base_path, getattr(model.base, "kind", ""))
    if base is not None:
        if base.resolve() == target.resolve():
            raise FairauditError(f"the repaired model and its base model would both be written to {target}")
        out.append(check_output(base, "model", inputs=inputs, force=force, what="base model"))
    return out


def save(model: ThresholdModel, path, *, inputs=(), force: bool = False) -> list[Path]:
    """Save ``model`` to ``path``, and its base model beside it when the base has no file (saved in its own safe
    format) or a file outside the JSON's folder (copied, byte for byte: a saved repair names a base file in its own
    folder or below, ``fairaudit.models.thresholds``); the paths written."""
    from fairaudit.core.outputs import write_atomically

    written = check_save(model, path, inputs=inputs, force=force)
    if len(written) > 1:
        base = written[1]
        if model.base_path is None:
            if not hasattr(model.base, "save"):
                raise FairauditError(f"the base model ({model.base.describe()}) cannot be saved, so neither can its "
                                     "repair")
            model.base.save(base)
        else:
            data = Path(model.base_path).read_bytes()
            if model.base_sha256 is not None and hashlib.sha256(data).hexdigest() != model.base_sha256:
                raise FairauditError(f"the base model file {model.base_path} changed after the thresholds were chosen: "
                                     "repair it again")
            write_atomically(base, data, what="base model")
        model.base_path, model.base_sha256 = str(base), file_sha256(base)
    model.save(written[0])
    return written


def base_destination(target, base_path, kind: str) -> Path | None:
    """Where the base model of a repair saved to ``target`` must be written: None when it already has a file in
    ``target``'s folder or below; else ``NAME-base`` with the base file's suffix (a model without a file: ``.skops``,
    ``.pt`` for an mlp)."""
    target = Path(target)
    if base_path is not None and inside(Path(base_path), target.parent):
        return None
    suffix = Path(base_path).suffix if base_path is not None and Path(base_path).suffix else \
        (".pt" if kind == "mlp" else ".skops")
    return target.with_name(f"{target.stem}-base{suffix}")
