"""Bad input gets a 4xx JSON error naming the field; writing needs a token; owners manage
only their own players."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.web import Service

from .harness import ADMIN_HEADERS, running_service


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[tuple[Service, TestClient]]:
    async with running_service(
        tmp_path, f"sqlite:///{tmp_path / 'ggp.db'}", max_body_bytes=4096
    ) as running:
        service, client = running
        await service.runner.close()  # matches stay queued
        await service.store.add_player("p1", "http://127.0.0.1:9/")
        await service.store.add_player("p2", "http://127.0.0.1:9/")
        yield running


GOOD_MATCH = {
    "game": "nineBoardTicTacToe",
    "players": ["p1", "p2"],
    "startclock": 5,
    "playclock": 1,
}

BAD_INPUT: list[tuple[str, str, Any, int, str]] = [
    ("POST", "/api/players", {"url": "http://127.0.0.1:1/"}, 400, "name"),
    ("POST", "/api/players", {"name": "x"}, 400, "url"),
    ("POST", "/api/players", {"name": "bad name!", "url": "http://127.0.0.1:1/"}, 400, "name"),
    ("POST", "/api/players", {"name": "x", "url": "ftp://example/"}, 400, "url"),
    ("POST", "/api/players", {"name": "x", "url": 5}, 400, "url"),
    (
        "POST",
        "/api/players",
        {"name": "x", "url": "http://127.0.0.1:1/", "max_matches": 0},
        400,
        "max_matches",
    ),
    (
        "POST",
        "/api/players",
        {"name": "x", "url": "http://127.0.0.1:1/", "colour": "red"},
        400,
        "colour",
    ),
    ("POST", "/api/players", [1, 2], 400, "body"),
    ("POST", "/api/players", "not json{", 400, "body"),
    ("PATCH", "/api/players/p1", {"max_matches": "many"}, 400, "max_matches"),
    ("PATCH", "/api/players/p1", {"keep_alive": "sometimes"}, 400, "keep_alive"),
    (
        "POST",
        "/api/players",
        {"name": "x", "url": "http://127.0.0.1:1/", "keep_alive": [1]},
        400,
        "keep_alive",
    ),
    ("PATCH", "/api/players/nope", {"notes": "x"}, 404, None),
    ("POST", "/api/games", {"name": "9lives", "rules": "(role a)"}, 400, "name"),
    ("POST", "/api/games", {"name": "g", "rules": ""}, 400, "rules"),
    ("POST", "/api/matches", {**GOOD_MATCH, "game": "nosuchgame"}, 400, "game"),
    ("POST", "/api/matches", {**GOOD_MATCH, "players": ["p1"]}, 400, "players"),
    ("POST", "/api/matches", {**GOOD_MATCH, "players": ["p1", "ghost"]}, 400, "players.1"),
    ("POST", "/api/matches", {**GOOD_MATCH, "startclock": -1}, 400, "startclock"),
    ("POST", "/api/matches", {**GOOD_MATCH, "playclock": "soon"}, 400, "playclock"),
    ("POST", "/api/matches", {**GOOD_MATCH, "policy": "cheat"}, 400, "policy"),
    ("POST", "/api/matches", {**GOOD_MATCH, "players": []}, 400, "players"),
    ("GET", "/api/matches?status=lost", None, 400, "status"),
    ("GET", "/api/matches?limit=0", None, 400, "limit"),
    ("GET", "/api/games/chess?version=x", None, 400, "version"),
    ("GET", "/api/games/chess?version=99999999999999999999999", None, 400, "version"),
    ("GET", "/api/games/chess?version=%C2%B2", None, 400, "version"),
    ("GET", "/api/matches?offset=99999999999999999999999", None, 400, "offset"),
    ("POST", "/api/matches", {**GOOD_MATCH, "players": ["p1", "p1"]}, 400, "players.1"),
    ("POST", "/api/matches", {**GOOD_MATCH, "startclock": 0}, 400, "startclock"),
    ("POST", "/api/matches", {**GOOD_MATCH, "playclock": 0}, 400, "playclock"),
    ("POST", "/api/players", {"name": "x", "url": "http://127.0.0.1:0/"}, 400, "url"),
    ("POST", "/api/matches", '{"game": ' + "[" * 1500 + "]" * 1500 + "}", 400, "body"),
    ("POST", "/api/players", "[" * 1500 + "]" * 1500, 400, "body"),
    ("POST", "/api/tournaments", '{"a": ' + "[" * 1500 + "]" * 1500 + "}", 400, "body"),
    ("GET", "/api/matches/nope", None, 404, None),
    ("POST", "/api/matches/nope/abort", {}, 404, None),
    ("GET", "/api/nothing-here", None, 404, None),
    ("PUT", "/api/players", {}, 405, None),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "field"), BAD_INPUT)
async def test_bad_input_gets_a_json_error_naming_the_field(
    api: tuple[Service, TestClient],
    method: str,
    path: str,
    body: Any,
    status: int,
    field: str | None,
) -> None:
    _, client = api
    options: dict[str, Any] = {"headers": ADMIN_HEADERS}
    if isinstance(body, str):
        options["data"] = body
    elif body is not None:
        options["json"] = body
    response = await client.request(method, path, **options)
    assert response.status == status, await response.text()
    error = (await response.json())["error"]
    assert error["status"] == status and error["message"]
    if field is not None:
        assert error["field"] == field, error


async def test_a_body_over_the_cap_is_refused(api: tuple[Service, TestClient]) -> None:
    _, client = api
    body = {"name": "big", "url": "http://127.0.0.1:1/", "notes": "x" * 5000}
    response = await client.post("/api/players", json=body, headers=ADMIN_HEADERS)
    assert response.status == 413
    assert "4096" in (await response.json())["error"]["message"]


async def test_a_player_url_pointing_at_the_service_is_refused(
    api: tuple[Service, TestClient],
) -> None:
    _, client = api
    port = client.server.port
    for host in ("127.0.0.1", "localhost"):
        response = await client.post(
            "/api/players",
            json={"name": "me", "url": f"http://{host}:{port}/"},
            headers=ADMIN_HEADERS,
        )
        assert response.status == 400
        assert (await response.json())["error"]["field"] == "url"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/players"),
        ("PATCH", "/api/players/p1"),
        ("DELETE", "/api/players/p1"),
        ("POST", "/api/games"),
        ("POST", "/api/matches"),
        ("POST", "/api/matches/x/abort"),
    ],
)
@pytest.mark.parametrize("token", [None, "wrong-token"])
async def test_writing_needs_a_valid_token(
    api: tuple[Service, TestClient], method: str, path: str, token: str | None
) -> None:
    _, client = api
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await client.request(method, path, json={}, headers=headers)
    assert response.status == 401
    assert (await response.json())["error"]["status"] == 401
    assert (await client.get("/api/players")).status == 200  # reading is public


async def test_an_owner_token_manages_only_that_owners_players(
    api: tuple[Service, TestClient],
) -> None:
    service, client = api
    tokens = {}
    for owner, name in (("alice", "a-bot"), ("bob", "b-bot")):
        response = await client.post(
            "/api/players",
            json={"name": name, "url": "http://127.0.0.1:1/", "owner": owner},
            headers=ADMIN_HEADERS,
        )
        tokens[owner] = (await response.json())["owner_token"]
    alice = {"Authorization": f"Bearer {tokens['alice']}"}
    response = await client.patch("/api/players/a-bot", json={"notes": "mine"}, headers=alice)
    assert response.status == 200
    response = await client.patch("/api/players/b-bot", json={"notes": "yours"}, headers=alice)
    assert response.status == 403
    response = await client.delete("/api/players/b-bot", headers=alice)
    assert response.status == 403
    response = await client.post(
        "/api/players", json={"name": "a-two", "url": "http://127.0.0.1:2/"}, headers=alice
    )
    assert response.status == 201 and (await response.json())["owner"] == "alice"
    response = await client.post(
        "/api/players",
        json={"name": "a-three", "url": "http://127.0.0.1:2/", "owner": "bob"},
        headers=alice,
    )
    assert response.status == 403
    # suspended after failed pings, then reinstated by the owner
    for _ in range(5):
        await service.registry.ping(await service.store.get_player("a-bot"))
    player = await service.store.get_player("a-bot")
    assert player.suspended and player.suspended_reason
    response = await client.patch("/api/players/a-bot", json={"suspended": False}, headers=alice)
    reinstated = await response.json()
    assert (reinstated["suspended"], reinstated["failures"]) == (False, 0)
    trail = await service.store.audit_trail()
    assert {"owner:alice", "admin"} <= {line["actor"] for line in trail}
