"""S-expressions as the protocol reads them.

Unlike a ``.kif`` file, a message has no comments, and its atoms keep their case:
match ids and player names are compared exactly. The parts that are GDL (rules,
roles and moves) get GDL's keyword folding with :func:`fold_keywords`, so they
agree with rules read by :mod:`server.gdl.parser`.
"""

from __future__ import annotations

import bisect
import re

from server.gdl.parser import KEYWORDS, Node

from .errors import ProtocolError

_TOKEN = re.compile(r"[()]|[^\s()]+")


def read_sexpressions(text: str) -> list[Node]:
    """Every top-level S-expression of ``text``, atoms exactly as written."""
    line_starts = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]

    def where(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1] + 1

    stack: list[tuple[list[Node], int]] = []
    top: list[Node] = []
    current = top
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "(":
            stack.append((current, match.start()))
            current = []
        elif token == ")":
            if not stack:
                line, column = where(match.start())
                raise ProtocolError(f"line {line}, column {column}: unbalanced ')'")
            parent, start = stack.pop()
            parent.append(Node(tuple(current), *where(start)))
            current = parent
        else:
            current.append(Node(token, *where(match.start())))
    if stack:
        line, column = where(stack[-1][1])
        raise ProtocolError(f"line {line}, column {column}: '(' is never closed")
    return top


def read_sexpression(text: str, what: str = "message") -> Node:
    """Exactly one S-expression, or :class:`ProtocolError` naming ``what`` was expected."""
    nodes = read_sexpressions(text)
    if not nodes:
        raise ProtocolError(f"empty {what}")
    if len(nodes) > 1:
        raise ProtocolError(f"expected one {what}, found {len(nodes)} S-expressions")
    return nodes[0]


def fold_keywords(node: Node) -> Node:
    """The node with GDL keywords in lower case, as the GDL parser reads them."""
    value = node.value
    if isinstance(value, str):
        lowered = value.lower()
        if lowered != value and lowered in KEYWORDS:
            return Node(lowered, node.line, node.column)
        return node
    return Node(tuple(fold_keywords(child) for child in value), node.line, node.column)
