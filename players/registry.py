"""The bundled players, by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from .base import Player

_PLAYERS: dict[str, str] = {
    "random": "players.random_player:RandomPlayer",
    "legal": "players.legal_player:LegalPlayer",
    "mcts": "players.mcts:MctsPlayer",
    "montecarlo": "players.mcts:MonteCarloPlayer",
}
"""Each bundled player's name and where its class lives (imported only when used)."""


def player_names() -> list[str]:
    """The names of the bundled players."""
    return sorted(_PLAYERS)


def register_player(name: str, location: str) -> None:
    """Add a player class under ``name``; ``location`` is ``"module:Class"``."""
    _PLAYERS[name] = location


def player_class(name: str) -> Callable[..., Player]:
    """The class of a bundled player; :class:`KeyError` names the known players."""
    try:
        module_name, _, class_name = _PLAYERS[name].partition(":")
    except KeyError:
        raise KeyError(
            f"unknown player {name!r}; bundled players: {', '.join(player_names())}"
        ) from None
    factory: Callable[..., Player] = getattr(importlib.import_module(module_name), class_name)
    return factory


def create_player(
    name: str | None, *, display_name: str | None = None, seed: int | None = None
) -> Player:
    """A new bundled player, optionally with its own INFO name and a random seed.

    A name with a colon, ``module:Class``, loads that :class:`~players.bot.Bot` or
    :class:`Player` subclass instead.
    """
    if not name:
        raise KeyError(f"name a player to serve; bundled players: {', '.join(player_names())}")
    if ":" in name:
        from .loading import load_player

        return load_player(name, display_name=display_name, seed=seed)
    return player_class(name)(name=display_name, seed=seed)
