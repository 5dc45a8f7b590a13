"""The methods appendix: how verdicts are combined, what this result's guarantee means, the engine's own method,
and a glossary, as plain text blocks.

Each block is ``(heading, [paragraph, ...])``; a paragraph starting with ``"= "`` is a displayed formula, one
starting with ``"• "`` a bullet. Only the generic blocks are written here (three-valued verdicts, the glossary);
the guarantee is worded by ``result.guarantee`` (``fairaudit.core.guarantee.Guarantee``) and the engine's method by
the engine itself (``Engine.methods(options)``), so no engine is described in this file.
"""
from __future__ import annotations

import numpy as np

from fairaudit.report.content import as_sentence, count_meaning, engine_of


def blocks(result) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    out.append(("Three-valued verdicts (Kleene logic)", [
        "Every probability in the specification gets an interval that contains its true value, with the guarantee "
        "stated below. Intervals are combined through the arithmetic of the specification by interval arithmetic "
        "(a ratio of two intervals, a difference, …). A comparison such as A < 0.1 is certified true when the "
        "whole interval of A satisfies it, violated when the whole interval violates it, and undecided otherwise.",
        "and / or / not combine the three values by Kleene's logic: 'a and b' is true when both are true and false "
        "when either is false; 'a or b' is true when either is true and false when both are false; in every other "
        "case the result is undecided. An undecided verdict is never reported as a pass or a fail.",
    ]))
    out.append(guarantee_block(result))
    from fairaudit.core.claim import how_decided

    out.append(("How this was decided", ["• " + as_sentence(line) for line in how_decided(result)]))
    findings = getattr(result, "findings", None)
    if findings is not None and getattr(findings, "ci_method", ""):
        out.append(("Group rates: the second interval", [as_sentence(findings.ci_method)]))
    out += engine_blocks(result)
    out.append(glossary(result))
    return out


def guarantee_block(result) -> tuple[str, list[str]]:
    """What this result's guarantee says, in the Guarantee's own words."""
    g = result.guarantee
    paragraphs = [as_sentence(f"A decided verdict of this audit holds {g.phrase}"),
                  as_sentence(f"Every interval shown: {g.interval_meaning}")]
    if g.note:
        paragraphs.append(as_sentence(f"This guarantee is weaker than the one asked for: {g.note}"))
    if g.assumes:
        paragraphs.append(as_sentence(f"What it assumes: {g.assumes}"))
    return (f"The guarantee of this audit: {g.caption}", paragraphs)


def engine_blocks(result) -> list[tuple[str, list[str]]]:
    """The engine's own methods text (``Engine.methods(result.options)``); one generic block when the engine
    is not installed here or says nothing about its method."""
    engine = engine_of(result)
    if engine is None:
        return [(f"The engine: {result.engine}", [
            f"The {result.engine} engine is not installed where this report was generated, so its own description "
            "of its method is not included. The guarantee above is the one its result recorded.",
        ])]
    found = engine.methods(dict(result.options or {})) or []
    if found and all(isinstance(p, str) for p in found):  # a flat list of paragraphs: one block
        found = [(engine.title or engine.name, list(found))]
    found = [(str(head), [str(p) for p in paras]) for head, paras in found]
    if not found:
        found = [(f"The engine: {engine.title or engine.name}", [as_sentence(engine.summary or engine.name)])]
    return found


def glossary(result) -> tuple[str, list[str]]:
    g, unit = result.guarantee, result.unit
    items = [
        "• estimate: the value of a node the engine reports at that step (its point estimate, or the exact value).",
        f"• interval [lo, hi]: {g.interval_meaning}.",
    ]
    if g.kind == "probabilistic":
        items.append("• δ: the failure probability of that node's interval (for a combined node, the sum of the "
                     "δ's of its probabilities).")
    if np.isfinite(result.trace_table.n).any():
        items.append(f"• n: {count_meaning(result).rstrip('.')}.")
    items.append(f"• step: the number of {unit} processed.")
    if any(n.kind == "cmp" and result.has_evalue(n.id) for n in result.node_info):
        items.append("• e-value, 1/β (comparisons tested by their engine's own joint test): how strongly the "
                     "data reject the opposite of the comparison's verdict (the largest value so far); the comparison "
                     "is decided when it reaches 1/β, and its verdict is then wrong with probability at most β.")
    if any(n.kind == "fair" for n in result.node_info):
        items.append("• certified / unfair / undecided (Fair[…] nodes): the fraction of individuals whose decision "
                     "provably does not change / provably changes / may change when only the protected attribute "
                     "changes.")
    return ("Glossary", items)
