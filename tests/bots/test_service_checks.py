"""The service checks players in the background: on registering, on a new URL, on an
outbound bot's first connection, and when asked; reports are kept with their history.

Real service on loopback, real players (bundled ones in their own processes, players
with one fault on aiohttp), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from web.harness import ADMIN_HEADERS, running_service, wait_for_status

from players.agent import PlayerAgent
from players.outbound import agent_answer, stay_connected
from players.random_player import RandomPlayer
from server.bots.items import ITEMS
from server.match.local_players import local_player
from server.web import Service

from .faulty_players import faulty_player


@pytest.fixture
async def api(tmp_path: Path, database_url: str) -> AsyncIterator[tuple[Service, TestClient]]:
    async with running_service(tmp_path, database_url, check_players=True) as running:
        yield running


async def register(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/api/players", json=body, headers=ADMIN_HEADERS)
    answer: dict[str, Any] = await response.json()
    assert response.status == 201, answer
    return answer


async def finished_checks(
    client: TestClient, name: str, count: int = 1, seconds: float = 60.0
) -> list[dict[str, Any]]:
    """The player's checks, latest first, once ``count`` of them have finished."""
    async with asyncio.timeout(seconds):
        while True:
            checks: list[dict[str, Any]] = await (
                await client.get(f"/api/players/{name}/checks")
            ).json()
            if sum(check["status"] == "finished" for check in checks) >= count:
                return checks
            await asyncio.sleep(0.1)


def failed(check: dict[str, Any]) -> set[str]:
    return {item["name"] for item in check["items"] if not item["passed"]}


async def test_a_registered_player_is_checked_in_the_background(
    api: tuple[Service, TestClient],
) -> None:
    _, client = api
    async with local_player("random", seed=1) as url:
        started = time.monotonic()
        answer = await register(client, {"name": "rnd", "url": url})
        assert time.monotonic() - started < 2  # the answer does not wait for the check
        assert answer["check_pending"] is True and answer["check"] is None
        (check,) = await finished_checks(client, "rnd")
    assert check["passed"] is True and check["trigger"] == "registered"
    assert check["target"] == url and check["error"] is None
    assert [item["name"] for item in check["items"]] == list(ITEMS)
    assert check["started_at"] >= check["requested_at"] and check["finished_at"]
    player = await (await client.get("/api/players/rnd")).json()
    assert player["check"] == {
        "id": check["id"],
        "passed": True,
        "finished_at": check["finished_at"],
        "failed": [],
        "error": None,
    }
    assert player["check_pending"] is False
    listed = await (await client.get("/api/players")).json()
    assert listed[0]["check"]["passed"] is True
    # removing the player removes its checks with it
    assert (await client.delete("/api/players/rnd", headers=ADMIN_HEADERS)).status == 204
    assert (await client.get("/api/players/rnd/checks")).status == 404
    await register(client, {"name": "rnd", "url": "http://127.0.0.1:1/"})
    again = await (await client.get("/api/players/rnd/checks")).json()
    assert [check["target"] for check in again] == ["http://127.0.0.1:1/"]  # only the new one
    assert again[0]["id"] > check["id"]  # ids are never reused


async def test_a_new_url_is_checked_again_and_the_history_is_kept(
    api: tuple[Service, TestClient],
) -> None:
    _, client = api
    async with faulty_player("upper-case-only") as faulty, local_player("legal") as sound:
        await register(client, {"name": "p", "url": faulty})
        (first,) = await finished_checks(client, "p")
        assert first["passed"] is False and failed(first) == {"keyword-case"}
        evidence = next(item for item in first["items"] if item["name"] == "keyword-case")
        assert "unknown message type" in str(evidence["evidence"])
        player = await (await client.get("/api/players/p")).json()
        assert player["check"]["passed"] is False and player["check"]["failed"] == ["keyword-case"]

        response = await client.patch("/api/players/p", json={"url": sound}, headers=ADMIN_HEADERS)
        assert response.status == 200
        latest, earlier = await finished_checks(client, "p", count=2)
    assert latest["trigger"] == "url changed" and latest["target"] == sound
    assert latest["passed"] is True and earlier["id"] == first["id"]


async def test_a_check_is_asked_for_by_the_owner_or_the_admin_only(
    api: tuple[Service, TestClient],
) -> None:
    _, client = api
    async with local_player("random", seed=2) as url:
        ann = await register(client, {"name": "ann-bot", "url": url, "owner": "ann"})
        bob = await register(client, {"name": "bob-bot", "url": url, "owner": "bob"})
        await finished_checks(client, "ann-bot")
        await finished_checks(client, "bob-bot")
        path = "/api/players/ann-bot/checks"
        assert (await client.post(path)).status == 401
        refused = await client.post(path, headers={"Authorization": f"Bearer {bob['owner_token']}"})
        assert refused.status == 403
        asked = await client.post(path, headers={"Authorization": f"Bearer {ann['owner_token']}"})
        body = await asked.json()
        assert asked.status == 202 and body["status"] in ("queued", "running"), body
        assert body["trigger"] == "asked by owner:ann"
        again = await (await client.post(path, headers=ADMIN_HEADERS)).json()
        assert again["id"] == body["id"]  # one check per player at a time
        checks = await finished_checks(client, "ann-bot", count=2)
    assert [check["id"] for check in checks][0] == body["id"] and checks[0]["passed"]
    assert (await client.get("/api/players/nobody/checks")).status == 404


