"""The table of player checks (on the same metadata as the other tables).

One row per run of the player checker (``server.bots.checker``): queued when asked
for, then running, then finished with its report; a player keeps its history.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from .tables import metadata

player_checks = Table(
    "player_checks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("player", String(100), ForeignKey("players.name", ondelete="CASCADE"), nullable=False),
    Column("trigger", String(100), nullable=False),
    Column("target", String(2000), nullable=False),
    Column("status", String(20), nullable=False),
    Column("requested_at", BigInteger, nullable=False),
    Column("started_at", BigInteger, nullable=True),
    Column("finished_at", BigInteger, nullable=True),
    Column("passed", Boolean, nullable=True),
    Column("error", Text, nullable=True),
    Column("latency_ms", Integer, nullable=True),
    Column("start_clock", Integer, nullable=False),
    Column("play_clock", Integer, nullable=False),
    Column("items", JSON, nullable=False),
    Index("ix_player_checks_player_id", "player", "id"),
    sqlite_autoincrement=True,  # an id is never given to two checks, even after a removal
)
