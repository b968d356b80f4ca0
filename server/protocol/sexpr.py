"""S-expressions as the protocol reads them.

Unlike a ``.kif`` file, a message has no comments, and its atoms keep their case:
match ids and player names are compared exactly. The parts that are GDL (rules,
roles and moves) get GDL's keyword folding with :func:`fold_keywords`, so they
agree with rules read by :mod:`server.gdl.parser`.
"""

from __future__ import annotations

from collections.abc import Iterator

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


def _folded_atom(node: Node) -> Node:
    value = node.value
    assert isinstance(value, str)
    lowered = value.lower()
    if lowered != value and lowered in KEYWORDS:
        return Node(lowered, node.line, node.column)
    return node


def fold_keywords(node: Node) -> Node:
    """The node with GDL keywords in lower case, as the GDL parser reads them (no recursion)."""
    if isinstance(node.value, str):
        return _folded_atom(node)
    built: list[list[Node]] = [[]]
    parents: list[Node] = [node]
    pending: list[Iterator[Node]] = [iter(node.value)]
    while pending:
        for child in pending[-1]:
            if isinstance(child.value, str):
                built[-1].append(_folded_atom(child))
            else:
                parents.append(child)
                built.append([])
                pending.append(iter(child.value))
                break
        else:
            pending.pop()
            parent = parents.pop()
            done = Node(tuple(built.pop()), parent.line, parent.column)
            if not built:
                return done
            built[-1].append(done)
    raise AssertionError("unreachable")
