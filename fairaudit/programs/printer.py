"""Format the IR back into ``.fr`` text: for programs generated from data or models, and for round trips.

``parse_program(format_program(p)) == p`` for every program ``p`` the parser produced (positions aside; a
chained comparison ``a < b < c`` comes back as ``a < b and b < c``, the same IR). Output is indented by four
spaces and uses the fewest parentheses that keep the tree's shape.
"""
from __future__ import annotations

from fairaudit.programs import ir

IND = "    "
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def number(value: float) -> str:
    """``5`` for integral floats, else the shortest repr that reads back to the same float."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def arith(e: ir.Arith) -> str:
    if isinstance(e, ir.Num):
        return number(e.value)
    if isinstance(e, ir.Var):
        return e.name
    if isinstance(e, ir.Neg):
        inner = arith(e.operand)
        return f"-({inner})" if isinstance(e.operand, ir.BinOp) else f"-{inner}"
    prec = _PREC[e.op]
    left, right = arith(e.left), arith(e.right)
    if isinstance(e.left, ir.BinOp) and _PREC[e.left.op] < prec:
        left = f"({left})"
    if isinstance(e.right, ir.BinOp) and _PREC[e.right.op] <= prec:
        right = f"({right})"
    return f"{left} {e.op} {right}"


def cond(c: ir.Cond) -> str:
    if isinstance(c, ir.Compare):
        return f"{arith(c.left)} {c.op} {arith(c.right)}"
    if isinstance(c, ir.Not):
        inner = cond(c.operand)
        return f"not ({inner})" if isinstance(c.operand, ir.BoolOp) else f"not {inner}"
    return f" {c.op} ".join(f"({cond(v)})" if isinstance(v, ir.BoolOp) else cond(v) for v in c.values)


def dist(d: ir.Dist) -> str:
    if isinstance(d, ir.Gaussian):
        return f"gaussian({number(d.mean)}, {number(d.variance)})"
    return "step([" + ", ".join(f"({number(lo)}, {number(hi)}, {number(p)})" for lo, hi, p in d.pieces) + "])"


_EVENT = {"sensitive": "sensitiveAttribute", "qualified": "qualified", "target": "fairnessTarget"}


def statements(stmts: tuple[ir.Stmt, ...], depth: int) -> list[str]:
    pad = IND * depth
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ir.Assign):
            out.append(f"{pad}{s.name} = {arith(s.value)}")
        elif isinstance(s, ir.Draw):
            out.append(f"{pad}{s.name} = {dist(s.dist)}")
        elif isinstance(s, ir.Event):
            out.append(f"{pad}{_EVENT[s.kind]}({cond(s.cond)})")
        else:
            out.append(f"{pad}if {cond(s.cond)}:")
            out += statements(s.body, depth + 1) or [f"{pad}{IND}pass"]
            orelse = s.orelse
            while len(orelse) == 1 and isinstance(orelse[0], ir.If):  # elif chain
                s = orelse[0]
                out.append(f"{pad}elif {cond(s.cond)}:")
                out += statements(s.body, depth + 1) or [f"{pad}{IND}pass"]
                orelse = s.orelse
            if orelse:
                out.append(f"{pad}else:")
                out += statements(orelse, depth + 1)
    return out


def format_program(program: ir.Program) -> str:
    """The ``.fr`` text of ``program``: ``def popModel():`` then ``def F():``."""
    lines = ["def popModel():"] + (statements(program.population, 1) or [f"{IND}pass"])
    lines += ["", "def F():"] + (statements(program.decision, 1) or [f"{IND}pass"])
    return "\n".join(lines) + "\n"
