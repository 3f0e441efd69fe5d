#!/usr/bin/env python3
"""Evaluate an arithmetic expression safely and print the result.

Usage: calc.py EXPRESSION...   (the arguments are joined with spaces)
Numbers, + - * / // % ** (also written ^), N% of M (a percentage), unary + and -,
parentheses, the constants pi, e and tau, and the functions abs round min max sqrt exp log
log10 log2 sin cos tan asin acos atan floor ceil factorial hypot (a one-argument function
may take a plain number without parentheses: sqrt 1521). The expression is parsed
with ast and walked; nothing is ever passed to eval. Exit status: 0 result printed; 1 the
expression is invalid or cannot be computed (the reason on stderr).
"""

import ast
import math
import operator
import re
import sys

MAX_LENGTH = 1000
MAX_DEPTH = 50
MAX_POWER_BITS = 10000
MAX_FACTORIAL = 1000

BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: None,  # checked separately: 9**9**9 must not hang
}
# "12.5% of 880", as people (and models) write a percentage; `%` alone stays the remainder.
PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\b")
# "sqrt 1521", "log10 1000": a one-argument function before a plain number, as people (and
# small models) write it; it binds tighter than any operator, as in written maths.
BARE_CALL = re.compile(
    r"\b(sqrt|exp|log|log10|log2|sin|cos|tan|asin|acos|atan|floor|ceil|factorial|abs)"
    r"\s+(\d+(?:\.\d+)?)")
UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


def factorial(n):
    if n != int(n) or n < 0 or n > MAX_FACTORIAL:
        raise ValueError("factorial needs a whole number from 0 to %d" % MAX_FACTORIAL)
    return math.factorial(int(n))


FUNCTIONS = {
    "abs": abs, "round": round, "min": min, "max": max,
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "log10": math.log10,
    "log2": math.log2, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "floor": math.floor, "ceil": math.ceil, "factorial": factorial, "hypot": math.hypot,
}


class CalcError(Exception):
    pass


def power(base, exp):
    if isinstance(base, int) and isinstance(exp, int) and exp > 0 and abs(base) > 1:
        if exp * max(abs(base).bit_length(), 1) > MAX_POWER_BITS:
            raise CalcError("result too large")
    return operator.pow(base, exp)


def evaluate(node, depth=0):
    if depth > MAX_DEPTH:
        raise CalcError("expression nested too deeply")
    depth += 1
    if isinstance(node, ast.Expression):
        return evaluate(node.body, depth)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left = evaluate(node.left, depth)
        right = evaluate(node.right, depth)
        if isinstance(node.op, ast.Pow):
            return power(left, right)
        return BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](evaluate(node.operand, depth))
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS and not node.keywords):
        args = [evaluate(a, depth) for a in node.args]
        return FUNCTIONS[node.func.id](*args)
    raise CalcError("not allowed in an expression: %s" % describe(node))


def describe(node):
    if isinstance(node, ast.Name):
        return "the name '%s'" % node.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return "the function '%s'" % node.func.id
    if isinstance(node, ast.Constant):
        return repr(node.value)
    return type(node).__name__


def format_number(value):
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        # 15 significant digits hide binary rounding noise: 0.1 + 0.2 prints 0.3.
        return format(value, ".15g")
    return str(value)


def main(argv):
    text = " ".join(argv[1:]).strip()
    if not text:
        print("usage: calc.py EXPRESSION", file=sys.stderr)
        return 1
    if len(text) > MAX_LENGTH:
        print("calc.py: expression longer than %d characters" % MAX_LENGTH, file=sys.stderr)
        return 1
    try:
        expression = PERCENT_OF.sub(r"(\1 / 100) *", text.replace("^", "**"))
        expression = BARE_CALL.sub(r"\1(\2)", expression)
        tree = ast.parse(expression, mode="eval")
        result = evaluate(tree)
        if isinstance(result, complex):
            raise CalcError("the result is not a real number")
        if isinstance(result, float) and not math.isfinite(result):
            raise CalcError("the result is not a finite number")
        print(format_number(result))
        return 0
    except ZeroDivisionError:
        reason = "division by zero"
    except SyntaxError:
        reason = "not a valid expression: %s" % text
    except OverflowError:
        reason = "result too large"
    except (CalcError, ValueError, TypeError) as e:
        reason = str(e)
    except RecursionError:
        reason = "expression nested too deeply"
    print("calc.py: %s" % reason, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
