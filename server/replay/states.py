"""Reading the states and moves that match logs print, and comparing states as sets."""

from __future__ import annotations

from collections.abc import Iterable

from server.gdl.parser import node_to_term, parse_term, read_nodes
from server.gdl.terms import RawTerm, sort_key, to_kif


def parse_state_text(text: str) -> frozenset[RawTerm]:
    """The fluents of a state printed as GGP-Base prints it: ``( ( cell 1 1 b ) ... )``.

    The order of the fluents does not matter and spacing is free (``((cell 1 1 b))``
    reads the same).  A fluent written as ``(true f)`` is read as ``f``.  Raises
    :class:`server.gdl.GdlSyntaxError` on malformed text.
    """
    nodes = read_nodes(text)
    if len(nodes) != 1 or isinstance(nodes[0].value, str):
        raise ValueError(f"a state is one parenthesised list of fluents, not {text[:60]!r}")
    facts: set[RawTerm] = set()
    for node in nodes[0].value:
        fact = node_to_term(node)
        if isinstance(fact, tuple) and len(fact) == 2 and fact[0] == "true":
            fact = fact[1]
        facts.add(fact)
    return frozenset(facts)


def parse_move_text(text: str) -> RawTerm:
    """One move as printed in a log: ``( mark 2 1 )``, ``(mark 2 1)`` or ``noop``."""
    return parse_term(text.strip())


def describe_terms(terms: Iterable[RawTerm], limit: int = 6) -> str:
    """A short, deterministic list of terms in KIF for messages."""
    ordered = sorted(terms, key=sort_key)
    shown = ", ".join(to_kif(term) for term in ordered[:limit])
    more = len(ordered) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def describe_difference(recorded: frozenset[RawTerm], computed: frozenset[RawTerm]) -> str:
    """What separates a recorded state from the one the rules give."""
    parts = []
    missing = computed - recorded
    extra = recorded - computed
    if missing:
        parts.append(f"missing {describe_terms(missing)}")
    if extra:
        parts.append(f"not in the rules' state {describe_terms(extra)}")
    return "; ".join(parts)
