"""Read a FairSquare ``.fr`` file into the IR of ``fairaudit.programs.ir``.

The text is parsed with Python's ``ast`` module (never evaluated) and then walked with a whitelist: two functions
``def popModel():`` and ``def F():``; inside them assignments, ``x = gaussian(mean, variance)``,
``x = step([(lo, hi, p), ...])``, ``if/elif/else``, ``pass``, ``+ - * /`` (``/`` by a non-zero constant), comparisons
(chains such as ``1 <= r < 2`` too), ``and/or/not``, and the annotations ``sensitiveAttribute(c)``,
``qualified(c)`` and ``fairnessTarget(c)`` at the top level of a function body. Anything else, an unknown function
or a name that may be unassigned where it is read, is a ``SpecError`` with line:column and a hint, so a typo can
never silently change a verdict.
"""
from __future__ import annotations

import ast
import math
from pathlib import Path

from fairaudit.programs import ir
from fairaudit.spec.errors import SpecError, clip

FUNCTIONS = ("popModel", "F")
DISTRIBUTIONS = {"gaussian": 2, "step": 1}
ANNOTATIONS = {"sensitiveAttribute": "sensitive", "qualified": "qualified", "fairnessTarget": "target"}
ARITH_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
CMP_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
STEP_TOLERANCE = 1e-6  # |Σp − 1| allowed in a step distribution (4-decimal tables sum to 1 up to float rounding)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class _Parser:
    def __init__(self, text: str, filename: str | None):
        self.text = text
        self.filename = filename
        self.variables: list[str] = []
        self.events: dict[str, ir.Event] = {}

    # -- errors ---------------------------------------------------------------------------------------
    def error(self, node: ast.AST | None, message: str, hint: str = "") -> SpecError:
        line = getattr(node, "lineno", None)
        column = getattr(node, "col_offset", None)
        length = 1
        if line is not None and getattr(node, "end_lineno", None) == line and node.end_col_offset is not None:
            length = node.end_col_offset - node.col_offset
        full = f"{message} ({hint})" if hint else message
        return SpecError.at(self.text, line, None if column is None else column + 1, full, length=length,
                            filename=self.filename)

    @staticmethod
    def pos(node: ast.AST) -> dict:
        return {"line": node.lineno, "column": node.col_offset + 1}

    # -- top level --------------------------------------------------------------------------------------
    def program(self) -> ir.Program:
        try:
            module = ast.parse(self.text, filename=self.filename or "<program>")
        except SyntaxError as err:
            line = err.lineno or 1
            column = err.offset or 1
            raise SpecError.at(self.text, line, column, f"syntax error: {err.msg}",
                               filename=self.filename) from None
        bodies: dict[str, ast.FunctionDef] = {}
        for node in module.body:
            if _is_docstring(node):
                continue  # a module docstring
            if not isinstance(node, ast.FunctionDef):
                raise self.error(node, f"unexpected {type(node).__name__.lower()} at the top level",
                                 "a .fr file holds only 'def popModel():' and 'def F():'")
            if node.name not in FUNCTIONS:
                raise self.error(node, f"unknown function definition '{clip(node.name)}'",
                                 "expected 'def popModel():' or 'def F():'")
            if node.name in bodies:
                raise self.error(node, f"'{node.name}' is defined twice")
            args = node.args
            if (args.args or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg
                    or node.decorator_list or node.returns):
                raise self.error(node, f"'{node.name}' takes no parameters, decorators or annotations",
                                 "variables are shared between popModel and F")
            bodies[node.name] = node
        for name in FUNCTIONS:
            if name not in bodies:
                raise SpecError.at(self.text, None, None, f"missing 'def {name}():'", filename=self.filename)
        if bodies["popModel"].lineno > bodies["F"].lineno:
            raise self.error(bodies["F"], "'def F():' must come after 'def popModel():'")
        defined: set[str] = set()
        population = self.block(bodies["popModel"].body, defined, top=True)
        decision = self.block(bodies["F"].body, defined, top=True)
        for kind, label in (("sensitive", "sensitiveAttribute"), ("target", "fairnessTarget")):
            if kind not in self.events:
                raise SpecError.at(self.text, None, None, f"missing '{label}(...)'",
                                   filename=self.filename)
        qualified = self.events.get("qualified")
        return ir.Program(population=population, decision=decision, sensitive=self.events["sensitive"].cond,
                          target=self.events["target"].cond, qualified=qualified.cond if qualified else None,
                          variables=tuple(self.variables))

    # -- statements -------------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], defined: set[str], top: bool) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for index, node in enumerate(body):
            if isinstance(node, ast.Pass):
                continue
            if top and index == 0 and _is_docstring(node):
                continue  # a function docstring
            out.append(self.statement(node, defined, top))
        return tuple(out)

    def statement(self, node: ast.stmt, defined: set[str], top: bool) -> ir.Stmt:
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise self.error(node, "only 'name = expression' assignments are allowed",
                                 "no tuples, subscripts, attributes or chained '='")
            name = node.targets[0].id
            self.check_name(node.targets[0], name)
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in DISTRIBUTIONS:
                result: ir.Stmt = ir.Draw(name, self.distribution(value), **self.pos(node))
            else:
                result = ir.Assign(name, self.arith(value, defined), **self.pos(node))
            defined.add(name)
            if name not in self.variables:
                self.variables.append(name)
            return result
        if isinstance(node, ast.If):
            cond = self.cond(node.test, defined)
            then_defined, else_defined = set(defined), set(defined)
            body = self.block(node.body, then_defined, top=False)
            orelse = self.block(node.orelse, else_defined, top=False)
            defined |= then_defined & else_defined
            return ir.If(cond, body, orelse, **self.pos(node))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            fname = call.func.id if isinstance(call.func, ast.Name) else None
            if fname in ANNOTATIONS:
                kind = ANNOTATIONS[fname]
                if not top:
                    raise self.error(call, f"'{fname}(...)' must be at the top level of a function body",
                                     "not inside an if/else")
                if kind in self.events:
                    raise self.error(call, f"'{fname}(...)' given twice")
                self.arity(call, fname, 1)
                event = ir.Event(kind, self.cond(call.args[0], defined), **self.pos(call))
                self.events[kind] = event
                return event
            if fname in DISTRIBUTIONS:
                raise self.error(call, f"the value of '{fname}(...)' must be assigned to a variable",
                                 f"write 'x = {fname}(...)'")
            raise self.unknown_call(call)
        if isinstance(node, (ast.AugAssign,)):
            raise self.error(node, "augmented assignment ('+=' etc.) is not supported", "write 'x = x + ...'")
        if isinstance(node, ast.Return):
            raise self.error(node, "'return' is not part of the .fr language",
                             "popModel's variables are read by F directly")
        label = type(node).__name__.lower()
        raise self.error(node, f"'{label}' statement is not allowed",
                         "allowed: assignments, gaussian/step draws, if/elif/else, annotations")

    def check_name(self, node: ast.AST, name: str) -> None:
        if name in DISTRIBUTIONS or name in ANNOTATIONS or name in FUNCTIONS or name.startswith("__"):
            raise self.error(node, f"'{clip(name)}' cannot be used as a variable name")

    def unknown_call(self, call: ast.Call) -> SpecError:
        fname = call.func.id if isinstance(call.func, ast.Name) else ast.unparse(call.func)
        known = ", ".join(list(DISTRIBUTIONS) + list(ANNOTATIONS))
        return self.error(call, f"unknown function '{clip(fname)}'", f"known: {known}")

    def arity(self, call: ast.Call, fname: str, count: int) -> None:
        plural = "s" if count != 1 else ""
        if call.keywords:
            keyword = call.keywords[0].arg  # None for **mapping
            shown = f"{clip(keyword)}=" if keyword else "**"
            raise self.error(call, f"'{fname}' takes exactly {count} positional argument{plural}, not keyword "
                                   "arguments", f"write {fname}(...) without '{shown}'")
        if len(call.args) != count or any(isinstance(a, ast.Starred) for a in call.args):
            raise self.error(call, f"'{fname}' takes exactly {count} positional argument{plural}, "
                                   f"got {len(call.args)}")

    # -- distributions ----------------------------------------------------------------------------------
    def distribution(self, call: ast.Call) -> ir.Dist:
        fname = call.func.id
        self.arity(call, fname, DISTRIBUTIONS[fname])
        if fname == "gaussian":
            mean = self.constant(call.args[0])
            variance = self.constant(call.args[1])
            if not variance > 0:
                raise self.error(call.args[1], f"variance must be positive, got {variance:g}",
                                 "gaussian(mean, VARIANCE): the second argument is the variance, not the sd")
            return ir.Gaussian(mean, variance)
        arg = call.args[0]
        if not isinstance(arg, ast.List) or not arg.elts:
            raise self.error(arg, "step takes a non-empty list of (lo, hi, p) triples",
                             "e.g. step([(0,1,0.3), (1,2,0.7)])")
        pieces = []
        for elt in arg.elts:
            if not isinstance(elt, ast.Tuple) or len(elt.elts) != 3:
                raise self.error(elt, "each step piece is a triple (lo, hi, p)")
            lo, hi, p = (self.constant(e) for e in elt.elts)
            if not lo < hi:
                raise self.error(elt, f"step piece needs lo < hi, got [{lo:g}, {hi:g})")
            if not 0 <= p <= 1:
                raise self.error(elt.elts[2], f"step probability must be in [0, 1], got {p:g}")
            if pieces and lo < pieces[-1][1]:
                raise self.error(elt, "step pieces must be sorted and disjoint",
                                 f"this piece starts at {lo:g}, before the previous one ends at {pieces[-1][1]:g}")
            pieces.append((lo, hi, p))
        total = math.fsum(p for _, _, p in pieces)
        if abs(total - 1) > STEP_TOLERANCE:
            raise self.error(arg, f"step probabilities sum to {total:.10g}, not 1")
        return ir.Step(tuple(pieces))

    def constant(self, node: ast.expr) -> float:
        """A numeric literal, possibly signed (``-1``, ``+2.5``): distribution parameters must be constants."""
        sign = 1.0
        inner = node
        while isinstance(inner, ast.UnaryOp) and isinstance(inner.op, (ast.USub, ast.UAdd)):
            sign = -sign if isinstance(inner.op, ast.USub) else sign
            inner = inner.operand
        if (isinstance(inner, ast.Constant) and isinstance(inner.value, (int, float))
                and not isinstance(inner.value, bool)):
            value = sign * self.number(inner)
            if not math.isfinite(value):
                raise self.error(node, "number must be finite")
            return value
        raise self.error(node, "distribution parameters must be numeric constants",
                         "draw with constant parameters, then shift: 'y = gaussian(0, v)' then 'y = y + x'")

    def number(self, node: ast.Constant) -> float:
        """A literal as a float (an integer beyond the float range is an error at its position)."""
        try:
            return float(node.value)
        except OverflowError:
            raise self.error(node, "number too large (beyond the floating-point range, about 1.8e308)") from None

    # -- expressions ------------------------------------------------------------------------------------
    def arith(self, node: ast.expr, defined: set[str]) -> ir.Arith:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                value = self.number(node)
                if not math.isfinite(value):
                    raise self.error(node, "number must be finite")
                return ir.Num(value, **self.pos(node))
            raise self.error(node, f"only numbers are allowed here, not {type(node.value).__name__}")
        if isinstance(node, ast.Name):
            if node.id in DISTRIBUTIONS or node.id in ANNOTATIONS:
                raise self.error(node, f"'{node.id}' is a function, not a value")
            if node.id not in defined:
                if node.id in self.variables:
                    raise self.error(node, f"variable '{clip(node.id)}' may be unassigned here",
                                     "it is assigned only on some paths before this point")
                raise self.error(node, f"unknown name '{clip(node.id)}'",
                                 "assign it before use (a typo?)")
            return ir.Var(node.id, **self.pos(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.arith(node.operand, defined)
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(operand, ir.Num):
                return ir.Num(-operand.value, **self.pos(node))
            return ir.Neg(operand, **self.pos(node))
        if isinstance(node, ast.BinOp) and type(node.op) in ARITH_OPS:
            op = ARITH_OPS[type(node.op)]
            left = self.arith(node.left, defined)
            right = self.arith(node.right, defined)
            if op == "/" and not (isinstance(right, ir.Num) and right.value != 0):
                raise self.error(node.right, "'/' only by a non-zero numeric constant",
                                 "division by a variable could divide by zero")
            return ir.BinOp(op, left, right, **self.pos(node))
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in DISTRIBUTIONS:
                raise self.error(node, f"'{node.func.id}(...)' must be the whole right-hand side of an assignment")
            raise self.unknown_call(node)
        if isinstance(node, (ast.Compare, ast.BoolOp)) or (
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            raise self.error(node, "a condition is not a number",
                             "write 'if cond: x = 1' / 'else: x = 0' to store a Boolean")
        raise self.error(node, f"'{clip(ast.unparse(node))}' is not allowed in an arithmetic expression",
                         "allowed: numbers, variables, + - * /, parentheses")

    def cond(self, node: ast.expr, defined: set[str]) -> ir.Cond:
        if isinstance(node, ast.Compare):
            parts: list[ir.Cond] = []
            left_node = node.left
            left = self.arith(left_node, defined)
            for op, right_node in zip(node.ops, node.comparators):
                if type(op) not in CMP_OPS:
                    raise self.error(node, f"comparison '{type(op).__name__}' is not allowed",
                                     "allowed: < <= > >= == !=")
                right = self.arith(right_node, defined)
                parts.append(ir.Compare(CMP_OPS[type(op)], left, right, **self.pos(left_node)))
                left, left_node = right, right_node
            return parts[0] if len(parts) == 1 else ir.BoolOp("and", tuple(parts), **self.pos(node))
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            return ir.BoolOp(op, tuple(self.cond(v, defined) for v in node.values), **self.pos(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ir.Not(self.cond(node.operand, defined), **self.pos(node))
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in DISTRIBUTIONS):
            raise self.unknown_call(node)
        raise self.error(node, f"'{clip(ast.unparse(node))}' is not a condition",
                         "use a comparison such as 'x > 0', combined with and/or/not")


def parse_program(text: str, filename: str | None = None) -> ir.Program:
    """Parse the text of a ``.fr`` file; raises ``SpecError`` (with line:column) outside the subset."""
    try:
        return _Parser(text, filename).program()
    except (RecursionError, MemoryError):
        raise SpecError.at(text, None, None, "program too deeply nested (split long expressions into steps)",
                           filename=filename) from None


def parse_file(path: str | Path) -> ir.Program:
    """Parse a ``.fr`` file from disk (errors name the file)."""
    path = Path(path)
    return parse_program(read_text(path), filename=path.name)


def read_text(path: Path) -> str:
    """A program file's text (UTF-8); anything else is one clear error naming the file."""
    from fairaudit.base.errors import FairauditError

    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FairauditError(f"{path.name} is not UTF-8 text: a population program is a text file (save it "
                             "as UTF-8)") from None
