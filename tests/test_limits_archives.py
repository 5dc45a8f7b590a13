"""Issue 27 (part 4): compressed inputs are bounded by their unpacked size before anything is unpacked.

A skops or torch file is a zip archive; a ``.csv.gz`` a gzip stream. Each is refused with one sentence when its
member count or unpacked size passes ``fairaudit.base.limits`` (declared first, then counted while inflating in blocks),
from the Python API, the dashboard's upload route and the CLI (exit 2). The bombs are built by ``tests.bombs`` in
milliseconds; most tests lower the limit, and one of each kind is real size (1 GiB unpacked).
"""
from __future__ import annotations

import gzip
import io
import subprocess
import sys
import time
import zipfile

import numpy as np
import pandas as pd
import pytest

from fairaudit import models
from fairaudit.base import limits
from fairaudit.data import from_csv
from fairaudit.data.gzipped import gunzip
from fairaudit.base.errors import DataError, ModelError
from fairaudit.models import archives
from tests.bombs import deflate_zeros, gzip_zeros, skops_bomb, zip_archive

GIB = 1 << 30


def _one_line(message: str) -> None:
    assert "\n" not in message and "Traceback" not in message


# ---- zip archives (skops, torch) ---------------------------------------------------------------------------------


def test_a_real_size_skops_bomb_is_refused_at_once_from_its_directory():
    data = skops_bomb(GIB)  # about 1 MB that unpacks to 1 GiB
    assert len(data) < 2 * limits.MB
    started = time.perf_counter()
    with pytest.raises(ModelError) as err:
        models.load_bytes(data, "bomb.skops")
    assert time.perf_counter() - started < 2.0
    message = str(err.value)
    _one_line(message)
    assert "bomb.skops would unpack to 1.0 GB" in message and "limit of 512 MB" in message
    assert limits.UNPACKED_ENV in message


def test_the_unpacked_limit_counts_every_member_and_reads_the_environment(monkeypatch, tmp_path):
    data = zip_archive([(f"a{i}.npy", deflate_zeros(3 * limits.MB), 8, 3 * limits.MB) for i in range(3)]
                       + [("schema.json", b"{}", 0, 2)])
    monkeypatch.setenv(limits.UNPACKED_ENV, "8")  # 9 MB in all, each member under the limit
    with pytest.raises(ModelError, match=r"would unpack to 9\.0 MB .*limit of 8\.0 MB"):
        models.load_bytes(data, "three.skops")
    path = tmp_path / "three.skops"
    path.write_bytes(data)
    with pytest.raises(ModelError, match="would unpack to 9.0 MB"):
        models.load(path)


def test_a_header_that_lies_about_its_size_gains_nothing(monkeypatch):
    """The directory declares 1 KB, the member inflates to 1 GiB: the reading stops (zipfile stops at the declared
    size, the count stops at the limit) and the file is refused, in well under a second and without the GiB."""
    data = skops_bomb(GIB, declared=1024)
    started = time.perf_counter()
    with pytest.raises(ModelError) as err:
        models.load_bytes(data, "liar.skops")
    assert time.perf_counter() - started < 2.0
    _one_line(str(err.value))
    assert "liar.skops is a damaged zip archive" in str(err.value)


