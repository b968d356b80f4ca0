"""A replica of GGP-Base's RandomGamer framing behind `ggp connect` plays a whole tournament.

GGP-Base itself cannot be built here, so the next best evidence: a player process
(:mod:`ggp_base_replica`) that answers byte for byte as the captured GGP-Base player
did (first test, against ``../shared/protocol/player-probes-transcript.txt``), put
behind the relay, plays a round robin through the service's API with no error.
It is a replica of the framing and the message handling, not GGP-Base's code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from shared_material import shared_path
from web.harness import ADMIN_HEADERS, running_service
from web.outbound_harness import ggp, log_of

from .ggp_base_transcript import Probe, read_probes

REPLICA = Path(__file__).with_name("ggp_base_replica.py")
REPO = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def replica(seed: int) -> AsyncIterator[str]:
    """A replica player process on a free loopback port; its URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPLICA),
        "--seed",
        str(seed),
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        assert line.startswith("listening on "), line
        yield line.split()[-1]
    finally:
        process.kill()
        await process.wait()


async def exchange(port: int, probe: Probe, request: bytes) -> tuple[bytes, bool]:
    """Send ``request`` as the probe did; (the bytes that came back, closed by the player)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    if probe.half_close:
        writer.write_eof()
    received = b""
    closed = False
    try:
        async with asyncio.timeout(0.5 if not probe.closed else 10):
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    closed = True
                    break
                received += chunk
    except TimeoutError:
        pass
    writer.close()
    return received, closed


def start_for(probe: Probe, rules: str) -> bytes:
    """A START with the probe's match id and role, for a probe the transcript elided."""
    body = probe.request.split(b"\r\n\r\n", 1)[1].decode()
    match_id, role = body.replace("(", " ").split()[1:3]
    text = f"( START {match_id} {role} ({rules}) 5 3)"
    return (
        "POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: 127.0.0.1\r\nSender: GAMESERVER\r\n"
        f"Receiver: probe\r\nContent-Type: text/acl\r\nContent-Length: {len(text)}\r\n\r\n{text}"
    ).encode()


FIXED_BODIES = {"busy", "ready", "done", "aborted", "nil", "noop", ""}


async def test_the_replica_answers_every_probe_as_the_captured_player_did() -> None:
    probes = [
        probe
        for probe in read_probes(shared_path("protocol", "player-probes-transcript.txt"))
        if not probe.title.startswith("MC:")  # those probe GGP-Base's MonteCarlo player
    ]
    kif = shared_path("conformance", "games", "ticTacToe.kif").read_text(encoding="utf-8")
    rules = " ".join(line.split(";")[0] for line in kif.splitlines())
    checked = 0
    async with replica(seed=1) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        for probe in probes:
            request = probe.request if probe.request_complete else start_for(probe, rules)
            if not probe.request_complete and not probe.response:
                continue  # an elided START the player could not read: nothing to replay
            received, closed = await exchange(port, probe, request)
            assert closed == probe.closed, (probe.title, received)
            head, _, body = probe.response.partition(b"\r\n\r\n")
            got_head, _, got_body = received.partition(b"\r\n\r\n")
            if body.decode() in FIXED_BODIES or body.startswith(b"( ( name"):
                assert received == probe.response, (probe.title, received, probe.response)
            else:  # a move chosen at random: the same framing around a move of the game
                assert re.fullmatch(rb"\( mark [123] [123] \)", got_body), (probe.title, got_body)
                length = f"Content-length: {len(got_body)}".encode()
                assert got_head == re.sub(rb"Content-length: \d+", length, head), probe.title
            checked += 1
    assert checked >= 35, checked


def spec(players: list[str]) -> dict[str, Any]:
    return {
        "name": "replica cup",
        "game": "double_tictactoe_dengji",
        "format": "round_robin",
        "players": players,
        "matches_per_seating": 1,
        "startclock": 3,
        "playclock": 1,
        "seed": 3,
    }


async def test_replicas_behind_relays_play_a_whole_round_robin_with_no_error(
    tmp_path: Path,
) -> None:
    shared_path("protocol", "player-probes-transcript.txt")  # what the replica is checked by
    names = ["base1", "base2", "base3"]
    database = f"sqlite:///{tmp_path / 'ggp.db'}"
    async with (
        replica(seed=11) as first,
        replica(seed=12) as second,
        replica(seed=13) as third,
        running_service(tmp_path, database, concurrency=4, check_players=True) as (_, client),
        contextlib.AsyncExitStack() as relays,
    ):
        server = str(client.make_url(""))
        processes = []
        for name, url in zip(names, (first, second, third), strict=True):
            response = await client.post(
                "/api/players", json={"name": name, "connection": "outbound"}, headers=ADMIN_HEADERS
            )
            token = (await response.json())["token"]
            args = ["connect", "--server", server, "--token", token, "--player", url]
            relay = await relays.enter_async_context(ggp(args, tmp_path / f"{name}.err"))
            await relay.wait_for_line("connected to")
            processes.append(relay)
        for name in names:  # each was checked over its relay as it connected
            checks = await _finished_check(client, name)
            assert checks["passed"] is True, checks
        response = await client.post("/api/tournaments", json=spec(names), headers=ADMIN_HEADERS)
        tournament_id = (await response.json())["id"]
        async with asyncio.timeout(240):
            while True:
                path = f"/api/tournaments/{tournament_id}"
                tournament = await (await client.get(path)).json()
                if tournament["status"] not in ("running", "created"):
                    break
                await asyncio.sleep(0.3)
        assert tournament["status"] == "finished", tournament
        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        assert len(matches) == 6 and {match["status"] for match in matches} == {"finished"}
        for match in matches:
            record = await log_of(client, match["id"])
            assert record["playerTransports"] == ["websocket", "websocket"]
            assert all(code == "" for phase in record["errors"] for code in phase), record
            assert record["isCompleted"] is True and len(record["moves"]) >= 5
        for relay in processes:
            assert "did not answer" not in relay.stderr and "Traceback" not in relay.stderr
            assert relay.stderr.count("connected to") == 1, relay.stderr


async def _finished_check(client: Any, name: str) -> dict[str, Any]:
    async with asyncio.timeout(90):
        while True:
            checks = await (await client.get(f"/api/players/{name}/checks")).json()
            done = [check for check in checks if check["status"] == "finished"]
            if done:
                return dict(done[0])
            await asyncio.sleep(0.2)
