"""Loaded games kept between matches: a player that plays the same rules again skips
compiling them (some 0.1 s of CPU time for a nine-board tic-tac-toe, seconds for
larger games).

A game is lent to one match at a time (an interpreter keeps caches that two threads must
not share) and comes back only once the match has ended and no thread of that match
still uses it.  The pool keeps a few idle games for each of the rules seen last.  Games
of the same rules loaded apart still share one compiled engine, which keeps nothing
per match (:mod:`server.gdl.compile_memo`).

>>> pool = GamePool()
>>> game = pool.take(key) or load(rules)   # doctest: +SKIP
>>> pool.give_back(key, game)               # doctest: +SKIP
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from server.gdl import Game

IDLE_PER_RULES = 4
"""Idle games kept for one set of rules (matches of it at once beyond this load anew)."""

RULES_KEPT = 4
"""Sets of rules with idle games kept; the one used longest ago goes first."""


class GamePool:
    """Idle loaded games by their rules (and the compile budget they were loaded with)."""

    def __init__(self, idle_per_rules: int = IDLE_PER_RULES, rules_kept: int = RULES_KEPT):
        self.idle_per_rules = idle_per_rules
        self.rules_kept = rules_kept
        self._idle: OrderedDict[Hashable, list[Game]] = OrderedDict()

    def take(self, key: Hashable) -> Game | None:
        """An idle game loaded from these rules, now lent out; ``None`` when there is none."""
        games = self._idle.get(key)
        if not games:
            return None
        self._idle.move_to_end(key)
        game = games.pop()
        if not games:
            del self._idle[key]
        return game

    def give_back(self, key: Hashable, game: Game) -> None:
        """Keep ``game`` for a later match of the same rules (nobody may use it any more)."""
        games = self._idle.setdefault(key, [])
        self._idle.move_to_end(key)
        if len(games) < self.idle_per_rules:
            games.append(game)
        while len(self._idle) > self.rules_kept:
            self._idle.popitem(last=False)

    def __len__(self) -> int:
        """How many idle games are kept."""
        return sum(len(games) for games in self._idle.values())