def test_the_bounded_read_stops_past_the_limit_even_if_zipfile_did_not(monkeypatch):
    """Belt and braces: were zipfile to hand out more than a member declares, the count still stops the read."""
    data = skops_bomb(4 * limits.MB, declared=1024)
    monkeypatch.setattr(zipfile.ZipExtFile, "_update_crc", lambda self, newdata: None)  # no checksum stop
    original = zipfile.ZipFile.open

    def open_whole(self, name, *args, **kwargs):  # as if the member declared its real size
        info = self.getinfo(name) if isinstance(name, str) else name
        info.file_size = max(info.file_size, 4 * limits.MB)
        return original(self, info, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", open_whole)
    with pytest.raises(ModelError, match="unpacks to more than 2.0 MB, the limit .* declares 1.1 KB"):
        archives.check_zip(data, "liar.skops", max_bytes=2 * limits.MB)


def test_too_many_members_are_refused_before_zipfile_reads_the_directory(monkeypatch):
    data = zip_archive([(f"m{i}", b"", 0, 0) for i in range(limits.ARCHIVE_MEMBERS + 1)])
    parsed = []
    monkeypatch.setattr(zipfile.ZipFile, "_RealGetContents", lambda self: parsed.append(1))
    for name in ("many.skops", "many.pt"):
        with pytest.raises(ModelError) as err:
            models.load_bytes(data, name)
        assert f"{name} is a zip archive of {limits.ARCHIVE_MEMBERS + 1:,} members, over the limit of " \
               f"{limits.ARCHIVE_MEMBERS:,}" in str(err.value)
    assert not parsed


def test_a_torch_state_dict_zip_gets_the_same_bound(monkeypatch):
    """torch.save's archive with its members deflated (torch reads it: a 1 MB file of a 1 GiB tensor loaded in 4 s
    and 1.4 GB); here 16 MB of zeros against a limit lowered to 8 MB."""
    torch = pytest.importorskip("torch")
    buf = io.BytesIO()
    torch.save({"w": torch.zeros(4 * limits.MB)}, buf)
    stored = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in stored.infolist():
            archive.writestr(info.filename, stored.read(info.filename))
    data = packed.getvalue()
    assert len(data) < limits.MB and torch.load(io.BytesIO(data), weights_only=True)["w"].numel() == 4 * limits.MB
    monkeypatch.setenv(limits.UNPACKED_ENV, "8")
    with pytest.raises(ModelError, match=r"m.pt would unpack to 16\.0 MB .*limit of 8\.0 MB"):
        models.load_bytes(data, "m.pt")


def test_saved_models_still_load_under_the_limits(tmp_path):
    from tests.test_models import synthetic

    ds = synthetic()
    for kind in ("logreg", "mlp"):
        model = models.train(ds, kind, seed=0)
        path = tmp_path / f"m.{'pt' if kind == 'mlp' else 'skops'}"
        model.save(path)
        assert models.load(path).content_hash == model.content_hash
        assert models.load_bytes(path.read_bytes(), path.name).content_hash == model.content_hash


def test_the_dashboard_upload_route_refuses_a_bomb_in_words(monkeypatch):
    pytest.importorskip("streamlit")
    from fairaudit.ui import flows

    with pytest.raises(ModelError, match="would unpack to 1.0 GB"):
        flows.load_model_bytes(skops_bomb(GIB), "bomb.skops")


# ---- .csv.gz --------------------------------------------------------------------------------------------------------


def test_a_real_size_gzip_bomb_is_refused_at_once():
    data = gzip_zeros(GIB, prefix=b"a,b\n")
    assert len(data) < 2 * limits.MB
    started = time.perf_counter()
    with pytest.raises(DataError) as err:
        from_csv(data, name="bomb.csv.gz")
    assert time.perf_counter() - started < 2.0
    _one_line(str(err.value))
    assert "bomb.csv.gz declares 1.0 GB once decompressed (its gzip trailer), over the limit of 512 MB" in \
        str(err.value)


def test_a_gzip_trailer_that_lies_is_caught_by_the_count(monkeypatch):
    """The trailer says 100 bytes; the stream inflates past the (lowered) limit: decompression stops there."""
    data = gzip_zeros(64 * limits.MB, prefix=b"a,b\n")
    data = data[:-4] + (100).to_bytes(4, "little")
    monkeypatch.setenv(limits.UNPACKED_ENV, "4")
    seen = []
    original = gunzip.__globals__["zlib"].decompressobj

    class Counting:
        def __init__(self, *args):
            self.inner = original(*args)

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def decompress(self, data, max_length=0):
            out = self.inner.decompress(data, max_length)
            seen.append(len(out))
            return out

    monkeypatch.setattr(gunzip.__globals__["zlib"], "decompressobj", Counting)
    with pytest.raises(DataError, match="unpacks to more than 4.0 MB, the limit for a decompressed .csv.gz"):
        from_csv(data, name="liar.csv.gz")
    assert sum(seen) <= 5 * limits.MB  # it stopped one block past the limit, not at 64 MB


def test_gunzip_reads_what_gzip_reads():
    rng = np.random.default_rng(0)
    for payload in (b"a,b\n1,2\n", rng.bytes(3_000_000), b""):
        packed = gzip.compress(payload)
        assert gunzip(packed, "x") == payload
        both = packed + b"\x00\x00" + gzip.compress(b"more")  # members one after the other, zero padding between
        assert gunzip(both, "x") == gzip.decompress(both)
    frame = pd.DataFrame({"a": [1, 2, 3], "g": ["x", "y", "x"]})
    packed = gzip.compress(frame.to_csv(index=False).encode())
    assert from_csv(packed, name="ok.csv.gz").frame["a"].tolist() == [1, 2, 3]
    for broken in (packed[:-6], packed + b"junk"):
        with pytest.raises(DataError, match="is not a valid gzip file"):
            from_csv(broken, name="bad.csv.gz")


def test_the_dashboard_and_the_cli_refuse_a_gzip_bomb(tmp_path):
    pytest.importorskip("streamlit")
    from fairaudit.ui import flows

    data = gzip_zeros(GIB, prefix=b"a,b\n")
    with pytest.raises(DataError, match="over the limit of 512 MB for a decompressed .csv.gz"):
        flows.parse_upload(data, "bomb.csv.gz")
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(data)
    model = tmp_path / "bomb.skops"
    model.write_bytes(skops_bomb(GIB))
    for argv in (["--data", str(path), "--pred", "a > 0", "--spec", "E[pred] > 0.5"],
                 ["--data", "german", "--model", str(model), "--spec", "E[pred] > 0.5"]):
        done = subprocess.run([sys.executable, "-m", "fairaudit", "audit", *argv], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "over the limit of 512 MB" in done.stderr


def test_zip_helper_writes_archives_zipfile_reads():
    data = zip_archive([("a.txt", b"hello", 0, 5)])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["a.txt"] and archive.getinfo("a.txt").file_size == 5
