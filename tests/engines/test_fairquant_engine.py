"""The fairquant engine through the API and the CLI: a ``.nnet`` network over its input domain (no data), a torch
MLP trained in the app over its dataset's column ranges (a one-hot protected attribute), the Fair node's rates,
the counterexamples and the refusals."""
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from fairaudit import audit, models  # noqa: E402
from fairaudit.core.counterexamples import DOMAIN  # noqa: E402
from fairaudit.base.errors import FairauditError  # noqa: E402
from fairaudit.core.trace import AuditResult  # noqa: E402
from tests.console import run_main  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "example.nnet"
ROOT = Path(__file__).resolve().parents[2]


def fair_node(result):
    j = next(i for i, info in enumerate(result.node_info) if info.kind == "fair")
    return result.final_values(result.node_info[j].id)


def test_api_nnet_over_its_domain():
    r = audit(None, "Fair[x1] >= 0.75", engine="fairquant", model=str(EXAMPLE))
    assert r.verdict == "true" and r.complete and r.guarantee.kind == "sound"
    f = fair_node(r)  # 25/30 fair: the individual whose output is within rounding of 0 is decided exactly
    assert f["certified"] == pytest.approx(25 / 30) and f["unfair"] == pytest.approx(5 / 30)
    assert f["undecided"] == 0 and f["lo"] <= 25 / 30 <= f["hi"]
    facts = r.info["fairquant"]["Fair[x1]"]
    assert facts["partitions"] == 23 and facts["total"] == 30 and facts["certified_count"] == 25
    assert facts["decided_exactly"] == 1
    model = models.load(EXAMPLE)
    found = r.counterexamples.get("Fair[x1]")
    assert found.total == 5 and len(found.examples) == 5 and found.attribute == "x1" and found.values == (0, 1)
    assert found.where == DOMAIN and "info" not in found.about
    for c in found.examples:  # every counterexample flips the model's own decision, at the scores shown
        frame = pd.DataFrame([{**dict(c.individual), "x1": v} for v in found.values])
        assert model.predict(frame).tolist() == list(c.decisions) and len(set(c.decisions)) == 2
        assert model.score(frame).tolist() == pytest.approx(list(c.scores))
    assert AuditResult.from_json(r.to_json()).counterexamples.to_dict() == r.counterexamples.to_dict()
    assert r.rows["policy"] == "domain"


def test_api_violated_and_the_rates_at_every_step():
    r = audit(None, "Fair[x1] >= 0.9", engine="fairquant", model=str(EXAMPLE), batch_partitions=1)
    assert r.verdict == "false" and r.steps == 23
    t = r.trace_table
    j = next(i for i, info in enumerate(r.node_info) if info.kind == "fair")
    assert (np.diff(t.certified[:, j]) >= 0).all() and (np.diff(t.unfair[:, j]) >= 0).all()
    assert (t.lo[:, j] <= 25 / 30).all() and (t.hi[:, j] >= 25 / 30).all()


def test_refusals():
    with pytest.raises(FairauditError, match="no input 'x9'"):
        audit(None, "Fair[x9] >= 0.8", engine="fairquant", model=str(EXAMPLE))
    with pytest.raises(FairauditError, match="cannot bound E"):
        audit(None, "E[pred] >= 0.8", engine="fairquant", model=str(EXAMPLE))
    with pytest.raises(FairauditError, match="not rows: pred, where and epsilon do not apply"):
        audit(None, "Fair[x1] >= 0.8", engine="fairquant", model=str(EXAMPLE), where="x0 > 1")


