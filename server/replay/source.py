"""Finding the rules a match log was played under.

In order of preference:

1. the game the user names (``--game NAME_OR_KIF``: a ``.kif`` path or a bundled game);
2. rules embedded in the log: our ``gameRulesheet`` field, or the same under the
   names other servers use (``rulesheet``, ``rules``, ``gameRules``, ``gdl``), as
   KIF text or a list of rule texts;
3. a bundled game named by the log: ``gameName``, or the game in a ggp.org
   repository URL (``gameMetaURL`` such as
   ``http://games.ggp.org/base/games/nineBoardTicTacToe/v0/``).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.gdl import Game, GdlError

RULES_FIELDS = ("gameRulesheet", "rulesheet", "rules", "gameRules", "gdl")
"""Record fields that may hold the rules themselves, in order of preference."""

_META_URL_GAME = re.compile(r"/games/([^/?#]+)(?:/v\d+)?/?(?:[?#].*)?$")


class RulesNotFound(Exception):
    """No usable rules for a log; the message says what to pass instead."""


@dataclass(frozen=True)
class ResolvedGame:
    """The rules a log is replayed against, and where they came from."""

    game: Game
    source: str


def game_name_from_meta_url(url: str) -> str | None:
    """The game's key in a ggp.org repository URL, e.g. ``nineBoardTicTacToe``."""
    found = _META_URL_GAME.search(url.strip())
    return found.group(1) if found else None


def load_named_game(name_or_path: str) -> Game:
    """A ``.kif`` file, or a bundled game by name."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return Game.from_file(path)
    from server.games import load_game

    return load_game(name_or_path)


def _embedded_rules(fields: Mapping[str, Any]) -> tuple[str, str] | None:
    for field in RULES_FIELDS:
        value = fields.get(field)
        if isinstance(value, str) and value.strip():
            return field, value
        if isinstance(value, list) and value and all(isinstance(rule, str) for rule in value):
            return field, "\n".join(value)
    return None


def resolve_game(fields: Mapping[str, Any], game_option: str | None = None) -> ResolvedGame:
    """The rules for a record given as its JSON fields; raises :class:`RulesNotFound`."""
    if game_option:
        try:
            return ResolvedGame(load_named_game(game_option), f"--game {game_option}")
        except (LookupError, OSError, ValueError) as error:
            raise RulesNotFound(f"cannot load --game {game_option}: {error}") from error

    embedded = _embedded_rules(fields)
    if embedded is not None:
        field, text = embedded
        try:
            return ResolvedGame(Game.from_text(text), f"rules embedded in the log ({field})")
        except GdlError as error:
            raise RulesNotFound(
                f"the rules embedded in the log ({field}) do not load: {error}"
            ) from error

    candidates: list[tuple[str, str]] = []
    name = fields.get("gameName")
    if isinstance(name, str) and name:
        candidates.append((name, f"gameName {name}"))
    url = fields.get("gameMetaURL")
    if isinstance(url, str) and url:
        from_url = game_name_from_meta_url(url)
        if from_url:
            candidates.append((from_url, f"gameMetaURL {url}"))
    tried = []
    for candidate, named_by in candidates:
        try:
            return ResolvedGame(
                load_named_game(candidate), f"bundled game {candidate} ({named_by})"
            )
        except (LookupError, OSError, ValueError) as error:
            tried.append(f"{named_by}: {error}")
    if tried:
        raise RulesNotFound(
            "the log names a game that is not bundled ("
            + "; ".join(tried)
            + "); pass its rules with --game FILE.kif"
        )
    raise RulesNotFound(
        "the log carries no rules and names no game; pass the rules with --game NAME_OR_KIF"
    )


RESOLVED_KEPT = 4
"""Games a :class:`ResolvedGames` keeps, the one used longest ago dropped first."""


class ResolvedGames:
    """The games of many logs replayed one after another (an archive), each loaded once
    by where its rules come from: the log's embedded rules, or the game it names. A game
    that falls back to the interpreter keeps its caches warm from one log to the next
    (chess: 0.87 s a 200-step log against 1.47 s loaded anew each time); one that compiles
    skips reading and checking its rules again. One replay at a time: the interpreter's
    caches are not for two threads at once."""

    def __init__(self, kept: int = RESOLVED_KEPT) -> None:
        self.kept = kept
        self._games: OrderedDict[Hashable, ResolvedGame] = OrderedDict()

    def resolve(self, fields: Mapping[str, Any], game_option: str | None = None) -> ResolvedGame:
        """:func:`resolve_game`, from a game loaded for an earlier log when one matches."""
        key = _source_key(fields, game_option)
        found = self._games.get(key)
        if found is not None:
            self._games.move_to_end(key)
            return found
        found = self._games[key] = resolve_game(fields, game_option)
        while len(self._games) > self.kept:
            self._games.popitem(last=False)
        return found

    def discard(self, fields: Mapping[str, Any], game_option: str | None = None) -> None:
        """Load the game of these fields anew next time (its replay broke off)."""
        self._games.pop(_source_key(fields, game_option), None)


def _source_key(fields: Mapping[str, Any], game_option: str | None) -> Hashable:
    """Where :func:`resolve_game` would take the rules from: the same key, the same game."""
    if game_option:
        return "option", game_option
    embedded = _embedded_rules(fields)
    if embedded is not None:
        return "rules", embedded[1]
    return "named", str(fields.get("gameName") or ""), str(fields.get("gameMetaURL") or "")
