"""SyntaxGym's prediction formulas: a parser and an evaluator of our own, following the
grammar of cpllab/syntaxgym-core (``syntaxgym/prediction.py``):

* an atom is a region reference ``(N;%condition%)`` -- the surprisal of region N of
  that condition, aggregated by the suite's metric -- or ``(*;%condition%)`` (the sum
  over all the condition's regions), or a number;
* ``+`` and ``-`` bind tightest (left to right), then one comparison ``<``, ``>`` or
  ``=`` (equal within relative 1e-5 and absolute 1e-3, SyntaxGym's tolerance), then
  ``&`` and ``|`` (left to right);
* ``( )`` group; so do ``[ ]``, which the suites of Hu et al. (2020) use.

A prediction holds for an item when the formula is true of its region surprisals.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Union

#: SyntaxGym's tolerances for ``=``
EQUALITY_RTOL, EQUALITY_ATOL = 1e-5, 1e-3
_TOKEN = re.compile(r"\s*(?:(?P<region>\(\s*(?P<num>\d+|\*)\s*;\s*%(?P<cond>[A-Za-z0-9_-]+)%\s*\))"
                    r"|(?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
                    r"|(?P<op>[-+<>=&|()\[\]]))")


class FormulaError(ValueError):
    """A formula that does not parse; the message says where."""


@dataclass(frozen=True)
class Ref:
    """A region reference: ``region`` None stands for ``*``."""
    region: int | None
    condition: str


@dataclass(frozen=True)
class Op:
    op: str
    left: "Node"
    right: "Node"


Node = Union[Ref, float, Op]


def _tokens(text: str) -> list[tuple[str, object]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise FormulaError(f"cannot read {text[pos:pos + 12].strip()!r} at character {pos + 1}")
        if m.group("region"):
            num = m.group("num")
            out.append(("ref", Ref(None if num == "*" else int(num), m.group("cond"))))
        elif m.group("number") is not None and not (out and out[-1][0] in ("ref", "num", ")")):
            out.append(("num", float(m.group("number"))))
        elif m.group("op"):
            out.append((m.group("op"), None))
        else:  # a signed number after an operand is an operator and a number
            sign, rest = m.group("number")[0], m.group("number")[1:]
            out += [(sign, None), ("num", float(rest))]
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.text, self.toks, self.i = text, _tokens(text), 0

    def peek(self) -> str | None:
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def take(self):
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.boolean()
        if self.peek() is not None:
            raise FormulaError(f"unexpected {self.peek()!r} after a complete formula")
        return node

    def boolean(self) -> Node:
        return self.left_to_right(self.comparison, ("&", "|"))

    def comparison(self) -> Node:
        node = self.sum()
        if self.peek() in ("<", ">", "="):
            op = self.take()[0]
            node = Op(op, node, self.sum())
            if self.peek() in ("<", ">", "="):
                raise FormulaError("two comparisons in a row (group them with brackets)")
        return node

    def sum(self) -> Node:
        return self.left_to_right(self.atom, ("+", "-"))

    def left_to_right(self, operand, ops: tuple[str, ...]) -> Node:
        """``operand (op operand)*`` with ``op`` one of ``ops``, grouped from the left."""
        node = operand()
        while self.peek() in ops:
            op = self.take()[0]
            node = Op(op, node, operand())
        return node

    def atom(self) -> Node:
        kind = self.peek()
        if kind is None:
            raise FormulaError("the formula ends where a region, number or bracket was expected")
        kind, value = self.take()
        if kind in ("ref", "num"):
            return value
        if kind in ("(", "["):
            node = self.boolean()
            close = ")" if kind == "(" else "]"
            if self.peek() != close:
                raise FormulaError(f"{kind!r} without its {close!r}")
            self.take()
            return node
        raise FormulaError(f"unexpected {kind!r} where a region, number or bracket was expected")


def parse_formula(text: str) -> Node:
    """The parsed formula; :class:`FormulaError` saying what is wrong."""
    node = _Parser(text).parse()
    if not isinstance(node, Op) or node.op not in ("<", ">", "=", "&", "|"):
        raise FormulaError("the formula is not a comparison (it must be true or false)")
    _check_types(node)
    return node


def _check_types(node: Node) -> str:
    """'num' or 'bool'; :class:`FormulaError` for a comparison of truth values or a sum of them."""
    if not isinstance(node, Op):
        return "num"
    left, right = _check_types(node.left), _check_types(node.right)
    want = "bool" if node.op in ("&", "|") else "num"
    if left != want or right != want:
        raise FormulaError(f"{node.op!r} needs {'comparisons' if want == 'bool' else 'numbers'} on both sides")
    return "num" if node.op in ("+", "-") else "bool"


def references(node: Node) -> list[Ref]:
    """The region references of a formula, in order."""
    if isinstance(node, Ref):
        return [node]
    if isinstance(node, Op):
        return references(node.left) + references(node.right)
    return []


def evaluate(node: Node, surprisal: Mapping[tuple[str, int], float]):
    """The formula's value given ``surprisal[(condition, region)]`` (bits)."""
    if isinstance(node, Ref):
        if node.region is None:
            return sum(v for (c, _), v in surprisal.items() if c == node.condition)
        return surprisal[(node.condition, node.region)]
    if not isinstance(node, Op):
        return node
    a, b = evaluate(node.left, surprisal), evaluate(node.right, surprisal)
    if node.op == "+":
        return a + b
    if node.op == "-":
        return a - b
    if node.op == "<":
        return a < b
    if node.op == ">":
        return a > b
    if node.op == "=":
        return abs(a - b) <= EQUALITY_ATOL + EQUALITY_RTOL * abs(b)  # numpy.isclose's rule
    return (a and b) if node.op == "&" else (a or b)


def comparisons(node: Node) -> list[tuple[str, str, int]]:
    """The (lower-surprisal condition, higher, region) of every comparison of two
    references to one region: the whole-sentence pairs a prediction implies (the
    condition expected to be less surprising is the grammatical one)."""
    if not isinstance(node, Op):
        return []
    if node.op in ("<", ">") and isinstance(node.left, Ref) and isinstance(node.right, Ref) \
            and node.left.region == node.right.region and node.left.region is not None \
            and node.left.condition != node.right.condition:
        low, high = (node.left, node.right) if node.op == "<" else (node.right, node.left)
        return [(low.condition, high.condition, low.region)]
    return comparisons(node.left) + comparisons(node.right)
