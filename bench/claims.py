"""What the headline claims, over a grid of thresholds (issue 28): for the engines whose bounds are certain about a
distribution fitted to the rows (justicia, fvgm, fairsquare over a generated program), how many decided verdicts
the population check keeps, how many it makes "undecided for the population", and what the check costs beside
the engine's own run.

    .venv/bin/python bench/claims.py            # german and compas, 9 thresholds, logreg
    .venv/bin/python bench/claims.py adult      # one dataset

Prints one table per dataset: engine, threshold, the engine's verdict (about its model), the headline's verdict
(about the population), the population interval of the compared gap, and the seconds of the run and of the
population check (``fairaudit.core.claim.rows_intervals``) measured in the same process.
"""
from __future__ import annotations

import sys
import time

from fairaudit import audit
from fairaudit.core.claim import rows_intervals
from fairaudit.data import load
from fairaudit.core.explain import interval
from fairaudit.core.inputs import Inputs
from fairaudit.models import train
from fairaudit.models.features import default_features
from fairaudit.spec import parse

GROUPS = {"german": ('sex == "Female"', 'sex == "Male"'), "compas": ('race == "African-American"',
                                                                      'race == "Caucasian"'),
          "adult": ('sex == "Female"', 'sex == "Male"')}
THRESHOLDS = (-0.3, -0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2, 0.3)
ENGINES = ("justicia", "fvgm")  # fairsquare over a program generated with every default feature of german runs
# to its 120 s budget undecided: pass a smaller model to include it


def main(names) -> None:
    for name in names:
        a, b = GROUPS[name]
        dataset = load(name)
        model = train(dataset, "logreg", features=default_features(dataset))
        print(f"\n## {name}: E[pred | {a}] - E[pred | {b}] > c (logreg, default features)\n")
        print("| engine | c | engine's verdict (model) | headline (population) | population gap | run s | check s |")
        print("|---|---|---|---|---|---|---|")
        kept = downgraded = decided = 0
        for engine in ENGINES:
            for c in THRESHOLDS:
                text = f"E[pred | {a}] - E[pred | {b}] > {c}"
                started = time.perf_counter()
                r = audit(dataset, text, engine=engine, model=model)
                run = time.perf_counter() - started
                started = time.perf_counter()
                rows_intervals(parse(text), Inputs.build(dataset, model=model))
                check = time.perf_counter() - started
                gap = (r.population or {}).get("nodes", {}).get("n1", {})
                if r.verdict in ("true", "false"):
                    decided += 1
                    kept += r.claim.verdict == r.verdict
                    downgraded += r.claim.verdict == "unknown"
                print(f"| {engine} | {c:g} | {r.verdict} | {r.claim.verdict} | {interval(gap.get('lo'), gap.get('hi'))} "
                      f"| {run:.2f} | {check:.2f} |")
        print(f"\n{decided} decided by the engines about their model; {kept} kept for the population, {downgraded} "
              f"undecided for the population.")


if __name__ == "__main__":
    main(sys.argv[1:] or ["german", "compas"])
