"""Game states: immutable sets of fluents."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator

from .terms import RawTerm, Term, fluent_info, sort_key, state_fits, to_kif, wrap


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
        infos = sorted(map(fluent_info, self._facts))
        return "( " + "".join(info[1] + " " for info in infos) + ")"

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


class StatePrinter:
    """Prints the successive states of one match, each at the cost of what changed.

    Consecutive states share most fluents, so the sorted print form of the last state
    is kept and only the fluents that left or arrived are removed or inserted (found
    by their sort keys, which are unique).
    """

    __slots__ = ("_facts", "_infos")

    def __init__(self) -> None:
        self._facts: frozenset[RawTerm] = frozenset()
        self._infos: list[tuple[tuple, str, int, RawTerm]] = []

    def fits(self, state: State) -> bool:
        """True when the state nests within the cap (see :func:`state_fits`).

        Only fluents new since the last printed state are measured.
        """
        return state_fits(state.facts - self._facts)

    def to_ggp(self, state: State) -> str:
        """The state as :meth:`State.to_ggp` prints it."""
        facts = state.facts
        gone = self._facts - facts
        arrived = facts - self._facts
        if len(gone) + len(arrived) > len(facts) // 2:
            infos = sorted((*fluent_info(fact), fact) for fact in facts)
        else:
            infos = self._infos
            for fact in gone:
                del infos[bisect.bisect_left(infos, (fluent_info(fact)[0],))]
            for fact in arrived:
                bisect.insort(infos, (*fluent_info(fact), fact))
        self._facts = facts
        self._infos = infos
        return "( " + "".join(info[1] + " " for info in infos) + ")"
