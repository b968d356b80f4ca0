"""Frames for the pages: each step of a match with its state drawn (see server.replay.layout).

The grids of a game are found once per rules text, from seeded random playouts and the
match's own states, in a worker thread; drawings are cached per match and step so that
many viewers of one match cost one drawing per step.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from server.gdl import Game
from server.gdl.terms import RawTerm
from server.replay.layout import Grid, detect_grids, draw_state
from server.replay.sampling import sample_states
from server.replay.states import parse_state_text
from server.store import StepRow

CACHE_SIZE = 4096


def grids_for(rules_text: str | None, states: Iterable[str]) -> list[Grid]:
    """The grids of a game: from playouts of its rules (when given) and from ``states``."""
    sample: list[frozenset[RawTerm]] = []
    if rules_text:
        try:
            sample = sample_states(Game.from_text(rules_text), budget=0.3)
        except Exception:  # rules that do not load still show their states as facts
            sample = []
    for text in states:
        try:
            sample.append(parse_state_text(text))
        except Exception:
            continue
    return detect_grids(sample)


def engine_and_speed(game: Game, budget: float = 0.2) -> dict[str, Any]:
    """The engine a game runs on and its speed: random playouts for ``budget`` seconds."""
    rng = random.Random(0)
    transitions = 0
    started = time.perf_counter()
    deadline = started + budget
    while time.perf_counter() < deadline:
        state = game.initial_state()
        for _ in range(200):
            if game.is_terminal(state) or time.perf_counter() >= deadline:
                break
            state = game.next_state(
                state, [rng.choice(game.legal_moves(state, role)) for role in game.roles]
            )
            transitions += 1
    seconds = time.perf_counter() - started
    return {
        "engine": "compiled" if game.engine.name == "compiled" else "interpreter",
        "transitions_per_second": transitions / seconds if seconds > 0 else None,
    }


def draw(state_text: str, grids: Sequence[Grid]) -> dict[str, Any]:
    """A state's drawing as JSON; a state that does not read is shown as its text."""
    try:
        facts = parse_state_text(state_text)
    except Exception:
        return {"boards": [], "facts": [state_text]}
    return draw_state(facts, grids).to_json()


def step_frame(row: StepRow | dict[str, Any], drawing: dict[str, Any]) -> dict[str, Any]:
    """The JSON of one step for the pages."""
    if isinstance(row, StepRow):
        return {
            "step": row.step,
            "moves": row.moves,
            "errors": row.errors,
            "times": row.response_times,
            "board": drawing,
        }
    return {
        "step": row["step"],
        "moves": row["moves"],
        "errors": row["errors"],
        "times": row["times"],
        "board": drawing,
    }


class Drawings:
    """Grids per rules text and drawings per (match, step), both bounded caches."""

    def __init__(self) -> None:
        self._grids: OrderedDict[str, list[Grid]] = OrderedDict()
        self._drawn: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def grids(self, rules_text: str | None, states: Sequence[str] = ()) -> list[Grid]:
        key = hashlib.sha256((rules_text or "").encode()).hexdigest()
        if rules_text is None:
            key += ":" + hashlib.sha256("\n".join(states[:50]).encode()).hexdigest()
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._grids:
                found = await asyncio.to_thread(grids_for, rules_text, states[:50])
                self._grids[key] = found
                while len(self._grids) > 64:
                    self._grids.popitem(last=False)
            self._grids.move_to_end(key)
            return self._grids[key]

    def drawing(
        self, match_id: str, step: int, state_text: str, grids: Sequence[Grid]
    ) -> dict[str, Any]:
        key = (match_id, step)
        found = self._drawn.get(key)
        if found is None:
            found = draw(state_text, grids)
            self._drawn[key] = found
            while len(self._drawn) > CACHE_SIZE:
                self._drawn.popitem(last=False)
        return found
