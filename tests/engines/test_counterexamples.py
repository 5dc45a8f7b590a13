"""Counterexamples of Fair[...] leaves on the audited rows (the dataset and monitor engines' flip test): every row
whose decision the flip changes is counted, the first are kept with the flip test's decisions, nothing costs more
model calls than the flip test; the contract's JSON round trip and its shared views."""
import pandas as pd
import pytest

from fairaudit import audit, models
from fairaudit.core.counterexamples import DOMAIN, ROWS, Counterexample, Counterexamples, LeafCounterexamples
from fairaudit.core.counterexamples_view import headline, summary_lines, table
from fairaudit.testing import toy_dataset
from fairaudit.core.trace import AuditResult


@pytest.fixture(scope="module")
def case():
    dataset = toy_dataset(600)
    return dataset, models.train(dataset, "logreg")


def flipped_rows(dataset, model):
    """The oracle: rows whose decision differs between sex = F and sex = M, re-predicted one row at a time."""
    frame = dataset.frame
    out = []
    for i in range(len(frame)):
        pair = pd.concat([frame.iloc[[i]].assign(sex=s) for s in ("F", "M")])
        if len(set(model.predict(pair).tolist())) == 2:
            out.append(i)
    return out


def test_dataset_engine_keeps_every_flipped_row(case):
    dataset, model = case
    r = audit(dataset, "Fair[sex] >= 0.99", engine="dataset", model=model, rows="all")
    found = r.counterexamples.get("Fair[sex]")
    truth = flipped_rows(dataset, model)
    assert truth, "the toy model should have some flipped rows"
    fair = r.final_values(next(n.id for n in r.node_info if n.kind == "fair"))["estimate"]
    assert found.total == len(truth) == round((1 - fair) * len(dataset.frame))
    assert found.where == ROWS and found.attribute == "sex" and sorted(found.values) == ["F", "M"]
    assert [c.row for c in found.examples] == truth[: len(found.examples)]  # the first, in file order
    frame = dataset.frame
    for c in found.examples:
        assert dict(c.individual) == {k: frame.iloc[c.row][k] for k in ("grp", "age")}
        pair = pd.DataFrame([{**dict(c.individual), "sex": v} for v in found.values])
        assert model.predict(pair).tolist() == list(c.decisions) and len(set(c.decisions)) == 2
        assert model.score(pair).tolist() == pytest.approx(list(c.scores))
    back = AuditResult.from_json(r.to_json())
    assert back.counterexamples.to_dict() == r.counterexamples.to_dict()


def test_monitor_counts_the_rows_it_checked(case):
    """Without stopping every audited row is checked: the same total as the dataset engine; the rows shown are
    flipped ones. Stopped at its decision, only the rows up to the stop count."""
    dataset, model = case
    truth = set(flipped_rows(dataset, model))
    full = audit(dataset, "Fair[sex] >= 0.99", engine="monitor", model=model, rows="all", batch=10)
    found = full.counterexamples.get("Fair[sex]")
    assert found.total == len(truth) and {c.row for c in found.examples} <= truth
    stopped = audit(dataset, "Fair[sex] >= 0.2", engine="monitor", model=model, rows="all", batch=10, stop=True)
    part = stopped.counterexamples.get("Fair[sex]")
    assert stopped.steps < len(dataset.frame) and part.total <= found.total
    assert [c.row for c in part.examples] == [c.row for c in found.examples][: part.total]


def test_no_model_call_beyond_the_flip_test(case):
    """One predict call per value of the column (the flip test), and one score call per value on the first few
    flipped rows only."""
    dataset, model = case
    calls = []

    class Counting:
        feature_names = model.feature_names

        def predict(self, frame):
            calls.append(("predict", len(frame)))
            return model.predict(frame)

        def score(self, frame):
            calls.append(("score", len(frame)))
            return model.score(frame)

    from fairaudit.core.observations import observe

    frame = dataset.frame
    pred = model.predict(frame)
    calls.clear()
    from fairaudit.spec import parse

    obs = observe(parse("Fair[sex] >= 0.9"), frame, pred=pred, model=Counting(), column_values={"sex": ["F", "M"]})
    n_flipped = obs.flips["Fair[sex]"].upto().total
    assert calls == [("predict", len(frame))] * 2 + [("score", min(n_flipped, 100))] * 2


def test_contract_round_trip_and_views():
    leaf = LeafCounterexamples("Fair[sex]", "sex", ("F", "M"), (
        Counterexample((("age", 30), ("grp", "a")), (1, 0), (0.61, 0.42)),
        Counterexample((("age", 31), ("grp", float("nan"))), (0, 1), None)), total=7, where=DOMAIN, about="found")
    found = Counterexamples((leaf,))
    assert Counterexamples.from_dict(found.to_dict()).to_dict() == found.to_dict()
    assert not Counterexamples() and Counterexamples.from_dict(None) == Counterexamples()
    rows = table(leaf)
    assert rows[0] == {"sex = F": "favourable (0.6100)", "sex = M": "unfavourable (0.4200)", "age": "30", "grp": "a"}
    assert rows[1]["grp"] == "missing" and rows[1]["sex = F"] == "unfavourable"
    assert headline(leaf) == "7 counterexamples found over the input domain (the first 2 shown)"
    lines = summary_lines(found)
    assert lines[0] == "counterexamples: Fair[sex]: 7 counterexamples found over the input domain (the first 2 shown)"
    assert lines[1].startswith("  first: age = 30, grp = a — sex = F: favourable")
    none = LeafCounterexamples("Fair[sex]", "sex", ("F", "M"), where=ROWS)
    assert headline(none) == "No counterexample found among the audited rows" and table(none) == []
