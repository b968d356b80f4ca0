"""The contract every reasoning engine behind :class:`server.gdl.Game` fulfils."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .state import State
from .terms import RawTerm


class Engine(Protocol):
    """A GDL reasoner over plain terms; :class:`Game` adds checks and public types.

    ``legal_moves`` returns public terms (:class:`server.gdl.terms.Constant`,
    :class:`server.gdl.terms.Compound`) sorted by :func:`server.gdl.terms.sort_key`,
    in a new list;
    ``legal_move`` returns the engine's own copy of ``move`` when it is legal, else None;
    ``next_state`` trusts its moves (the caller checks legality);
    ``goal_values`` returns every goal value derivable for the role, unchecked.
    """

    name: str
    roles: list[str]

    def initial_state(self) -> State: ...

    def legal_moves(self, state: State, role: str) -> list[RawTerm]: ...

    def legal_move(self, state: State, role: str, move: RawTerm) -> RawTerm | None: ...

    def next_state(self, state: State, moves: Sequence[RawTerm]) -> State: ...

    def is_terminal(self, state: State) -> bool: ...

    def goal_values(self, state: State, role: str) -> list[RawTerm]: ...
