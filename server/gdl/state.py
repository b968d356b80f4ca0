"""Game states: immutable sets of fluents."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .terms import RawTerm, Term, sort_key, to_ggp, to_kif, wrap


class State:
    """An immutable, hashable game state: the set of fluents that are true.

    Two states are equal when their fluents are equal.
    """

    __slots__ = ("_facts", "_hash")

    def __init__(self, fluents: Iterable[RawTerm]) -> None:
        self._facts: frozenset[RawTerm] = frozenset(fluents)
        self._hash = hash(self._facts)

    @property
    def facts(self) -> frozenset[RawTerm]:
        """The fluents as plain terms (fast; for engines)."""
        return self._facts

    @property
    def fluents(self) -> frozenset[Term]:
        """The fluents as public terms."""
        return frozenset(wrap(fact) for fact in self._facts)

    def sorted_fluents(self) -> list[Term]:
        """The fluents in a deterministic order."""
        return [wrap(fact) for fact in sorted(self._facts, key=sort_key)]

    def to_kif(self) -> str:
        """The state as one KIF list: ``((cell 1 1 b) (control xplayer))``."""
        return "(" + " ".join(to_kif(fact) for fact in sorted(self._facts, key=sort_key)) + ")"

    def to_ggp(self) -> str:
        """The state as GGP-Base and ggp.org match logs print it."""
        return (
            "( " + "".join(to_ggp(fact) + " " for fact in sorted(self._facts, key=sort_key)) + ")"
        )

    def __contains__(self, fluent: object) -> bool:
        return fluent in self._facts

    def __iter__(self) -> Iterator[Term]:
        return iter(self.sorted_fluents())

    def __len__(self) -> int:
        return len(self._facts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self._facts == other._facts

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"State({self.to_kif()})"
