"""One match as a player sees it: the game, its role, the clocks and the current state."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from server.gdl import Game, State
from server.gdl.terms import Term


@dataclass(eq=False)
class PlayerMatch:
    """A match the player is in.

    The player's agent keeps ``state`` up to date: before each move is asked for,
    the joint move of the PLAY message has been applied with ``game.next_state``.
    """

    match_id: str
    role: str
    game: Game
    start_clock: int
    play_clock: int
    state: State
    deadline: float
    """When the current request must be answered, on the :func:`time.monotonic` clock."""
    step: int = 0
    """How many joint moves have been played."""
    history: list[list[Term]] = field(default_factory=list)
    """The joint moves played so far, in role order."""
    memory: dict[str, Any] = field(default_factory=dict)
    """Free space for a player to keep what it learns during the match."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    """Serialises the player's hooks for this match (one runs at a time)."""

    @property
    def roles(self) -> list[str]:
        """The roles of the game, in declaration order."""
        return self.game.roles

    def time_left(self) -> float:
        """Seconds until the current request must be answered (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def legal_moves(self, state: State | None = None) -> list[Term]:
        """The player's legal moves in ``state`` (the current state by default)."""
        return self.game.legal_moves(self.state if state is None else state, self.role)
