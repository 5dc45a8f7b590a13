"""Label wrapping for chart labels (tree nodes): break at spaces, then after underscores of snake_case names."""
from fairaudit.viz._format import wrap


def test_wrap_breaks_at_spaces_first():
    assert wrap("sex_parity and race_parity", 12, 3) == "sex_parity\nand\nrace_parity"


def test_wrap_breaks_snake_case_names_after_an_underscore():
    assert wrap("fpr_african_american_over_caucasian: <1.1", 16, 3) == "fpr_african_\namerican_over_\ncaucasian: <1.1"
    # a hyphenated group is broken after its hyphen, not inside a word (the tree's labels on COMPAS)
    assert wrap("Asian − African-American <0.1", 13, 3) == "Asian −\nAfrican-\nAmerican <0.1"


def test_wrap_never_breaks_inside_a_word():
    # issue 44: "threshol\nd" on the tree; a word longer than the width stands whole on its line
    assert wrap("threshold", 8, 2) == "threshold"
    assert wrap("a threshold", 8, 2) == "a\nthreshold"
    # only a single word longer than all the lines together is cut, on one line, and marked
    assert wrap("abcdefghijklmnopqrstuvwxyz", 10, 2) == "abcdefghijklmnopqrs…"


def test_wrap_shortens_at_a_word_boundary_with_an_ellipsis():
    assert wrap("the quick brown fox jumps over the lazy dog", 10, 2) == "the quick\nbrown fox…"
    assert wrap("demographic parity of hiring: <0.1", 12, 2) == "demographic\nparity of…"
    assert wrap("fpr_african_american_over_caucasian: <1.1", 12, 2) == "fpr_african_\namerican…"


def test_wrap_every_line_is_made_of_whole_words():
    import random
    import re

    rng = random.Random(4)
    vocab = ["sex", "race", "threshold", "parity", "African-American", "hired_rate", "Female", "<0.1", "and", "≥0.8",
             "demographic_parity_of_hiring"]
    for _ in range(300):
        text = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 8)))
        width, lines = rng.randint(9, 20), rng.randint(1, 3)  # words up to 2 × width: never cut
        out = wrap(text, width, lines)
        pieces = out.replace("…", "").split("\n")
        assert len(pieces) <= lines
        runs = set()
        for w in set(text.split()):  # a word, or a run of its parts split after _ and -
            parts = re.split(r"(?<=[_-])", w)
            runs |= {"".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}
        for piece in pieces:
            for word in piece.split():
                assert word in runs or word + "_" in runs, (text, width, lines, out)
