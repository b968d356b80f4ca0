"""The one storage interface of the service: SQLAlchemy Core, Alembic migrations.

SQLite by default (``sqlite:///FILE``), PostgreSQL by URL (``postgresql://...``).
Nothing above this package writes SQL.
"""

from .errors import Conflict, NotFound, SchemaOutOfDate, StoreClosed, StoreError
from .records import (
    GameRecord,
    GameVersion,
    MatchRow,
    MatchStatus,
    PingRecord,
    PlayerRecord,
    StepRow,
)
from .store import Store, hash_token, now_ms, rules_hash
from .tournaments import (
    RatingHistoryRow,
    RatingRow,
    StepErrors,
    TournamentRow,
    TournamentStore,
)
from .urls import async_url, is_sqlite, redacted, sqlite_url

__all__ = [
    "Conflict",
    "GameRecord",
    "GameVersion",
    "MatchRow",
    "MatchStatus",
    "NotFound",
    "PingRecord",
    "PlayerRecord",
    "RatingHistoryRow",
    "RatingRow",
    "SchemaOutOfDate",
    "StepRow",
    "Store",
    "StoreClosed",
    "StoreError",
    "TournamentRow",
    "StepErrors",
    "TournamentStore",
    "async_url",
    "hash_token",
    "is_sqlite",
    "now_ms",
    "redacted",
    "rules_hash",
    "sqlite_url",
]
