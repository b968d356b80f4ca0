"""Replaying match logs against their rules: every move legal, every state and goal right.

>>> replay = replay_file("match.json")                        # doctest: +SKIP
>>> replay.ok, replay.verdict()                               # doctest: +SKIP
>>> print(render_replay(replay))                              # doctest: +SKIP
"""

from __future__ import annotations

import os

from pydantic import ValidationError

from server.records import MatchRecord
from server.records.journal import load_match_fields

from .render import render_replay
from .replayer import Outcome, Problem, ProblemKind, Replay, ReplayedStep, replay_record
from .source import (
    ResolvedGame,
    ResolvedGames,
    RulesNotFound,
    game_name_from_meta_url,
    resolve_game,
)

__all__ = [
    "LogUnreadable",
    "Outcome",
    "Problem",
    "ProblemKind",
    "Replay",
    "ReplayedStep",
    "ResolvedGame",
    "ResolvedGames",
    "RulesNotFound",
    "game_name_from_meta_url",
    "render_replay",
    "replay_file",
    "replay_record",
    "resolve_game",
]


class LogUnreadable(Exception):
    """The file is not a match log in the ggp.org format."""


def replay_file(path: str | os.PathLike[str], game: str | None = None) -> Replay:
    """Replay the log at ``path``; ``game`` (a name or ``.kif`` path) overrides its rules.

    ``path`` may be a journal left by a server that was killed (``*.journal.jsonl``);
    a log with a journal beside it is read from the journal
    (:func:`server.records.journal.load_match_fields`).

    Raises :class:`LogUnreadable` or :class:`RulesNotFound` when it cannot start.
    """
    try:
        fields = load_match_fields(path)
    except (OSError, ValueError) as error:
        raise LogUnreadable(f"cannot read {path}: {error}") from error
    if not isinstance(fields, dict):
        raise LogUnreadable(f"{path} is not a match log: a JSON object is expected")
    try:
        record = MatchRecord.model_validate(fields)
    except ValidationError as error:
        raise LogUnreadable(f"{path} is not a match log in the ggp.org format: {error}") from error
    resolved = resolve_game(fields, game)
    return replay_record(record, resolved.game, resolved.source)
