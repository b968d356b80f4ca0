"""Bundled games get a lint report like uploads: computed on first request, then kept."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from server.games import list_games
from server.store import Store
from server.web import Service, ServiceSettings


@contextlib.asynccontextmanager
async def running_service(
    data_dir: Path, database_url: str
) -> AsyncIterator[tuple[Service, TestClient]]:
    """The service on ``database_url``, its API on a loopback port."""
    store = Store(database_url)
    await store.open(upgrade=True)
    await store.close()
    service = Service(
        ServiceSettings(
            data_dir=data_dir, database_url=database_url, admin_token="t", ping_seconds=3600.0
        )
    )
    await service.start()
    client = TestClient(TestServer(service.app(), host="127.0.0.1"))
    await client.start_server()
    try:
        yield service, client
    finally:
        await client.close()
        await service.close()


async def test_every_bundled_game_shows_a_kept_lint_report(
    tmp_path: Path, database_url: str
) -> None:
    async with running_service(tmp_path, database_url) as (service, client):
        names = [info.name for info in list_games()]
        for name in names:
            assert (await service.store.get_game(name)).lint_report is None
        responses = await asyncio.gather(
            *(client.get(f"/api/games/{name}") for name in [*names, names[0]])
        )
        details = [await response.json() for response in responses]
        assert [response.status for response in responses] == [200] * (len(names) + 1)
        for info, detail in zip(list_games(), details, strict=False):
            report = detail["lint_report"]
            assert report is not None, info.name
            assert report["ok"], (info.name, report["problems"])
            assert report["roles"] == info.roles == detail["roles"]
            assert report["engine"] in ("compiled", "interpreter")
            assert report["playouts_terminated"] > 0
            kept = await service.store.get_game(info.name)
            assert kept.lint_report == report and kept.version == 1
        assert details[-1]["lint_report"] == details[0]["lint_report"]
        again = await (await client.get(f"/api/games/{names[1]}?version=1")).json()
        assert again["lint_report"] == details[1]["lint_report"]
