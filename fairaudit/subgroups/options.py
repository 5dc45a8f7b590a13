"""The scan's choices and what they mean, in one place: the command line, the dashboard's Groups page and the
library read them from here (this module imports nothing, so a command line that only declares them stays cheap)."""

MODES = ("anytime", "one-look", "exact")
BOUNDS = ("mixture", "hoeffding")  # the anytime mode's confidence sequences (fairaudit.bounds.concentration)
ALLOCATIONS = ("decisive", "equal")  # how Δ is shared among the cells (fairaudit.subgroups.allocation)

HELP = {
    "burn_in": "with --follow: the first look (it fixes how the failure probability is shared among the cells) "
               "after this many rows (default 1000)",
    "delta": "failure probability Δ: every interval holds at once with probability ≥ 1 − Δ (default 0.05)",
    "mode": "anytime (default: valid at every look of a growing log), one-look (fixed-sample intervals for these "
            "rows at one look) or exact (the rows' own rates: no claim beyond them)",
    "bound": "the confidence sequence of the anytime mode: mixture (default, tighter) or hoeffding",
    "order": "row order of the looks: shuffle (seeded, default) or given (the file's order)",
    "allocation": "how the failure probability is shared among the cells: decisive (default: less to cells that "
                  "cannot decide) or equal",
}
