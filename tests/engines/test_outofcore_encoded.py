"""Dictionary-encoded text (Parquet's categorical columns) read without its text per row (issue 30): conformed once
per distinct value (``conform``), kept encoded for the readers that only count (``encoded=True``), and every route
giving the same answer on the same rows — in memory, out of core, and a Dask worker's partition codes (its
per-row frame evaluation is the reference)."""
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fairaudit.api import audit
from fairaudit.engines.monitor.distributed import Task, partition_codes
from fairaudit.sources.parts import log_partitions
from fairaudit.engines.monitor.outofcore import audit_file
from fairaudit.sources import FileLog
from fairaudit.sources.conform import conform, decoded

VALUES = ["A", " A", "B ", "", "C", "NA", None]


def _messy(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    race = pd.Categorical(rng.choice(np.array(VALUES, dtype=object), n), categories=["A", " A", "B ", "", "C", "NA",
                                                                                       "unused"])
    sex = pd.Categorical(rng.choice(np.array(["F", "M", " M"], dtype=object), n))
    return pd.DataFrame({"race": race, "sex": sex, "points": rng.integers(0, 10, n)})


def test_an_encoded_chunk_is_the_plain_one(tmp_path):
    path = tmp_path / "log.parquet"
    _messy(1, 2000).to_parquet(path, index=False)
    log = FileLog(path)
    plain = [b.table for b in log.batches(rows=300)]
    encoded = [b.table for b in log.batches(rows=300, encoded=True)]
    assert pa.types.is_dictionary(encoded[0].schema.field("race").type)
    assert not pa.types.is_dictionary(plain[0].schema.field("race").type)
    for a, b in zip(plain, encoded):
        assert decoded(b).equals(a)
        assert b.column("race").null_count == a.column("race").null_count  # "" is missing: a null index
    raw = pa.table({"race": pa.array([" A", "", None, "B"]).dictionary_encode()})
    text = conform(raw, log.schema, origin="x", columns=["race"])
    assert text.column("race").to_pylist() == ["A", None, None, "B"]


SPECS = ['E[pred | race == "A"] - E[pred | race == "?"] < 0.3',
         'E[pred | race == "A"] > 0.2 and E[pred | sex == "M"] - E[pred | sex == "F"] < 0.4']


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(40, 600), spec=st.sampled_from(SPECS),
       order=st.sampled_from(["given", "shuffle"]), where=st.sampled_from([None, "points > 2", 'sex == "M"']))
def test_every_route_gives_the_same_answer(tmp_path_factory, seed, n, spec, order, where):
    folder = tmp_path_factory.mktemp("log")
    frame = _messy(seed, n)
    frame.to_parquet(folder / "log.parquet", index=False)
    frame.astype(object).to_csv(folder / "log.csv", index=False)
    a = audit(str(folder / "log.csv"), spec, pred="points > 4", where=where, order=order, seed=3, trace_points=None)
    b = audit_file(folder / "log.parquet", spec, pred="points > 4", where=where, order=order, seed=3,
                   trace_points=None, read_rows=97)
    assert (a.verdict, a.stop_step, a.verdict_step, a.steps) == (b.verdict, b.stop_step, b.verdict_step, b.steps)
    for name in ("steps", "estimate", "lo", "hi", "delta", "verdict", "n"):
        assert np.array_equal(getattr(a.trace_table, name), getattr(b.trace_table, name), equal_nan=True), name
    # (out of core gives no row-count warnings: they need every row before the run, outofcore's module doc)
    assert [w for w in a.warnings if "satisf" not in w] == b.warnings


@pytest.mark.parametrize("where", [None, "points > 2", 'race == "C"'])
def test_a_dask_partition_is_encoded_as_its_frame_is_evaluated(tmp_path, where):
    path = tmp_path / "part-0.parquet"
    _messy(4, 3000).to_parquet(path, index=False)
    log = FileLog(path)
    spec = 'E[pred | race == "A"] - E[pred | race == "?"] < 0.3 and E[pred | sex == "M"] > 0.1'
    task = Task(spec, pred="points > 4", where=where)
    part, = log_partitions(log, ["race", "sex", "points"])
    fast = partition_codes(part, task)  # read encoded, evaluated per distinct combination
    # the reference: every row of the part's frame evaluated (the decision, the filter, every leaf), then encoded
    from fairaudit.core.counting import encode
    from fairaudit.core.evaluate import compile_spec
    from fairaudit.core.observations import event_array3, observe
    from fairaudit.spec import parse, parse_event

    frame = part.frame()
    pred = (frame["points"] > 4).to_numpy().astype(np.int8)
    keep, known = (np.ones(len(frame), bool),) * 2 if where is None else \
        event_array3(parse_event(where), frame, pred, None, None)
    kept = frame[keep].reset_index(drop=True)
    obs = observe(parse(spec), kept, pred=pred[keep])
    keys = compile_spec(parse(spec)).leaf_keys
    assert fast.before == len(frame)
    assert fast.unknown[0] == int((~known).sum())
    assert np.array_equal(fast.codes, encode(obs, keys))
    assert (fast.missing or {}) == (obs.missing or {})
