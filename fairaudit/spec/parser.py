"""Parsing specification text into the AST of ``fairaudit.spec.ast``.

The grammar lives in ``grammar.lark`` (LALR(1), positions propagated; the parser is loaded from its tables built
ahead of time, ``grammar_tables``, when they are current: ``tools/build_grammar_tables.py``); ``_ToAst`` has one
method per grammar alias. Nothing is ever ``eval``-ed. Every problem becomes a ``SpecError`` with the line and
column of the offending token and a message meant for a person (see ``_explain_token``).
"""
from __future__ import annotations

import hashlib
import math
import sys
import threading
from pathlib import Path

import lark
from lark import Lark, Token, Tree
from lark.lexer import BasicLexer, LexerThread
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError
from lark.visitors import Transformer_NonRecursive, v_args

from fairaudit.base import limits
from fairaudit.spec import ast
from fairaudit.spec.errors import SpecError, clip, position
from fairaudit.spec.printer import to_text
from fairaudit.spec.tree import build_spec, named_spec

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")
MAX_DEPTH = 200  # twice the deepest bracket nesting accepted (the printer and the evaluator recurse)
MAX_OPERATORS = 300  # the longest chain of operators accepted, for the same reason

_LARGEST_FLOAT = int(sys.float_info.max)  # an integer literal beyond it is refused, as a float literal that overflows
_MAX_INT_DIGITS = len(str(_LARGEST_FLOAT))

_lock = threading.Lock()
_parser: Lark | None = None
_basic_lexer: BasicLexer | None = None  # context-free, over the parser's terminals: tokens for the checks and errors


LARK_OPTIONS = dict(parser="lalr", lexer="contextual", start=["start", "event_start"], propagate_positions=True,
                    maybe_placeholders=False)


def grammar_sha256(text: str | None = None) -> str:
    """What the parser is built from: the grammar's text and :data:`LARK_OPTIONS` (``grammar_tables`` records it)."""
    text = GRAMMAR_PATH.read_text(encoding="utf-8") if text is None else text
    return hashlib.sha256(f"{text}\n{sorted(LARK_OPTIONS.items())!r}".encode("utf-8")).hexdigest()


def _prebuilt(text: str) -> Lark | None:
    """The parser loaded from ``grammar_tables`` (built ahead of time by tools/build_grammar_tables.py), or None
    when they were built from another grammar or options or by another lark version: then it is built here."""
    from fairaudit.spec import grammar_tables as tables

    if tables.GRAMMAR_SHA256 != grammar_sha256(text) or tables.LARK != lark.__version__:
        return None
    return Lark._load_from_dict(tables.DATA, tables.MEMO)  # what Lark.load does, from literals instead of a pickle


def _lark() -> Lark:
    """The parser, made once per process at the first parse (never at import): loaded from the tables built ahead
    of time (~2 ms) when they are current, else built from the grammar (~30 ms)."""
    global _parser, _basic_lexer
    with _lock:
        if _parser is None:
            text = GRAMMAR_PATH.read_text(encoding="utf-8")
            _parser = _prebuilt(text) or Lark(text, **LARK_OPTIONS)
            # what Lark.lex builds on every call (it needs lexer="basic" to keep one): the same terminals, kept
            # here instead of a second Lark over the same grammar
            _basic_lexer = BasicLexer(_parser.lexer_conf)
        return _parser


# --------------------------------------------------------------------------------------------
# public API


def parse(text: str) -> ast.Spec:
    """Parse a specification (one spec, or several ``name: spec`` parts) into a ``Spec``.

    Raises ``SpecError`` (with line, column and a caret excerpt) for any problem.
    """
    tree = _parse_tree(text, "start", what="specification")
    builder = _ToAst(text)
    result = _transform(builder, tree, text)
    if isinstance(result, list):  # named parts
        return named_spec(result, source=text)
    return build_spec(result, source=text)


def parse_event(text: str) -> ast.Event:
    """Parse an event (a condition on one row), e.g. ``decile_score > 3`` or ``income == ">50K"``.

    Outside ``E[...]`` there is no condition part, so ``|`` may be used for ``or`` here.
    """
    tree = _parse_tree(text, "event_start", what="event")
    return _transform(_ToAst(text), tree, text)


