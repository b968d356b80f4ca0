"""Outbound bots: players behind a firewall connect to a running `ggp serve` by WebSocket.

Every test runs the real service on a loopback port, real `ggp connect` / `ggp player`
processes and the bundled HTTP player behind the relay.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from server.match.local_players import local_players
from server.protocol.envelope import CONNECT_PATH

from .harness import ADMIN_HEADERS, running_service, wait_for_status
from .outbound_harness import ggp, log_of, queue, register_outbound, until

GREEDY = "players/examples/greedy_bot.py:GreedyBot"
SLOW = "tests/web/slow_bot.py:SlowBot"


def sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ggp.db'}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_relayed_http_player_and_a_kit_bot_play_whole_matches(tmp_path: Path) -> None:
    async with (
        local_players(["random"], seed=3) as (random_url,),
        running_service(tmp_path, sqlite(tmp_path), concurrency=2) as (_, client),
    ):
        server = str(client.make_url(""))
        relayed = await register_outbound(client, "relayed")
        kit = await register_outbound(client, "kit", max_matches=2)
        relay_args = ["connect", "--server", server, "--token", relayed, "--player", random_url]
        bot_args = ["player", "--bot", GREEDY, "--server", server, "--token", kit]
        async with (
            ggp(relay_args, tmp_path / "relay.err") as relay,
            ggp(bot_args, tmp_path / "bot.err") as bot,
        ):
            await relay.wait_for_line("connected to")
            await bot.wait_for_line("connected to")
            ids = [await queue(client, ["relayed", "kit"]), await queue(client, ["kit", None])]
            for match_id in ids:
                match = await wait_for_status(client, match_id, {"finished", "aborted"})
                assert match["status"] == "finished", match
                record = await log_of(client, match_id)
                assert all(code == "" for phase in record["errors"] for code in phase), record
                assert len(record["moves"]) >= 5
            first, second = [await log_of(client, match_id) for match_id in ids]
            assert first["playerTransports"] == ["websocket", "websocket"]
            assert second["playerTransports"] == ["websocket", None]
            player = await (await client.get("/api/players/relayed")).json()
            assert player["status"] in ("available", "busy") and player["pings"]
        assert "Traceback" not in relay.stderr + bot.stderr
        assert relay.stderr.count("connected to") == 1


async def test_a_relay_restarted_within_the_clock_continues_the_match(tmp_path: Path) -> None:
    async with (
        local_players(["random"], seed=5) as (behind_relay,),
        running_service(tmp_path, sqlite(tmp_path)) as (_, client),
    ):
        server = str(client.make_url(""))
        token = await register_outbound(client, "relayed")
        slow = await register_outbound(client, "slow")
        journal = tmp_path / "relay.jsonl"
        args = ["connect", "--server", server, "--token", token, "--player", behind_relay]
        args += ["--journal", str(journal)]
        slow_args = ["player", "--bot", SLOW, "--server", server, "--token", slow]
        async with ggp(slow_args, tmp_path / "slow.err") as slow_bot:
            async with ggp(args, tmp_path / "relay1.err") as relay:
                await relay.wait_for_line("connected to")
                await slow_bot.wait_for_line("connected to")
                # a play clock long enough for a new relay process to start under a heavy load
                match_id = await queue(client, ["relayed", "slow"], playclock=12, step_limit=5)
                await _wait_for_steps(client, match_id, 2)
                # killed once the relayed player has answered this step's PLAY (its journal
                # says so), while its opponent thinks for 2 s: no message is in flight (one
                # in flight gets CE instead: see the journal test below)
                await _until_last_play_answered(journal)
                await relay.kill(signal.SIGKILL)
            await _wait_for_player_status(client, "relayed", "unreachable")
            async with ggp(args, tmp_path / "relay2.err") as again:
                await again.wait_for_line("connected to")
                match = await wait_for_status(client, match_id, {"finished", "aborted"})
        assert match["status"] == "finished", match
        record = await log_of(client, match_id)
        assert record["playerTransports"] == ["websocket", "websocket"]
        assert all(code == "" for phase in record["errors"] for code in phase), record["errors"]
        assert len(record["moves"]) == 5


async def test_a_bot_that_stays_away_gets_CE_and_the_match_goes_on(tmp_path: Path) -> None:
    # mcts thinks for most of its play clock, so the match is still running when the relay
    # stops after step 2 (a random player behind it could finish all six steps first)
    async with (
        local_players(["mcts"], seed=9) as (behind_relay,),
        running_service(tmp_path, sqlite(tmp_path)) as (_, client),
    ):
        server = str(client.make_url(""))
        token = await register_outbound(client, "relayed")
        args = ["connect", "--server", server, "--token", token, "--player", behind_relay]
        async with ggp(args, tmp_path / "relay.err") as relay:
            await relay.wait_for_line("connected to")
            match_id = await queue(client, ["relayed", None], playclock=1, step_limit=6)
            await _wait_for_steps(client, match_id, 2)
            await relay.kill(signal.SIGTERM)  # a clean stop: the bot simply goes away
        assert "stopped" in relay.stderr
        match = await wait_for_status(client, match_id, {"finished", "aborted"})
        assert match["status"] == "finished", match
        record = await log_of(client, match_id)
        codes = [phase[0] for phase in record["errors"]]
        assert codes[:2] == ["", ""] and "CE" in codes, codes
        detail = next(phase[0] for phase in record["errorDetails"] if phase[0])
        assert "not connected" in detail["message"] or "lost" in detail["message"]
        assert record["isCompleted"] is True


async def test_the_heartbeat_finds_a_dead_socket(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="server.bots")
    async with running_service(tmp_path, sqlite(tmp_path), bot_heartbeat=0.4) as (service, client):
        token = await register_outbound(client, "silent")
        async with aiohttp.ClientSession() as session:
            # autoping off and never reading: pings go unanswered, as from a frozen machine
            socket_ = await session.ws_connect(
                client.make_url(CONNECT_PATH),
                headers={"Authorization": f"Bearer {token}"},
                autoping=False,
            )
            await until(lambda: service.bots.connected("silent"))
            await until(lambda: not service.bots.connected("silent"))  # about 0.6 s
            await _wait_for_player_status(client, "silent", "unreachable")
            await socket_.close()
    assert "bot silent disconnected: the connection was lost (no answer to the heartbeat)" in [
        record.getMessage() for record in caplog.records
    ]


async def test_a_bad_token_is_refused(tmp_path: Path) -> None:
    async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
        token = await register_outbound(client, "bot")
        url = client.make_url(CONNECT_PATH)
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(url, headers={"Authorization": "Bearer wrong"})
            assert refused.value.status == 401
            async with session.ws_connect(url) as ws:  # the token as the first frame instead
                await ws.send_json({"token": "wrong"})
                closing = await ws.receive(timeout=5)
                assert closing.type is aiohttp.WSMsgType.CLOSE and ws.close_code == 4401
            async with session.ws_connect(url) as ws:
                await ws.send_json({"token": token})
                assert await ws.receive_json(timeout=5) == {"welcome": "bot", "max_matches": 1}
        server = str(client.make_url(""))
        async with ggp(
            ["connect", "--server", server, "--token", "wrong", "--bot", "random"],
            tmp_path / "bad.err",
        ) as bad:
            assert bad.process is not None
            assert await asyncio.wait_for(bad.process.wait(), 30) == 1
        assert bad.stderr.strip().splitlines() == ["ggp connect: the server refused the token"]
        assert not service.bots.connections


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--server", "ftp://x", "--token", "t", "--bot", "random"], "not a server URL"),
        (["--server", "http://127.0.0.1:1", "--bot", "random"], "give the player's token"),
        (["--server", "http://127.0.0.1:1", "--token", "t"], "one of the arguments"),
        (["--server", "http://127.0.0.1:1", "--token", "t", "--player", "ftp://x"], "--player"),
        (
            ["--server", "http://127.0.0.1:1", "--token", "t", "--player", "http://127.0.0.1:2"]
            + ["--journal", "/proc/no/such/journal.jsonl"],
            "--journal",
        ),
    ],
)
async def test_bad_options_are_one_line_and_exit_2(
    tmp_path: Path, args: list[str], why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GGP_BOT_TOKEN", raising=False)
    async with ggp(["connect", *args], tmp_path / "err") as process:
        assert process.process is not None
        assert await asyncio.wait_for(process.process.wait(), 30) == 2
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and why in lines[0], lines


async def test_a_relay_to_a_player_nobody_listens_on_reports_errors(tmp_path: Path) -> None:
    async with running_service(tmp_path, sqlite(tmp_path)) as (_, client):
        server = str(client.make_url(""))
        token = await register_outbound(client, "nobody")
        nowhere = f"http://127.0.0.1:{free_port()}/"
        args = ["connect", "--server", server, "--token", token, "--player", nowhere]
        async with ggp(args, tmp_path / "relay.err") as relay:
            await relay.wait_for_line("connected to")
            match_id = await queue(client, ["nobody", None], playclock=1)
            match = await wait_for_status(client, match_id, {"finished", "aborted"})
            player = await (await client.get("/api/players/nobody")).json()
        # the relay is up, but INFO went unanswered behind it: the player is unreachable
        assert match["status"] == "aborted" and match["end_reason"] == "player_unavailable"
        assert player["status"] == "unreachable"
        assert "did not answer" in player["pings"][0]["message"]
        assert f"the player at {nowhere} did not answer INFO: " in relay.stderr
        assert "Traceback" not in relay.stderr


async def _wait_for_steps(client: aiohttp.test_utils.TestClient, match_id: str, steps: int) -> None:
    async with asyncio.timeout(60):
        while True:
            if len((await log_of(client, match_id)).get("moves", [])) >= steps:
                return
            await asyncio.sleep(0.05)


async def _wait_for_player_status(
    client: aiohttp.test_utils.TestClient, name: str, status: str
) -> None:
    async with asyncio.timeout(10):
        while True:
            if (await (await client.get(f"/api/players/{name}")).json())["status"] == status:
                return
            await asyncio.sleep(0.05)


def _last_play_answered(journal: Path) -> bool:
    lines = journal.read_text().splitlines() if journal.exists() else []
    return bool(lines) and json.loads(lines[-1])["reply"] is not None


async def _until_last_play_answered(journal: Path) -> None:
    async with asyncio.timeout(30):
        while True:
            if _last_play_answered(journal):
                return
            await asyncio.sleep(0.01)


async def test_an_outbound_bot_is_registered_without_a_url_and_gets_a_token_once(
    tmp_path: Path,
) -> None:
    async with running_service(tmp_path, sqlite(tmp_path)) as (_, client):
        token = await register_outbound(client, "bot", max_matches=3)
        assert token.startswith("bot_")
        listed = await (await client.get("/api/players/bot")).json()
        assert listed["connection"] == "outbound" and "token" not in listed
        assert listed["max_matches"] == 3
        for body in (
            {"name": "b2", "connection": "outbound", "url": "http://127.0.0.1:1/"},
            {"name": "b3"},
        ):
            response = await client.post("/api/players", json=body, headers=ADMIN_HEADERS)
            assert response.status == 400
            assert (await response.json())["error"]["field"] == "url"


async def test_a_message_in_flight_when_the_socket_drops_is_answered_once(tmp_path: Path) -> None:
    from players.outbound import stay_connected

    async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
        token = await register_outbound(client, "bot")
        asked: list[str] = []

        async def answer(text: str) -> str:
            if not text.startswith("( PLAY"):
                return "( ( name Once ) ( status available ) )"  # the registry's INFO pings
            asked.append(text)
            await asyncio.sleep(1.0)  # still thinking when the socket drops
            return "( mark 1 1 )"

        stop = asyncio.Event()
        bot = asyncio.create_task(stay_connected(str(client.make_url("")), token, answer, stop))
        try:
            await until(lambda: service.bots.connected("bot"))
            sending = asyncio.create_task(
                service.bots.channel("bot").send("( PLAY m1 NIL )", time_limit=8)
            )
            await until(lambda: len(asked) == 1)
            await service.bots.connections["bot"].socket.close()  # the network drops it
            reply = await sending
            assert reply.ok and reply.body == "( mark 1 1 )", reply
            assert asked == ["( PLAY m1 NIL )"]  # sent twice, answered once
        finally:
            stop.set()
            await bot


async def test_a_new_token_replaces_the_old_one_and_closes_its_socket(tmp_path: Path) -> None:
    async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
        response = await client.post(
            "/api/players",
            json={"name": "bot", "connection": "outbound", "owner": "ann"},
            headers=ADMIN_HEADERS,
        )
        registered = await response.json()
        old, ann = registered["token"], {"Authorization": f"Bearer {registered['owner_token']}"}
        server = str(client.make_url(""))
        async with ggp(
            ["connect", "--server", server, "--token", old, "--bot", "random"],
            tmp_path / "old.err",
        ) as bot:
            await bot.wait_for_line("connected to")
            assert (await client.post("/api/players/bot/token")).status == 401
            rotated = await client.post("/api/players/bot/token", headers=ann)
            body = await rotated.json()
            assert rotated.status == 200 and body["name"] == "bot", body
            new = body["token"]
            assert new.startswith("bot_") and new != old
            assert bot.process is not None
            # its socket is closed; connecting again with the old token is refused: exit 1
            assert await asyncio.wait_for(bot.process.wait(), 30) == 1
        assert "ggp connect: the server refused the token" in bot.stderr
        assert not service.bots.connected("bot")
        async with aiohttp.ClientSession() as session:
            url = client.make_url(CONNECT_PATH)
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(url, headers={"Authorization": f"Bearer {old}"})
            assert refused.value.status == 401
            async with session.ws_connect(url, headers={"Authorization": f"Bearer {new}"}) as ws:
                assert (await ws.receive_json(timeout=5))["welcome"] == "bot"
        # an HTTP player has no token to rotate
        await client.post(
            "/api/players",
            json={"name": "web", "url": "http://127.0.0.1:1/"},
            headers=ADMIN_HEADERS,
        )
        conflict = await client.post("/api/players/web/token", headers=ADMIN_HEADERS)
        assert conflict.status == 409
        assert (await client.post("/api/players/nobody/token", headers=ADMIN_HEADERS)).status == 404


async def test_a_player_switches_between_a_url_and_an_outbound_connection(tmp_path: Path) -> None:
    async with (
        local_players(["random"], seed=11) as (random_url,),
        running_service(tmp_path, sqlite(tmp_path), check_players=True) as (service, client),
    ):
        created = await client.post(
            "/api/players", json={"name": "p", "url": random_url}, headers=ADMIN_HEADERS
        )
        assert created.status == 201

        async def patch(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            response = await client.patch("/api/players/p", json=body, headers=ADMIN_HEADERS)
            return response.status, await response.json()

        status, bad = await patch({"connection": "outbound", "url": random_url})
        assert status == 400 and bad["error"]["field"] == "url"
        status, outbound = await patch({"connection": "outbound"})
        assert status == 200 and outbound["connection"] == "outbound" and outbound["url"] == ""
        token = outbound["token"]
        assert isinstance(token, str) and token.startswith("bot_")
        server = str(client.make_url(""))
        async with ggp(
            ["connect", "--server", server, "--token", token, "--player", random_url],
            tmp_path / "relay.err",
        ) as relay:
            await relay.wait_for_line("connected to")
            checks = await _checks_finished(client, "p", 2)  # registered, then connected
            assert [check["target"] for check in checks] == ["outbound", random_url]
            assert all(check["passed"] for check in checks), checks
            match_id = await queue(client, ["p", None], playclock=1, step_limit=4)
            match = await wait_for_status(client, match_id, {"finished", "aborted"})
            assert match["status"] == "finished", match
            assert (await log_of(client, match_id))["playerTransports"] == ["websocket", None]

            status, bad = await patch({"connection": "http"})
            assert status == 400 and bad["error"]["field"] == "url"
            status, back = await patch({"connection": "http", "url": random_url})
            assert status == 200 and back["connection"] == "http" and back["token"] is None
            assert back["url"] == random_url
            assert relay.process is not None
            assert await asyncio.wait_for(relay.process.wait(), 30) == 1  # token dropped
        assert not service.bots.connected("p")
        checks = await _checks_finished(client, "p", 3)
        assert checks[0]["trigger"] == "url changed" and checks[0]["target"] == random_url
        match_id = await queue(client, ["p", None], playclock=1, step_limit=4)
        match = await wait_for_status(client, match_id, {"finished", "aborted"})
        assert match["status"] == "finished", match
        assert (await log_of(client, match_id))["playerTransports"] == ["http", None]


async def _checks_finished(
    client: aiohttp.test_utils.TestClient, name: str, count: int
) -> list[dict[str, Any]]:
    async with asyncio.timeout(60):
        while True:
            checks: list[dict[str, Any]] = await (
                await client.get(f"/api/players/{name}/checks")
            ).json()
            if sum(check["status"] == "finished" for check in checks) >= count:
                return checks
            await asyncio.sleep(0.1)


async def test_a_relay_killed_with_a_message_in_flight_does_not_pass_it_on_twice(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    async def slow_player(request: web.Request) -> web.Response:
        text = (await request.read()).decode()
        if "info" in text.lower():
            return web.Response(text="( ( name Slow ) ( status available ) )")
        asked.append(text)
        await asyncio.sleep(3)  # still thinking when its relay is killed
        return web.Response(text="( mark 1 1 )")

    app = web.Application()
    app.router.add_post("/", slow_player)
    player = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await player.setup()
    await web.TCPSite(player, "127.0.0.1", 0).start()
    host, port = player.addresses[0][:2]
    try:
        async with running_service(tmp_path, sqlite(tmp_path)) as (service, client):
            token = await register_outbound(client, "relayed")
            args = ["connect", "--server", str(client.make_url("")), "--token", token]
            args += ["--player", f"http://{host}:{port}/", "--journal", str(tmp_path / "j.jsonl")]
            async with ggp(args, tmp_path / "relay1.err") as relay:
                await relay.wait_for_line("connected to")
                sending = asyncio.create_task(
                    service.bots.channel("relayed").send("( PLAY m1 NIL )", time_limit=20)
                )
                await until(lambda: len(asked) == 1)
                await relay.kill(signal.SIGKILL)
            async with ggp(args, tmp_path / "relay2.err") as again:
                await again.wait_for_line("connected to")
                reply = await sending
        # the message came again on the new socket; the journal kept it from the player
        assert asked == ["( PLAY m1 NIL )"]
        assert reply.error is not None and "not passed on twice" in reply.message, reply
    finally:
        await player.cleanup()
