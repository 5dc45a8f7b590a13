"""Build ``fairaudit/spec/grammar_tables.py``: the specification parser's LALR tables, built ahead of time.

    python tools/build_grammar_tables.py [--check] [--force]

Building the parser from ``fairaudit/spec/grammar.lark`` takes ~30 ms, once per process, at the first parse (every
``fairaudit check`` and ``fairaudit audit`` pays it); loading the same parser from tables written as Python literals
takes ~2 ms. ``fairaudit.spec.parser`` uses the tables only when they were built from the grammar and options it has
(``GRAMMAR_SHA256``) with the lark version installed (``LARK``); otherwise it builds the parser as before, so a stale
file is slower, never wrong. Run this after editing the grammar or upgrading lark; ``--check`` exits 1 when the file
is stale (``tests/spec/test_grammar_tables.py`` checks it too, and that the loaded parser reads specifications as
the built one does). Nothing is written at run time.

Lark numbers the states of the same automaton differently from one build to the next, so the file is rewritten only
when it is stale (or with ``--force``), and "current" means built from this grammar and options by this lark.
"""
from __future__ import annotations

import argparse
import pprint
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "fairaudit" / "spec" / "grammar_tables.py"

HEAD = '''"""The specification parser's LALR tables, built ahead of time from ``grammar.lark`` by lark {lark} (generated
by ``tools/build_grammar_tables.py``: do not edit). ``fairaudit.spec.parser`` loads them (~2 ms) instead of building
the parser (~30 ms) when ``GRAMMAR_SHA256`` and ``LARK`` are those of its grammar, options and installed lark."""
# fmt: off
GRAMMAR_SHA256 = {sha!r}
LARK = {lark!r}
'''


def build() -> str:
    sys.path.insert(0, str(ROOT))
    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    from fairaudit.spec import parser

    built = lark.Lark(parser.GRAMMAR_PATH.read_text(encoding="utf-8"), **parser.LARK_OPTIONS)
    data, memo = built.memo_serialize([TerminalDef, Rule])
    text = HEAD.format(lark=lark.__version__, sha=parser.grammar_sha256())
    text += "DATA = " + pprint.pformat(data, width=120, sort_dicts=True) + "\n"
    text += "MEMO = " + pprint.pformat(memo, width=120, sort_dicts=True) + "\n"
    return text


def recorded() -> tuple[str | None, str | None]:
    """The (grammar hash, lark version) the file records."""
    text = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    found = [re.search(rf"^{key} = '([^']*)'$", text, re.M) for key in ("GRAMMAR_SHA256", "LARK")]
    return tuple(m.group(1) if m else None for m in found)


def current() -> tuple[str, str]:
    sys.path.insert(0, str(ROOT))
    import lark

    from fairaudit.spec import parser

    return parser.grammar_sha256(), lark.__version__


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args.add_argument("--force", action="store_true", help="rewrite the file even when it is current")
    args = args.parse_args()
    name = OUT.relative_to(ROOT)
    fresh = recorded() == current()
    if args.check:
        print(f"{name} is current" if fresh else f"{name} is stale: run python tools/build_grammar_tables.py",
              file=sys.stdout if fresh else sys.stderr)
        return 0 if fresh else 1
    if fresh and not args.force:
        print(f"{name} is current (--force rewrites it)")
        return 0
    OUT.write_text(build(), encoding="utf-8")
    print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
