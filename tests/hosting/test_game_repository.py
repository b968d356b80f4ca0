"""Fetching games from a ggp.org-style repository served by a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from server.games.repository import (
    FetchedGame,
    GameFetchError,
    fetch_game,
    list_repository_games,
)
from server.gdl import Game

RULES_V0 = """(role runner)
(init (at 0))
(legal runner step)
(<= (next (at 1)) (true (at 0)))
(<= terminal (true (at 1)))
(goal runner 100)
"""
RULES_V1 = (
    RULES_V0.replace("(role runner)", "(role runner)\n(role watcher)").replace(
        "(legal runner step)", "(legal runner step)\n(legal watcher wait)"
    )
    + "(goal watcher 0)\n"
)


def metadata(version: int, **extra: object) -> dict[str, object]:
    return {
        "gameName": "Race",
        "version": version,
        "rulesheet": "race.kif",
        "description": "race.txt",
        "stylesheet": "race.xsl",
        "roleNames": ["runner"] if version == 0 else ["runner", "watcher"],
        "numRoles": 1 if version == 0 else 2,
        **extra,
    }


async def slow(request: web.Request) -> web.Response:
    await asyncio.sleep(1)
    return web.json_response({})


async def streamed_flood(request: web.Request) -> web.StreamResponse:
    """A body without Content-Length that never stops growing."""
    response = web.StreamResponse()
    response.enable_chunked_encoding()
    await response.prepare(request)
    for _ in range(100):
        await response.write(b"(role r)\n" * 1_000)
    return response


def repository_app() -> web.Application:
    """Under ``/base``: two versions of race, and a broken game per failure to name."""
    routes: dict[str, web.Response | object] = {
        "/games/": web.json_response(["race", "plain"]),
        "/games/race/": web.json_response(metadata(1)),
        "/games/race/v0/": web.json_response(metadata(0)),
        "/games/race/v1/": web.json_response(metadata(1)),
        "/games/race/v0/race.kif": web.Response(text=RULES_V0),
        "/games/race/v1/race.kif": web.Response(text=RULES_V1),
        "/games/race/v0/race.txt": web.Response(text="One runner, one step.\n"),
        "/games/race/v1/race.txt": web.Response(text="A runner and a watcher.\n"),
        # No version, no roleNames, the description as text: still a game.
        "/games/plain/": web.json_response(
            {"rulesheet": "rules.kif", "description": "Just run, once."}
        ),
        "/games/plain/rules.kif": web.Response(text=RULES_V0),
        "/games/garbled/": web.Response(text='{"gameName": "Garbled", '),
        "/games/listed/": web.json_response(["not", "an", "object"]),
        "/games/norules/": web.json_response({"gameName": "No rules", "version": 0}),
        "/games/lost/": web.json_response({"version": 2, "rulesheet": "gone.kif"}),
        "/games/huge/": web.json_response({"version": 0, "rulesheet": "huge.kif"}),
        "/games/huge/v0/huge.kif": web.Response(text="(role r)\n" * 1_000),
        "/games/flood/": web.json_response({"version": 0, "rulesheet": "flood.kif"}),
    }

    async def serve(request: web.Request) -> web.StreamResponse:
        path = request.path.removeprefix("/base")
        if path == "/games/slow/":
            return await slow(request)
        if path == "/games/flood/v0/flood.kif":
            return await streamed_flood(request)
        found = routes.get(path)
        if found is None:
            raise web.HTTPNotFound()
        assert isinstance(found, web.Response)
        return web.Response(body=found.body, content_type=found.content_type)

    app = web.Application()
    app.router.add_get("/{tail:.*}", serve)
    return app


@pytest.fixture
async def repository() -> AsyncIterator[str]:
    """The repository's base URL, served on a free loopback port."""
    runner = web.AppRunner(repository_app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/base"
    finally:
        await runner.cleanup()


@pytest.fixture
def closed_port() -> int:
    """A loopback port with nobody listening."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_the_latest_version_of_a_game(repository: str) -> None:
    game = await fetch_game(f"{repository}/games/race/")

    assert game.name == "race"
    assert game.title == "Race"
    assert game.version == 1
    assert game.rules_text == RULES_V1
    assert game.roles == ["runner", "watcher"]
    assert game.description == "A runner and a watcher."
    assert game.source_url == f"{repository}/games/race/v1/"
    assert game.rulesheet_url == f"{repository}/games/race/v1/race.kif"
    assert game.metadata["stylesheet"] == "race.xsl"
    assert Game.from_text(game.rules_text).roles == game.roles


async def test_a_pinned_version_of_a_game(repository: str) -> None:
    game = await fetch_game(f"{repository}/games/race/v0/")

    assert (game.name, game.version, game.roles) == ("race", 0, ["runner"])
    assert game.rules_text == RULES_V0
    assert game.description == "One runner, one step."
    assert game.source_url == f"{repository}/games/race/v0/"


@pytest.mark.parametrize(
    "written",
    ["{base}/games/race/v0", "{base}/games/race/v0/METADATA", "{bare}/games/race/v0/"],
)
async def test_urls_are_read_liberally(repository: str, written: str) -> None:
    url = written.format(base=repository, bare=repository.removeprefix("http://"))

    game = await fetch_game(url)

    assert (game.name, game.version) == ("race", 0)


async def test_a_game_without_version_or_role_names(repository: str) -> None:
    game = await fetch_game(f"{repository}/games/plain")

    assert game == FetchedGame(
        name="plain",
        title=None,
        version=None,
        rules_text=RULES_V0,
        roles=["runner"],
        description="Just run, once.",
        source_url=f"{repository}/games/plain/",
        rulesheet_url=f"{repository}/games/plain/rules.kif",
        metadata={"rulesheet": "rules.kif", "description": "Just run, once."},
    )


async def test_the_repository_lists_its_games(repository: str) -> None:
    assert await list_repository_games(repository) == ["race", "plain"]


async def failure(url: str, **options: float) -> str:
    with pytest.raises(GameFetchError) as raised:
        await fetch_game(url, **options)  # type: ignore[arg-type]
    message = str(raised.value)
    assert "\n" not in message
    return message


async def test_an_unreachable_host(closed_port: int) -> None:
    message = await failure(f"http://127.0.0.1:{closed_port}/games/race/")

    assert message.startswith(f"cannot reach 127.0.0.1:{closed_port}: ")


async def test_an_unknown_game_is_an_http_error(repository: str) -> None:
    message = await failure(f"{repository}/games/nosuchgame/")

    assert message == f"{repository}/games/nosuchgame/: HTTP 404 Not Found"


async def test_bad_json(repository: str) -> None:
    message = await failure(f"{repository}/games/garbled/")

    assert message.startswith(f"{repository}/games/garbled/: bad JSON: ")


async def test_metadata_that_is_not_an_object(repository: str) -> None:
    message = await failure(f"{repository}/games/listed/")

    assert message.endswith("METADATA is not a JSON object but list")


async def test_metadata_without_a_rulesheet(repository: str) -> None:
    message = await failure(f"{repository}/games/norules/")

    assert message == f"{repository}/games/norules/v0/: METADATA names no rulesheet"


async def test_a_rulesheet_that_is_not_there(repository: str) -> None:
    message = await failure(f"{repository}/games/lost/")

    assert message == f"{repository}/games/lost/v2/gone.kif: HTTP 404 Not Found"


async def test_a_body_over_the_size_limit(repository: str) -> None:
    message = await failure(f"{repository}/games/huge/", max_bytes=2_000)

    assert message == (
        f"{repository}/games/huge/v0/huge.kif: the body has 9000 bytes, over the limit of 2000"
    )


async def test_a_streamed_body_over_the_size_limit(repository: str) -> None:
    message = await failure(f"{repository}/games/flood/", max_bytes=50_000)

    assert message == (
        f"{repository}/games/flood/v0/flood.kif: the body is over the limit of 50000 bytes"
    )


async def test_a_server_that_does_not_answer_in_time(repository: str) -> None:
    message = await failure(f"{repository}/games/slow/", timeout=0.3)

    assert message == f"{repository}/games/slow/: no complete answer within 0.3 s"


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/games/race/", "http://127.0.0.1/"])
async def test_urls_that_name_no_game(url: str) -> None:
    message = await failure(url)

    assert url in message


def test_fetched_games_serialise_to_json() -> None:
    game = FetchedGame(name="x", rules_text="(role r)", source_url="http://example.org/x/")

    assert json.loads(game.model_dump_json())["roles"] == []
