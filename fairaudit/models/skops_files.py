"""scikit-learn objects in skops's secure format (``skops.io``): nothing in the file can run code.

A skops file is a zip archive holding ``schema.json`` (which objects to rebuild, by type name) and
``.npy`` arrays. Loading rebuilds only the types it is told to trust: skops trusts plain containers,
numpy arrays and most scikit-learn estimators by default; anything else in a file is *untrusted* until
the caller names it.

* :data:`FAIRAUDIT_TYPES`: the extra types fairaudit's own kinds (``tree``, ``gbm``) need. They are
  trusted when loading any file: they are scikit-learn's fitted-tree containers, rebuilt from arrays.
* Any other untrusted type raises :class:`UntrustedTypesError` listing the type names, unless the caller
  passes them in ``trusted_types`` (after showing them to the user and asking).
"""
from __future__ import annotations

import io
import zipfile
from typing import Iterable

from fairaudit.base.errors import ModelError, first_line

FAIRAUDIT_TYPES = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
)
SCHEMA = "schema.json"


class UntrustedTypesError(ModelError):
    """A skops file needs types nobody has trusted yet; ``types`` lists their full names.

    Show them to the user, and only if they accept, load again with ``trusted_types=err.types``.
    """

    def __init__(self, name: str, types: Iterable[str], upload: bool = False):
        self.types = sorted(types)
        shown = ", ".join(self.types[:8]) + (f" and {len(self.types) - 8} more" if len(self.types) > 8 else "")
        how = ("it is not loaded from an upload or the dashboard; if you trust the file's author, audit it from the "
               "command line with --trust-type NAME" if upload else
               "trust them (--trust-type NAME / trusted_types=[...]) only if you trust the file's author")
        super().__init__(f"{name} needs {len(self.types)} type(s) that are not trusted: {shown}; {how}")


def is_skops_archive(archive: zipfile.ZipFile) -> bool:
    """True when the zip archive is laid out as a skops file (torch's archives have no top-level schema)."""
    return SCHEMA in archive.namelist()


def dump_bytes(obj) -> bytes:
    """``obj`` in skops format; ModelError if reading it back would need types beyond :data:`FAIRAUDIT_TYPES`
    (a scikit-learn release that changed its internals: better to fail at save than to write an unloadable file)."""
    import skops.io as sio

    data = sio.dumps(obj)
    extra = set(sio.get_untrusted_types(data=data)) - set(FAIRAUDIT_TYPES)
    if extra:
        raise ModelError(f"cannot save this model in the safe format: it needs the types {', '.join(sorted(extra))}")
    return data


def load_bytes(data: bytes, name: str, trusted_types: Iterable[str] = ()):
    """The object in skops bytes ``data``; :class:`UntrustedTypesError` if it needs a type that is neither
    one of :data:`FAIRAUDIT_TYPES` nor in ``trusted_types``; ModelError if the archive is damaged, or its sizes pass
    the limits: its ``schema.json`` has its own small cap, checked from the zip directory before skops parses it
    (``fairaudit.models.archives.check_metadata``; the caller bounds the whole archive first: ``check_zip``)."""
    import skops.io as sio

    from fairaudit.models.archives import check_metadata

    archive = open_zip(data, name)
    if archive is None:
        raise ModelError(f"{name} is a damaged skops file (not a zip archive)")
    with archive:
        check_metadata(archive, name)

    trusted = set(FAIRAUDIT_TYPES) | {str(t) for t in trusted_types}
    try:
        needed = set(sio.get_untrusted_types(data=data))
    except Exception as err:  # a damaged archive or schema: skops raises many types
        raise ModelError(f"{name} is a damaged skops file ({first_line(err)})") from None
    missing = needed - trusted
    if missing:
        raise UntrustedTypesError(name, missing)
    try:
        return sio.loads(data, trusted=sorted(needed))
    except Exception as err:
        raise ModelError(f"{name} is a damaged skops file ({first_line(err)})") from None


def open_zip(data: bytes, name: str = "the model file") -> zipfile.ZipFile | None:
    """``data`` as an open zip archive, or None when it is not one; ``ModelError`` when it holds more members than
    :data:`fairaudit.base.limits.ARCHIVE_MEMBERS` (counted before ``zipfile`` reads its directory)."""
    from fairaudit.models.archives import check_members

    check_members(data, name)
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError):
        return None
