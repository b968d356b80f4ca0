"""Read GDL in KIF syntax into rules, reporting malformed text by line and column.

GDL keywords are recognised in any letter case and stored in lower case; every
other symbol keeps its case exactly as written, as GGP-Base does.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .errors import GdlSyntaxError
from .terms import MAX_TERM_DEPTH, RawTerm, to_kif

KEYWORDS = frozenset(
    {
        "role",
        "init",
        "true",
        "does",
        "next",
        "legal",
        "goal",
        "terminal",
        "base",
        "input",
        "random",
        "distinct",
        "not",
        "or",
        "<=",
    }
)
"""Symbols that are folded to lower case wherever they appear."""

SENTENCE_ARITY = {
    "role": 1,
    "init": 1,
    "true": 1,
    "does": 2,
    "next": 1,
    "legal": 2,
    "goal": 2,
    "terminal": 0,
    "base": 1,
    "input": 2,
}
"""The number of arguments each GDL keyword relation takes."""

_TOKEN = re.compile(r";[^\n]*|[()]|[^\s();]+")
_MESSAGE_TOKEN = re.compile(r"[()]|[^\s()]+")
MAX_NESTING = MAX_TERM_DEPTH
"""Deepest nesting of parentheses accepted; deeper text is refused, never a crash."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule ``(<= head body...)``; a fact is a rule with an empty body.

    Body literals are terms: an atom, ``("not", literal)``,
    ``("distinct", a, b)`` or ``("or", literal, ...)``.
    """

    head: RawTerm
    body: tuple[RawTerm, ...]
    line: int = 0
    column: int = 0
    places: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)
    """(line, column) of the head, then of each body literal, when read from text."""

    def __str__(self) -> str:
        if not self.body:
            return to_kif(self.head)
        return "(<= " + " ".join(to_kif(part) for part in (self.head, *self.body)) + ")"

    @property
    def where(self) -> str:
        """Where the rule starts, for messages."""
        return f"line {self.line}, column {self.column}" if self.line else "rule"

    def place_of(self, index: int) -> tuple[int, int]:
        """(line, column) of the head (``index`` 0) or of body literal ``index``; the
        rule's own place when not known (``(0, 0)`` for a rule not read from text)."""
        if 0 <= index < len(self.places):
            return self.places[index]
        return self.line, self.column


@dataclass(frozen=True, slots=True)
class Node:
    """One S-expression with its position: ``value`` is a ``str`` or a tuple of nodes."""

    value: str | tuple[Node, ...]
    line: int
    column: int


def _positions(text: str) -> list[int]:
    return [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]


def read_nodes(text: str, *, gdl: bool = True, max_depth: int | None = MAX_NESTING) -> list[Node]:
    """Read every top-level S-expression of ``text``.

    As GDL (the default), ``;`` starts a comment and keywords are folded to lower
    case; otherwise (a protocol message) every atom stays exactly as written.
    Nesting deeper than ``max_depth`` is a :class:`GdlSyntaxError` (``None``: no cap;
    reading never recurses, whatever the depth).
    """
    line_starts = _positions(text)
    tokens = _TOKEN if gdl else _MESSAGE_TOKEN

    def where(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1] + 1

    stack: list[tuple[list[Node], int]] = []
    top: list[Node] = []
    current = top
    for match in tokens.finditer(text):
        token = match.group()
        if gdl and token[0] == ";":
            continue
        if token == "(":
            if max_depth is not None and len(stack) >= max_depth:
                line, column = where(match.start())
                raise GdlSyntaxError(
                    f"parentheses nested deeper than {max_depth} levels", line, column
                )
            stack.append((current, match.start()))
            current = []
        elif token == ")":
            if not stack:
                line, column = where(match.start())
                raise GdlSyntaxError("unbalanced ')': no '(' is open here", line, column)
            parent, start = stack.pop()
            line, column = where(start)
            parent.append(Node(tuple(current), line, column))
            current = parent
        else:
            line, column = where(match.start())
            if gdl and token.lower() in KEYWORDS:
                token = token.lower()
            current.append(Node(token, line, column))
    if stack:
        line, column = where(stack[-1][1])
        raise GdlSyntaxError("unbalanced '(': this parenthesis is never closed", line, column)
    return top


def _check_compound(node: Node) -> tuple[Node, ...]:
    """The children of a list node that may be a compound term; else a syntax error."""
    value = node.value
    assert isinstance(value, tuple)
    if not value:
        raise GdlSyntaxError("empty parentheses '()' are not a term", node.line, node.column)
    functor = value[0]
    if not isinstance(functor.value, str):
        raise GdlSyntaxError(
            "a term must start with a name, not with a parenthesis", functor.line, functor.column
        )
    if functor.value.startswith("?"):
        raise GdlSyntaxError(
            f"a variable ({functor.value}) cannot be a function name", functor.line, functor.column
        )
    return value


