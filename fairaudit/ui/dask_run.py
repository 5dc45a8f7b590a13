"""The Audit page's Dask option: a Parquet log of the workspace folder audited on a local Dask cluster.

The logs are ``workspace/logs/NAME.parquet`` or ``workspace/logs/NAME/`` (a folder of ``*.parquet`` files; its
own regular files only: no links, no subfolders). A browser names a log by its bare name, never a path, and never
a scheduler address: the cluster is always a ``LocalCluster`` started on this machine for the run
(``fairaudit.engines.monitor.distributed``; ``--scheduler`` is command-line only). The session's decisions audit the log:
its decision expression, or the model the session already holds in memory (shipped to the workers by Dask, never
loaded from a file for this). The cluster's progress — partitions read out of the total — is the run's progress
message, drawn by the page's one progress bar (``fairaudit.ui.progress``).
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from fairaudit.base.errors import FairauditError
from fairaudit.ui import state, workspace
from fairaudit.ui.state import remembered_checkbox

LOGS = "logs"
CHECKBOX_KEY = "audit_dask"
LOG_KEY = "audit_dask_log"
SUFFIX = ".parquet"


def logs_folder(env=None) -> Path:
    return workspace.folder(LOGS, env)


def log_names(env=None) -> list[str]:
    """The Parquet logs in ``workspace/logs``: ``NAME.parquet`` files and folders holding such files."""
    folder = logs_folder(env)
    out = []
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink() or entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix.lower() == SUFFIX:
            out.append(entry.name)
        elif entry.is_dir() and workspace.list_files(entry) and any(n.lower().endswith(SUFFIX)
                                                                    for n in workspace.list_files(entry)):
            out.append(entry.name + "/")
    return out


def log_files(name: str, env=None) -> list[str]:
    """The Parquet files of the log ``name`` (as ``log_names`` lists it), checked to be inside the workspace, in
    natural name order (a list of files is read in the order given)."""
    folder = logs_folder(env)
    bare = name[:-1] if name.endswith("/") else name
    path = workspace.path_in(folder, bare)
    if path.is_file():
        return [str(path)]
    if not path.is_dir():
        raise FairauditError(f"{name} is not in {LOGS}/ (any more)")
    from fairaudit.sources.files import natural_key

    files = [str(workspace.path_in(path, f)) for f in workspace.list_files(path) if f.lower().endswith(SUFFIX)]
    if not files:
        raise FairauditError(f"{name} holds no Parquet files")
    return sorted(files, key=natural_key)  # the partitions' order: part-2 before part-10, as for a folder


def dask_picker(engine) -> dict | None:
    """The checkbox "Run on a local Dask cluster" and the log to audit (for an engine that runs on Dask:
    ``fairaudit.engines.monitor.distributed.runs_on_dask``); the run's ``choice["dask"]``
    (``{"log": name}``) or None."""
    from fairaudit.engines.monitor.distributed import runs_on_dask

    if not runs_on_dask(engine):
        return None
    names = log_names()
    if not names:
        st.caption(f"A Parquet decision log put in the workspace folder ({workspace.display(logs_folder())}/) can be "
                   "audited on a local Dask cluster.")
        return None
    if not remembered_checkbox("Run on a local Dask cluster", key=CHECKBOX_KEY,
                               help="Audit a Parquet log of the workspace folder instead of the dataset's rows: a "
                                    "Dask cluster started on this machine reads and evaluates its partitions, the "
                                    "result is the same as in process. The log must have the columns the "
                                    "specification and the decisions read."):
        return None
    if st.session_state.get(LOG_KEY) not in names:
        st.session_state[LOG_KEY] = names[0]
    name = st.selectbox("Parquet log", names, key=LOG_KEY,
                        help=f"A .parquet file or a folder of them in {workspace.display(logs_folder())}/; a "
                             "folder's files are read in natural name order")
    return {"log": name}


def log_iterator(choice: dict, spec_text: str, decisions: dict, on_progress=None):
    """The partial results of the audit of the log of ``choice["dask"]`` (``decisions``: ``{"model": m}`` or
    ``{"pred": text}``), on a local cluster started for the run."""
    from fairaudit.engines.monitor.distributed import audit_parquet

    files = log_files(choice["dask"]["log"])
    where = (choice.get("where") or "").strip() or None
    return audit_parquet(files, spec_text, where=where, iterate=True, on_progress=on_progress, **decisions,
                         ranges=state.declared_ranges() or None, **dict(choice.get("options") or {}))
