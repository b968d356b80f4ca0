"""The service's settings: one table, each with its command-line option, variable and help.

The README documents every setting (a test checks it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field, field_validator


@dataclass(frozen=True)
class Setting:
    """One setting as users meet it."""

    name: str
    option: str
    variable: str | None
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("host", "--host", None, "Interface to listen on (default 127.0.0.1)."),
    Setting("port", "--port", None, "Port to listen on (default 9000)."),
    Setting(
        "data_dir",
        "--data",
        "GGP_DATA_DIR",
        "Folder of the embedded SQLite database, the host key and the admin token's hash "
        "(default: `ggp` under `$XDG_DATA_HOME`, else `~/.local/share`).",
    ),
    Setting(
        "database_url",
        "--database",
        "GGP_DATABASE_URL",
        "A PostgreSQL URL (`postgresql://user:password@host:port/name`) or `sqlite:///FILE`; "
        "default: `ggp.db` in the data folder, created and upgraded on first start.",
    ),
    Setting(
        "admin_token",
        "--admin-token",
        "GGP_ADMIN_TOKEN",
        "The bearer token of the administrator; generated and printed once on first start "
        "when not given.",
    ),
    Setting("concurrency", "--concurrency", None, "Matches run at once (default 16)."),
    Setting(
        "requeue_interrupted",
        "--requeue-interrupted",
        None,
        "Queue a fresh copy of every match a stop interrupted (they are aborted either way).",
    ),
    Setting(
        "ping_seconds",
        "--ping-seconds",
        None,
        "Seconds between INFO pings of players (default 60).",
    ),
    Setting(
        "suspend_after",
        "--suspend-after",
        None,
        "Failed pings in a row that suspend a player (default 5; 0 never).",
    ),
    Setting(
        "check_players",
        "--no-player-checks",
        None,
        "Do not run the player checker when a player is registered, its URL changes or an "
        "outbound bot first connects (it still runs when asked for).",
    ),
    Setting(
        "require_passed_check",
        "--require-passed-check",
        None,
        "Keep a player whose latest check failed out of matches (by default a failed check "
        "is only reported).",
    ),
    Setting("max_body_bytes", "--max-body", None, "Largest request body, in bytes (default 2 MB)."),
    Setting(
        "no_runner",
        "--no-runner",
        None,
        "PostgreSQL only: serve the API and pages and run no matches; `ggp worker` processes "
        "run them.",
    ),
    Setting(
        "demo",
        "--demo",
        None,
        "Start the bundled players, register them and queue a few matches to watch.",
    ),
)


def default_data_dir() -> Path:
    """``$GGP_DATA_DIR``, else ``ggp`` in the user's data folder."""
    configured = os.environ.get("GGP_DATA_DIR")
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "ggp"


class ServiceSettings(BaseModel):
    """Everything the service is started with."""

    host: str = "127.0.0.1"
    port: int = Field(default=9000, ge=0, le=65535)
    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = None
    admin_token: str | None = None
    concurrency: int = Field(default=16, ge=1, le=10_000)
    requeue_interrupted: bool = False
    ping_seconds: float = Field(default=60.0, gt=0)
    suspend_after: int = Field(default=5, ge=0)
    max_body_bytes: int = Field(default=2_000_000, ge=1024)
    check_players: bool = True
    """Check a player in the background when it registers, changes its URL or first connects."""
    require_passed_check: bool = False
    check_concurrency: int = Field(default=2, ge=1, le=100)
    """Player checks run at once."""
    demo: bool = False
    no_runner: bool = False
    """Run no matches in this process (PostgreSQL only: `ggp worker` processes run them)."""
    host_key_file: Path | None = None
    """The host key; default ``host_key.pem`` in the data folder (or ``$GGP_HOST_KEY``)."""
    poll_seconds: float = Field(default=1.0, gt=0)
    bot_heartbeat: float = Field(default=10.0, gt=0)
    """Seconds between WebSocket pings of outbound bots; no pong within half of it closes one."""

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str | None) -> str | None:
        if value is not None:
            from server.store import async_url

            async_url(value)  # raises ValueError for a scheme we cannot open
        return value

    @property
    def embedded(self) -> bool:
        """True when the service keeps its own SQLite database in the data folder."""
        return self.database_url is None

    @property
    def effective_database_url(self) -> str:
        if self.database_url is not None:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'ggp.db').resolve()}"

    @property
    def key_path(self) -> Path:
        if self.host_key_file is not None:
            return self.host_key_file
        configured = os.environ.get("GGP_HOST_KEY")
        if configured:
            return Path(configured).expanduser()
        return self.data_dir / "host_key.pem"