def node_to_term(node: Node) -> RawTerm:
    """Turn an S-expression into a term; a list must start with a constant.

    Works without recursion, so any depth the reader accepted is turned into a term.
    """
    if isinstance(node.value, str):
        return node.value
    built: list[list[RawTerm]] = [[]]
    pending: list[Iterator[Node]] = [iter(_check_compound(node))]
    while pending:
        for child in pending[-1]:
            if isinstance(child.value, str):
                built[-1].append(child.value)
            else:
                pending.append(iter(_check_compound(child)))
                built.append([])
                break
        else:
            pending.pop()
            done = tuple(built.pop())
            if not built:
                return done
            built[-1].append(done)
    raise AssertionError("unreachable")


def _sentence(node: Node, what: str) -> RawTerm:
    """An atomic sentence: a constant or a compound whose name is not a variable."""
    term = node_to_term(node)
    name = term if isinstance(term, str) else term[0]
    if name.startswith("?"):
        raise GdlSyntaxError(
            f"a bare variable ({name}) cannot stand as {what}", node.line, node.column
        )
    if name in ("<=", "not", "or", "distinct"):
        raise GdlSyntaxError(f"'{name}' cannot stand as {what}", node.line, node.column)
    if name in SENTENCE_ARITY:
        arity = 0 if isinstance(term, str) else len(term) - 1
        expected = SENTENCE_ARITY[name]
        if arity != expected or (expected == 0 and not isinstance(term, str)):
            args = "no arguments" if expected == 0 else f"{expected} argument(s)"
            raise GdlSyntaxError(
                f"'{name}' takes {args}, but is used here with {arity}", node.line, node.column
            )
    return term


def _literal(node: Node) -> RawTerm:
    value = node.value
    if isinstance(value, tuple) and value and isinstance(value[0].value, str):
        keyword = value[0].value
        count = len(value) - 1
        if keyword == "not":
            if count != 1:
                raise GdlSyntaxError(
                    f"'not' takes 1 argument, but is used here with {count}", node.line, node.column
                )
            inner = _literal(value[1])
            if isinstance(inner, tuple) and inner[0] in ("not", "or"):
                raise GdlSyntaxError(
                    f"'not' may only negate a sentence or a distinct, not '{inner[0]}'",
                    node.line,
                    node.column,
                )
            return ("not", inner)
        if keyword == "distinct":
            if count != 2:
                raise GdlSyntaxError(
                    f"'distinct' takes 2 arguments, but is used here with {count}",
                    node.line,
                    node.column,
                )
            return ("distinct", node_to_term(value[1]), node_to_term(value[2]))
        if keyword == "or":
            if count == 0:
                raise GdlSyntaxError("'or' needs at least one argument", node.line, node.column)
            return ("or", *(_literal(arg) for arg in value[1:]))
    return _sentence(node, "a literal")


def node_to_rule(node: Node) -> Rule:
    """Turn one top-level S-expression into a rule or a fact."""
    value = node.value
    if isinstance(value, tuple) and value and value[0].value == "<=":
        if len(value) < 2:
            raise GdlSyntaxError("a rule '(<= ...)' needs a head", node.line, node.column)
        head = _sentence(value[1], "the head of a rule")
        body = tuple(_literal(literal) for literal in value[2:])
        places = tuple((part.line, part.column) for part in value[1:])
        return Rule(head, body, node.line, node.column, places)
    if isinstance(value, str) and value == "<=":
        raise GdlSyntaxError("'<=' must open a rule: (<= head body...)", node.line, node.column)
    return Rule(_sentence(node, "a sentence"), (), node.line, node.column)


def iter_rules(nodes: list[Node]) -> Iterator[Rule]:
    """Turn top-level S-expressions into rules."""
    for node in nodes:
        yield node_to_rule(node)


def parse_gdl(text: str) -> list[Rule]:
    """Parse a whole game description."""
    return list(iter_rules(read_nodes(text)))


def parse_term(text: str, *, max_depth: int | None = MAX_NESTING) -> RawTerm:
    """Parse exactly one term, such as a move ``(mark 1 2)`` or ``noop``."""
    nodes = read_nodes(text, max_depth=max_depth)
    if len(nodes) != 1:
        raise GdlSyntaxError(f"expected exactly one term, found {len(nodes)}", 1, 1)
    return node_to_term(nodes[0])
