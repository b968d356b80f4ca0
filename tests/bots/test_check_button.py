"""The "Check now" button of a player's page, in a real browser (headless Chromium)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from web.browser import launch_browser
from web.harness import ADMIN_HEADERS, running_service

from server.match.local_players import local_player


@pytest_asyncio.fixture
async def browser() -> AsyncIterator[Any]:
    async for launched in launch_browser():
        yield launched


async def checks_of(client: Any, name: str) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = await (await client.get(f"/api/players/{name}/checks")).json()
    return checks


async def test_check_now_needs_the_owners_token_and_shows_the_new_report(
    tmp_path: Path, browser: Any
) -> None:
    database = f"sqlite:///{tmp_path / 'ggp.db'}"
    async with (
        local_player("random", seed=7) as url,
        running_service(tmp_path, database, check_players=False) as (_, client),
    ):
        response = await client.post(
            "/api/players",
            json={"name": "rnd", "url": url, "owner": "ann"},
            headers=ADMIN_HEADERS,
        )
        owner_token = (await response.json())["owner_token"]
        page = await browser.new_page()
        await page.goto(str(client.make_url("/players/rnd")))
        assert await page.inner_text("#check-verdict") == "Not checked yet."
        await page.click("#check-form button")  # no token typed: refused
        await page.wait_for_function(
            "document.getElementById('admin-result').dataset.status === '401'"
        )
        assert await checks_of(client, "rnd") == []
        await page.fill("#admin-token", owner_token)
        await page.click("#check-form button")
        await page.wait_for_function(
            "document.getElementById('admin-result').dataset.status === '202'"
        )
        async with asyncio.timeout(60):
            while True:
                if any(c["status"] == "finished" for c in await checks_of(client, "rnd")):
                    break
                await asyncio.sleep(0.2)
        await page.reload()
        verdict = await page.inner_text("#check-verdict")
        assert verdict.startswith("Passed") and "12 of 12 items passed" in verdict, verdict
        assert "asked by owner:ann" in verdict
        rows = await page.locator("#check-items tbody tr").all_inner_texts()
        assert len(rows) == 12 and all("PASS" in row for row in rows)