def parse_node(text: str) -> ast.Node:
    """The root node of a specification (``parse(text).root``)."""
    return parse(text).root


# --------------------------------------------------------------------------------------------
# tree -> AST


def _span(meta) -> ast.Span | None:
    if getattr(meta, "empty", True):
        return None
    return ast.Span(meta.line, meta.column, meta.start_pos, meta.end_pos)


def _token_span(token: Token) -> ast.Span:
    return ast.Span(token.line, token.column, token.start_pos, token.end_pos)


_UNESCAPE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "`": "`"}


@v_args(meta=True, inline=True)
class _ToAst(Transformer_NonRecursive):
    """One method per grammar alias; checks that conditions and numbers are used where they belong."""

    def __init__(self, source: str):
        super().__init__()
        self.source = source

    # ---- errors
    def _error_at(self, span: ast.Span | None, message: str, *, at_end: bool = False) -> SpecError:
        if span is None:
            return SpecError(None, None, message)
        offset = span.end if at_end else span.start
        line, column = position(self.source, offset)
        length = 1 if at_end else max(1, span.end - span.start)
        return SpecError.at(self.source, line, column, message, length=length)

    def _condition(self, node: ast.Node) -> ast.Node:
        """``node`` must be true/false (a comparison or a combination of them)."""
        if node.kind in ast.BOOLEAN_KINDS:
            return node
        what = "E[...]" if node.kind == "expect" else "Fair[...]" if node.kind == "fair" else f"'{to_text(node)}'"
        raise self._error_at(node.span, f"expected a comparison after {what} (one of < <= > >= == !=)",
                             at_end=True)

    def _number(self, node: ast.Node) -> ast.Node:
        """``node`` must be a number (a term), not a condition."""
        if node.kind not in ast.BOOLEAN_KINDS:
            return node
        raise self._error_at(node.span, f"expected a number here, but '{to_text(node)}' is a condition "
                                        "(true or false); put it in parentheses with its own and/or")

    # ---- top level
    def single_spec(self, meta, spec):
        return self._condition(spec)

    def named_specs(self, meta, *parts):
        seen: dict[str, ast.Name] = {}
        for name, _ in parts:
            if name.name in seen:
                first = seen[name.name].span
                raise self._error_at(name.span, f"the name '{name.name}' is already used at line {first.line}")
            seen[name.name] = name
        return [(name.name, node) for name, node in parts]

    def named_spec(self, meta, name, spec):
        return name, self._condition(spec)

    # ---- logic
    def or_(self, meta, left, right):
        return ast.Or(self._condition(left), self._condition(right), span=_span(meta))

    def and_(self, meta, left, right):
        return ast.And(self._condition(left), self._condition(right), span=_span(meta))

    def not_(self, meta, operand):
        return ast.Not(self._condition(operand), span=_span(meta))

    def cmp(self, meta, left, op, right):
        return ast.Cmp(str(op), self._number(left), self._number(right), span=_span(meta))

    # ---- arithmetic
    def add(self, meta, left, right):
        return ast.Add(self._number(left), self._number(right), span=_span(meta))

    def sub(self, meta, left, right):
        return ast.Sub(self._number(left), self._number(right), span=_span(meta))

    def mul(self, meta, left, right):
        return ast.Mul(self._number(left), self._number(right), span=_span(meta))

    def div(self, meta, left, right):
        return ast.Div(self._number(left), self._number(right), span=_span(meta))

    def neg(self, meta, operand):
        return ast.Neg(self._number(operand), span=_span(meta))

    def const(self, meta, token):
        return ast.Const(self._float(token), span=_token_span(token))

    # ---- leaves
    def expect(self, meta, event):
        return ast.Expect(event, None, span=_span(meta))

    def expect_given(self, meta, event, given):
        return ast.Expect(event, given, span=_span(meta))

    def fair(self, meta, name):
        if name.reserved:
            raise self._error_at(name.span, f"Fair[...] takes a protected column, not '{name.name}'")
        return ast.Fair(name.name, span=_span(meta))

    # ---- events
    def event_start(self, meta, event):
        return event

    def ev_or(self, meta, left, right):
        return ast.EvOr(left, right, span=_span(meta))

    def ev_and(self, meta, left, right):
        return ast.EvAnd(left, right, span=_span(meta))

    def ev_not(self, meta, operand):
        return ast.EvNot(operand, span=_span(meta))

    def compare(self, meta, left, op, right):
        return ast.Compare(str(op), left, right, span=_span(meta))

    def in_set(self, meta, name, values):
        return ast.In(name, values, negated=False, span=_span(meta))

    def not_in_set(self, meta, name, values):
        return ast.In(name, values, negated=True, span=_span(meta))

    # ---- quantities
    def q_add(self, meta, left, right):
        return ast.Arith("+", left, right, span=_span(meta))

    def q_sub(self, meta, left, right):
        return ast.Arith("-", left, right, span=_span(meta))

    def q_add_number(self, meta, left, token):
        return ast.Arith("+", left, ast.Value(self._literal(token), span=_token_span(token)), span=_span(meta))

    def q_sub_number(self, meta, left, token):
        return ast.Arith("-", left, ast.Value(self._literal(token), span=_token_span(token)), span=_span(meta))

    def call(self, meta, name, argument, *bounds):
        function = name.name
        if name.span is not None and self.source[name.span.start:name.span.start + 1] == "`":
            raise self._error_at(name.span, f"`{clip(function)}` in back-quotes names a column, which cannot be "
                                            "called; write the function bare: abs(...) or clip(...)")
        if name.column or function not in ast.QUANTITY_FUNCTIONS:
            raise self._error_at(name.span, f"unknown function '{clip(function)}'; inside E[...] the functions are "
                                            f"{' and '.join(f + '(...)' for f in ast.QUANTITY_FUNCTIONS)}")
        self._quantity(argument)
        wanted = 2 if function == "clip" else 0
        if len(bounds) != wanted:
            usage = "clip(x, low, high)" if function == "clip" else "abs(x)"
            raise self._error_at(_span(meta), f"{function}(...) takes {'three' if wanted else 'one'} argument"
                                              f"{'s' if wanted else ''}: {usage}")
        if any(isinstance(b.value, str) for b in bounds):
            raise self._error_at(_span(meta), "clip(x, low, high) takes two numbers as its bounds")
        if wanted and not bounds[0].value <= bounds[1].value:
            raise self._error_at(_span(meta), f"clip(x, low, high) needs low <= high; got {bounds[0].value} and "
                                              f"{bounds[1].value}")
        return ast.Call(function, argument, tuple(bounds), span=_span(meta))

    def power(self, meta, base, token):
        self._quantity(base)
        if token.value not in ("2", "2.0"):
            raise self._error_at(_token_span(token), f"only the square (^2) of a quantity can be taken, not "
                                                     f"^{clip(token.value)}")
        return ast.Power(base, 2, span=_span(meta))

    def _quantity(self, item):
        """``item`` must be a quantity (a name or arithmetic on names), not a condition."""
        if isinstance(item, (ast.Name, *ast.COMPOUND_QUANTITIES)):
            return item
        raise self._error_at(getattr(item, "span", None), "expected an amount here (a column, or arithmetic on "
                                                          "columns), but this is a condition (true or false)")

    def values(self, meta, *values):
        return tuple(values)

    def number(self, meta, token):
        return ast.Value(self._literal(token), span=_token_span(token))

    def negative_number(self, meta, token):
        value = self._literal(token)
        # ``-0`` stays the float -0.0 it always was (its canonical text is ``-0``); -0 == 0 either way
        return ast.Value(-float(value) if value == 0 else -value, span=_span(meta))

    def string(self, meta, token):
        return ast.Value(self._unescape(token, token.value[1:-1], "string"), span=_token_span(token))

    def bare_name(self, meta, token):
        return ast.Name(str(token), span=_token_span(token))

    def quoted_name(self, meta, token):
        name = self._unescape(token, token.value[1:-1], "name")
        if not name:
            raise self._error_at(_token_span(token), "empty name ``; write a column name between the back-quotes")
        return ast.Name(name, span=_token_span(token), column=name in ast.RESERVED)

    # ---- token helpers
    def _literal(self, token: Token) -> int | float:
        """A value inside an event: an integer literal (digits only: no '.', no exponent) is the exact ``int``, so
        that ``id == 1152921504606846977`` is not rounded to the float 2**60; any other number is a ``float``.
        An integer beyond the largest float is refused like a float that overflows."""
        text = token.value
        if not text.isdigit():  # the token pattern allows only ASCII digits, '.', 'e'/'E' and a sign after 'e'
            return self._float(token)
        digits = text.lstrip("0") or "0"
        if len(digits) > _MAX_INT_DIGITS or int(digits) > _LARGEST_FLOAT:
            raise self._error_at(_token_span(token), f"the number {clip(text)} is too large")
        return int(digits)

    def _float(self, token: Token) -> float:
        value = float(token.value)
        if not math.isfinite(value):
            raise self._error_at(_token_span(token), f"the number {token.value} is too large")
        return value

    def _unescape(self, token: Token, body: str, what: str) -> str:
        out, i = [], 0
        while i < len(body):
            ch = body[i]
            if ch == "\\":
                nxt = body[i + 1]  # the token pattern guarantees a character after a backslash
                if nxt not in _UNESCAPE:
                    line, column = position(self.source, token.start_pos + 1 + i)
                    raise SpecError.at(self.source, line, column,
                                       f"unknown escape '\\{nxt}' in a {what}; write '\\\\' for a backslash",
                                       length=2)
                out.append(_UNESCAPE[nxt])
                i += 2
            else:
                out.append(ch)
                i += 1
        return "".join(out)


