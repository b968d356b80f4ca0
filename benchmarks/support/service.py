"""A hosting service for the benchmarks: a fresh database, the API served on a free port."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOKEN = "benchmark-token"
"""The admin token of every benchmark service."""


@dataclass
class ServedService:
    """A started service, where its API listens, and the database it uses."""

    service: Any
    base: str
    database_url: str

    @property
    def headers(self) -> dict[str, str]:
        """The admin's authorisation header."""
        return {"Authorization": f"Bearer {TOKEN}"}


@contextlib.asynccontextmanager
async def served_service(
    *,
    prefix: str,
    concurrency: int,
    poll_seconds: float,
    database: str | None = None,
    check_players: bool = False,
    check_concurrency: int = 2,
) -> AsyncIterator[ServedService]:
    """Start a service on a new SQLite file (or ``database``), serve it on loopback, and
    stop both at the end."""
    from aiohttp import web

    from server.store import Store
    from server.web import Service, ServiceSettings

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    url = database or f"sqlite:///{folder / 'ggp.db'}"
    store = Store(url)
    await store.open(upgrade=True)
    await store.close()
    service = Service(
        ServiceSettings(
            data_dir=folder,
            database_url=url,
            admin_token=TOKEN,
            concurrency=concurrency,
            poll_seconds=poll_seconds,
            ping_seconds=3600,
            check_players=check_players,  # off: the checker's matches would hold seats
            check_concurrency=check_concurrency,
        )
    )
    await service.start()
    runner = web.AppRunner(service.app(), access_log=None, shutdown_timeout=1)
    try:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        yield ServedService(service, f"http://127.0.0.1:{port}", url)
    finally:
        await runner.cleanup()
        await service.close()
