"""Replies on a kept connection read by the connection's callbacks (``HttpChannel.start``)
come back exactly as the general reading (``HttpChannel.send``) gives them, whatever
their shape; the usual reply needs no task, and cancelling closes the connection."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from server.match.channel import HttpChannel
from server.match.transport import PlayerAddress, Reply
from server.records import ErrorKind

from .fakes import loopback_server


@dataclass
class PiecewiseServer:
    """A raw server on loopback that answers each request (read up to its body) with
    ``pieces``, written one by one with a short pause between, then keeps the connection
    open (or closes it when ``close`` is set)."""

    pieces: Sequence[bytes]
    close: bool = False
    connections: int = 0
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                for number, piece in enumerate(self.pieces):
                    if number:
                        await asyncio.sleep(0.02)
                    writer.write(piece)
                    await writer.drain()
                if self.close:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed.set()
        finally:
            writer.close()


def ok(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body


SHAPES: dict[str, tuple[list[bytes], bool]] = {
    "whole": ([ok(b"( mark 1 2 )")], False),
    "head, then body": ([ok(b"( mark 1 2 )")[:-5], b"1 2 )"], False),
    "byte by byte head": ([ok(b"noop")[:10], ok(b"noop")[10:30], ok(b"noop")[30:]], False),
    "bare newlines": (
        [b"HTTP/1.0 200 OK\nConnection: keep-alive\nContent-length: 4\n\nnoop"],
        False,
    ),
    "mixed newlines": ([b"HTTP/1.1 200 OK\r\nContent-Length: 4\n\r\nnoop"], False),
    "carriage return then bare newline": (
        [b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\nnoop"],
        False,
    ),
    "leading blank line": ([b"\r\nnoop"], True),
    "no length, closed": ([b"HTTP/1.0 200 OK\r\n\r\n( mark 3 3 )"], True),
    "chunked": (
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nnoop\r\n0\r\n\r\n"],
        True,
    ),
    "chunked with a length": ([ok(b"noop", b"Transfer-Encoding: chunked\r\n")], False),
    "bytes after the body": ([ok(b"noop") + b"STRAY"], False),
    "says close": ([ok(b"noop", b"Connection: close\r\n")], False),
    "HTTP/1.0 without keep-alive": ([b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nnoop"], False),
    "over the limit": ([b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\nxx"], False),
    "empty body": ([ok(b"")], False),
    "UTF-8 cut in two": ([ok("( say é€ )".encode())[:-4], ok("( say é€ )".encode())[-4:]], False),
    "invalid UTF-8": ([ok(b"( say \xff\xfe )")], False),
    "body larger than one read": ([ok(b"( " + b"x" * 100_000 + b" )")], False),
    "closed halfway": ([ok(b"( mark 1 2 )")[:-4]], True),
    "closed before any byte": ([], True),
    "unreadable length": ([b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nnoop"], True),
}


async def answers(how: str, pieces: list[bytes], close: bool) -> tuple[list[Reply], int]:
    """Two messages on one kept channel, sent ``how``; the replies and the connections used."""
    server = PiecewiseServer(pieces, close=close)
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        replies = []
        for _ in range(2):
            if how == "send":
                replies.append(await channel.send("( PLAY m NIL )", time_limit=2))
            else:
                replies.append(await channel.start("( PLAY m NIL )", time_limit=2))
        channel.close()
    return replies, server.connections


async def answered_then_silent(server: PiecewiseServer, address: PlayerAddress) -> HttpChannel:
    """A kept channel whose first message was answered; the server answers nothing more."""
    channel = HttpChannel(address, "Bob", keep_alive=True)
    assert (await channel.start("( INFO )", time_limit=2)).ok
    server.pieces = []
    return channel


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_every_reply_shape_reads_the_same_both_ways(shape: str) -> None:
    pieces, close = SHAPES[shape]
    sent, sent_connections = await answers("send", pieces, close)
    started, started_connections = await answers("start", pieces, close)

    def seen(reply: Reply) -> tuple[object, ...]:
        return reply.body, reply.error, reply.message, reply.status_line

    assert [seen(reply) for reply in started] == [seen(reply) for reply in sent]
    assert started_connections == sent_connections


KEEPS_THE_CONNECTION: dict[str, bool] = {
    "whole": True,
    "bare newlines": True,  # HTTP/1.0 that asks for keep-alive
    "says close": False,
    "HTTP/1.0 without keep-alive": False,
    "chunked with a length": False,  # framed two ways: not trusted for a next message
    "bytes after the body": False,  # the stray bytes would be read as the next reply
}


@pytest.mark.parametrize("how", ["send", "start"])
@pytest.mark.parametrize("shape", list(KEEPS_THE_CONNECTION))
async def test_a_connection_is_used_again_only_when_its_reply_allows_it(
    shape: str, how: str
) -> None:
    # The server keeps every connection open, whatever its reply says: the channel
    # alone decides whether the next message goes on the same one. The reply in
    # ``shape`` comes on a connection already kept, where ``start`` reads it in the
    # connection's callbacks.
    pieces, close = SHAPES[shape]
    server = PiecewiseServer([ok(b"noop")])
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        send = channel.send if how == "send" else channel.start
        replies = [await send("( INFO )", time_limit=2)]
        server.pieces = pieces
        replies.append(await send("( PLAY m NIL )", time_limit=2))
        server.pieces = [ok(b"done")]
        replies.append(await send("( STOP m NIL )", time_limit=2))
        channel.close()
    assert [reply.ok for reply in replies] == [True, True, True]
    assert (replies[0].body, replies[2].body) == ("noop", "done")
    assert server.connections == (1 if KEEPS_THE_CONNECTION[shape] else 2)


async def test_the_usual_reply_on_a_kept_connection_needs_no_task() -> None:
    server = PiecewiseServer([ok(b"noop")])
    async with loopback_server(server.handle) as address:
        channel = HttpChannel(address, "Bob", keep_alive=True)
        first = channel.start("( INFO )", time_limit=2)
        assert isinstance(first, asyncio.Task)  # no connection yet: it is opened by a task
        assert (await first).body == "noop"
        second = channel.start("( INFO )", time_limit=2)
        assert not isinstance(second, asyncio.Task)
        assert (await second).body == "noop"
        channel.close()
    assert server.connections == 1


async def test_a_silent_player_on_a_kept_connection_times_out_and_is_dropped() -> None:
    server = PiecewiseServer([ok(b"noop")])
    async with loopback_server(server.handle) as address:
        channel = await answered_then_silent(server, address)
        late = await channel.start("( PLAY m NIL )", time_limit=0.2)
        assert late.error is ErrorKind.TIMEOUT and late.message == "no complete reply within 0.2 s"
        assert 150 <= late.elapsed_ms
        assert channel.kept is not None and not channel.kept.is_open
        await asyncio.wait_for(server.closed.wait(), 2)


async def test_cancelling_a_started_message_closes_its_connection() -> None:
    server = PiecewiseServer([ok(b"noop")])
    async with loopback_server(server.handle) as address:
        channel = await answered_then_silent(server, address)
        pending = channel.start("( PLAY m NIL )", time_limit=5)
        await asyncio.sleep(0.05)
        pending.cancel()
        await asyncio.wait_for(server.closed.wait(), 2)
        assert channel.kept is not None and not channel.kept.is_open
        # the next message opens a new connection and is answered
        server.pieces = [ok(b"done")]
        assert (await channel.start("( STOP m NIL )", time_limit=2)).body == "done"
    assert server.connections == 2


async def test_a_reply_arriving_between_a_cancel_and_its_callback_is_dropped_quietly() -> None:
    server = PiecewiseServer([ok(b"noop")])
    async with loopback_server(server.handle) as address:
        channel = await answered_then_silent(server, address)
        assert channel.kept is not None
        reader = channel.kept._idle  # the connection the next message will use
        assert reader is not None
        pending = channel.start("( PLAY m NIL )", time_limit=5)
        pending.cancel()
        reader.data_received(ok(b"late"))  # before the future's callbacks have run
        await asyncio.wait_for(server.closed.wait(), 2)
        assert pending.cancelled() and not channel.kept.is_open
