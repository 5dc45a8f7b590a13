"""A result records the options its run used: the population sample size is not one of a run on rows (the report's
parameter table listed "Individuals sampled (population)" for a dataset audit)."""
from __future__ import annotations

from pathlib import Path

import fairaudit
from fairaudit import data
from fairaudit.report.content import option_rows

EXAMPLES = Path(fairaudit.__file__).parent / "programs" / "examples"


def _titles(result) -> str:
    return " ".join(f"{title} {value}" for title, value, _ in option_rows(result))


def test_a_run_on_rows_does_not_record_the_population_sample_size():
    result = fairaudit.audit(data.load("ricci"), 'E[pred | race == "White"] > 0.1', pred="combine >= 70",
                             rows="all", samples=5000)
    assert "samples" not in result.options and "Individuals sampled" not in _titles(result)
    assert result.options["delta"] == 0.05  # the options it used are recorded


def test_a_population_run_records_it():
    result = fairaudit.audit(None, None, engine="monitor", population=EXAMPLES / "ex3_2.fr", samples=2000, seed=1)
    assert result.options["samples"] == 2000 and "Individuals sampled (population) 2,000" in _titles(result)
