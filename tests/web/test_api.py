"""The REST API against a real running application, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.web import Service

from .harness import ADMIN_HEADERS, running_service, wait_for_status

BROKEN_GAME = "(role a)\n(init (x))\n(<= terminal\n"
TINY_GAME = """
(role a) (role b)
(init (count 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal ?r noop) (role ?r))
(<= (next (count ?y)) (true (count ?x)) (succ ?x ?y))
(<= terminal (true (count 3)))
(goal a 100) (goal b 0)
"""


@pytest.fixture
async def api(tmp_path: Path, database_url: str) -> AsyncIterator[tuple[Service, TestClient]]:
    async with running_service(tmp_path, database_url) as running:
        yield running


async def post(client: TestClient, path: str, body: Any, token: str | None = "admin") -> Any:
    headers = ADMIN_HEADERS if token == "admin" else {"Authorization": f"Bearer {token}"}
    response = await client.post(path, json=body, headers=headers if token else {})
    return response.status, await response.json()


async def test_players_are_registered_read_changed_and_removed(
    api: tuple[Service, TestClient],
) -> None:
    _, client = api
    status, player = await post(
        client,
        "/api/players",
        {"name": "bot", "url": "http://127.0.0.1:1/", "owner": "alice", "contact": "a@example"},
    )
    assert status == 201 and player["owner"] == "alice" and player["owner_token"]
    status, error = await post(
        client, "/api/players", {"name": "bot", "url": "http://127.0.0.1:2/"}
    )
    assert status == 409 and "bot" in error["error"]["message"]
    listed = await (await client.get("/api/players")).json()
    assert (
        [p["name"] for p in listed] == ["bot"]
        and "owner_token" not in listed[0]
        or listed[0]["owner_token"] is None
    )
    response = await client.patch("/api/players/bot", json={"notes": "hi"}, headers=ADMIN_HEADERS)
    assert response.status == 200 and (await response.json())["notes"] == "hi"
    detail = await (await client.get("/api/players/bot")).json()
    assert detail["notes"] == "hi" and detail["pings"] == []
    response = await client.delete("/api/players/bot", headers=ADMIN_HEADERS)
    assert response.status == 204
    response = await client.get("/api/players/bot")
    assert response.status == 404 and (await response.json())["error"]["status"] == 404


async def test_an_uploaded_game_is_linted_versioned_and_playable(
    api: tuple[Service, TestClient],
) -> None:
    service, client = api
    status, error = await post(client, "/api/games", {"name": "broken", "rules": BROKEN_GAME})
    assert status == 400 and error["error"]["field"] == "rules"
    assert "line 3" in error["error"]["message"]
    assert error["error"]["details"][0]["line"] == 3
    status, game = await post(client, "/api/games", {"name": "tiny", "rules": TINY_GAME})
    assert status == 201, game
    assert (game["version"], game["roles"]) == (1, ["a", "b"])
    assert game["lint_report"]["ok"] and game["lint_report"]["playouts_terminated"] > 0
    status, again = await post(
        client,
        "/api/games",
        {"name": "tiny", "rules": TINY_GAME + "\n(<= (next (seen ?x)) (role a))"},
    )
    assert status == 400 and again["error"]["field"] == "rules"  # an unsafe variable
    changed = TINY_GAME.replace("(goal b 0)", "(goal b 50)")
    status, second = await post(client, "/api/games", {"name": "tiny", "rules": changed})
    assert (status, second["version"]) == (201, 2)
    games = {g["name"]: g for g in await (await client.get("/api/games")).json()}
    assert games["tiny"]["version"] == 2 and "nineBoardTicTacToe" in games
    first = await (await client.get("/api/games/tiny?version=1")).json()
    assert first["rules_text"] == TINY_GAME
    # a match played on version 1 keeps version 1's rules
    status, match = await post(
        client, "/api/matches", {"game": "tiny", "players": [None, None], "playclock": 1}
    )
    assert status == 201 and match["game_version"] == 2 and match["status"] == "queued"
    ended = await wait_for_status(client, match["id"], {"finished", "aborted"})
    assert ended["status"] == "finished" and ended["goals"] == [100, 50]


async def test_matches_are_listed_with_filters_and_aborted(api: tuple[Service, TestClient]) -> None:
    service, client = api
    await post(client, "/api/players", {"name": "nobody", "url": "http://127.0.0.1:9/"})
    await service.runner.close()  # keep the matches queued
    ids = []
    for tournament in ("t1", "t2"):
        status, match = await post(
            client,
            "/api/matches",
            {"game": "nineBoardTicTacToe", "players": ["nobody", None], "tournament": tournament},
        )
        assert status == 201 and match["status"] == "queued"
        ids.append(match["id"])
    listed = await (await client.get("/api/matches", params={"tournament": "t1"})).json()
    assert [m["id"] for m in listed] == [ids[0]]
    listed = await (
        await client.get("/api/matches", params={"player": "nobody", "status": "queued"})
    ).json()
    assert {m["id"] for m in listed} == set(ids)
    listed = await (await client.get("/api/matches", params={"game": "other"})).json()
    assert listed == []
    status, aborted = await post(client, f"/api/matches/{ids[0]}/abort", {})
    assert (status, aborted["status"]) == (200, "aborted")
    match = await (await client.get(f"/api/matches/{ids[1]}")).json()
    assert match["status"] == "queued"
    response = await client.get(f"/api/matches/{ids[1]}/log")
    assert response.status == 404


@pytest.mark.parametrize("part", ["registry", "tournaments"])
async def test_health_says_which_part_has_stopped(
    api: tuple[Service, TestClient], part: str
) -> None:
    service, client = api
    stopped = service.registry if part == "registry" else service.tournaments
    assert stopped is not None and stopped.alive
    await stopped.close()
    assert not stopped.alive

    response = await client.get("/api/health")

    assert response.status == 503
    health = await response.json()
    assert health["ok"] is False and health[part] is False
    assert [name for name, up in health.items() if not up] == ["ok", part]


async def test_health_metrics_openapi_and_home(api: tuple[Service, TestClient]) -> None:
    _, client = api
    health = await (await client.get("/api/health")).json()
    assert health == {
        "ok": True,
        "database": True,
        "runner": True,
        "registry": True,
        "tournaments": True,
    }
    metrics = await (await client.get("/metrics")).text()
    for name in (
        "ggp_matches_running",
        "ggp_matches_queued",
        "ggp_matches_finished",
        "ggp_step_seconds",
        "ggp_player_errors",
    ):
        assert name in metrics
    document = await (await client.get("/openapi.json")).json()
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]["/api/players"]) == {"get", "post"}
    assert set(document["paths"]["/api/players/{name}"]) == {"get", "patch", "delete"}
    body = document["paths"]["/api/matches"]["post"]["requestBody"]["content"]["application/json"]
    schema = document["components"]["schemas"][body["schema"]["$ref"].rsplit("/", 1)[1]]
    assert {"game", "players", "startclock", "playclock"} <= set(schema["properties"])
    page = await (await client.get("/")).text()
    assert "GGP match server" in page


async def test_a_game_is_fetched_from_a_repository_url(api: tuple[Service, TestClient]) -> None:
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    repository = web.Application()
    metadata = {"gameName": "tinyRepo", "rulesheet": "tinyRepo.kif", "roleNames": ["a", "b"]}

    async def describe(_: web.Request) -> web.Response:
        return web.json_response(metadata)

    async def rules(_: web.Request) -> web.Response:
        return web.Response(text=TINY_GAME)

    repository.router.add_get("/games/tinyRepo/", describe)  # the METADATA, as ggp.org serves it
    repository.router.add_get("/games/tinyRepo/tinyRepo.kif", rules)

    async with TestServer(repository, host="127.0.0.1") as server:
        _, client = api
        url = str(server.make_url("/games/tinyRepo/"))
        status, game = await post(client, "/api/games", {"url": url})
        assert status == 201, game
        assert (game["name"], game["source"], game["rules_text"]) == ("tinyRepo", url, TINY_GAME)
        status, error = await post(client, "/api/games", {"url": str(server.make_url("/none/"))})
        assert status == 400 and error["error"]["field"] == "url"
        status, error = await post(client, "/api/games", {"name": "x"})
        assert status == 400 and error["error"]["field"] == "rules"
