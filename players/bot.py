"""The bot kit: write a game-playing bot as a few plain methods.

A bot author subclasses :class:`Bot` and writes :meth:`Bot.play` (and, if it
wants, :meth:`Bot.start`, :meth:`Bot.stop` and :meth:`Bot.abort`). The kit does
the protocol's bookkeeping: it keeps the current state by applying every joint
move the server reports, so ``play`` always receives the state to move in, and
the rules engine (:class:`server.gdl.Game`) is at hand as ``self.game``.

The kit knows nothing of how messages arrive. :class:`BotPlayer` adapts a bot
class to the :class:`~players.base.Player` hooks, which a transport drives: today
the HTTP agent (``ggp player --bot module:Class``), later others.

>>> class FirstMove(Bot):
...     def play(self, state):
...         return self.legal_moves(state)[0]
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from server.gdl import Game, State
from server.gdl.terms import Term

from .base import Player
from .match import PlayerMatch


@dataclass(frozen=True)
class Clocks:
    """The match's clocks in seconds: to get ready (``start``) and per move (``play``)."""

    start: int
    play: int


class Bot:
    """A game-playing bot; one instance plays one match.

    Before :meth:`start` is called the kit sets ``game``, ``role``, ``roles``,
    ``clocks`` and ``rng``, so a bot that needs no preparation writes only
    :meth:`play`. Every method runs in a worker thread and may block; it should
    return before :meth:`time_left` reaches zero (a move that comes too late, or
    is not legal, is replaced by a random legal one).
    """

    name: str = "Bot"
    """The name the bot gives in reply to INFO."""
    species: str | None = None
    """An optional species, also given in reply to INFO."""

    game: Game
    """The rules of the match: ``legal_moves``, ``next_state``, ``is_terminal``, ``goals``."""
    role: str
    """The role this bot plays."""
    roles: list[str]
    """Every role of the game, in the order joint moves list them."""
    clocks: Clocks
    """The start and play clocks of the match."""
    rng: random.Random
    """A random generator, seeded when the player was given ``--seed``."""

    _match: PlayerMatch | None = None

    def start(self, game: Game, role: str, clocks: Clocks) -> None:
        """The match begins: think about ``game`` before the start clock runs out."""

    def play(self, state: State) -> Term:
        """Choose a legal move for ``self.role`` in ``state``."""
        raise NotImplementedError(f"{type(self).__name__} must define play(state)")

    def stop(self, state: State, goals: dict[str, int]) -> None:
        """The match is over: ``state`` is the final state and ``goals`` each role's score."""

    def abort(self) -> None:
        """The match was cancelled before its end."""

    # -- helpers for bot authors ------------------------------------------------------

    def legal_moves(self, state: State) -> list[Term]:
        """This bot's legal moves in ``state``."""
        return self.game.legal_moves(state, self.role)

    def next_states(self, state: State, move: object) -> list[State]:
        """The states ``move`` can lead to: one per combination of the other roles' moves."""
        choices = [
            [move] if role == self.role else self.game.legal_moves(state, role)
            for role in self.roles
        ]
        return [self.game.next_state(state, joint) for joint in itertools.product(*choices)]

    def time_left(self) -> float:
        """Seconds left to answer the current request (``inf`` outside a match)."""
        return float("inf") if self._match is None else self._match.time_left()


class BotPlayer(Player):
    """A :class:`~players.base.Player` that plays each match with a new instance of a bot class."""

    def __init__(
        self, bot_class: type[Bot], *, name: str | None = None, seed: int | None = None
    ) -> None:
        super().__init__(name=name or bot_class.name, seed=seed)
        self.bot_class = bot_class
        self.species = bot_class.species

    def start(self, match: PlayerMatch) -> None:
        bot = self.bot_class()
        bot.game, bot.role, bot.roles = match.game, match.role, list(match.roles)
        bot.clocks = Clocks(start=match.start_clock, play=match.play_clock)
        bot.rng = random.Random(self.rng.random())
        bot._match = match
        match.memory["bot"] = bot
        bot.start(match.game, match.role, bot.clocks)

    def play(self, match: PlayerMatch, state: State) -> Term:
        return _bot_of(match).play(state)

    def stop(self, match: PlayerMatch) -> None:
        state = match.state
        goals = match.game.defined_goals(state) if match.game.is_terminal(state) else {}
        _bot_of(match).stop(state, goals)

    def abort(self, match: PlayerMatch) -> None:
        _bot_of(match).abort()


def _bot_of(match: PlayerMatch) -> Bot:
    bot: Any = match.memory.get("bot")
    if not isinstance(bot, Bot):
        raise RuntimeError(f"match {match.match_id} has no bot (its start failed)")
    return bot
