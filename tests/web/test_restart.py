"""SIGKILL `ggp serve` while matches run; after a restart, interrupted matches are aborted
(reason server_restart) or queued again, and finished ones are untouched. A player check
the kill interrupted is kept as interrupted, and the player can be checked again."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from server.match.local_players import local_players
from server.protocol.http import response_bytes
from server.records.signing import load_host_key, verify_record

TOKEN = "restart-test-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
NO_CHECKS = "--no-player-checks"


@contextlib.asynccontextmanager
async def slow_player() -> AsyncIterator[str]:
    """A player that is there (INFO, START) but never answers PLAY within the clock."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            body = (await reader.readexactly(length)).decode()
            if "PLAY" in body.upper():
                await asyncio.sleep(30)
            reply = "ready" if "START" in body.upper() else "( ( name slow ) ( status available ) )"
            writer.write(response_bytes(reply))
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.transport.abort()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    finally:
        server.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def start_serve(data: Path, port: int, *extra: str) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        "serve",
        "--data",
        str(data),
        "--port",
        str(port),
        "--admin-token",
        TOKEN,
        "--concurrency",
        "8",
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "GGP_DATABASE_URL": "", "GGP_HOST_KEY": ""},
    )
    assert process.stdout is not None
    said: list[str] = []
    async with asyncio.timeout(30):
        while True:
            line = (await process.stdout.readline()).decode()
            if not line:
                raise ServeExited("".join(said))
            said.append(line)
            if line.startswith("serving on"):
                return process


class ServeExited(AssertionError):
    """``ggp serve`` exited before serving; the message is what it printed."""


async def start_serve_on_a_free_port(
    data: Path, *extra: str
) -> tuple[asyncio.subprocess.Process, int]:
    """``ggp serve`` on a port free a moment before; another one if that port was taken
    meanwhile (by a process of another test, which may be handed a port just probed)."""
    for _ in range(3):
        port = free_port()
        try:
            return await start_serve(data, port, *extra), port
        except ServeExited as exited:
            if "cannot listen" not in str(exited):
                raise
    raise AssertionError("no free port for ggp serve in three tries")


async def poll(session: aiohttp.ClientSession, url: str, done: Any, seconds: float = 60) -> Any:
    async with asyncio.timeout(seconds):
        while True:
            async with session.get(url) as response:
                data = await response.json()
            if done(data):
                return data
            await asyncio.sleep(0.2)


@pytest.mark.parametrize("requeue", [False, True], ids=["abort", "requeue"])
async def test_a_killed_service_aborts_or_requeues_interrupted_matches(
    tmp_path: Path, requeue: bool
) -> None:
    async with (
        local_players(["random", "legal"], seed=3) as (random_url, legal_url),
        slow_player() as slow_url,
        aiohttp.ClientSession() as session,
    ):
        # no player checks: the slow player's check would hold its seats for half a minute
        server, port = await start_serve_on_a_free_port(tmp_path, NO_CHECKS)
        base = f"http://127.0.0.1:{port}"
        try:
            players = {"rnd": random_url, "lgl": legal_url, "slow1": slow_url, "slow2": slow_url}
            for name, url in players.items():
                async with session.post(
                    f"{base}/api/players", json={"name": name, "url": url}, headers=HEADERS
                ) as response:
                    assert response.status == 201, await response.text()

            async def queue(game: str, seated: list[str], playclock: int = 1) -> str:
                body = {"game": game, "players": seated, "startclock": 3, "playclock": playclock}
                async with session.post(
                    f"{base}/api/matches", json=body, headers=HEADERS
                ) as response:
                    assert response.status == 201, await response.text()
                    return str((await response.json())["id"])

            finished_id = await queue("nineBoardTicTacToe", ["rnd", "lgl"])
            finished = await poll(
                session, f"{base}/api/matches/{finished_id}", lambda m: m["status"] == "finished"
            )
            async with session.get(f"{base}/api/matches/{finished_id}/log") as response:
                finished_log = await response.read()
            interrupted = [
                await queue("nineBoardTicTacToe", ["slow1", "rnd"]),
                await queue("nineBoardTicTacToe", ["lgl", "slow2"]),
            ]
            for match_id in interrupted:
                # running, with START and at least one step stored
                await poll(
                    session,
                    f"{base}/api/matches/{match_id}/log",
                    lambda log: len(log.get("states", [])) >= 2,
                )
        finally:
            server.send_signal(signal.SIGKILL)
            await server.wait()

        extra = ["--requeue-interrupted"] if requeue else []
        server = await start_serve(tmp_path, port, NO_CHECKS, *extra)
        try:
            matches = await poll(session, f"{base}/api/matches?limit=1000", lambda data: True)
            by_id = {match["id"]: match for match in matches}
            assert by_id[finished_id] == finished
            async with session.get(f"{base}/api/matches/{finished_id}/log") as response:
                assert await response.read() == finished_log
            key = load_host_key(tmp_path / "host_key.pem")
            for match_id in interrupted:
                match = by_id[match_id]
                assert (match["status"], match["end_reason"]) == ("aborted", "server_restart")
                async with session.get(f"{base}/api/matches/{match_id}/log") as response:
                    log = await response.json()
                assert log["isAborted"] and verify_record(log, key.public_key()).ok
            copies = [match for match in matches if match["requeued_from"] in interrupted]
            assert len(copies) == (2 if requeue else 0)
            originals = [by_id[match_id] for match_id in [finished_id, *interrupted]]
            assert all(match["status"] != "running" for match in originals)
        finally:
            server.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                await server.wait()


async def test_a_check_the_kill_interrupted_is_kept_as_interrupted_and_can_run_again(
    tmp_path: Path,
) -> None:
    async with slow_player() as slow_url, aiohttp.ClientSession() as session:
        server, port = await start_serve_on_a_free_port(tmp_path)
        base = f"http://127.0.0.1:{port}"
        checks_url = f"{base}/api/players/slow/checks"
        try:
            async with session.post(
                f"{base}/api/players", json={"name": "slow", "url": slow_url}, headers=HEADERS
            ) as response:
                assert response.status == 201, await response.text()
            # the check plays a short match; the slow player holds it up
            running = await poll(
                session, checks_url, lambda rows: bool(rows) and rows[0]["status"] == "running"
            )
        finally:
            server.send_signal(signal.SIGKILL)
            await server.wait()

        server = await start_serve(tmp_path, port)
        try:
            rows = await poll(session, checks_url, lambda rows: True)
            assert [(row["id"], row["status"], row["error"]) for row in rows] == [
                (running[0]["id"], "interrupted", "the service stopped")
            ]
            assert rows[0]["finished_at"] is not None and rows[0]["passed"] is None
            async with session.post(checks_url, headers=HEADERS) as response:
                assert response.status == 202, await response.text()
                again = await response.json()
            assert again["id"] != running[0]["id"]
            assert again["status"] in ("queued", "running")
        finally:
            server.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                await server.wait()
