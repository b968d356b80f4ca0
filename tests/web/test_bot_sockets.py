"""The bot socket, frame by frame: what a bot that connects by hand may send, and what it gets.

These tests speak to `/api/bots/connect` with a bare aiohttp WebSocket client, so each frame
is exactly the one written here (the `ggp connect` relay is tested in test_outbound_bots).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from server.bots import hub as hub_module
from server.bots.hub import OutboundChannel
from server.protocol.envelope import CONNECT_PATH
from server.records import ErrorKind
from server.web import Service

from .harness import running_service
from .outbound_harness import register_outbound, until


def sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ggp.db'}"


@contextlib.asynccontextmanager
async def bot_connected(
    tmp_path: Path,
) -> AsyncIterator[tuple[Service, aiohttp.ClientWebSocketResponse]]:
    """A running service and the socket of its outbound bot "bot", welcomed."""
    async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
        token = await register_outbound(client, "bot")
        async with aiohttp.ClientSession() as session:
            url = client.make_url(CONNECT_PATH)
            async with session.ws_connect(url, headers={"Authorization": f"Bearer {token}"}) as ws:
                assert (await ws.receive_json(timeout=5))["welcome"] == "bot"
                yield service, ws


async def test_stray_frames_are_passed_over_and_the_bot_answers_the_next_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A reply to no message (a duplicate, or a lie) and a frame that is no reply leave the
    connection as it was."""
    caplog.set_level(logging.WARNING, logger="server.bots")
    async with bot_connected(tmp_path) as (service, ws):
        await ws.send_json({"id": 987654, "reply": "( ( status available ) )"})
        await ws.send_json({"hello": "there"})
        await ws.send_bytes(b"\x00\x01")
        channel = OutboundChannel(service.bots, "bot")
        sent = asyncio.create_task(channel.send("( INFO )", time_limit=5))
        message = await ws.receive_json(timeout=5)
        assert message["message"] == "( INFO )"
        await ws.send_json({"id": message["id"], "reply": "( ( status available ) )"})
        reply = await sent
        assert (reply.body, reply.error) == ("( ( status available ) )", None)
        assert service.bots.connected("bot")
    warnings = [record.getMessage() for record in caplog.records]
    assert any("bot bot sent a frame that is not a reply" in line for line in warnings), warnings


async def test_a_message_for_a_bot_that_never_connected_is_a_connection_error(
    tmp_path: Path,
) -> None:
    async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
        await register_outbound(client, "away")
        for wait in (False, True):
            channel = OutboundChannel(service.bots, "away", wait=wait)
            reply = await channel.send("( INFO )", time_limit=0.3)
            assert (reply.body, reply.error) == (None, ErrorKind.CONNECTION_ERROR)
            assert reply.message == "the bot is not connected"


async def test_a_bad_token_in_a_header_is_refused_with_the_reason(tmp_path: Path) -> None:
    async with running_service(tmp_path, sqlite(tmp_path)) as (_, client):
        await register_outbound(client, "bot")
        response = await client.get(CONNECT_PATH, headers={"Authorization": "Bearer wrong"})
        assert response.status == 401
        assert "the bot token is not valid" in await response.text()


async def test_a_header_of_another_scheme_leaves_the_token_to_the_first_frame(
    tmp_path: Path,
) -> None:
    """A proxy's own ``Authorization: Basic ...`` is not taken for a bot token."""
    async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
        token = await register_outbound(client, "bot")
        async with aiohttp.ClientSession() as session:
            url = client.make_url(CONNECT_PATH)
            headers = {"Authorization": "Basic dXNlcjpwYXNz"}
            async with session.ws_connect(url, headers=headers) as ws:
                await ws.send_json({"token": token})
                assert (await ws.receive_json(timeout=5))["welcome"] == "bot"
                await until(lambda: service.bots.connected("bot"))


async def test_a_bot_that_sends_no_token_is_closed_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub_module, "HELLO_SECONDS", 0.3)
    async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
        async with aiohttp.ClientSession() as session:
            url = client.make_url(CONNECT_PATH)
            async with session.ws_connect(url) as ws:  # silent
                closing = await ws.receive(timeout=5)
                assert closing.type is aiohttp.WSMsgType.CLOSE
                assert (ws.close_code, closing.extra) == (4401, "no token within 0.3 s")
            async with session.ws_connect(url) as ws:
                await ws.send_bytes(b"token")
                closing = await ws.receive(timeout=5)
                assert (ws.close_code, closing.extra) == (
                    4401,
                    'the first frame must be {"token": ...}',
                )
        assert not service.bots.connections


async def test_a_bot_that_closes_with_a_message_in_flight_gives_a_connection_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="server.bots")
    async with bot_connected(tmp_path) as (service, ws):
        channel = OutboundChannel(service.bots, "bot")
        sent = asyncio.create_task(channel.send("( INFO )", time_limit=1))
        assert (await ws.receive_json(timeout=5))["message"] == "( INFO )"
        await ws.close()  # and no reply: the bot goes away
        reply = await sent
        assert (reply.body, reply.error) == (None, ErrorKind.CONNECTION_ERROR)
        assert reply.message == (
            "the bot's connection was lost (the bot closed the connection) and not restored in time"
        )
        assert not service.bots.connected("bot")
    assert "bot bot disconnected: the bot closed the connection" in [
        record.getMessage() for record in caplog.records
    ]