async def test_a_failed_check_keeps_a_player_out_of_matches_only_when_the_operator_says_so(
    tmp_path: Path, database_url: str
) -> None:
    async with faulty_player("upper-case-only") as faulty:
        for require in (False, True):
            folder = tmp_path / str(require)
            async with running_service(
                folder, database_url, check_players=True, require_passed_check=require
            ) as (_, client):
                name = f"faulty-{require}".lower()
                await register(client, {"name": name, "url": faulty})
                await finished_checks(client, name)
                body = {"game": "double_tictactoe_dengji", "players": [name, None], "playclock": 1}
                response = await client.post("/api/matches", json=body, headers=ADMIN_HEADERS)
                match_id = (await response.json())["id"]
                match = await wait_for_status(client, match_id, {"finished", "aborted"})
                if require:
                    assert match["status"] == "aborted", match
                    assert match["end_message"] == (
                        f"player {name} failed its latest check (keyword-case)"
                    )
                else:
                    assert match["status"] == "finished", match


async def test_a_match_waits_for_the_check_of_its_player(api: tuple[Service, TestClient]) -> None:
    _, client = api
    async with local_player("random", seed=3) as url:
        await register(client, {"name": "rnd", "url": url})
        body = {"game": "double_tictactoe_dengji", "players": ["rnd", None], "playclock": 1}
        response = await client.post("/api/matches", json=body, headers=ADMIN_HEADERS)
        match_id = (await response.json())["id"]
        match = await wait_for_status(client, match_id, {"finished", "aborted"})
        (check,) = await finished_checks(client, "rnd")
    assert match["status"] == "finished", match
    # the check held the player's seat: the match started once it was over
    assert match["started_at"] >= check["finished_at"], (match, check)
    record = await (await client.get(f"/api/matches/{match_id}/log")).json()
    assert all(code == "" for phase in record["errors"] for code in phase), record["errors"]


async def test_an_outbound_bot_is_checked_over_its_socket_when_it_first_connects(
    api: tuple[Service, TestClient],
) -> None:
    service, client = api
    answer = await register(client, {"name": "bot", "connection": "outbound"})
    assert answer["check_pending"] is False  # nothing to check before it connects
    agent = PlayerAgent(RandomPlayer(seed=4))
    stop = asyncio.Event()
    server = str(client.make_url(""))
    bot = asyncio.create_task(stay_connected(server, answer["token"], agent_answer(agent), stop))
    try:
        (check,) = await finished_checks(client, "bot")
        assert check["passed"] is True, check
        assert check["target"] == "outbound" and check["trigger"] == "connected"
        # a reconnect is not checked again
        await service.bots.disconnect("bot", "testing a reconnect")
        async with asyncio.timeout(20):
            while True:
                if service.bots.connected("bot"):
                    break
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        assert len(await (await client.get("/api/players/bot/checks")).json()) == 1
    finally:
        stop.set()
        await bot


async def test_an_outbound_bot_that_is_not_connected_is_reported_so(
    api: tuple[Service, TestClient],
) -> None:
    _, client = api
    await register(client, {"name": "away", "connection": "outbound"})
    path = "/api/players/away/checks"
    both = await asyncio.gather(*(client.post(path, headers=ADMIN_HEADERS) for _ in range(2)))
    assert [response.status for response in both] == [202, 202]
    first, second = [await response.json() for response in both]
    assert first["id"] == second["id"]  # asked twice at once: one check
    (check,) = await finished_checks(client, "away")
    assert check["passed"] is False and check["error"] == "the bot is not connected"
    assert check["items"] == []


async def test_the_player_page_shows_the_report_item_by_item(
    api: tuple[Service, TestClient],
) -> None:
    _, client = api
    async with faulty_player("upper-case-only") as faulty:
        await register(client, {"name": "p", "url": faulty})
        await finished_checks(client, "p")
    page = await (await client.get("/players/p")).text()
    section = page[page.index('<section id="checker">') : page.index("</section>")]
    assert 'data-passed="false"' in section and "Failed" in section
    assert "11 of 12 items passed" in section
    assert section.count('class="check-pass"') == 11 and section.count('class="check-fail"') == 1
    assert "keyword-case" in section and "unknown message type" in section  # the evidence
    assert 'data-path="/api/players/{name}/checks"' in section and "Check now" in section


async def test_with_checks_off_nothing_is_checked_unless_asked(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        local_player("legal") as url,
        running_service(tmp_path, database_url, check_players=False) as (_, client),
    ):
        answer = await register(client, {"name": "lgl", "url": url})
        assert answer["check_pending"] is False
        await asyncio.sleep(0.5)
        assert await (await client.get("/api/players/lgl/checks")).json() == []
        response = await client.post("/api/players/lgl/checks", headers=ADMIN_HEADERS)
        assert response.status == 202
        (check,) = await finished_checks(client, "lgl")
    assert check["passed"] is True and check["trigger"] == "asked by admin"