def _transform(builder: _ToAst, tree: Tree, text: str):
    try:
        return builder.transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, SpecError):
            raise err.orig_exc from None
        raise


# --------------------------------------------------------------------------------------------
# text -> lark tree, with errors for people

_OPENERS = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSERS = {closer: opener for opener, closer in _OPENERS.items()}
_OPERATORS = {"AND", "AMPERSAND", "OR", "VBAR", "NOT", "PLUS", "MINUS", "STAR", "SLASH", "CMP_OP", "IN"}
_ENDS_VALUE = {"NUMBER", "STRING", "NAME", "QUOTED_NAME", "RPAR", "RSQB", "RBRACE"}
_STARTS_VALUE = {"NUMBER", "STRING", "NAME", "QUOTED_NAME", "LPAR", "E", "FAIR", "NOT"}

# how expected tokens are named in messages, in the order they are listed
_EXPECTED = [
    ({"NUMBER"}, "a number"), ({"E"}, "E[...]"), ({"FAIR"}, "Fair[...]"),
    ({"NAME", "QUOTED_NAME"}, "a column name"), ({"STRING"}, "a string"),
    ({"CMP_OP"}, "a comparison (< <= > >= == !=)"), ({"IN"}, "'in'"),
    ({"PLUS", "MINUS", "STAR", "SLASH"}, "an arithmetic operator"),
    ({"AND", "AMPERSAND"}, "'and'"), ({"OR", "VBAR"}, "'or'"), ({"NOT"}, "'not'"),
    ({"LPAR"}, "'('"), ({"RPAR"}, "')'"), ({"LSQB"}, "'['"), ({"RSQB"}, "']'"), ({"LBRACE"}, "'{'"),
    ({"RBRACE"}, "'}'"), ({"COMMA"}, "','"), ({"COLON"}, "':'"), ({"$END"}, "the end"),
]


