"""``fairaudit.core.findings.modelling_gap``: the modelled group rates beside the model's rates on the audited rows, with
a warning when they differ beyond sampling error or when the most/least favoured groups are the other way round."""
import pandas as pd

from fairaudit.core.findings import GroupRate, modelling_gap, observed_rates


def _g(v, lo, hi):
    return GroupRate((("sex", v),), lo, hi, 0.5)


def test_close_rates_give_the_column_and_no_warning():
    groups, notes, warnings = modelling_gap([_g("F", 0.40, 0.41), _g("M", 0.60, 0.60)],
                                            {(("sex", "F"),): (0.42, 400), (("sex", "M"),): (0.59, 600)}, "X", "Y")
    assert [g.observed for g in groups] == [0.42, 0.59] and [g.rows for g in groups] == [400, 600]
    assert not warnings and len(notes) == 1


def test_a_gap_beyond_sampling_error_warns():
    _, _, warnings = modelling_gap([_g("F", 0.40, 0.41), _g("M", 0.60, 0.60)],
                                   {(("sex", "F"),): (0.55, 2000), (("sex", "M"),): (0.60, 2000)}, "the network",
                                   "try more bins")
    assert len(warnings) == 1 and "sex = F (gap 0.140)" in warnings[0] and "try more bins" in warnings[0]


def test_a_small_group_is_not_called_different_within_its_standard_error():
    _, _, warnings = modelling_gap([_g("F", 0.40, 0.40), _g("M", 0.60, 0.60)],
                                   {(("sex", "F"),): (0.6, 5), (("sex", "M"),): (0.60, 5000)}, "X", "Y")
    assert not warnings


def test_reversed_favoured_groups_warn():
    _, _, warnings = modelling_gap([_g("F", 0.50, 0.50), _g("M", 0.52, 0.52)],
                                   {(("sex", "F"),): (0.56, 3000), (("sex", "M"),): (0.47, 3000)}, "X", "Y")
    assert any("on the audited rows the model favours sex = F" in w for w in warnings)


def test_observed_rates_group_the_rows_and_name_missing_values():
    frame = pd.DataFrame({"sex": ["F", "F", "M", None], "race": ["a", "b", "a", "a"]})
    got = observed_rates(["sex"], frame, [1, 0, 1, 1])
    assert got == {(("sex", "F"),): (0.5, 2), (("sex", "M"),): (1.0, 1), (("sex", "missing"),): (1.0, 1)}


def test_a_group_without_audited_rows_is_listed_but_never_marked():
    from fairaudit.core.findings import Findings

    groups, notes, _ = modelling_gap([_g("F", 0.2, 0.2), _g("M", 0.5, 0.5), _g("X", 0.9, 0.9)],
                                     {(("sex", "F"),): (0.2, 100), (("sex", "M"),): (0.5, 100)}, "X", "Y")
    assert groups[2].rows == 0 and groups[2].observed is None
    marks = Findings(groups=groups).marks()
    assert marks == {"sex = M": "most favoured", "sex = F": "least favoured"}
    assert any("no audited row" in n and "sex = X" in n for n in notes)


def test_disparate_impact_of_rates_that_may_all_be_zero_is_unknown_not_fair():
    from fairaudit.core.findings import disparities

    di, sp = disparities([_g("F", 0.0, 0.0), _g("M", 0.0, 0.0)])
    assert (di.lo, di.hi) == (0.0, 1.0) and (sp.lo, sp.hi) == (0.0, 0.0)
    di, _ = disparities([_g("F", 0.2, 0.2), _g("M", 0.4, 0.4)])
    assert (di.lo, di.hi) == (0.5, 0.5)


def test_an_order_reversed_within_sampling_error_is_a_note_not_a_warning():
    groups, notes, warnings = modelling_gap([_g("F", 0.82, 0.82), _g("M", 0.88, 0.88)],
                                            {(("sex", "F"),): (0.845, 71), (("sex", "M"),): (0.838, 179)}, "X", "Y")
    assert not any("favours" in w for w in warnings)
    assert any("other way round" in n and "within sampling error" in n for n in notes)


def test_the_graph_leaves_out_lone_variables_but_names_them():
    from fairaudit.core.findings import Findings

    dot = Findings(nodes=("a", "b", "c"), edges=(("a", "b"),)).dot()
    assert '"a" -> "b"' in dot and '  "c";' not in dot and "1 variable(s) with no edge: c" in dot
