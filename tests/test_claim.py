"""A verdict a signer can sign (``fairaudit.core.claim``): the headline claims no more than the evidence, says what it is
about, reads in plain words the same everywhere, and a threshold chosen from the data is exploratory until it is
confirmed on rows that did not choose it."""
from __future__ import annotations

import io
import json

import pypdf
import pytest

from fairaudit import audit, confirm
from fairaudit.core import suggest
from fairaudit.cli import main
from fairaudit.core.claim import chosen_from, exploratory_state, rows_intervals
from fairaudit.spec import parse

GAP = 'E[pred | sex == "Female"] - E[pred | sex == "Male"] > {c}'


def _pdf_text(pdf: bytes) -> str:
    return " ".join("\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


@pytest.mark.parametrize("engine", ["justicia", "fvgm"])
def test_certain_for_the_modelled_distribution_is_not_certain_for_the_population(engine):
    """The issue's examples 1 and 2: the engine's bounds are certain for a distribution fitted to 250 held-out rows
    and decide 'violated'; the rows themselves cannot tell (71 women): the headline is undecided for the population,
    says why, and keeps the certain result as its second line."""
    r = audit("german", GAP.format(c=-0.02), engine=engine, model="logreg")
    assert r.verdict == "false" and r.scope == "modelled"  # the engine's own verdict, about its model
    claim = r.claim
    assert claim.verdict == "unknown" and claim.status == "undecided" and claim.exit_code == 3
    assert r.headline.startswith("undecided for the population") and "not established for the population" in \
        r.headline and "estimation interval" in r.headline
    assert claim.second.startswith("For the modelled distribution alone: violated with certainty")
    data = json.loads(r.to_json())
    assert data["verdict"] == "unknown" and data["scope"] == {"about": "modelled", "verdict": "false"}
    assert data["headline"]["second"] == claim.second and data["summary"] == r.summary


@pytest.mark.parametrize("engine", ["justicia", "fvgm"])
@pytest.mark.parametrize("c", [-0.4, -0.3, -0.1, -0.02, 0.05, 0.2, 0.3])
def test_a_population_headline_is_backed_by_the_rows(engine, c):
    """Whatever the threshold: every leaf's population interval contains both the modelled interval and the rows'
    exact binomial interval, and a decided headline is one the rows' intervals decide the same way."""
    from fairaudit.core.claim import population_check

    spec = parse(GAP.format(c=c))
    r = audit("german", spec, engine=engine, model="logreg")
    check = r.population
    for leaf in check["leaves"].values():
        assert leaf["lo"] <= min(leaf["model"][0], leaf["rows"][0]) and leaf["hi"] >= max(leaf["model"][1],
                                                                                           leaf["rows"][1])
    if r.claim.verdict in ("true", "false"):
        rows_only = {k: (v["rows"][0], v["rows"][1]) for k, v in check["leaves"].items()}
        again = population_check(spec, rows_only, {k: (*v, 0) for k, v in rows_only.items()})
        assert again["verdict"] == r.claim.verdict


def test_the_rows_decide_and_the_headline_says_for_the_population():
    r = audit("german", GAP.format(c=0.2), engine="justicia", model="logreg")
    assert r.claim.verdict == "false" and r.claim.guarantee.kind == "probabilistic"
    assert r.headline.startswith("violated for the population with probability ≥ 0.95")


def test_a_user_written_program_is_what_the_user_named():
    """No composition for a program the user wrote: its certain verdict is the headline."""
    from pathlib import Path

    import fairaudit

    root = Path(fairaudit.__file__).parent / "programs" / "examples"
    program = sorted(root.glob("*.fr"))[0]
    r = audit(None, None, engine="fairsquare", population=str(program))
    assert r.scope == "program" and r.population is None and r.claim.verdict == r.verdict


def test_cli_exit_code_and_words_follow_the_headline(capsys):
    code = main(["audit", "--data", "german", "--model", "logreg", "--engine", "justicia", "--spec",
                 GAP.format(c=-0.02)])
    out = capsys.readouterr().out
    assert code == 3
    assert "verdict:   undecided\n" in out and "modelled:  For the modelled distribution alone: violated" in out
    assert "verdict:   false" not in out


def test_one_plain_sentence_in_the_cli_the_json_and_the_pdf(tmp_path, capsys):
    """Who is favoured, by how much, against what was allowed, how sure — the same words everywhere."""
    spec = 'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1'
    out_json, out_pdf = tmp_path / "r.json", tmp_path / "r.pdf"
    code = main(["audit", "--data", "adult", "--model", "logreg", "--spec", spec, "--json", str(out_json),
                 "--pdf", str(out_pdf)])
    text = capsys.readouterr().out
    assert code == 1 and "verdict:   violated\n" in text
    summary = json.loads(out_json.read_text())["summary"]
    assert summary.startswith("Those with sex = Male receive a favourable decision more often than those with "
                              "sex = Female: the gap is between ")
    assert "above the 0.1 you allowed; this is wrong with probability at most 5 %." in summary
    assert f"summary:   {summary}\n" in text
    assert " ".join(summary.split()) in _pdf_text(out_pdf.read_bytes())
    for word in ("e-value", "β", "δ"):
        assert word not in summary


def _chosen(tmp_path):
    spec = 'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.01'
    r = audit("german", spec, engine="monitor", model="logreg")
    found = suggest.suggest_node(r, "n0")
    text = suggest.apply(spec, found, "certify", result=r)
    path = tmp_path / "chosen.spec"
    path.write_text(text)
    return path, text, found


def test_a_threshold_chosen_from_the_data_is_exploratory_in_the_cli_json_and_pdf(tmp_path, capsys):
    """The issue's example 3: applying a suggestion and auditing it on the same data is a hypothesis — exit 3,
    'exploratory' on the PDF's first page, never a certificate."""
    path, text, found = _chosen(tmp_path)
    assert chosen_from(text) and "threshold-chosen-from" in text.splitlines()[0]
    out_json, out_pdf = tmp_path / "r.json", tmp_path / "r.pdf"
    code = main(["audit", "--data", "german", "--model", "logreg", "--spec", f"@{path}", "--json", str(out_json),
                 "--pdf", str(out_pdf)])
    out = capsys.readouterr().out
    assert code == 3 and "verdict:   exploratory\n" in out and "exit:      3 — exploratory" in out
    data = json.loads(out_json.read_text())
    assert data["status"] == "exploratory" and data["scope"]["verdict"] == "true"
    first = pypdf.PdfReader(io.BytesIO(out_pdf.read_bytes())).pages[0].extract_text()
    assert "EXPLORATORY" in first and "CERTIFIED" not in first
    # the tree and the node badges never show a decided claim in the certified colour
    from fairaudit import viz
    from fairaudit.core.trace import AuditResult

    result = AuditResult.from_json(out_json.read_text())
    frame, _ = viz.tree_frame(result.shown_nodes)
    claims = frame[frame["id"].isin([n["id"] for n in result.nodes if n["kind"] in ("cmp", "and", "or", "not")])]
    assert set(claims["verdict"]) == {"exploratory"}


def test_a_threshold_chosen_on_other_data_is_certified_with_a_warning(tmp_path):
    _, text, _ = _chosen(tmp_path)
    other = {"dataset": {"content_hash": "0" * 64}}
    assert exploratory_state(text, other) is None
    same = {"dataset": {"content_hash": text.split("data ", 1)[1][:16] + "0" * 48}}
    assert exploratory_state(text, same) is not None
    assert exploratory_state(text, same, scope="domain") is None  # no rows were looked at
    assert exploratory_state(text, same, confirmed={"seed": 0}) is None


def test_confirm_chooses_on_one_part_and_certifies_on_the_other():
    spec = 'E[pred | sex == "Female"] - E[pred | sex == "Male"] < 0.01'
    r = confirm("german", spec, "n0", engine="monitor", model="logreg")
    split = r.info["confirmation"]
    assert r.exploratory is None and r.claim.status != "exploratory"
    assert split["chosen_on"] + split["certified_on"] == 250 and r.rows["audited"] == split["certified_on"]
    assert "not used to choose the threshold" in r.rows_text
    assert chosen_from(split["spec_text"]) and f"< {split['threshold']:g}" in split["spec_text"]
    with pytest.raises(Exception, match="share"):
        confirm("german", spec, "n0", engine="monitor", model="logreg", share=1.0)


def test_rows_intervals_cover_each_leaf():
    from fairaudit.core.inputs import Inputs

    spec = parse(GAP.format(c=0))
    inputs = Inputs.build(__import__("fairaudit.data", fromlist=["load"]).load("german"), model="logreg")
    found = rows_intervals(spec, inputs)
    assert set(found) == {'E[pred | sex == "Female"]', 'E[pred | sex == "Male"]'}
    assert all(0 <= lo <= hi <= 1 and n > 0 for lo, hi, n in found.values())


def test_a_group_is_not_marked_least_favoured_on_an_interval_that_cannot_tell():
    """The issue's example 1: a small group whose estimation interval is [0, 1] was still marked 'least
    favoured'. A mark is a claim: it needs the estimation intervals to separate the extremes."""
    from fairaudit.core.findings import Findings, GroupRate
    from fairaudit.core.findings_view import summary_lines

    r = audit("german", GAP.format(c=-0.02), engine="justicia", model="logreg")
    groups = r.findings.groups
    assert any(g.ci_lo == 0 and g.ci_hi == 1 for g in groups)
    assert r.findings.marks() == {} and "no group is marked" in r.findings.unmarked_note()
    assert any("no group is marked" in line for line in summary_lines(r.findings))
    apart = Findings(groups=(GroupRate((("g", "a"),), 0.8, 0.8, 0.5, 0.7, 0.9, rows=400),
                             GroupRate((("g", "b"),), 0.3, 0.3, 0.5, 0.2, 0.4, rows=400)))
    assert apart.marks() == {"g = a": "most favoured", "g = b": "least favoured"}


# ------------------------------------------------------------------------------------------------ issue 44, item 8
RATIO_AND_GAP = ('ratio: E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8\n'
                 'gap: E[pred | sex == "Female"] - E[pred | sex == "Male"] <= 0.5\n')
NODE_ID = r"\bn\d+\b"


def _confirm_watched(monkeypatch, spec, node, **options):
    """``confirm`` with the part of the rows that chose the threshold, and its suggestion, kept for the test."""
    seen = []
    original = suggest.suggest_node

    def watch(result, node_id):
        found = original(result, node_id)
        seen.append((result, found))
        return found

    monkeypatch.setattr(suggest, "suggest_node", watch)
    confirmed = confirm("german", spec, node, engine="monitor", model="logreg", **options)
    return confirmed, seen[-1]


def test_a_confirmed_ratio_threshold_is_on_the_ratios_scale_and_the_other_clauses_keep_theirs(monkeypatch):
    """'Confirm on fresh rows' rewrote a four-fifths ratio's 0.8: the chosen threshold must bound the ratio (not the
    internal margin ``ratio − 0.8``), and every other clause must keep the threshold the user wrote."""
    import re

    r = audit("german", RATIO_AND_GAP, engine="monitor", model="logreg")
    ratio = next(n for n in r.nodes if n.get("name") == "ratio")
    confirmed, (choosing, found) = _confirm_watched(monkeypatch, RATIO_AND_GAP, ratio["id"])
    div = next(n["id"] for n in choosing.nodes if n["parent"] == ratio["id"] and n["kind"] == "div")
    interval = choosing.final_values(div)
    assert (found.lo, found.hi) == (interval["lo"], interval["hi"])  # the ratio's interval, not the margin's
    threshold = confirmed.info["confirmation"]["threshold"]
    assert threshold == found.certify.value and 0 < threshold <= interval["lo"] < 0.8
    margin = choosing.final_values(ratio["id"])  # the comparison's own interval: ratio − 0.8
    assert abs(threshold - interval["lo"]) < 1e-2 and abs(threshold - margin["lo"]) > 0.5
    text = confirmed.info["confirmation"]["spec_text"]
    body = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert body == [f'ratio: E[pred | sex == "Female"] / E[pred | sex == "Male"] >= {threshold:g}',
                    'gap: E[pred | sex == "Female"] - E[pred | sex == "Male"] <= 0.5']
    (mark,) = chosen_from(text)
    assert f"; ratio >= 0.8 → >= {threshold:g} (" in mark["text"] and not re.search(NODE_ID, mark["text"])


def test_no_node_id_in_what_the_confirm_flow_says(monkeypatch):
    """Node ids are internal: the mark, the 'threshold chosen' line and the headline name the clause (its name, else
    its non-constant side)."""
    import re

    from fairaudit.core.claim import chosen_line

    named, _ = _confirm_watched(monkeypatch, RATIO_AND_GAP, "n1")
    unnamed_spec = 'E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8 and E[pred] <= 0.99'
    unnamed, _ = _confirm_watched(monkeypatch, unnamed_spec, "n1")
    for result, who in ((named, "ratio"), (unnamed, 'E[pred | sex == "Female"] / E[pred | sex == "Male"]')):
        line = chosen_line(result)
        assert line.startswith(f"{who}: threshold ") and "the specification asked for 0.8" in line
        said = [line, result.claim.headline, result.claim.summary, result.claim.second or "", result.rows_text,
                *[m["text"] for m in chosen_from(result.info["confirmation"]["spec_text"])], *result.warnings]
        assert not [t for t in said if re.search(NODE_ID, str(t))]
    with pytest.raises(Exception) as err:  # a comparison that is already decided: said by its name
        confirm("german", RATIO_AND_GAP, "n6", engine="monitor", model="logreg")
    assert "gap" in str(err.value) and not re.search(NODE_ID, str(err.value))


def test_a_mark_written_with_a_node_id_is_still_read_and_said_by_the_clause():
    from fairaudit.core.claim import chosen_line, chosen_thresholds

    old = ("# threshold-chosen-from: unidentified data; n1 >= 0.8 → >= 0.5\n"
           + RATIO_AND_GAP.replace(">= 0.8", ">= 0.5"))
    r = audit("german", old, engine="monitor", model="logreg")
    assert chosen_thresholds(r) == {"n1": ("0.8", "0.5")}
    assert chosen_line(r).startswith("ratio: threshold 0.5 chosen after looking at these data")


def test_only_the_chosen_clause_and_the_claims_above_it_are_exploratory():
    """A threshold chosen from the data makes its own comparison exploratory, and every and/or/not above it (their
    verdict rests on it); a comparison whose threshold was not touched keeps its own verdict."""
    spec = ('ratio: E[pred | sex == "Female"] / E[pred | sex == "Male"] >= 0.8\n'
            'gap: E[pred | sex == "Female"] - E[pred | sex == "Male"] <= 0.9\n'
            'rate: not E[pred] > 0.99 or E[pred] > 0.999\n')
    r = audit("german", spec, engine="monitor", model="logreg")
    ratio = next(n["id"] for n in r.nodes if n.get("name") == "ratio")
    found = suggest.suggest_node(r, ratio)
    chosen = audit("german", suggest.apply(spec, found, "certify", result=r), engine="monitor", model="logreg")
    assert chosen.claim.status == "exploratory"
    shown = {n["id"]: n["final"]["verdict"] for n in chosen.shown_nodes}
    by_id = {n["id"]: n for n in chosen.nodes}
    above = set()
    node = ratio
    while node is not None:
        above.add(node)
        node = by_id[node]["parent"]
    claims = [n for n in chosen.nodes if n["kind"] in ("cmp", "and", "or", "not")]
    assert all(shown[n["id"]] == "exploratory" for n in claims if n["id"] in above)
    others = [n for n in claims if n["id"] not in above]
    assert others and all(shown[n["id"]] == n["final"]["verdict"] != "exploratory" for n in others)
    assert shown[next(n["id"] for n in claims if n.get("name") == "gap")] == "true"
