"""The comparison's choices and what they mean, in one place: the command line, the dashboard's Compare page and the
library read them from here (this module imports nothing, so a command line that only declares them stays cheap)."""

ENGINES = ("monitor", "dataset")  # paired: the monitor (anytime, the population) and the dataset engine (these rows)
STOPS = ("all", "decided")
ORDERS = ("shuffle", "given")
VERDICTS = ("a_lower", "b_lower", "undecided", "equal")  # "equal": exact engines only, a difference of exactly 0

ENGINE_TITLES = {"monitor": "monitor — the population, anytime-valid", "dataset": "dataset — these rows exactly"}
STOP_TITLES = {"all": "read every audited row", "decided": "when every difference is decided"}
SEQUENTIAL = ("monitor",)  # engines that read the rows look after look (the others: one look, exact or sound)


def is_sequential(engine: str) -> bool:
    """Whether ``engine``'s comparison reads the rows look after look (Δ and stop apply to it)."""
    return engine in SEQUENTIAL


DEFAULTS = {"delta": 0.05, "seed": 0, "stop": "all", "order": "shuffle", "engine": "monitor"}

HELP = {
    "delta": "failure probability Δ: every model's intervals and every difference hold at once, at every look, with "
             "probability ≥ 1 − Δ (default 0.05)",
    "engine": "monitor (default: the population the rows are drawn from, anytime-valid, paired) or dataset (these "
              "rows exactly); the verifier engines compare their sound bounds (fairquant, justicia, fvgm, fairsquare)",
    "stop": "all (default: read every audited row) or decided (stop at the first look where every difference is "
            "decided)",
    "order": "row order of the looks: shuffle (seeded, default) or given (a log's arrival order: the guarantee then "
             "assumes that order is random)",
    "seed": "seed of the shuffle (default 0)",
    "name": "a model's name in the tables (default: A, B, C ... in the order given)",
}
