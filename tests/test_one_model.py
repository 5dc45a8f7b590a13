"""Issue 44, item 3: one model, whatever the command. ``fairaudit scan --model KIND`` used to train on the protected
attributes (5 features instead of 3: the scanned attributes were not the dataset's protected roles), so its LL144
counts differed silently from the dashboard's for "the same" model. Every route now trains through
``fairaudit.models.recipe.train_model``: the same features, the same held-out rows, the same coefficients and
predictions, and every output cites the same record of the rows audited (``HeldOut``)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import fairaudit
from fairaudit import data, models
from fairaudit.cli import main
from fairaudit.core.inputs import resolve_model
from fairaudit.core.trace import AuditResult
from fairaudit.models.recipe import HeldOut, held_out, recipe, train_model

KIND = "logreg"
FEATURES = ["experience", "test_score", "education"]  # not applicant (an identifier), sex, race or hired
PROTECTED = ["sex", "race"]
GROUPS = {"sex=Female": 'sex == "Female"', "race=Black": 'race == "Black"',
          "sex=Female|race=Black": 'sex == "Female" and race == "Black"'}
# one leaf per group: the dataset engine gives each its exact rate on the audited rows
SPEC = "\n".join(f"g{i}: E[pred | {cond}] >= 0" for i, cond in enumerate(GROUPS.values()))


@pytest.fixture(scope="module")
def hiring(tmp_path_factory):
    """An analyst's own hiring CSV (no declared roles): an identifier, two protected attributes, three features, a
    0/1 outcome with a planted gap against one intersection."""
    rng = np.random.default_rng(44)
    n = 1600
    sex = rng.choice(["Female", "Male"], n)
    race = rng.choice(["Black", "White", "Asian"], n, p=[0.3, 0.5, 0.2])
    experience = rng.integers(0, 20, n)
    score = rng.normal(60, 10, n).round(1)
    education = rng.choice(["hs", "ba", "ms"], n)
    logit = (-2 + 0.12 * experience + 0.05 * (score - 60) + 0.8 * (education == "ms")
             - 0.9 * ((sex == "Female") & (race == "Black")))
    hired = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    path = tmp_path_factory.mktemp("one_model") / "hiring.csv"
    pd.DataFrame({"applicant": np.arange(n) + 1000, "sex": sex, "race": race, "experience": experience,
                  "test_score": score, "education": education, "hired": hired}).to_csv(path, index=False)
    return path


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRAUDIT_CACHE_DIR", str(tmp_path / "cache"))


def dataset(path):
    """The CSV with the roles the analyst gives (``--label hired --protected sex race``, the Data page's Roles)."""
    return data.resolve(str(path), label="hired", protected=PROTECTED)


def dashboard_model(path, monkeypatch):
    """The Model page's Train with its defaults, on the uploaded file given its roles on the Data page."""
    from fairaudit.ui import flows, state

    monkeypatch.setattr(state, "st", SimpleNamespace(session_state={}))
    monkeypatch.setattr(flows, "st", SimpleNamespace(session_state={}))
    uploaded = data.with_roles(flows.parse_upload(path.read_bytes(), path.name), label="hired", protected=PROTECTED)
    state.set_dataset(uploaded)
    flows.train_model(uploaded, KIND, 0)
    return uploaded, state.get(state.MODEL), state.get(state.MODEL_INFO)


def cli(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().out


def test_the_rule_leaves_out_the_protected_attributes_and_holds_out_a_seeded_share(hiring):
    ds = dataset(hiring)
    chosen = recipe(ds, KIND)
    assert chosen.features == tuple(FEATURES) and (chosen.held_out_share, chosen.seed) == (models.HELD_OUT_SHARE, 0)
    assert recipe(ds, KIND, include_protected=True).features == ("sex", "race", *FEATURES)
    model = train_model(ds, KIND)
    record = held_out(model, ds)
    assert record == HeldOut("hiring", 1600, 0.25, 0, 400, ds.content_hash)
    assert record.text.startswith("400 held-out rows of hiring (held-out share 25% of its 1,600 rows, split seed 0")


def test_every_route_trains_the_same_model_on_the_same_rows(hiring, tmp_path, monkeypatch, capsys):
    ds = dataset(hiring)
    reference = train_model(ds, KIND)
    held = models.held_out_positions(reference, ds)
    rows = ds.frame.iloc[held]
    saved = tmp_path / "m.skops"
    assert cli(capsys, "train", "--data", hiring, "--label", "hired", "--protected", "sex", "race", "--kind", KIND,
               "--out", saved)[0] == 0
    uploaded, on_page, info = dashboard_model(hiring, monkeypatch)
    trained = {
        "api (audit, compare, repair, scan, confirm)": (ds, resolve_model(KIND, ds, 0)),
        "cli --model KIND (audit, scan, repair)": (ds, _model_from_cli(ds)),
        "cli train": (ds, models.load(saved)),
        "dashboard Model page": (uploaded, on_page),
    }
    assert info["features"] == FEATURES and info["test_size"] == models.HELD_OUT_SHARE
    for route, (where, model) in trained.items():
        assert model.params["features"] == FEATURES, route
        assert np.array_equal(models.held_out_positions(model, where), held), route
        assert held_out(model, where) == held_out(reference, ds), route
        assert np.array_equal(model.as_linear().weights, reference.as_linear().weights), route
        assert np.array_equal(model.score(rows), reference.score(rows)), route
        assert np.array_equal(model.predict(rows), reference.predict(rows)), route
        assert model.content_hash == reference.content_hash, route


def _model_from_cli(ds):
    import argparse

    from fairaudit.cli._model_args import add_model_arguments, model_from_args

    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    return model_from_args(parser.parse_args(["--model", KIND]), ds)


def test_every_command_prints_the_same_model_and_the_same_rows(hiring, tmp_path, capsys):
    common = ["--data", hiring, "--label", "hired"]
    roles = ["--protected", "sex", "race"]
    reference = train_model(dataset(hiring), KIND)
    described, record = reference.describe(), held_out(reference, dataset(hiring))

    code, out = cli(capsys, "train", *common, *roles, "--kind", KIND, "--out", tmp_path / "m.skops")
    assert code == 0 and f"sha256 {reference.content_hash}" in out and f"audits read {record.text}" in out
    assert f"features {', '.join(FEATURES)}" in out

    cli(capsys, "audit", *common, *roles, "--model", KIND, "--engine", "dataset", "--spec", SPEC,
        "--json", tmp_path / "a.json")
    audited = AuditResult.from_json(json.loads((tmp_path / "a.json").read_text()))
    assert audited.provenance["model"]["content_hash"] == reference.content_hash
    assert audited.rows == record.record()

    cli(capsys, "scan", *common, *roles, "--model", KIND, "--mode", "exact", "--json", tmp_path / "s.json")
    scanned = json.loads((tmp_path / "s.json").read_text())
    assert scanned["scan"]["decision"] == f"model: {described}" and scanned["scan"]["rows"] == record.count

    code, out = cli(capsys, "compare", *common, *roles, "--model", KIND, "--model", tmp_path / "m.skops",
                    "--spec", SPEC, "--json", tmp_path / "c.json")
    compared = json.loads((tmp_path / "c.json").read_text())
    assert [m["model"] for m in compared["models"]] == [described, described]
    assert compared["rows"]["text"] == record.text and compared["rows"]["audited"] == record.count

    code, _ = cli(capsys, "repair", *common, *roles, "--model", KIND, "--spec", 'E[pred | sex == "Female"] > 0',
                  "--json", tmp_path / "r.json")
    repaired = json.loads((tmp_path / "r.json").read_text())
    assert code in (0, 1, 3) and f"sha256 {reference.content_hash[:12]}" in repaired["model"]  # its base model
    assert record.text in repaired["search"]["text"] and record.text in repaired["certification"]["text"]
    assert repaired["search"]["count"] + repaired["certification"]["count"] == record.count


def test_scan_and_audit_ll144_counts_agree_with_the_dashboard(hiring, tmp_path, monkeypatch, capsys):
    """The issue's case: the LL144 table of ``scan --model`` against the dashboard's Groups page (which scans with
    the model trained on the Model page) and against ``audit --model``'s rates of the same groups."""
    from fairaudit.subgroups.scan import scan

    uploaded, on_page, _ = dashboard_model(hiring, monkeypatch)
    page = scan(uploaded, PROTECTED, mode="exact", looks=0, model=on_page)  # as fairaudit.ui.groups runs it
    cli(capsys, "scan", "--data", hiring, "--label", "hired", "--protected", "sex", "race", "--model", KIND,
        "--mode", "exact", "--json", tmp_path / "s.json")
    command = json.loads((tmp_path / "s.json").read_text())
    library = fairaudit.scan(str(hiring), PROTECTED, label="hired", model=KIND, mode="exact", looks=0)

    def counts(cells):
        return {c["id"]: (c["rows"], c["selected"]) for c in cells}

    expected = counts(c.to_dict() for c in page.cells)
    assert counts(command["cells"]) == expected
    assert counts(c.to_dict() for c in library.cells) == expected
    assert sum(n for key, (n, _) in expected.items() if key.startswith("sex=") and "|" not in key) == 400

    cli(capsys, "audit", "--data", hiring, "--label", "hired", "--protected", "sex", "race", "--model", KIND,
        "--engine", "dataset", "--spec", SPEC, "--json", tmp_path / "a.json")
    audited = json.loads((tmp_path / "a.json").read_text())
    rates = {n["text"]: n["final"]["estimate"] for n in audited["nodes"] if n["kind"] == "expect"}
    for cell, cond in GROUPS.items():
        rows, selected = expected[cell]
        assert rates[f"E[pred | {cond}]"] == pytest.approx(selected / rows, abs=1e-12), cell