def _describe_expected(expected: set[str]) -> str:
    parts = []
    for names, text in _EXPECTED:
        if names & expected:
            if names == {"OR", "VBAR"} and "OR" not in expected:
                text = "'|'"
            if names == {"PLUS", "MINUS", "STAR", "SLASH"} and len(names & expected) == 1:
                text = f"'{ {'PLUS': '+', 'MINUS': '-', 'STAR': '*', 'SLASH': '/'}[next(iter(names & expected))] }'"
            parts.append(text)
    if not parts:
        return "something else"
    if len(parts) > 6:
        parts = parts[:6] + ["..."]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _describe_token(token: Token) -> str:
    if token.type == "NUMBER":
        return f"number {clip(token.value)}"
    if token.type == "STRING":
        return f"string {clip(token.value)}"
    if token.type == "$END":
        return "end"
    return f"'{clip(token.value)}'"


def _tokens(text: str) -> list[Token]:
    """The tokens of ``text`` up to the first character that is no token."""
    out: list[Token] = []
    _lark()
    try:
        for token in LexerThread.from_text(_basic_lexer, text).lex(None):
            out.append(token)
    except LarkError:
        pass
    return out


def _brackets(tokens: list[Token]) -> tuple[tuple[Token, Token | None] | None, list[Token]]:
    """The first closing bracket that does not match (with its opener or None), and the still-open brackets."""
    stack: list[Token] = []
    for token in tokens:
        if token.type in _OPENERS:
            stack.append(token)
        elif token.type in _CLOSERS:
            if not stack or stack[-1].type != _CLOSERS[token.type]:
                return (token, stack[-1] if stack else None), stack
            stack.pop()
    return None, stack


