"""The bundled ``mcts`` player: decoupled UCT with a solver, on the whole clock.

The search runs in the agent's worker thread, so the event loop keeps answering INFO
(and takes ABORT) while it thinks: the thread gives the interpreter lock up at least
every few milliseconds. It stops at the stop time of its :class:`Clock`, at once when
the match's deadline changes (the agent sets a new one for every later message, such
as ABORT), and early when the root is proven. The tree is kept in ``match.memory``
from step to step and re-rooted on the state the agent reached with the joint move.

Options come from keywords or, for ``ggp player mcts`` and ``ggp match``, from the
environment: ``GGP_MCTS_EXPLORATION``, ``GGP_MCTS_ITERATIONS`` (a fixed count per move
instead of the clock), ``GGP_MCTS_MEMORY_MB`` and ``GGP_MCTS_SOLVER`` (0 turns the
solver off); the seed is the player's ``--seed``.
"""

from __future__ import annotations

import logging
import os
import random
import time
from dataclasses import dataclass

from server.gdl import State
from server.gdl.compiled import CompiledEngine, OutsideGroundingError
from server.gdl.terms import Term

from ..base import Player
from ..match import PlayerMatch
from .clock import Clock
from .model import InterpretedModel, Model, model_of
from .search import Search

log = logging.getLogger(__name__)

DEFAULT_EXPLORATION = 0.7
DEFAULT_MEMORY_MB = 512
NODE_BYTES = 1_000
"""A generous estimate of one node's size, for the memory cap."""

YIELD_EVERY = 0.005
"""Seconds of search between explicit hand-overs of the interpreter lock."""

MEMORY_KEY = "mcts"


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


@dataclass
class Thinking:
    """One match's search and clock."""

    search: Search
    clock: Clock
    role: int
    left_the_grounding: bool = False
    """Whether the match reached a state the compiled grounding never reached (its
    search then stays on the interpreted model)."""


class SearchPlayer(Player):
    """Base of the search players: one :class:`Search` per match, run against the clock.

    They ask for games to be compiled aside (:attr:`Player.compiles_aside`); when a match's
    game switches to the engine compiled aside, the next hook searches afresh on its
    compact states (the tree built on the interpreter's states is dropped: a search on the
    compiled engine catches up within a step)."""

    compiles_aside = True

    def __init__(
        self,
        *,
        name: str | None = None,
        seed: int | None = None,
        iterations: int | None = None,
    ) -> None:
        super().__init__(name=name, seed=seed)
        self.iterations = iterations

    # -- hooks -------------------------------------------------------------------

    def start(self, match: PlayerMatch) -> None:
        thinking = self._thinking(match, match.state)
        if self.iterations is None:
            self._think(match, thinking, match.start_clock, lag=False)

    def play(self, match: PlayerMatch, state: State) -> Term:
        thinking = self._thinking(match, state)
        started = time.monotonic()
        if self.iterations is None:
            done = self._think(match, thinking, match.play_clock)
        else:
            done = thinking.search.run(iterations=self.iterations)
        search = thinking.search
        move = search.model.move_term(thinking.role, search.best_move(thinking.role))
        seconds = time.monotonic() - started
        log.info(
            "match %s step %d: %d iterations in %.3f s (%.0f/s), %d nodes, margin %.3f s, "
            "left %.3f s",
            match.match_id,
            match.step,
            done,
            seconds,
            done / max(seconds, 1e-9),
            len(search.table),
            thinking.clock.margin(match.play_clock),
            match.deadline - time.monotonic(),
        )
        return move

    def stop(self, match: PlayerMatch) -> None:
        match.memory.pop(MEMORY_KEY, None)

    def abort(self, match: PlayerMatch) -> None:
        match.memory.pop(MEMORY_KEY, None)

    # -- helpers -----------------------------------------------------------------

    def new_search(self, model: Model, rng: random.Random) -> Search:
        """The search this player runs (subclasses choose its kind and options)."""
        raise NotImplementedError

    def _thinking(self, match: PlayerMatch, state: State) -> Thinking:
        """The match's search, rooted at ``state`` (built on first use)."""
        thinking: Thinking | None = match.memory.get(MEMORY_KEY)
        if thinking is None:
            rng = random.Random(self.seed)
            search = self.new_search(model_of(match.game), rng)
            thinking = Thinking(search, Clock(), match.roles.index(match.role))
            match.memory[MEMORY_KEY] = thinking
        elif (
            isinstance(thinking.search.model, InterpretedModel)
            and isinstance(match.game.engine, CompiledEngine)
            and not thinking.left_the_grounding
        ):  # the game switched to the engine compiled aside: search on its compact states
            log.info("match %s: searching on the engine compiled aside", match.match_id)
            thinking.search = self.new_search(model_of(match.game), thinking.search.rng)
        try:
            key = thinking.search.model.key(state)
        except OutsideGroundingError:  # a state the compiled grounding never reached
            log.warning("match %s: continuing on the interpreter", match.match_id)
            thinking.left_the_grounding = True
            model = InterpretedModel(match.game)
            thinking.search = self.new_search(model, thinking.search.rng)
            key = model.key(state)
        thinking.search.set_root(key)
        return thinking

    def _think(
        self, match: PlayerMatch, thinking: Thinking, clock: float, *, lag: bool = True
    ) -> int:
        """Search until the clock says stop, the deadline moves or the root is proven.

        ``lag`` says whether to measure the hook's start-up delay (not for START,
        whose delay includes loading the game).
        """
        deadline = match.deadline
        timer = thinking.clock
        search = thinking.search
        if lag:
            timer.hook_started(deadline, clock)
        stop_at = timer.stop_time(deadline, clock)
        done = 0
        handed_over = time.monotonic()
        while match.deadline == deadline:
            now = time.monotonic()
            if now >= stop_at or search.finished:
                break
            if search.iterate(stop_at):
                done += 1
            after = time.monotonic()
            timer.iteration_took(after - now)
            if after - handed_over > YIELD_EVERY:
                time.sleep(0)  # let the event loop answer INFO now
                handed_over = after
                stop_at = timer.stop_time(deadline, clock)
        return done


class MctsPlayer(SearchPlayer):
    """Monte Carlo tree search (decoupled UCT, MCTS-Solver) for any GDL game."""

    name = "MCTS"
    species = "mcts"

    def __init__(
        self,
        *,
        name: str | None = None,
        seed: int | None = None,
        exploration: float | None = None,
        iterations: int | None = None,
        memory_mb: float | None = None,
        solver: bool | None = None,
    ) -> None:
        if iterations is None and (text := _env("GGP_MCTS_ITERATIONS")):
            iterations = int(text)
        super().__init__(name=name, seed=seed, iterations=iterations)
        if exploration is None:
            exploration = float(_env("GGP_MCTS_EXPLORATION") or DEFAULT_EXPLORATION)
        if memory_mb is None:
            memory_mb = float(_env("GGP_MCTS_MEMORY_MB") or DEFAULT_MEMORY_MB)
        if solver is None:
            solver = (_env("GGP_MCTS_SOLVER") or "1") not in ("0", "false", "no")
        if exploration < 0 or memory_mb <= 0 or (iterations is not None and iterations < 1):
            raise ValueError("exploration must be >= 0, memory and iterations positive")
        self.exploration = exploration
        self.max_nodes = max(1_000, int(memory_mb * 1_000_000 / NODE_BYTES))
        self.solver = solver

    def new_search(self, model: Model, rng: random.Random) -> Search:
        return Search(
            model,
            rng,
            exploration=self.exploration,
            solver=self.solver,
            max_nodes=self.max_nodes,
        )
