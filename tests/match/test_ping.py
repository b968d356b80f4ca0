"""Pinging a player with INFO: available, busy or unreachable, with its name and round trip."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from players.agent import PlayerAgent
from players.random_player import RandomPlayer
from players.serve import running
from server.gdl import Game
from server.match import PlayerAddress, PlayerStatus, ping_player, send_message
from server.protocol import Start, render
from server.protocol.http import response_bytes

from .fakes import counting_game, unused_port


@contextlib.asynccontextmanager
async def replying(body: bytes | None) -> AsyncIterator[str]:
    """A server on loopback that answers every request with ``body`` (``None``: never)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await reader.readuntil(b"\r\n\r\n")
            if body is None:
                await asyncio.sleep(30)
            writer.write(body or b"")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    finally:
        server.close()


async def test_a_bundled_player_is_available_and_gives_its_name() -> None:
    async with running(PlayerAgent(RandomPlayer(name="Dice"))) as url:
        result = await ping_player(PlayerAddress.parse(url))
    assert result.status is PlayerStatus.AVAILABLE and result.reachable
    assert result.name == "Dice"
    assert 0 <= result.latency_ms < 3000
    assert result.message == ""
    assert result.raw_reply is not None and "Dice" in result.raw_reply


async def test_a_player_in_a_match_is_busy() -> None:
    start = Start(
        match_id="held.1",
        role="left",
        rules=Game.from_text(counting_game(3)).rules,
        start_clock=5,
        play_clock=5,
    )
    async with running(PlayerAgent(RandomPlayer(name="Dice"))) as url:
        address = PlayerAddress.parse(url)
        assert (await send_message(address, render(start), time_limit=10)).body == "ready"
        result = await ping_player(address)
    assert result.status is PlayerStatus.BUSY and result.reachable


async def test_nobody_listening_is_unreachable_at_once() -> None:
    result = await ping_player(PlayerAddress.parse(f"http://127.0.0.1:{unused_port()}/"))
    assert result.status is PlayerStatus.UNREACHABLE and not result.reachable
    assert result.message
    assert result.latency_ms < 2000


async def test_a_player_that_never_answers_is_unreachable_at_the_timeout() -> None:
    async with replying(None) as url:
        result = await ping_player(PlayerAddress.parse(url), timeout=0.3)
    assert result.status is PlayerStatus.UNREACHABLE
    assert 250 <= result.latency_ms < 3000


async def test_any_reply_proves_a_live_player() -> None:
    async with replying(response_bytes("((( not a reply")) as url:
        result = await ping_player(PlayerAddress.parse(url))
    assert result.status is PlayerStatus.AVAILABLE
    assert "not an INFO reply" in result.message
    assert result.raw_reply == "((( not a reply"


async def test_an_unknown_status_counts_as_busy() -> None:
    async with replying(response_bytes("( ( name Odd ) ( status sleeping ) )")) as url:
        result = await ping_player(PlayerAddress.parse(url))
    assert result.status is PlayerStatus.BUSY
    assert result.name == "Odd"
    assert "sleeping" in result.message


async def test_a_flood_instead_of_an_info_reply_is_unreachable() -> None:
    async with replying(response_bytes("x" * 10_000)) as url:
        result = await ping_player(PlayerAddress.parse(url))
    assert result.status is PlayerStatus.UNREACHABLE


async def test_a_ping_tells_whether_the_player_keeps_connections_open() -> None:
    async with running(PlayerAgent(RandomPlayer(name="Dice"))) as url:  # aiohttp keeps them
        assert (await ping_player(PlayerAddress.parse(url))).keeps_connections is True
    async with replying(response_bytes("( ( name Old ) )")) as url:  # HTTP/1.0, as GGP-Base
        assert (await ping_player(PlayerAddress.parse(url))).keeps_connections is False
    result = await ping_player(PlayerAddress.parse(f"http://127.0.0.1:{unused_port()}/"))
    assert result.keeps_connections is None  # no reply: not known


async def test_a_ping_asks_to_keep_the_connection_and_then_closes_it() -> None:
    heads: list[bytes] = []
    after_reply: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(head := await reader.readuntil(b"\r\n\r\n"))
        await reader.readexactly(int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]))
        body = b"( ( name Kept ) ( status available ) )"
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        after_reply.append(await asyncio.wait_for(reader.read(), 5))  # b"": the server closed
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
        result = await ping_player(PlayerAddress.parse(url))
        for _ in range(100):
            if after_reply:
                break
            await asyncio.sleep(0.02)
    finally:
        server.close()
    assert (result.name, result.keeps_connections) == ("Kept", True)
    assert b"\r\nConnection: keep-alive\r\n" in heads[0]
    assert after_reply == [b""]
