"""S-expressions as the protocol reads them.

Unlike a ``.kif`` file, a message has no comments, and its atoms keep their case:
match ids and player names are compared exactly. The parts that are GDL (rules,
roles and moves) get GDL's keyword folding with :func:`fold_keywords`, so they
agree with rules read by :mod:`server.gdl.parser`.
"""

from __future__ import annotations

from server.gdl.errors import GdlSyntaxError
from server.gdl.parser import KEYWORDS, Node, read_nodes

from .errors import ProtocolError


def read_sexpressions(text: str) -> list[Node]:
    """Every top-level S-expression of ``text``, atoms exactly as written."""
    try:
        return read_nodes(text, gdl=False)
    except GdlSyntaxError as error:
        raise ProtocolError(str(error)) from error


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
