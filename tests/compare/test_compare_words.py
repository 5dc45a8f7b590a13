"""Issue 44, item 8: the CLI's ``compare`` said ``unknown`` (and ``a lower``) where everything else says
``undecided`` (and names the model). Every front end takes its verdict words from ``fairaudit.core.explain``."""
from __future__ import annotations

import re

from fairaudit.comparison import compare
from fairaudit.comparison.wording import difference_word, model_verdict_word
from fairaudit.core.explain import verdict_word
from fairaudit.viz import compare as viz_compare
from tests.compare.compare_logs import two_model_log
from tests.console import run_main

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_one_word_map():
    assert model_verdict_word("unknown") == verdict_word("unknown") == "undecided"
    assert model_verdict_word("true") == "certified true" and model_verdict_word(None) == ""
    assert difference_word("undecided", "A", "B") == "undecided" and difference_word("a_lower", "A", "B") == "A lower"
    assert viz_compare.difference_word is difference_word  # the charts' words are the same function


def test_cli_compare_says_undecided_and_names_the_model(tmp_path, capsys):
    frame = two_model_log(400, 3, rates={("A", "a"): 0.3, ("A", "b"): 0.32, ("B", "a"): 0.31, ("B", "b"): 0.3},
                          agree=0.9).frame
    csv = tmp_path / "log.csv"
    frame.to_csv(csv, index=False)
    p = run_main(capsys, "compare", "--data", str(csv), "--spec", 'E[pred | g == "b"] - E[pred | g == "a"] < 0.1',
                 "--pred", "db == 1", "--pred", "da == 1", "--name", "new", "--name", "old", "--order", "given",
                 cwd=ROOT)
    table = p.stdout.split("headline:")[0]
    assert not re.search(r"\bunknown\b", table), table
    assert not re.search(r"\b[ab] lower\b", table), table
    assert "undecided" in table, table


def test_node_table_words_are_the_shared_ones():
    spec = 'E[pred | race == "African-American"] - E[pred | race == "Caucasian"] < 0.1'
    r = compare("compas", spec, preds=["decile_score <= 4", "decile_score <= 6"], names=["strict", "lenient"])
    text = viz_compare.node_table(r).to_string()
    assert "unknown" not in text
