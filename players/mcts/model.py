"""The rules as the search sees them: hashable state keys, move lists per role, playouts.

:class:`CompiledModel` runs on the compiled engine's fast path (compact ``int`` states,
move indices and its generated playout loop); :class:`InterpretedModel` runs on any
engine through the :class:`~server.gdl.engine.Engine` contract, for games that do not
compile. Goals are scaled from GDL's 0..100 to [0, 1]; a role without a unique
integer goal scores 0.
"""

from __future__ import annotations

import random
import time
from collections.abc import Hashable, Sequence
from typing import Any, Protocol

from server.gdl import Game, State
from server.gdl.compiled import CompiledEngine
from server.gdl.terms import RawTerm, Term, wrap

PLAYOUT_STEPS = 1_000
"""A playout that runs this long is scored with the goals where it stopped."""

PLAYOUT_SECONDS = 0.05
"""The compiled model shortens playouts to about this long, so the search can look at
the clock often enough (games whose random playouts wander for thousands of steps)."""

MIN_PLAYOUT_STEPS = 200
"""Playouts are never cut shorter than this (so that typical games are never cut)."""

Goals = tuple[float, ...]
"""One value in [0, 1] per role, in role order."""


class Model(Protocol):
    """What the search needs from the rules."""

    roles: list[str]

    def key(self, state: State) -> Hashable:
        """The key of a state (raises when the state is outside what the model knows)."""
        ...

    def legal(self, key: Any) -> tuple[Sequence[Any], ...]:
        """Each role's legal moves, as opaque move values in a fixed order."""
        ...

    def next(self, key: Any, joint: Sequence[Any]) -> Hashable:
        """The key after a joint move (one move value per role)."""
        ...

    def terminal(self, key: Any) -> bool: ...

    def goals(self, key: Any) -> Goals: ...

    def playout(self, key: Any, rng: random.Random, stop_at: float) -> Goals | None:
        """The goals after random play from ``key``; None when ``stop_at`` came first."""
        ...

    def move_value(self, role: int, move: Term) -> Any:
        """The move value of a protocol move (raises ``KeyError`` if unknown)."""
        ...

    def move_term(self, role: int, move: Any) -> Term:
        """The protocol term of a move value."""
        ...


def _scaled(values: Sequence[RawTerm]) -> float:
    if len(values) != 1 or not isinstance(values[0], str):
        return 0.0
    try:
        return min(1.0, max(0.0, int(values[0]) / 100))
    except ValueError:
        return 0.0


class CompiledModel:
    """The compiled engine's compact states and generated playout loop."""

    def __init__(self, engine: CompiledEngine) -> None:
        self.engine = engine
        self.roles = list(engine.roles)
        self._goal_cache: dict[tuple[tuple[RawTerm, ...], ...], Goals] = {}
        self._move_index = [{m: j for j, m in enumerate(ms)} for ms in engine.moves]
        self.step_seconds = 0.0
        """A running average of the time one playout step takes."""
        self.steps_limit = PLAYOUT_STEPS

    def key(self, state: State) -> int:
        return self.engine.encode(state)

    def legal(self, key: int) -> tuple[Sequence[int], ...]:
        return self.engine.legal_indices(key)

    def next(self, key: int, joint: Sequence[int]) -> int:
        return self.engine.next_compact(key, joint)

    def terminal(self, key: int) -> bool:
        return self.engine.terminal_compact(key)

    def goals(self, key: int) -> Goals:
        found = tuple(tuple(values) for values in self.engine.goals_compact(key))
        cached = self._goal_cache.get(found)
        if cached is None:
            cached = self._goal_cache[found] = tuple(_scaled(values) for values in found)
        return cached

    def playout(self, key: int, rng: random.Random, stop_at: float) -> Goals | None:
        started = time.perf_counter()
        end = self.engine.playout(key, rng, self.steps_limit)
        if end.steps:
            per_step = (time.perf_counter() - started) / end.steps
            self.step_seconds = (
                per_step if not self.step_seconds else (0.95 * self.step_seconds + 0.05 * per_step)
            )
            fits = int(PLAYOUT_SECONDS / max(self.step_seconds, 1e-7))
            self.steps_limit = max(MIN_PLAYOUT_STEPS, min(PLAYOUT_STEPS, fits))
        return self.goals(end.state)

    def move_value(self, role: int, move: Term) -> int:
        return self._move_index[role][move]

    def move_term(self, role: int, move: int) -> Term:
        return wrap(self.engine.moves[role][move])


class InterpretedModel:
    """Any engine through its public contract; states are :class:`State` values."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.roles = list(game.roles)

    def key(self, state: State) -> State:
        return state

    def legal(self, key: State) -> tuple[Sequence[RawTerm], ...]:
        engine = self.game.engine
        return tuple(engine.legal_moves(key, role) for role in self.roles)

    def next(self, key: State, joint: Sequence[RawTerm]) -> State:
        return self.game.engine.next_state(key, joint)

    def terminal(self, key: State) -> bool:
        return self.game.engine.is_terminal(key)

    def goals(self, key: State) -> Goals:
        engine = self.game.engine
        return tuple(_scaled(engine.goal_values(key, role)) for role in self.roles)

    def playout(self, key: State, rng: random.Random, stop_at: float) -> Goals | None:
        for _ in range(PLAYOUT_STEPS):
            if self.terminal(key):
                break
            if time.monotonic() > stop_at:
                return None
            legal = self.legal(key)
            if not all(legal):
                break
            key = self.next(key, [rng.choice(moves) for moves in legal])
        return self.goals(key)

    def move_value(self, role: int, move: Term) -> RawTerm:
        return move

    def move_term(self, role: int, move: RawTerm) -> Term:
        return wrap(move)


def model_of(game: Game) -> Model:
    """The fastest model the game allows."""
    if isinstance(game.engine, CompiledEngine):
        return CompiledModel(game.engine)
    return InterpretedModel(game)