def test_cli_nnet(tmp_path, capsys):
    out = tmp_path / "r.json"
    done = run_main(capsys, "audit", "--engine", "fairquant", "--model", str(EXAMPLE), "--spec", "Fair[x1] >= 0.75",
                    "--timeout", "120", "--json", str(out), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    node = next(n for n in data["nodes"] if n["kind"] == "fair")
    final = node["final"]
    assert final["certified"] == pytest.approx(25 / 30, abs=2e-6) and final["unfair"] == pytest.approx(1 / 6, abs=1e-6)
    assert final["undecided"] == 0
    (leaf,) = data["counterexamples"]["leaves"]
    assert leaf["leaf"] == "Fair[x1]" and leaf["total"] == 5 and len(leaf["examples"]) == 5
    assert "5 counterexamples" in done.stdout


@pytest.fixture(scope="module")
def mlp_case():
    from fairaudit.testing import toy_dataset

    dataset = toy_dataset(600)
    model = models.train(dataset, "mlp", hidden=[6], seed=1)
    return dataset, model


def test_mlp_over_the_dataset_ranges(mlp_case):
    """A torch MLP trained in the app: the domain is the dataset's column ranges (age an integer grid, grp and
    sex categories); Fair[sex] flips the one-hot group; the rates match an enumeration with model.predict."""
    dataset, model = mlp_case
    # as the dashboard calls it (a rows policy is ignored: the domain has no rows), partial results streamed
    partial = list(audit(dataset, "Fair[sex] >= 0.5", engine="fairquant", model=model, rows="all", iterate=True,
                         batch_partitions=8))
    assert len(partial) > 1 and partial[-1].complete
    r = partial[-1]
    assert r.rows["policy"] == "domain" and "column ranges" in r.rows["text"]
    f = fair_node(r)
    frame = dataset.frame
    ages = range(int(frame["age"].min()), int(frame["age"].max()) + 1)
    grid = pd.DataFrame(list(itertools.product(ages, ["a", "b", "c"])), columns=["age", "grp"])
    decisions = [model.predict(grid.assign(sex=s)) for s in ("F", "M")]
    truth = float(np.mean(decisions[0] == decisions[1]))
    assert f["lo"] <= truth + 1e-12 and truth - 1e-12 <= f["hi"]
    assert f["certified"] + f["unfair"] + f["undecided"] == pytest.approx(1)
    assert f["undecided"] == pytest.approx(0)  # the grid is small: resolved down to single individuals
    found = r.counterexamples.get("Fair[sex]")
    assert found.total == round(f["unfair"] * len(grid)) and found.values == ("F", "M")
    for c in found.examples:
        pair = pd.DataFrame([{**dict(c.individual), "sex": v} for v in found.values])
        assert model.predict(pair).tolist() == list(c.decisions) and len(set(c.decisions)) == 2


def test_logistic_regression_is_an_affine_network(mlp_case):
    """A logreg model has a ReLU form with no hidden layer: the analysis is exact on the enumerated domain; two
    Fair leaves are refined side by side; a tree model or a column with too many values is refused."""
    dataset, _ = mlp_case
    model = models.train(dataset, "logreg")
    r = audit(dataset, "Fair[sex] >= 0.5 and Fair[grp] >= 0.5", engine="fairquant", model=model)
    frame = dataset.frame
    ages = range(int(frame["age"].min()), int(frame["age"].max()) + 1)
    grid = pd.DataFrame(list(itertools.product(ages, ["a", "b", "c"])), columns=["age", "grp"])
    decisions = [model.predict(grid.assign(sex=s)) for s in ("F", "M")]
    facts = r.info["fairquant"]["Fair[sex]"]
    assert facts["certified_count"] == int(np.sum(decisions[0] == decisions[1])) == facts["total"] - facts[
        "unfair_count"]
    assert r.info["fairquant"]["Fair[grp]"]["stopped"] == "complete"
    with pytest.raises(FairauditError, match="no ReLU-network form"):
        audit(dataset, "Fair[sex] >= 0.5", engine="fairquant", model=models.train(dataset, "tree"))
    with pytest.raises(FairauditError, match="at most 20 copies"):
        audit(dataset, "Fair[age] >= 0.5", engine="fairquant", model=model)


def test_a_column_the_model_does_not_read_is_exactly_fair(mlp_case):
    dataset, _ = mlp_case
    model = models.train(dataset, "logreg", exclude=["sex"])
    r = audit(dataset, "Fair[sex] >= 0.999", engine="fairquant", model=model)
    assert r.verdict == "true" and fair_node(r)["certified"] == 1 and fair_node(r)["undecided"] == 0
    assert any("does not read this column" in w for w in r.warnings)


def test_a_grid_decided_exactly_meets_its_threshold_exactly(tmp_path):
    """o = ReLU(x0 + x1) − 2 over x0 ∈ {0..4}, x1 ∈ {0, 1}: two outputs are exactly 0 (decided exactly,
    unfavourable), so Fair[x1] is exactly 4/5 — and ``Fair[x1] >= 0.8`` is an exact tie with its threshold, certified
    (before, 2/5 stayed undecided and the comparison with it)."""
    from fairaudit.engines.fairquant.engine import _net_text

    path = tmp_path / "tie.nnet"
    path.write_text(_net_text([2, 1, 1], [0, 0], [4, 1], [([[1.0, 1.0]], [0.0]), ([[1.0]], [-2.0])]))
    r = audit(None, "Fair[x1] >= 0.8", engine="fairquant", model=str(path))
    f = fair_node(r)
    assert f["certified"] == pytest.approx(0.8) and f["unfair"] == pytest.approx(0.2) and f["undecided"] == 0
    assert r.verdict == "true"
    assert audit(None, "Fair[x1] > 0.8", engine="fairquant", model=str(path)).verdict == "false"
    found = r.counterexamples.get("Fair[x1]")
    assert found.total == 1 and [c.decisions for c in found.examples] == [(0, 1)]
