"""Tables of tournaments and ratings (on the same metadata as the other tables).

The matches of a tournament are rows of ``matches`` with ``tournament_id`` and
``schedule_key`` set; (tournament_id, schedule_key) is unique, so a match of the
schedule can never be queued twice.
"""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Column, Float, Index, Integer, String, Table, Text

from .tables import metadata

tournaments = Table(
    "tournaments",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("game", String(100), nullable=False),
    Column("format", String(40), nullable=False),
    Column("spec", JSON, nullable=False),
    Column("status", String(20), nullable=False),
    Column("pause_reason", Text, nullable=True),
    Column("cleared", JSON, nullable=False),
    Column("created_by", String(100), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("started_at", BigInteger, nullable=True),
    Column("finished_at", BigInteger, nullable=True),
    Index("ix_tournaments_status", "status"),
)

tournament_awards = Table(
    "tournament_awards",
    metadata,
    Column("tournament_id", String(200), primary_key=True),
    Column("schedule_key", String(200), primary_key=True),
    Column("result", JSON, nullable=False),
    Column("at", BigInteger, nullable=False),
)
"""Results decided without play (byes, forfeits), as the scheduler answered them."""

ratings = Table(
    "ratings",
    metadata,
    Column("scope", String(100), primary_key=True),
    Column("player", String(100), primary_key=True),
    Column("mu", Float(precision=53), nullable=False),
    Column("sigma", Float(precision=53), nullable=False),
    Column("matches", Integer, nullable=False),
)
"""The current rating of each player, per scope: ``*`` (every game) or a game's name."""

rating_history = Table(
    "rating_history",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scope", String(100), nullable=False),
    Column("player", String(100), nullable=False),
    Column("match_id", String(200), nullable=False),
    Column("finished_at", BigInteger, nullable=True),
    Column("mu", Float(precision=53), nullable=False),
    Column("sigma", Float(precision=53), nullable=False),
    Index("ix_rating_history_player", "player", "scope"),
)

rated_matches = Table(
    "rated_matches",
    metadata,
    Column("match_id", String(200), primary_key=True),
    Column("finished_at", BigInteger, nullable=False),
    Index("ix_rated_matches_finished_at", "finished_at", "match_id"),
)
"""Finished matches the ratings have taken in (rated or skipped by the rules)."""