def _check_depth(text: str, tokens: list[Token]) -> None:
    depth, deepest = 0, None
    for token in tokens:
        if token.type in _OPENERS:
            depth += 1
            if depth > MAX_DEPTH // 2 and deepest is None:
                deepest = token
        elif token.type in _CLOSERS:
            depth = max(0, depth - 1)
    if deepest is not None:
        raise SpecError.at(text, deepest.line, deepest.column,
                           f"too many nested brackets (more than {MAX_DEPTH // 2})")
    # long chains (a and b and c ...) nest as deeply as brackets do
    operators = [t for t in tokens if t.type in _OPERATORS]
    if len(operators) > MAX_OPERATORS:
        first = operators[MAX_OPERATORS]
        raise SpecError.at(text, first.line, first.column,
                           f"specification too long (more than {MAX_OPERATORS} operators)")


def _check_length(text: str, what: str) -> None:
    """Refuse a text longer than :data:`fairaudit.base.limits.SPEC_CHARS` before anything reads it."""
    if len(text) > limits.SPEC_CHARS:
        line, column = position(text, limits.SPEC_CHARS)
        raise _limit_error(text, line, column, f"this {what} is {len(text):,} characters long, over the limit of "
                                               f"{limits.SPEC_CHARS:,}; shorten it (a comparison such as "
                                               "'age >= 18' replaces a long list of values)")


def _check_sets(text: str, tokens: list[Token], what: str) -> None:
    """Refuse more than :data:`fairaudit.base.limits.SPEC_SET_MEMBERS` set members (``col in {a, b, ...}``) in all, at
    the first member past the limit, before the parser builds a node for each. The grammar has no range syntax:
    every member is written out, so the members counted are the values between the braces."""
    inside, members = False, 0
    for token in tokens:
        if token.type == "LBRACE":
            inside = True
        elif token.type == "RBRACE":
            inside = False
        elif inside and token.type in ("NUMBER", "STRING"):
            members += 1
            if members > limits.SPEC_SET_MEMBERS:
                raise _limit_error(text, token.line, token.column,
                                   f"this {what} lists more than {limits.SPEC_SET_MEMBERS:,} set members (all its "
                                   "'in {...}' sets together), the limit; compare instead (e.g. 'age >= 18') or "
                                   "list fewer values")


def _limit_error(text: str, line: int, column: int, message: str) -> SpecError:
    """A ``SpecError`` at line:column (``pretty()`` shows only the part of a long line around the column)."""
    return SpecError.at(text, line, column, message)


def _parse_tree(text: str, start: str, what: str) -> Tree:
    if not isinstance(text, str):
        raise TypeError(f"expected the {what} as a string, got {type(text).__name__}")
    _check_length(text, what)
    tokens = _tokens(text)
    _check_depth(text, tokens)
    _check_sets(text, tokens, what)
    try:
        return _lark().parse(text, start=start)
    except UnexpectedCharacters as err:
        raise _explain_character(text, err) from None
    except UnexpectedToken as err:
        expected = _accepted(text, start, err.token) or set(err.expected)
        raise _explain_token(text, tokens, err.token, expected, what) from None
    except UnexpectedEOF as err:
        end = Token("$END", "", len(text), *position(text, len(text)))
        raise _explain_token(text, tokens, end, set(err.expected), what) from None
    except LarkError as err:  # pragma: no cover - a lark failure we did not foresee
        raise SpecError.at(text, 1, 1, f"cannot read this {what}: {err}") from None


def _accepted(text: str, start: str, token: Token) -> set[str]:
    """The tokens the grammar accepts where ``token`` stands (exact, unlike the LALR error's own set,
    which is taken after default reductions); empty when it cannot be computed."""
    if token.type == "$END":
        offset = len(text)
    else:
        offset = token.start_pos
    try:
        interactive = _lark().parse_interactive(text[:offset], start=start)
        interactive.exhaust_lexer()
        return set(interactive.accepts())
    except LarkError:
        return set()


