"""Database URLs as users write them, turned into the async drivers' URLs."""

from __future__ import annotations

from pathlib import Path

_DRIVERS = {
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "postgresql+psycopg": "postgresql+psycopg",
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
}


def async_url(url: str) -> str:
    """``postgresql://...`` → psycopg 3, ``sqlite:///file`` or a bare path → aiosqlite.

    Raises ``ValueError`` for any other scheme.
    """
    scheme, separator, rest = url.partition("://")
    if not separator:
        return f"sqlite+aiosqlite:///{Path(url).expanduser().resolve()}"
    driver = _DRIVERS.get(scheme.lower())
    if driver is None:
        raise ValueError(
            f"unsupported database URL scheme {scheme!r}; use postgresql://... or sqlite:///FILE"
        )
    return f"{driver}://{rest}"


def sqlite_url(path: Path) -> str:
    """The URL of a SQLite database file."""
    return f"sqlite:///{path.expanduser().resolve()}"


def is_sqlite(url: str) -> bool:
    """True for a URL (as given or normalised) of a SQLite database."""
    return async_url(url).startswith("sqlite")


def redacted(url: str) -> str:
    """The URL with its password hidden, for messages."""
    scheme, separator, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not separator or not at or ":" not in credentials:
        return url
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"
