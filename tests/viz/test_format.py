"""Label wrapping for chart labels (tree nodes): break at spaces, then after underscores of snake_case names."""
from fairaudit.viz._format import wrap


def test_wrap_breaks_at_spaces_first():
    assert wrap("sex_parity and race_parity", 12, 3) == "sex_parity\nand\nrace_parity"


def test_wrap_breaks_snake_case_names_after_an_underscore():
    assert wrap("fpr_african_american_over_caucasian: <1.1", 16, 3) == "fpr_african_\namerican_over_\ncaucasian: <1.1"
    # a hyphenated group is broken after its hyphen, not inside a word (the tree's labels on COMPAS)
    assert wrap("Asian − African-American <0.1", 13, 3) == "Asian −\nAfrican-\nAmerican <0.1"


def test_wrap_cuts_hard_without_a_break_and_marks_the_cut():
    assert wrap("abcdefghijklmnopqrstuvwxyz", 10, 2) == "abcdefghij\nklmnopqrs…"