def _explain_character(text: str, err: UnexpectedCharacters) -> SpecError:
    char = text[err.pos_in_stream]
    follows = text[err.pos_in_stream + 1: err.pos_in_stream + 2]
    if char == "=" and follows in ("<", ">"):
        message = f"did you mean '{follows}='?"
    elif char == "=":
        message = "use '==' to compare, not '='"
    elif char == "!":
        message = "use 'not' for negation ('!' is only part of '!=')"
    elif char in "\"'":
        message = "unclosed string: it needs a closing " + char + " on the same line"
    elif char in "\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb":  # typographic quotes pasted from a document
        message = f"use straight quotes (\") around a value, not '{char}'"
    elif char == "%" and text[:err.pos_in_stream][-1:].isdigit():  # ``10%``
        message = "write a percentage as a fraction (10% is 0.1)"
    elif char == "`":
        message = "unclosed back-quoted name: it needs a closing ` on the same line"
    elif char.isprintable():
        message = f"unexpected character '{char}'"
    else:
        message = f"unexpected character {char!r}"
    return SpecError.at(text, err.line, err.column, message)


def _at(text: str, token: Token, message: str) -> SpecError:
    return SpecError.at(text, token.line, token.column, message, length=max(1, len(token.value)))


def _after(text: str, token: Token, message: str) -> SpecError:
    line, column = position(text, token.end_pos)
    return SpecError.at(text, line, column, message)


def _closed_leaf(tokens: list[Token], index: int) -> str | None:
    """'E[...]' or 'Fair[...]' when tokens[index] is the ']' closing one of them."""
    depth = 0
    for i in range(index, -1, -1):
        kind = tokens[i].type
        if kind in _CLOSERS:
            depth += 1
        elif kind in _OPENERS:
            depth -= 1
            if depth == 0:
                if kind == "LSQB" and i > 0 and tokens[i - 1].type in ("E", "FAIR"):
                    return f"{tokens[i - 1].value}[...]"
                return None
    return None


