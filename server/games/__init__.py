"""The games bundled with the server, each a GDL file with its metadata.

>>> from server.games import list_games, load_game
>>> [info.name for info in list_games()][:2]
['ticTacHeaven', 'tictactoex9']
>>> load_game("nineBoardTicTacToe").roles
['xPlayer', 'oPlayer']

Wherever a game is accepted, a bundled name and a path to any ``.kif`` file both
work: :func:`load_game` tells them apart.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from server.gdl import Game

CATALOG = "games.json"
"""The metadata file, next to the ``.kif`` files of this package."""

GAME_FILE_SUFFIXES = (".kif", ".gdl")
"""Suffixes that mark an argument as a path rather than a bundled name."""


class GameInfo(BaseModel):
    """What the server knows about a bundled game besides its rules."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Short name, as the ggp.org repository lists the game.")
    title: str = Field(description="Human-readable title.")
    description: str = Field(description="The rules in a few sentences.")
    roles: list[str] = Field(description="Role names in declaration order, exact case.")
    start_clock: int = Field(gt=0, description="Recommended start clock, in seconds.")
    play_clock: int = Field(gt=0, description="Recommended play clock, in seconds.")
    file: str = Field(description="The GDL file inside this package.")


class UnknownGameError(LookupError):
    """A name that is neither a bundled game nor a path to a game file."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown game {name!r}; bundled games: {', '.join(known)}")


@cache
def _catalog() -> dict[str, GameInfo]:
    text = resources.files(__name__).joinpath(CATALOG).read_text(encoding="utf-8")
    games = [GameInfo.model_validate(entry) for entry in json.loads(text)]
    return {info.name: info for info in games}


def list_games() -> list[GameInfo]:
    """Every bundled game, in catalogue order."""
    return list(_catalog().values())


def game_info(name: str) -> GameInfo:
    """The metadata of a bundled game; raises :class:`UnknownGameError`."""
    catalog = _catalog()
    if name not in catalog:
        raise UnknownGameError(name, list(catalog))
    return catalog[name]


def game_text(name: str) -> str:
    """The GDL text of a bundled game, exactly as shipped."""
    info = game_info(name)
    return resources.files(__name__).joinpath(info.file).read_text(encoding="utf-8")


def is_bundled(name: str) -> bool:
    """Whether ``name`` is the name of a bundled game."""
    return name in _catalog()


def _looks_like_path(text: str) -> bool:
    return text.lower().endswith(GAME_FILE_SUFFIXES) or "/" in text or "\\" in text


def load_game(name_or_path: str | Path, **options: Any) -> Game:
    """Load a bundled game by name, or any game from a ``.kif`` file.

    ``options`` go to :class:`server.gdl.Game` (for example ``engine=``).
    Raises :class:`UnknownGameError` for a name that is neither bundled nor a
    path, and :class:`FileNotFoundError` for a path with no file behind it.
    """
    from server.gdl import Game

    if isinstance(name_or_path, str) and is_bundled(name_or_path):
        return Game.from_text(game_text(name_or_path), **options)
    path = Path(name_or_path)
    if path.is_file():
        return Game.from_file(path, **options)
    if isinstance(name_or_path, Path) or _looks_like_path(name_or_path) or path.exists():
        raise FileNotFoundError(f"no game file at {path}")
    raise UnknownGameError(str(name_or_path), list(_catalog()))


__all__ = [
    "GameInfo",
    "UnknownGameError",
    "game_info",
    "game_text",
    "is_bundled",
    "list_games",
    "load_game",
]
