"""The database schema: one SQLAlchemy table per kind of thing the service keeps.

Alembic migrations (``migrations/versions``) create and change these tables; the
first revision matches this file exactly.
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
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

owners = Table(
    "owners",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", BigInteger, nullable=False),
)

players = Table(
    "players",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("url", String(2000), nullable=False),
    Column("owner", String(100), ForeignKey("owners.name"), nullable=True),
    Column("contact", String(500), nullable=False, default=""),
    Column("notes", Text, nullable=False, default=""),
    Column("status", String(20), nullable=False, default="unknown"),
    Column("last_ping_at", BigInteger, nullable=True),
    Column("last_reply", Text, nullable=True),
    Column("latency_ms", Integer, nullable=True),
    Column("failures", Integer, nullable=False, default=0),
    Column("suspended", Boolean, nullable=False, default=False),
    Column("suspended_reason", Text, nullable=True),
    Column("max_matches", Integer, nullable=False, default=1),
    Column("created_at", BigInteger, nullable=False),
    Column("connection", String(20), nullable=False, default="http", server_default="http"),
    Column("keep_alive", Boolean, nullable=True),
    Column("keeps_connections", Boolean, nullable=True),
)

bot_tokens = Table(
    "bot_tokens",
    metadata,
    Column("player", String(100), ForeignKey("players.name", ondelete="CASCADE"), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", BigInteger, nullable=False),
)

player_pings = Table(
    "player_pings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("player", String(100), ForeignKey("players.name", ondelete="CASCADE"), nullable=False),
    Column("at", BigInteger, nullable=False),
    Column("status", String(20), nullable=False),
    Column("latency_ms", Integer, nullable=True),
    Column("message", Text, nullable=False, default=""),
    Index("ix_player_pings_player_at", "player", "at"),
)

games = Table(
    "games",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("title", String(200), nullable=False, default=""),
    Column("rules_text", Text, nullable=False),
    Column("rules_hash", String(64), nullable=False),
    Column("roles", JSON, nullable=False),
    Column("lint_report", JSON, nullable=True),
    Column("source", String(2000), nullable=False, default="upload"),
    Column("start_clock", Integer, nullable=True),
    Column("play_clock", Integer, nullable=True),
    Column("created_at", BigInteger, nullable=False),
)

matches = Table(
    "matches",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("game_name", String(100), nullable=False),
    Column("game_version", Integer, nullable=False),
    Column("status", String(20), nullable=False),
    Column("players", JSON, nullable=False),
    Column("start_clock", Integer, nullable=False),
    Column("play_clock", Integer, nullable=False),
    Column("policy", String(20), nullable=False),
    Column("config", JSON, nullable=False),
    Column("tournament_id", String(200), nullable=True),
    Column("schedule_key", String(200), nullable=True),
    Column("requeued_from", String(200), nullable=True),
    Column("queued_at", BigInteger, nullable=False),
    Column("started_at", BigInteger, nullable=True),
    Column("finished_at", BigInteger, nullable=True),
    Column("end_reason", String(40), nullable=True),
    Column("end_message", Text, nullable=True),
    Column("goals", JSON, nullable=True),
    Column("header", JSON, nullable=True),
    Column("signed_record", Text, nullable=True),
    Column("worker", String(200), nullable=True),
    Column("job_id", BigInteger, nullable=True),
    Index("ix_matches_status_queued_at", "status", "queued_at"),
    Index("ix_matches_game_name", "game_name"),
    Index("ix_matches_tournament_id", "tournament_id"),
    Index("ix_matches_game_name_queued_at", "game_name", "queued_at"),
    Index("ix_matches_tournament_id_queued_at", "tournament_id", "queued_at"),
    Index("uq_matches_tournament_schedule", "tournament_id", "schedule_key", unique=True),
    Index("ix_matches_queued_at", "queued_at", "id"),  # the pages' lists, newest first
    Index("ix_matches_game_status_queued", "game_name", "status", "queued_at"),
    Index("ix_matches_status_finished_at", "status", "finished_at"),  # the ratings' catch-up
)

match_workers = Table(
    "match_workers",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("host", String(200), nullable=False),
    Column("games", JSON, nullable=True),
    Column("concurrency", Integer, nullable=False),
    Column("running", Integer, nullable=False),
    Column("started_at", BigInteger, nullable=False),
    Column("heartbeat_at", BigInteger, nullable=False),
    Column("stopped_at", BigInteger, nullable=True),
)

match_players = Table(
    "match_players",
    metadata,
    Column("match_id", String(200), ForeignKey("matches.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("player", String(100), nullable=True),
    Index("ix_match_players_player", "player"),
    Index("ix_match_players_player_match_id", "player", "match_id"),
)

match_steps = Table(
    "match_steps",
    metadata,
    Column("match_id", String(200), ForeignKey("matches.id"), primary_key=True),
    Column("step", Integer, primary_key=True),
    Column("moves", JSON, nullable=True),
    Column("state", Text, nullable=False),
    Column("state_time", BigInteger, nullable=False),
    Column("errors", JSON, nullable=False),
    Column("response_times", JSON, nullable=False),
    Column("raw_replies", JSON, nullable=False),
    Column("details", JSON, nullable=False),
)

audit = Table(
    "audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", BigInteger, nullable=False),
    Column("actor", String(100), nullable=False),
    Column("action", String(50), nullable=False),
    Column("target", String(200), nullable=False),
    Column("detail", JSON, nullable=True),
)