def _explain_token(text: str, tokens: list[Token], token: Token, expected: set[str], what: str) -> SpecError:
    """A message for a token the grammar does not allow here, from what came before and what was expected."""
    # the contextual lexer may name a token differently (a keyword where only names fit): use the plain lexing
    index = next((i for i, t in enumerate(tokens) if t.start_pos == token.start_pos), None)
    if index is None or token.type == "$END":
        index = len(tokens)
    else:
        token = tokens[index]
    prev = tokens[index - 1] if index > 0 else None
    before = tokens[index - 2] if index > 1 else None
    kind = token.type
    mismatch, still_open = _brackets(tokens[: index + 1] if kind != "$END" else tokens)

    if kind == "$END":
        if not tokens:
            return SpecError.at(text, 1, 1, f"empty {what}")
        if still_open:
            opener = still_open[-1]
            return _at(text, opener, f"unclosed '{opener.value}'")
        return _after(text, tokens[-1], f"unexpected end of the {what}; expected {_describe_expected(expected)}"
                                        f" after {_describe_token(tokens[-1])}")
    if kind in _CLOSERS and mismatch is not None and mismatch[0].start_pos == token.start_pos:
        opener = mismatch[1]
        if opener is None:
            return _at(text, token, f"unexpected '{token.value}'")
        return _at(text, token, f"unexpected '{token.value}': the '{opener.value}' at {opener.line}:{opener.column}"
                                f" is not closed")
    if prev is not None and prev.type in ("E", "FAIR") and kind != "LSQB":
        return _at(text, token, f"expected '[' after {prev.value}")
    if kind == "RSQB" and prev is not None and prev.type == "LSQB" and before is not None:
        if before.type == "E":
            return _at(text, token, "empty E[...]: write an event, e.g. E[pred] or E[pred | sex == \"Female\"]")
        if before.type == "FAIR":
            return _at(text, token, "Fair[...] needs a protected column, e.g. Fair[sex]")
    if kind == "RBRACE" and prev is not None and prev.type == "LBRACE":
        return _at(text, token, "empty set {}: list at least one value, e.g. race in {\"Black\", \"White\"}")
    if "COLON" in expected and prev is not None and prev.type in ("NAME", "QUOTED_NAME"):
        # a name at the top level can only be the name of a named specification
        if kind in ("LSQB", "LPAR"):
            return _at(text, prev, f"unknown function '{prev.value}'; use E[...] or Fair[...]")
        return _at(text, prev, f"unexpected name '{prev.value}': columns are used inside E[...] "
                               f"(e.g. E[pred | {prev.value} == ...]); to name a specification write "
                               f"'{prev.value}: ...'")
    if kind == "NAME" and "NAME" not in expected:
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if following is not None and following.type in ("LSQB", "LPAR"):
            return _at(text, token, f"unknown function '{token.value}'; use E[...] or Fair[...]")
        if following is not None and following.type == "COLON":
            return _at(text, token, "a named specification cannot follow an unnamed one; "
                                    "give every part a name (name: spec) or join them with 'and'")
        if prev is None or prev.type not in _ENDS_VALUE:
            return _at(text, token, f"unexpected name '{token.value}': columns are used inside E[...], "
                                f"e.g. E[pred | {token.value} == ...]")
    if kind in ("AMPERSAND", "VBAR") and prev is not None and prev.type == kind and prev.end_pos == token.start_pos:
        word = "and" if kind == "AMPERSAND" else "or"
        return _at(text, token, f"use '{token.value}' or '{word}', not '{token.value * 2}'")
    if kind == "VBAR" and "RSQB" in expected:
        return _at(text, token, "only one '|' is allowed in E[...]: it separates the event from its condition; "
                                "use 'or' for 'either ... or ...'")
    if (kind == "MINUS" and prev is not None and prev.type == "NAME" and before is not None
            and before.type == "CMP_OP" and prev.end_pos == token.start_pos):
        # an unquoted value with a hyphen (race == African-American): a text value is written in quotes
        end = index
        while end + 1 < len(tokens) and tokens[end + 1].start_pos == tokens[end].end_pos and \
                tokens[end + 1].type in ("NAME", "NUMBER", "MINUS"):
            end += 1
        value = text[prev.start_pos:tokens[end].end_pos]
        column = text[tokens[index - 3].start_pos:before.start_pos] if index > 2 else ""
        return _at(text, prev, f'write the value in quotes: {column}{before.value} "{value}" (a value with a "-" '
                               'or a space needs them)')
    if kind in ("PLUS", "MINUS", "STAR", "SLASH") and ("RSQB" in expected or "VBAR" in expected):
        return _at(text, token, "arithmetic is not allowed here inside E[...]: an event compares a column with a "
                                "value, e.g. age >= 30; an averaged amount may add or subtract columns and numbers "
                                "(E[amount - limit])")
    if kind == "CMP_OP" and prev is not None and prev.type in _ENDS_VALUE:
        start = index - 1  # back to the start of this comparison's left side
        while start > 0 and tokens[start - 1].type not in ("LSQB", "VBAR", "AND", "OR", "NOT", "LPAR", "CMP_OP"):
            start -= 1
        if start > 0 and tokens[start - 1].type != "CMP_OP" and \
                any(t.type in ("PLUS", "MINUS") for t in tokens[start:index]):
            return _at(text, token, "a condition compares a column with a value (age >= 30); arithmetic such as "
                                    "a - b is only for the averaged amount before the '|' of E[...]")
        return _at(text, token, "comparisons cannot be chained; join them with 'and'")
    if "CMP_OP" in expected and prev is not None and prev.type in _ENDS_VALUE:
        leaf = _closed_leaf(tokens, index - 1) if prev.type == "RSQB" else None
        subject = leaf or _describe_token(prev)
        extra = " or 'in'" if "IN" in expected else ""
        return _at(text, token, f"expected a comparison{extra} after {subject}, found {_describe_token(token)}")
    if prev is not None and prev.type in _ENDS_VALUE and kind in _STARTS_VALUE:
        hint = ("; several specifications must each be named (name: spec) or be joined with 'and'"
                if token.line > prev.line and what == "specification" else "")
        return _at(text, token, f"unexpected {_describe_token(token)} after {_describe_token(prev)}: "
                                f"an operator is missing (expected {_describe_expected(expected)}){hint}")
    return _at(text, token, f"unexpected {_describe_token(token)}; expected {_describe_expected(expected)}")
