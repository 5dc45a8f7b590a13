"""The parser's tables built ahead of time (``fairaudit/spec/grammar_tables.py``, issue 30: start-up) are those of
the grammar, and the parser loaded from them reads every specification as the parser built from the grammar does:
the same trees, the same errors."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import lark
import pytest
from lark.lexer import BasicLexer

from fairaudit.spec import grammar_tables, parser
from fairaudit.spec.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]


def test_the_tables_are_built_from_this_grammar():
    assert grammar_tables.GRAMMAR_SHA256 == parser.grammar_sha256(), \
        "grammar.lark or LARK_OPTIONS changed: run python tools/build_grammar_tables.py"


def test_the_tool_says_current():
    if grammar_tables.LARK != lark.__version__:
        pytest.skip(f"tables built by lark {grammar_tables.LARK}, lark {lark.__version__} here (it builds the parser)")
    done = subprocess.run([sys.executable, "tools/build_grammar_tables.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("specs/*.spec"))]
    for path in sorted((ROOT / "tests" / "spec").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        texts += re.findall(r'"([^"\n]{1,300})"', source) + re.findall(r"'([^'\n]{1,300})'", source)
    return list(dict.fromkeys(texts))


def _outcome(parse, text):
    try:
        return "ok", repr(parse(text))
    except SpecError as err:
        return "error", err.pretty()


@pytest.fixture
def swap(monkeypatch):
    def use(made):
        monkeypatch.setattr(parser, "_parser", made)
        monkeypatch.setattr(parser, "_basic_lexer", BasicLexer(made.lexer_conf))
    return use


def test_the_loaded_parser_reads_as_the_built_one(swap):
    text = parser.GRAMMAR_PATH.read_text(encoding="utf-8")
    loaded = parser._prebuilt(text)
    if loaded is None:
        pytest.skip(f"tables built by lark {grammar_tables.LARK}, lark {lark.__version__} here (it builds the parser)")
    built = lark.Lark(text, **parser.LARK_OPTIONS)
    texts = _texts()
    seen = {}
    for name, made in (("built", built), ("loaded", loaded)):
        swap(made)
        seen[name] = [(_outcome(parser.parse, t), _outcome(parser.parse_event, t)) for t in texts]
    assert sum(parsed[0] == "ok" for parsed, _ in seen["built"]) > 50  # specifications, not only errors
    assert sum(parsed[0] == "error" for parsed, _ in seen["built"]) > 50
    assert [t for t, a, b in zip(texts, seen["built"], seen["loaded"]) if a != b] == []


def test_a_stale_table_is_not_used(monkeypatch):
    monkeypatch.setattr(grammar_tables, "GRAMMAR_SHA256", "0" * 64)
    assert parser._prebuilt(parser.GRAMMAR_PATH.read_text(encoding="utf-8")) is None
    monkeypatch.undo()
    monkeypatch.setattr(grammar_tables, "LARK", "0.0")
    assert parser._prebuilt(parser.GRAMMAR_PATH.read_text(encoding="utf-8")) is None
