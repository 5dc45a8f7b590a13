"""The fairsquare engine over a population program generated from a dataset and a model (``--data --model``).

The cross-check: the generated program is sampled (``fairaudit.programs.sample.sample``), the sampled variables
are decoded back to the dataset's values (codes -> categories, integer pieces -> their value), and the analyst's
own spec is evaluated on them with the dataset's semantics (``evaluate_event``) — independently of the spec
translation the engine uses. Every leaf's sound bounds must meet the Monte-Carlo estimate's interval, and the
verdicts must agree wherever the Monte-Carlo interval decides the spec.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import fairaudit
from fairaudit import data, models
from fairaudit.cli import main
from fairaudit.base.errors import FairauditError
from fairaudit.core.evaluate import LeafValue, evaluate, leaf_key
from fairaudit.engines.fairsquare.generate import generated_inputs
from fairaudit.programs.sample import sample
from fairaudit.programs.translate import columns, decode, translate_spec
from fairaudit.spec import ast, parse
from fairaudit.spec.events import evaluate_event
from fairaudit.spec.printer import event_text
from fairaudit.testing import toy_dataset

Z = 5.0           # Monte-Carlo interval: estimate ± Z standard errors (seeded: the test is deterministic)
MC_SAMPLES = 300_000

TOY_TRUE = ('E[pred | sex == "F"] / E[pred | sex == "M"] > 0.8 and E[pred | age > 40 and grp in {"a", "b"}] > 0.5 '
            'and E[grp != "c" | not pred] > 0.5')
TOY_FALSE = 'E[pred | sex == "F"] > 0.9 or E[pred | age <= 30 and "b" != grp] > 0.9'
GERMAN_KEEP = ["sex", "age", "installment_rate", "housing", "duration_months"]
GERMAN_TRUE = ('E[pred | sex == "Female"] / E[pred | sex == "Male"] > 0.8 and E[pred | age > 40] > 0.5 and '
               'E[installment_rate == 2 | pred] < 0.5')
GERMAN_FALSE = ('E[pred | installment_rate >= 3 and housing in {"own", "rent"}] < 0.5 or '
                'E[pred | housing != "own" or not installment_rate < 2.5] > 0.99')


@pytest.fixture(scope="module")
def toy():
    ds = toy_dataset(2000)
    return ds, {"logreg": models.train(ds, "logreg", seed=0), "tree": models.train(ds, "tree", seed=0, max_depth=3)}


@pytest.fixture(scope="module")
def german():
    ds = data.load("german")
    exclude = [c for c in ds.schema.feature_names if c not in GERMAN_KEEP]
    return ds, {"logreg": models.train(ds, "logreg", seed=0, exclude=exclude),
                "tree": models.train(ds, "tree", seed=0, max_depth=4, exclude=exclude)}


def _monte_carlo(ds, model, structure, spec_text, sha256):
    """Each leaf's (estimate, half-width) from individuals sampled from the same generated program, the spec
    evaluated on them as dataset rows."""
    inputs = generated_inputs(ds, model=model, structure=structure)
    assert inputs.provenance["population"]["sha256"] == sha256  # the very program the engine audited
    s = sample(inputs.population, MC_SAMPLES, seed=7, keep_values=True)
    frame = decode(s.values, columns(ds, inputs.population, inputs.generated["variables"]))
    pred = np.asarray(s.target).astype(np.int8)
    out = {}
    for tn in parse(spec_text).leaves:
        event = evaluate_event(tn.node.event, frame, pred=pred)
        given = (evaluate_event(tn.node.given, frame, pred=pred) if tn.node.given is not None
                 else np.ones(len(frame), dtype=bool))
        n = int(given.sum())
        p = float((event & given).sum()) / n
        out[leaf_key(tn)] = (p, Z * np.sqrt(max(p * (1 - p), 1.0 / n) / n))
    return out


def _mc_verdict(spec_text, mc) -> str:
    spec = parse(spec_text)
    leaves = {k: LeafValue(np.array([p]), np.array([max(0.0, p - h)]), np.array([min(1.0, p + h)]))
              for k, (p, h) in mc.items()}
    verdict = int(evaluate(spec, leaves)[spec.nodes[0].id].verdict[0])
    return {1: "true", 0: "false"}.get(verdict, "unknown")


def _cross_check(ds, model, structure, spec_text, expected):
    result = fairaudit.audit(ds, spec_text, engine="fairsquare", model=model, population_model=structure,
                             time_budget=300)
    mc = _monte_carlo(ds, model, structure, spec_text, result.provenance["population"]["sha256"])
    final = result.final
    for tn in parse(spec_text).leaves:
        lo, hi = final.loc[tn.id, "lo"], final.loc[tn.id, "hi"]
        p, h = mc[leaf_key(tn)]
        assert lo <= hi
        assert lo - h <= p <= hi + h, (tn.text, lo, hi, p, h)
    assert _mc_verdict(spec_text, mc) == expected  # the spec is chosen so that sampling decides it
    assert result.verdict == expected
    return result


@pytest.mark.parametrize("kind", ["logreg", "tree"])
@pytest.mark.parametrize("structure", ["independent", "bn"])
def test_toy_bounds_contain_the_monte_carlo_estimate(toy, kind, structure):
    ds, fitted = toy
    r = _cross_check(ds, fitted[kind], structure, TOY_TRUE, "true")
    # the tree shown is the analyst's own, and the result says what was audited
    assert r.spec == TOY_TRUE
    assert [tn.text for tn in r.tree.nodes] == [tn.text for tn in parse(TOY_TRUE).nodes]
    assert r.provenance["dataset"]["name"] == ds.name
    assert r.provenance["model"]["content_hash"] == fitted[kind].content_hash
    assert r.provenance["population"]["generated"] == f"generated population ({structure})"
    assert f"generated from {ds.name} ({structure})" in r.rows_text
    assert r.options["population_model"] == structure and r.options["data"] == ds.name
    _cross_check(ds, fitted[kind], structure, TOY_FALSE, "false")


@pytest.mark.parametrize("kind,structure", [("tree", "independent"), ("tree", "bn"), ("logreg", "independent")])
def test_german_subset_bounds_contain_the_monte_carlo_estimate(german, kind, structure):
    ds, fitted = german
    _cross_check(ds, fitted[kind], structure, GERMAN_TRUE, "true")
    _cross_check(ds, fitted[kind], structure, GERMAN_FALSE, "false")


def test_training_kind_and_population_model_default(toy):
    ds, _ = toy
    r = fairaudit.audit(ds, 'E[pred | sex == "F"] > 0.01', engine="fairsquare", model="logreg")
    assert r.verdict == "true"
    assert r.options["population_model"] == "independent"
    assert r.guarantee.kind == "sound"


# ------------------------------------------------------------------------------------------ the translation
def _translated(ds, model, text):
    inputs = generated_inputs(ds, model=model)
    spec = translate_spec(parse(text), ds, inputs.population, inputs.generated["variables"])
    return {tn.text: event_text(tn.node.given if tn.node.given is not None else tn.node.event)
            for tn in spec.leaves}


def test_translation_codes_and_integers(toy, german):
    ds, fitted = toy
    got = _translated(ds, fitted["logreg"], 'E[pred | sex == "M"] > 0 and E[pred | grp in {"a", "b"}] > 0 and '
                                            'E[pred | "c" != grp] > 0 and E[pred | age > 40] > 0 and '
                                            'E[pred | 40 >= age] > 0')
    assert got['E[pred | sex == "M"]'] == "sex >= 1 and sex < 2"
    assert got['E[pred | grp in {"a", "b"}]'] == "grp >= 0 and grp < 2"  # contiguous codes merged
    assert got['E[pred | "c" != grp]'] == "not (grp >= 2 and grp < 3)"
    assert got["E[pred | age > 40]"] == "age > 40"  # a continuous column is compared as it is
    assert got["E[pred | 40 >= age]"] == "age <= 40"
    gds, gfit = german
    got = _translated(gds, gfit["tree"], "E[pred | installment_rate == 2] > 0 and E[pred | installment_rate > 2] > 0"
                                         " and E[pred | installment_rate < 2.5] > 0")
    # an integer column drawn one piece [v - 0.5, v + 0.5) per value: the piece stands for the value
    assert got["E[pred | installment_rate == 2]"] == "installment_rate >= 1.5 and installment_rate < 2.5"
    assert got["E[pred | installment_rate > 2]"] == "installment_rate >= 2.5 and installment_rate < 4.5"
    assert got["E[pred | installment_rate < 2.5]"] == "installment_rate >= 0.5 and installment_rate < 2.5"


def test_translation_refusals(toy, german):
    ds, fitted = toy
    inputs = generated_inputs(ds, model=fitted["tree"])
    variables = inputs.generated["variables"]
    for text, message in [('E[pred | nosuch == 1] > 0', "unknown column 'nosuch'"),
                          ('E[pred | sex == "X"] > 0', "'sex' never takes the value 'X'"),
                          ('E[pred | outcome == "yes"] > 0', "'outcome' is not part of the generated population"),
                          ('E[label] > 0', "'label' has no meaning"),
                          ('E[pred | sex > "F"] > 0', "'sex' is categorical")]:
        with pytest.raises(FairauditError, match=message):
            translate_spec(parse(text), ds, inputs.population, variables)
    tree = translate_spec(parse(TOY_TRUE), ds, inputs.population, variables)
    assert isinstance(tree, ast.Spec) and [tn.id for tn in tree.nodes] == [tn.id for tn in parse(TOY_TRUE).nodes]


def test_api_refusals(toy):
    ds, fitted = toy
    for kwargs, message in [(dict(pred='age > 40'), "cannot be turned into one"),
                            (dict(), "needs a population program"),
                            (dict(model=fitted["tree"], where="age > 30"), "where does not apply"),
                            (dict(model=fitted["tree"], population_model="other"), "population_model must be one of")]:
        with pytest.raises(FairauditError, match=message):
            fairaudit.audit(ds, 'E[pred | sex == "F"] > 0.1', engine="fairsquare", **kwargs)
    with pytest.raises(FairauditError, match="unknown column 'sexx'"):
        fairaudit.audit(ds, 'E[pred | sexx == "F"] > 0.1', engine="fairsquare", model=fitted["tree"])
    with pytest.raises(FairauditError, match="never takes the value"):
        fairaudit.audit(ds, 'E[pred | sex == "G"] > 0.1', engine="fairsquare", model=fitted["tree"])
    with pytest.raises(FairauditError, match="Fair"):
        fairaudit.audit(ds, 'Fair[sex] > 0.9', engine="fairsquare", model=fitted["tree"])


# ------------------------------------------------------------------------------------------ the command line
@pytest.fixture(scope="module")
def german_model(tmp_path_factory, german):
    ds, _ = german
    out = tmp_path_factory.mktemp("model") / "tree"
    keep = ",".join(c for c in ds.schema.feature_names if c in GERMAN_KEEP)  # protected sex and age included
    assert main(["train", "--data", "german", "--kind", "tree", "--param", "max_depth=4", "--features", keep,
                 "--out", str(out)]) == 0
    return str(out) + ".skops"


def test_cli_generated_population(tmp_path, capsys, german_model):
    out = tmp_path / "r.json"
    base = ["audit", "--engine", "fairsquare", "--data", "german", "--model", german_model]
    # certain for the program generated from the rows, not established for the population: undecided, exit 3
    assert main(base + ["--spec", GERMAN_TRUE, "--population-model", "bn", "--json", str(out)]) == 3
    text = capsys.readouterr().out
    assert "verdict:   undecided" in text and "modelled:  For the modelled distribution alone: certified true" in text
    assert "population program generated from german (bn)" in text
    result = json.loads(out.read_text())
    assert result["verdict"] == "unknown" and result["scope"] == {"about": "modelled", "verdict": "true"}
    assert result["spec"] == GERMAN_TRUE
    assert result["provenance"]["population"]["generated"] == "generated population (bn)"
    assert result["provenance"]["dataset"]["name"] == "german" and result["provenance"]["model"]["kind"] == "tree"
    assert main(base + ["--spec", GERMAN_FALSE]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("extra,message", [
    (["--spec", 'E[pred | sexx == "Female"] > 0.1'], "unknown column 'sexx'"),
    (["--spec", 'E[pred | sex == "Femal"] > 0.1'], "'sex' never takes the value \"Femal\""),
    (["--spec", 'E[pred | purpose == "business"] > 0.1'], "'purpose' is not part of the generated population"),
    (["--spec", 'E[pred | sex == "Female"] > 0.1', "--where", "age > 30"], "where does not apply"),
])
def test_cli_bad_inputs_exit_2(capsys, german_model, extra, message):
    assert main(["audit", "--engine", "fairsquare", "--data", "german", "--model", german_model] + extra) == 2
    err = capsys.readouterr().err
    assert message in err.splitlines()[0]


def test_cli_pred_is_refused_in_one_line(capsys):
    assert main(["audit", "--engine", "fairsquare", "--data", "german", "--pred", "age > 30",
                 "--spec", 'E[pred | sex == "Female"] > 0.1']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decision expression (pred) cannot be turned into one" in err[0]
