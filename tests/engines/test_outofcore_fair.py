"""``Fair[...]`` out of core (``fairaudit.engines.monitor.outofcore``): each chunk's audited rows are re-predicted with the attribute
flipped over the values of the whole file, as in memory, so the verdict, stop step, every interval and the
counterexamples (the first 100 in stream order, their count at every check, their features, decisions, scores and
row numbers) equal the in-memory run's — in file order, in a shuffle held in memory (the in-memory permutation), in
a shuffle spilled to files (the order differs, so it is compared with an oracle: the in-memory run on the same
permutation), with a row filter and with a numeric column."""
import dataclasses

import numpy as np
import pytest

from fairaudit import data, models
from fairaudit.api import audit
from fairaudit.engines.monitor.outofcore import audit_file

SPEC = ('Fair[sex] > 0.5 and E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.05 and '
        'Fair[race] > 0.2')


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fairlogs")
    compas = data.load("compas")
    compas.frame.to_csv(folder / "log.csv", index=False)
    compas.frame.to_parquet(folder / "log.parquet", index=False)
    model = models.train(compas, "tree", seed=3)
    path = folder / "m.skops"
    model.save(path)
    return folder, path, models.load(path)


def same_run(a, b):
    assert (a.verdict, a.stop_step, a.steps) == (b.verdict, b.stop_step, b.steps)
    ta, tb = a.trace_table, b.trace_table
    assert np.array_equal(ta.steps, tb.steps)
    for name in ("estimate", "lo", "hi", "delta", "verdict", "n"):
        assert np.array_equal(getattr(ta, name), getattr(tb, name), equal_nan=True), name


def same_counterexamples(a, b):
    assert a.counterexamples is not None and b.counterexamples is not None
    assert a.counterexamples.to_dict() == b.counterexamples.to_dict()
    assert sum(leaf.total for leaf in a.counterexamples.leaves) > 0


@pytest.mark.parametrize("order", ["given", "shuffle"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_fair_equals_in_memory(setup, order, suffix):
    folder, path, model = setup
    a = audit(str(folder / "log.csv"), SPEC, model=str(path), rows="all", order=order, seed=5, trace_points=None)
    b = audit_file(folder / f"log{suffix}", SPEC, model=model, order=order, seed=5, trace_points=None, read_rows=800)
    same_run(a, b)
    same_counterexamples(a, b)
    assert len(b.counterexamples.leaves[0].examples) <= 100


def test_fair_with_a_row_filter_and_stop(setup):
    """The flips' positions and row numbers are those of the audited rows (``--where``); with ``stop`` the counts
    are those of the rows checked up to the decision."""
    folder, path, model = setup
    for order in ("given", "shuffle"):
        a = audit(str(folder / "log.csv"), SPEC, model=str(path), rows="all", where="priors_count > 3", order=order, seed=2,
                  stop=True, trace_points=None)
        b = audit_file(folder / "log.parquet", SPEC, model=model, where="priors_count > 3", order=order, seed=2, stop=True,
                       trace_points=None, read_rows=600)
        same_run(a, b)
        same_counterexamples(a, b)
        rows = [c.row for leaf in b.counterexamples.leaves for c in leaf.examples]
        priors = data.load("compas").frame["priors_count"].to_numpy()
        assert rows and all(priors[r] > 3 for r in rows)


def test_fair_numeric_column_sorted_values(setup, tmp_path):
    """A numeric column flips between its sorted distinct values over the whole file, in memory and out of core."""
    folder, path, model = setup
    frame = data.load("compas").frame
    spec = "Fair[priors_count] > 0.5"
    few = frame.assign(priors_count=np.minimum(frame["priors_count"], 4))
    few.to_csv(tmp_path / "few.csv", index=False)
    few.to_parquet(tmp_path / "few.parquet", index=False)
    a = audit(str(tmp_path / "few.csv"), spec, model=str(path), rows="all", order="shuffle", seed=1,
              trace_points=None)
    b = audit_file(tmp_path / "few.parquet", spec, model=model, order="shuffle", seed=1, trace_points=None,
                   read_rows=1000)
    same_run(a, b)
    same_counterexamples(a, b)
    assert list(b.counterexamples.leaves[0].values) == [0, 1, 2, 3, 4]


def test_external_shuffle_matches_the_same_permutation_in_memory(setup, monkeypatch):
    """Spilled to files, the shuffle is another uniform order; the oracle is the in-memory monitor run on the
    rows in that very order (the ids the shuffle carries), counterexamples included."""
    from fairaudit.engines.monitor import stream

    folder, path, model = setup
    captured = {}
    real = stream.shuffle_rows

    def spy(store, seed, **kw):
        out = real(store, seed, **kw)
        captured["ids"] = out[1].load().astype(np.int64).copy()
        captured["how"] = out[2]
        return out

    monkeypatch.setattr(stream, "shuffle_rows", spy)
    b = audit_file(folder / "log.parquet", SPEC, model=model, order="shuffle", seed=9, trace_points=None,
                   read_rows=700, memory_bytes=4000)
    assert captured["how"]["shuffle"].startswith("external")
    order = captured["ids"]
    assert sorted(order.tolist()) == list(range(len(order)))
    ds = data.from_csv(folder / "log.csv")
    permuted = dataclasses.replace(ds, frame=ds.frame.iloc[order].reset_index(drop=True), _hash=None)
    a = audit(permuted, SPEC, model=str(path), rows="all", order="given", trace_points=None)
    same_run(a, b)
    ca, cb = a.counterexamples.to_dict(), b.counterexamples.to_dict()
    for la, lb in zip(ca["leaves"], cb["leaves"]):
        assert la["total"] == lb["total"]
        assert [order[e["row"]] for e in la["examples"]] == [e["row"] for e in lb["examples"]]
        assert [e["decisions"] for e in la["examples"]] == [e["decisions"] for e in lb["examples"]]


def test_fair_needs_a_model(setup):
    from fairaudit.base.errors import FairauditError

    folder, _, _ = setup
    with pytest.raises(FairauditError, match="needs a model"):
        audit_file(folder / "log.parquet", "Fair[sex] > 0.5", pred="priors_count > 2")
