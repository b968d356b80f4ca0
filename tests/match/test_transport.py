"""The player transport: exact requests, liberal reading of replies, real deadlines."""

from __future__ import annotations

import asyncio

import pytest

from server.match.transport import PlayerAddress, _parse_head, build_request, send_message
from server.records import ErrorKind

from .fakes import Handler, loopback_server, unused_port


def answering(data: bytes, *, keep_open: bool = False) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(data)
        await writer.drain()
        if keep_open:
            await asyncio.sleep(5)
        writer.close()

    return handler


def test_the_request_is_ggp_base_s_with_the_path_of_the_url() -> None:
    address = PlayerAddress.parse("http://127.0.0.1:9147/player/one")
    assert build_request(address, "( INFO )", "Bob") == (
        b"POST /player/one HTTP/1.0\r\nAccept: text/delim\r\nHost: localhost\r\n"
        b"Sender: GAMESERVER\r\nReceiver: Bob\r\nContent-Type: text/acl\r\n"
        b"Content-Length: 8\r\n\r\n( INFO )"
    )


def test_addresses_are_read_from_urls_or_host_and_port() -> None:
    assert PlayerAddress.parse("example.org:9147") == PlayerAddress("example.org", 9147, "/")
    assert PlayerAddress.parse("http://[::1]:80").host == "::1"
    with pytest.raises(ValueError, match="http"):
        PlayerAddress.parse("ftp://example.org/")


async def test_a_keep_alive_reply_is_read_by_its_length_without_waiting_for_the_close() -> None:
    reply = b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nCONTENT-LENGTH: 4\r\n\r\nnoopEXTRA"
    async with loopback_server(answering(reply, keep_open=True)) as address:
        result = await send_message(address, "( PLAY m NIL )", time_limit=2)
    assert result.ok and result.body == "noop"
    assert result.status_line == "HTTP/1.1 200 OK"


async def test_bare_newlines_and_odd_header_lines_are_accepted() -> None:
    reply = b"HTTP/1.0 404 Not Found\nnonsense header line\nContent-length: 6\n\n ready"
    async with loopback_server(answering(reply)) as address:
        result = await send_message(address, "( INFO )", time_limit=2)
    assert result.ok and result.body == "ready"


def test_the_header_block_is_read_for_its_length_encoding_and_connection_only() -> None:
    head = (
        b"HTTP/1.1 200 OK\r\nX-Content-Length: 99\r\n  Content-LENGTH \t: 12 \r\n"
        b"Transfer-Encoding: gzip, Chunked\r\nCONNECTION:  Keep-Alive\r\nServer: x\r"
    )
    assert _parse_head(head) == ("HTTP/1.1 200 OK", 12, True, b"keep-alive")
    # the last length counts; an unreadable one leaves the one before; no header at all
    assert _parse_head(b"HTTP/1.0 200\ncontent-length: 3\ncontent-length: x")[1] == 3
    assert _parse_head(b"HTTP/1.0 200 OK\r\ncontent-length: 3\ncontent-length: 5")[1] == 5
    assert _parse_head(b"HTTP/1.0 200 OK") == ("HTTP/1.0 200 OK", None, False, b"")
    # a name inside another line's value is not a header; a negative length counts as 0
    assert _parse_head(b"HTTP/1.0 200\r\nX: a connection: close\r\nContent-Length: -4") == (
        "HTTP/1.0 200",
        0,
        False,
        b"",
    )


async def test_a_player_that_never_answers_times_out_at_the_deadline() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async with loopback_server(silent) as address:
        result = await send_message(address, "( INFO )", time_limit=0.3)
    assert result.error is ErrorKind.TIMEOUT and result.body is None
    assert result.elapsed_ms >= 300


async def test_a_declared_length_over_the_limit_is_refused_at_once() -> None:
    reply = b"HTTP/1.0 200 OK\r\nContent-Length: 5000000\r\n\r\nnoop"
    async with loopback_server(answering(reply, keep_open=True)) as address:
        result = await send_message(address, "( INFO )", time_limit=2, max_bytes=1000)
    assert result.error is ErrorKind.TOO_LARGE


async def test_an_endless_header_block_is_refused() -> None:
    reply = b"HTTP/1.0 200 OK\r\n" + b"X-Filler: " + b"a" * 200_000
    async with loopback_server(answering(reply, keep_open=True)) as address:
        result = await send_message(address, "( INFO )", time_limit=2)
    assert result.error is ErrorKind.TOO_LARGE


async def test_a_refused_connection_is_a_connection_error() -> None:
    address = PlayerAddress("127.0.0.1", unused_port())
    result = await send_message(address, "( INFO )", time_limit=2)
    assert result.error is ErrorKind.CONNECTION_ERROR
