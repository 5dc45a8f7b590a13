"""The methods appendix: what the guarantee means, the bound and the δ allocation, as plain text blocks.

Each block is ``(heading, [paragraph, ...])``; a paragraph starting with ``"= "`` is a displayed formula, one
starting with ``"• "`` a bullet. The formulas are the ones implemented in ``fairaudit.bounds`` (see the
docstrings of ``fairaudit.bounds.concentration`` and ``fairaudit.bounds.allocation``).
"""
from __future__ import annotations

from fairaudit.report.content import _plain

HOEFFDING = [
    "Adaptive Hoeffding bound (Zhao et al. 2016, Theorem 1, as used by VeriFair and AVOIR). After n observations "
    "with sample mean p̂, the probability is within p̂ ± ε(δ, n), clipped to [0, 1], where",
    "= ε(δ, n) = √( (0.6 · ln(log₁.₁(n) + 1) + (5/9) · ln(24/δ)) / n )",
    "The interval holds at every n simultaneously with probability ≥ 1 − δ. It is symmetric and does not depend "
    "on the observed rate.",
]

BETTING = [
    "Betting confidence sequence (Robbins' beta-binomial mixture with the Krichevsky–Trofimov prior "
    "Beta(½, ½); Howard et al. 2021, Waudby-Smith & Ramdas 2023). With S successes and F = n − S failures, "
    "the interval is the set of means m for which a gambler betting against m has not multiplied their "
    "money by 1/δ:",
    "= CI_n = { m : S·ln m + F·ln(1 − m) > ln B(½ + S, ½ + F) − ln B(½, ½) + ln δ }",
    "(B is the beta function; the interval is found by bisection and rounded outwards). By Ville's inequality it "
    "holds at every n simultaneously with probability ≥ 1 − δ. It adapts to the variance m(1 − m), so it is much "
    "narrower than Hoeffding for rates far from ½.",
]


def blocks(result) -> list[tuple[str, list[str]]]:
    options = result.options or {}
    delta = options.get("delta")
    monitor = result.engine == "monitor"
    out: list[tuple[str, list[str]]] = []

    out.append(("Three-valued verdicts (Kleene logic)", [
        "Every probability in the specification gets an interval that contains its true value. Intervals are "
        "combined through the arithmetic of the specification by interval arithmetic (a ratio of two intervals, "
        "a difference, …). A comparison such as A < 0.1 is certified true when the whole interval of A satisfies "
        "it, violated when the whole interval violates it, and undecided otherwise.",
        "and / or / not combine the three values by Kleene's logic: 'a and b' is true when both are true and false "
        "when either is false; 'a or b' is true when either is true and false when both are false; in every other "
        "case the result is undecided. An undecided verdict is never reported as a pass or a fail.",
    ]))

    if monitor:
        d = _plain(delta) if delta is not None else "Δ"
        out.append(("The guarantee: anytime-valid confidence sequences", [
            "The monitor reads the rows one after another and, after every batch, recomputes each probability's "
            "interval. The intervals are confidence sequences: each holds at every step simultaneously with "
            "probability ≥ 1 − δᵢ, not only at one pre-planned sample size. The audit may therefore be watched "
            "continuously and stopped as soon as the verdict is decided without invalidating the guarantee.",
            f"The total failure probability Δ = {d} is split among the k distinct probabilities E[…] of the "
            "specification (δ₁ + … + δ_k ≤ Δ). By the union bound, all intervals hold together with probability "
            f"≥ 1 − Δ, so every verdict derived from them is correct with probability ≥ 1 − {d}.",
            "Conditional probabilities E[A | B] are estimated by counting only rows that satisfy B (rejection "
            "sampling); their number of observations n is the number of such rows, shown in the node table.",
        ]))
        bound = str(options.get("bound", "hoeffding"))
        used, other = (BETTING, HOEFFDING) if bound == "betting" else (HOEFFDING, BETTING)
        out.append((f"The bound used: {bound}", used))
        out.append(("The alternative bound (not used in this audit)", other))
        split = str(options.get("split", "equal"))
        alloc = [
            "• Equal split (VeriFair, 'AVOIR-VF'): every distinct probability gets δᵢ = Δ / k.",
            "• Optimised split (AVOIR eq. (2), 'AVOIR-OB'): at a check, choose the δᵢ that decide the verdict with "
            "the smallest total budget,",
            "= minimise δ₁ + … + δ_k  subject to the constraints inferred from the specification "
            "(each comparison the verdict needs must hold on the intervals at those δᵢ),",
            "and decide when the minimum is ≤ Δ. The problem is solved globally by SCIP through Pyomo; every "
            "solution is re-checked with the exact evaluator before it is used.",
            f"This audit used the {split} split. Before the decision every plot shows the equal split Δ / k "
            "(a fixed allocation, so each displayed interval is a confidence sequence at the δ shown). From the "
            "decision on, the deciding allocation is frozen and each interval is the running intersection of its "
            "intervals since the decision, so the verdict cannot drift back.",
        ]
        if split == "optimized":
            alloc.append("The guarantee of the optimised split is weaker: its δᵢ are chosen after looking at "
                         "the data, so the union bound over a fixed allocation does not apply (AVOIR's Theorem 1 "
                         "overlooks this; fairaudit has a reproducer in which the optimised split is wrong far more "
                         "often than Δ). What holds is that every δᵢ is at most Δ, so a wrong verdict needs one of "
                         "the k confidence sequences at level Δ to miss: probability ≤ k·Δ. The verdict sentence "
                         "states this level, and after the decision the δ column shows Δ per probability. Use the "
                         "equal split for a 1 − Δ guarantee.")
        out.append(("How Δ is divided: the δ allocation", alloc))
    else:
        out.append(("The guarantee: sound bounds", [
            f"The {result.engine} engine is a verifier: it computes lower and upper bounds that contain the exact "
            "value with certainty (a 'sound bound') for the model and the input distribution or domain it was "
            "given. There is no failure probability (Δ = 0); the intervals narrow as the engine refines its "
            "analysis (one step = one refinement iteration). The guarantee is only as good as the encoded "
            "population model or input domain: it says nothing about data outside it.",
        ]))

    out.append(("Glossary", [
        "• estimate: the current best value of a node (for a probability, the observed rate).",
        "• interval [lo, hi]: the range that contains the true value (with the guarantee above).",
        "• δ: the failure probability assigned to that node's interval (for a combined node, the sum of its "
        "probabilities' δᵢ).",
        "• n: the number of observations that counted for a probability.",
        "• step: the number of observations (monitor) or refinement iterations (verifiers) processed.",
        "• certified / unfair / undecided (Fair[…] nodes): the fraction of individuals whose decision provably does "
        "not change / provably changes / may change when only the protected attribute changes.",
    ]))
    return out
