"""A decision log in object storage (``s3://``) audited on Dask: a local S3 server (moto's, on 127.0.0.1) holds the
Parquet partitions; the workers read them through fsspec/s3fs like a bucket on a cloud, and the result equals the
in-process run on the same rows — from Python and from ``fairaudit audit --data s3://… --dask``. An unreadable
bucket is one line, exit 2."""
from __future__ import annotations

import json
import os
import socket

import pytest

from tests.engines.parquet_logs import PRED, SPEC, cli, frame, write_log

moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

pytestmark = pytest.mark.timeout(180)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    """``s3://logs/decisions/`` on a local S3 server, holding a 12-partition log (and the same rows as one CSV)."""
    folder = tmp_path_factory.mktemp("s3") / "log"
    write_log(frame(12_000), folder)
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION",
                                            "FSSPEC_S3_ENDPOINT_URL")}
    endpoint = f"http://127.0.0.1:{port}"
    os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION="us-east-1",
                      FSSPEC_S3_ENDPOINT_URL=endpoint)  # new processes (workers, CLI runs) read fsspec's config here
    import fsspec.config

    before = fsspec.config.conf.get("s3")
    fsspec.config.conf["s3"] = {**(before or {}), "endpoint_url": endpoint}  # this process imported fsspec already
    try:
        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        fs.mkdir("logs")
        for part in sorted(folder.glob("*.parquet")):
            fs.put(str(part), f"logs/decisions/{part.name}")
        yield folder
    finally:
        server.stop()
        if before is None:
            fsspec.config.conf.pop("s3", None)
        else:
            fsspec.config.conf["s3"] = before
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_s3_log_on_dask_equals_in_process(bucket):
    import fairaudit
    from fairaudit.engines.monitor.distributed import audit_parquet, dask_client
    from fairaudit.sources.remote import log_parts

    files = log_parts("s3://logs/decisions/")
    assert files[:3] == ["s3://logs/decisions/part-0.parquet", "s3://logs/decisions/part-1.parquet",
                         "s3://logs/decisions/part-2.parquet"] and len(files) == 12  # natural order
    a = fairaudit.audit(str(bucket.parent / "log.csv"), SPEC, pred=PRED, rows="all", order="given",
                        trace_points=None)
    with dask_client(workers=2, threads=1, timeout=60) as client:
        b = audit_parquet("s3://logs/decisions/", SPEC, pred=PRED, client=client, order="given", trace_points=None)
    assert (a.verdict, a.stop_step, a.steps) == (b.verdict, b.stop_step, b.steps)
    assert a.trace.equals(b.trace)


def test_cli_reads_the_bucket(bucket, tmp_path):
    common = ["--pred", PRED, "--spec", SPEC, "--order", "shuffle", "--seed", "3", "--trace-points", "0"]
    local = cli("--data", bucket.parent / "log.csv", *common, "--json", tmp_path / "a.json")
    remote = cli("--data", "s3://logs/decisions/", *common, "--dask", "--json", tmp_path / "b.json", timeout=150)
    assert local.returncode == remote.returncode and remote.returncode in (0, 1, 3), remote.stderr
    a, b = (json.loads((tmp_path / f"{x}.json").read_text()) for x in "ab")
    assert (a["verdict"], a["stop_step"], a["trace"]) == (b["verdict"], b["stop_step"], b["trace"])
    missing = cli("--data", "s3://logs/nothing-here/", *common, "--dask")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1, missing.stderr


def test_unreachable_storage_is_one_line(monkeypatch):
    """No credentials (or no network): one line naming the URL, never a traceback."""
    from fairaudit.sources.remote import log_parts
    from fairaudit.base.errors import FairauditError

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    s3fs.S3FileSystem.clear_instance_cache()
    with pytest.raises(FairauditError, match=r"cannot list s3://no-such-bucket/log/: .*credentials"):
        log_parts("s3://no-such-bucket/log/")
