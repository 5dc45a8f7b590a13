"""Logs in object storage: a folder or glob of Parquet files behind an fsspec URL (``s3://bucket/logs/``), read as a
``FileLog`` — the same schema rule and the same conform step on every part — through the filesystem's package (e.g.
s3fs, on the client and on every worker of a Dask cluster). A CSV log in object storage is not read.
"""
from __future__ import annotations

import os
from pathlib import Path

from fairaudit.base.errors import DataError, FairauditError
from fairaudit.sources.files import READ_ROWS, FileLog, not_interrupted

PARQUET_SUFFIXES = (".parquet", ".pq")


def is_url(text: str) -> bool:
    return "://" in text and not text.startswith("file://")


def log_items(source) -> list[str]:
    return [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else [os.fspath(s) for s in source]


def log_parts(source) -> list[str]:
    """The parts of ``source`` — the Dask partitions, in their order: a local CSV or Parquet file, a folder of parts,
    a glob or a list of them as ``fairaudit.sources.list_parts`` lists them (natural name order: ``part-2`` before
    ``part-10``), the Parquet files under a URL through fsspec. ``FairauditError`` when there is none."""
    from fairaudit.sources.files import list_parts, natural_key

    items = log_items(source)
    if not items:
        raise FairauditError("no log given: name a file, a folder of parts or a glob")
    remote = [i for i in items if is_url(i)]
    if not remote:
        return list_parts([i.removeprefix("file://") for i in items] if len(items) > 1 else
                          items[0].removeprefix("file://"))
    if len(remote) < len(items):
        raise FairauditError("a log's parts are all in object storage or all on this machine, not both: "
                             f"{remote[0]} and {next(i for i in items if not is_url(i))}")
    found: list[str] = []
    for item in remote:
        found += remote_files(item)
    found = sorted(dict.fromkeys(found), key=natural_key)
    if not found:
        raise FairauditError(f"no Parquet files (*.parquet, *.pq) found at {source}")
    return found


def remote_files(url: str) -> list[str]:
    """Parquet files under an fsspec URL (needs the filesystem's package, e.g. s3fs; tested on a local S3 server:
    ``tests/test_dask_object_storage.py``). Any failure to reach or list the storage (no package, no credentials, no
    such bucket, no network) is one line."""
    try:
        import fsspec

        fs, _, paths = fsspec.get_fs_token_paths(url)
        protocol = url.split("://", 1)[0]
        out, absent = [], []
        for path in paths:
            if fs.isdir(path):
                out += [p for p in fs.find(path) if Path(p).suffix.lower() in PARQUET_SUFFIXES]
            elif any(c in path for c in "*?["):
                out += [p for p in fs.glob(path) if Path(p).suffix.lower() in PARQUET_SUFFIXES]
            elif fs.exists(path):
                out.append(path)
            else:
                absent.append(path)
    except ImportError as err:
        raise FairauditError(f"cannot read {url}: {err}") from None
    except Exception as err:  # noqa: BLE001 - the storage's own errors (botocore's credentials, HTTP, …): one line
        said = " ".join(str(err).split())[:300] or type(err).__name__
        raise FairauditError(f"cannot list {url}: {said} (check the URL, the credentials and the network)") from None
    if absent:
        raise FairauditError(f"nothing at {url}: no such file or folder (check the URL)")
    return [p if "://" in p else f"{protocol}://{p}" for p in out]


class RemoteLog(FileLog):
    """A Parquet log in object storage (an fsspec URL such as ``s3://bucket/logs/``): a ``FileLog`` — the same
    schema rule (the first part's stored types) and the same conform step on every part — whose parts are listed
    (``remote_files``) and read through fsspec (the filesystem's package, e.g. s3fs, on the client and on every
    worker). Parquet only: a CSV log in object storage is not read."""

    def __post_init__(self):
        self.parts, self.format = log_parts(self.source), "parquet"
        bad = next((p for p in self.parts if not p.lower().endswith(PARQUET_SUFFIXES)), None)
        if bad is not None:
            raise DataError(f"{bad} is not a Parquet file (*.parquet, *.pq): a log in object storage is read as "
                            "Parquet")
        self.schema = self._fix_schema()

    def _fragment(self, path, dictionary=()):
        import pyarrow.dataset as ds

        try:
            import fsspec

            fs, inner = fsspec.core.url_to_fs(path)
            stored = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=set(dictionary)))
            return next(iter(ds.dataset(inner, format=stored, filesystem=fs).get_fragments()))
        except ImportError as err:
            raise DataError(f"cannot read {path}: {err}") from None
        except Exception as err:  # noqa: BLE001 - the storage's own errors (credentials, HTTP, a damaged file)
            raise DataError(f"cannot read {path}: {' '.join(str(err).split())[:240] or type(err).__name__}") \
                from None

    def _raw_batches(self, path, columns=None, block=1 << 22, rows=READ_ROWS, dictionary=()):
        """A part's batches as stored; ``dictionary``: text columns read as the file's dictionaries (as
        ``FileLog._raw_batches``)."""
        import pyarrow as pa

        fragment = self._fragment(path, dictionary)
        try:
            yield from fragment.to_batches(columns=columns, batch_size=rows, use_threads=False)
        except (OSError, pa.ArrowException) as err:
            not_interrupted(err)
            raise DataError(f"cannot read {path}: {' '.join(str(err).split())[:240]}") from None
