"""Issue 44, item 8: tree labels never break inside a word ("threshol d") and never cut a clause name unreadably:
they wrap on word boundaries, a shortened label ends with "…" at a word boundary, a named comparison keeps its
threshold, and the tooltip keeps the full text."""
from __future__ import annotations

import pytest

from fairaudit.spec import parse
from fairaudit.viz import tree_chart
from fairaudit.viz.tree import short_labels, tree_frame

SPEC = ('demographic_parity_of_hiring_between_women_and_men: E[pred | sex == "Female"] / E[pred | sex == "Male"] '
        '>= 0.8\nthreshold_for_race: E[pred | race == "Black"] - E[pred | race == "White"] > -0.1\n'
        'third_clause_named_long: E[pred | age > 40] >= 0.3')


def _whole_words(label: str, full: str) -> bool:
    parts = full.replace("_", "_ ").replace("-", "- ").split()
    for word in label.replace("…", "").split():
        pieces = word.replace("_", "_ ").replace("-", "- ").split()
        if not all(p in parts or p.rstrip("_") + "_" in parts for p in pieces):
            return False
    return True


@pytest.mark.parametrize("width,lines", [(6, 1), (8, 2), (9, 3), (12, 2), (18, 2)])
def test_labels_wrap_on_word_boundaries_only(width, lines):
    spec = parse(SPEC)
    frame, _ = tree_frame(spec, label_width=width, label_lines=lines)
    shorts = short_labels(spec, max_chars=width * lines)
    for _, row in frame.iterrows():
        label = row["label"]
        assert label.count("\n") < lines or row["kind"] == "cmp"
        assert _whole_words(label, shorts[row["id"]]), (label, shorts[row["id"]])
    assert "threshol\nd" not in "".join(frame["label"]) and "threshold" in set(frame["label"])


def test_named_comparison_keeps_its_threshold_and_the_tooltip_the_full_name():
    spec = parse(SPEC)
    frame, _ = tree_frame(spec, label_width=8, label_lines=2)
    row = frame[frame["text"].str.startswith("third_clause_named_long:")].iloc[0]
    assert row["label"].endswith("\n≥0.3") and "…" in row["label"]
    assert row["text"].startswith("third_clause_named_long: E[pred | age > 40] >= 0.3")
    wide, _ = tree_frame(spec, label_width=30, label_lines=2)
    assert "third_clause_named_long: ≥0.3" in set(wide["label"])  # room enough: nothing shortened


def test_a_conjunction_of_long_names_says_what_it_requires():
    frame, _ = tree_frame(parse(SPEC), label_width=8, label_lines=2)
    assert frame.set_index("id").loc["n0", "label"] == "all must\nhold"


def test_tree_chart_tooltips_keep_the_full_expression():
    text = tree_chart(parse(SPEC), width=500).to_json()
    assert "demographic_parity_of_hiring_between_women_and_men: E[pred" in text
