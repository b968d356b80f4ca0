"""Game states: immutable sets of fluents."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from .terms import RawTerm, Term, fluent_info, sort_key, state_fits, to_kif, wrap


class State:
    """An immutable, hashable game state: the set of fluents that are true.

    Two states are equal when their fluents are equal. An engine may create a state
    from its own compact form (:meth:`from_compact`): the fluents are then only
    worked out when something asks for them, and the engine finds its compact form
    again without converting (:meth:`compact_for`).
    """

    __slots__ = ("_facts", "_hash", "_owner", "_compact", "_memo")

    def __init__(self, fluents: Iterable[RawTerm]) -> None:
        self._facts: frozenset[RawTerm] | None = frozenset(fluents)
        self._hash: int | None = None
        self._owner: CompactForm | None = None
        self._compact: object = None
        self._memo: object = None

    @classmethod
    def from_compact(cls, owner: CompactForm, compact: object) -> State:
        """A state known by ``owner``'s compact form; fluents decoded on first use."""
        state = cls.__new__(cls)
        state._facts = None
        state._hash = None
        state._owner = owner
        state._compact = compact
        state._memo = None
        return state

    def compact_for(self, owner: object) -> object:
        """The compact form ``owner`` attached to this state, or None."""
        return self._compact if self._owner is owner else None

    def attach(self, owner: CompactForm, compact: object, memo: object = None) -> None:
        """Remember ``owner``'s compact form of this state (and what it derived from it)."""
        if self._facts is None and self._owner is not owner:
            self._facts = self.facts
        self._owner = owner
        self._compact = compact
        self._memo = memo

    def memo_for(self, owner: object) -> object:
        """What ``owner`` derived from this state and kept on it, or None."""
        return self._memo if self._owner is owner else None

    def keep_memo(self, owner: object, memo: object) -> None:
        """Keep what ``owner`` derived from its compact form of this state."""
        if self._owner is owner:
            self._memo = memo

    @property
    def facts(self) -> frozenset[RawTerm]:
        """The fluents as plain terms (fast; for engines)."""
        facts = self._facts
        if facts is None:
            assert self._owner is not None
            facts = self._facts = frozenset(self._owner.decode_facts(self._compact))
        return facts

    @property
    def fluents(self) -> frozenset[Term]:
        """The fluents as public terms."""
        return frozenset(wrap(fact) for fact in self.facts)

    def sorted_fluents(self) -> list[Term]:
        """The fluents in a deterministic order."""
        return [wrap(fact) for fact in sorted(self.facts, key=sort_key)]

    def to_kif(self) -> str:
        """The state as one KIF list: ``((cell 1 1 b) (control xplayer))``."""
        return "(" + " ".join(to_kif(fact) for fact in sorted(self.facts, key=sort_key)) + ")"

    def to_ggp(self) -> str:
        """The state as GGP-Base and ggp.org match logs print it."""
        infos = sorted(map(fluent_info, self.facts))
        return "( " + "".join(info[1] + " " for info in infos) + ")"

    def __contains__(self, fluent: object) -> bool:
        return fluent in self.facts

    def __iter__(self) -> Iterator[Term]:
        return iter(self.sorted_fluents())

    def __len__(self) -> int:
        return len(self.facts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return False
        if self._owner is not None and self._owner is other._owner:
            return bool(self._compact == other._compact)
        return self.facts == other.facts

    def __hash__(self) -> int:
        found = self._hash
        if found is None:
            found = self._hash = hash(self.facts)
        return found

    def __reduce__(self) -> tuple[type[State], tuple[tuple[RawTerm, ...]]]:
        return State, (tuple(self.facts),)

    def __repr__(self) -> str:
        return f"State({self.to_kif()})"


class CompactForm(Protocol):
    """An engine that keeps states in a compact form of its own."""

    def decode_facts(self, compact: Any) -> Iterable[RawTerm]:
        """The fluents of a compact state."""
        ...


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
