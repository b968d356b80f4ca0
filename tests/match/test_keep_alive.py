"""Kept-open connections: players the host marks as keeping connections open get one
connection per match instead of one per message; everything else stays GGP-Base's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from counting_player import player_counting_connections

from server.games import load_game
from server.match import MatchConfig, MatchRunner, Player
from server.match.channel import HttpChannel
from server.match.transport import Reply
from server.records import ErrorKind

from .fakes import loopback_server

Sender = Callable[[HttpChannel, str, float], Awaitable[Reply]]


@pytest.fixture(params=["send", "start"])
def send(request: pytest.FixtureRequest) -> Sender:
    """Each test runs twice: with ``send`` (a coroutine) and with ``start`` (the request
    written at once, the reply a future completed by the connection's callbacks)."""
    if request.param == "send":
        return lambda channel, text, limit: channel.send(text, time_limit=limit)
    return lambda channel, text, limit: channel.start(text, time_limit=limit)


@dataclass
class Request:
    connection: int
    head: bytes
    body: bytes


@dataclass
class KeepAliveServer:
    """A raw HTTP server on loopback that reads request after request on each connection
    and records on which connection each came."""

    answer: Callable[[Request], bytes | None]
    """What goes back to a request; ``None`` closes the connection unanswered."""
    delay: Callable[[Request], float] = lambda request: 0.0
    close_after_reply: Callable[[Request], bool] = lambda request: False
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    open_connections: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_connections += 1
        number = self.connections
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                request = Request(number, head, await reader.readexactly(length))
                self.requests.append(request)
                await asyncio.sleep(self.delay(request))
                data = self.answer(request)
                if data is None:
                    return
                writer.write(data)
                await writer.drain()
                if self.close_after_reply(request):
                    return
        finally:
            self.open_connections -= 1
            writer.close()


def reply(body: str, *, version: str = "HTTP/1.1", extra: str = "") -> bytes:
    data = body.encode()
    return f"{version} 200 OK\r\n{extra}Content-Length: {len(data)}\r\n\r\n".encode() + data


def echo(request: Request) -> bytes:
    """The body sent back, so that a reply can be matched to its request."""
    return reply(request.body.decode())


async def test_a_kept_channel_sends_every_message_on_one_connection(send: Sender) -> None:
    server = KeepAliveServer(echo)
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        replies = [await send(channel, f"( INFO {n} )", 2) for n in range(5)]
        channel.close()
        await asyncio.sleep(0.05)
    assert [item.body for item in replies] == [f"( INFO {n} )" for n in range(5)]
    assert all(item.ok for item in replies)
    assert {request.connection for request in server.requests} == {1}
    assert all(b"\r\nConnection: keep-alive\r\n" in request.head for request in server.requests)
    assert server.open_connections == 0  # closed with the channel


async def test_by_default_every_message_has_its_own_connection_and_no_connection_header(
    send: Sender,
) -> None:
    server = KeepAliveServer(echo)
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob")
        replies = [await send(channel, "( INFO )", 2) for _ in range(3)]
    assert all(item.ok for item in replies)
    assert [request.connection for request in server.requests] == [1, 2, 3]
    assert not any(b"Connection" in request.head for request in server.requests)


async def test_a_player_that_closes_after_each_reply_still_gets_every_message(send: Sender) -> None:
    # GGP-Base's players answer HTTP/1.0 without keep-alive and close
    server = KeepAliveServer(
        lambda request: reply("ready", version="HTTP/1.0"), close_after_reply=lambda r: True
    )
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        replies = [await send(channel, "( INFO )", 2) for _ in range(3)]
        assert channel.kept is not None and not channel.kept.is_open
    assert [item.body for item in replies] == ["ready"] * 3
    assert [request.connection for request in server.requests] == [1, 2, 3]


async def test_an_http_1_0_reply_keeps_the_connection_only_when_it_says_keep_alive(
    send: Sender,
) -> None:
    server = KeepAliveServer(
        lambda request: reply("ready", version="HTTP/1.0", extra="Connection: Keep-Alive\r\n")
    )
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        for _ in range(3):
            assert (await send(channel, "( INFO )", 2)).ok
        channel.close()
    assert [request.connection for request in server.requests] == [1, 1, 1]


async def test_a_reply_that_says_close_is_not_reused(send: Sender) -> None:
    server = KeepAliveServer(lambda request: reply("ready", extra="Connection: close\r\n"))
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        for _ in range(2):
            assert (await send(channel, "( INFO )", 2)).ok
    assert [request.connection for request in server.requests] == [1, 2]


async def test_bytes_after_the_body_make_the_connection_unusable(send: Sender) -> None:
    server = KeepAliveServer(lambda request: reply("ready") + b"STRAY")
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        replies = [await send(channel, "( INFO )", 2) for _ in range(2)]
    assert [item.body for item in replies] == ["ready", "ready"]
    assert [request.connection for request in server.requests] == [1, 2]


async def test_a_late_reply_never_answers_the_next_message(send: Sender) -> None:
    # the first message times out; its reply arrives later on the old connection, which
    # must not be read as the answer to the second message
    server = KeepAliveServer(echo, delay=lambda request: 0.6 if b"first" in request.body else 0)
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        late = await send(channel, "( first )", 0.3)
        await asyncio.sleep(0.5)
        second = await send(channel, "( second )", 2)
        channel.close()
    assert late.error is ErrorKind.TIMEOUT
    assert second.ok and second.body == "( second )"
    assert [request.connection for request in server.requests] == [1, 2]


async def test_a_connection_the_player_closed_while_idle_is_replaced_at_once(send: Sender) -> None:
    # the player answers, then drops the idle connection (as a keep-alive timeout does)
    server = KeepAliveServer(echo)
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        assert (await send(channel, "( one )", 2)).ok
        server.close_after_reply = lambda request: True
        assert (await send(channel, "( two )", 2)).ok
        await asyncio.sleep(0.1)  # the close reaches the server's side
        third = await send(channel, "( three )", 2)
        channel.close()
    assert third.ok and third.body == "( three )"
    assert [request.connection for request in server.requests] == [1, 1, 2]


async def test_a_kept_connection_closed_as_the_request_goes_out_is_tried_once_afresh(
    send: Sender,
) -> None:
    # the player reads the request and closes without a byte: on a kept connection that
    # is what a keep-alive timeout racing the request looks like, so one new attempt
    closing = {1}
    server = KeepAliveServer(
        lambda request: (
            None if request.connection in closing and b"two" in request.body else echo(request)
        )
    )
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        assert (await send(channel, "( one )", 2)).ok
        second = await send(channel, "( two )", 2)
        channel.close()
    assert second.ok and second.body == "( two )"
    assert [request.connection for request in server.requests] == [1, 1, 2]


async def test_a_fresh_connection_closed_without_a_reply_is_an_error_not_a_retry(
    send: Sender,
) -> None:
    server = KeepAliveServer(lambda request: None)
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        result = await send(channel, "( INFO )", 2)
    assert result.error is ErrorKind.CONNECTION_ERROR
    assert len(server.requests) == 1


async def test_a_whole_match_against_bundled_players_uses_one_connection_per_player() -> None:
    game = load_game("tictactoex9")
    async with (
        player_counting_connections(1) as (first, seen_first),
        player_counting_connections(2) as (second, seen_second),
    ):
        players = [Player("one", first, keep_alive=True), Player("two", second, keep_alive=True)]
        config = MatchConfig(start_clock=10, play_clock=5, seed=3)
        record = await MatchRunner(game, players, config, game_name="tictactoex9").run()
        await asyncio.sleep(0.1)
        for seen in (seen_first, seen_second):
            assert len(seen) == len(record.moves) + 2  # START, every PLAY, STOP
            assert len({id(transport) for transport in seen}) == 1
            assert seen[0].is_closing()  # type: ignore[attr-defined]  # closed at the end
    assert record.is_completed and not any(any(codes) for codes in record.errors or [])
