"""A running service for tests: the real application on aiohttp's test server (real HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from server.web import Service, ServiceSettings

ADMIN = "admin-secret-token"
ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


@contextlib.asynccontextmanager
async def running_service(
    data_dir: Path, database_url: str, **settings: Any
) -> AsyncIterator[tuple[Service, TestClient]]:
    """Start a service on ``database_url`` and serve it on a loopback port."""
    from server.store import Store

    store = Store(database_url)  # a database given by URL is upgraded as a named step
    await store.open(upgrade=True)
    await store.close()
    options: dict[str, Any] = {
        "poll_seconds": 0.2,
        "ping_seconds": 3600.0,
        "check_players": False,  # tests of player checks turn them on
        **settings,
    }
    service = Service(
        ServiceSettings(
            data_dir=data_dir, database_url=database_url, admin_token=ADMIN, port=0, **options
        )
    )
    await service.start()
    # the registry's round at start must not race the test's first registrations (a
    # player registered before it ran would be pinged by it, one registered after not)
    await asyncio.wait_for(service.registry.first_round_done.wait(), 30)
    client = TestClient(TestServer(service.app(), host="127.0.0.1"))
    await client.start_server()
    try:
        yield service, client
    finally:
        await client.close()
        await service.close()


async def wait_for_status(
    client: TestClient, match_id: str, statuses: set[str], seconds: float = 60.0
) -> dict[str, Any]:
    """Poll a match until its status is one of ``statuses``."""
    async with asyncio.timeout(seconds):
        while True:
            response = await client.get(f"/api/matches/{match_id}")
            match: dict[str, Any] = await response.json()
            if match["status"] in statuses:
                return match
            await asyncio.sleep(0.1)
