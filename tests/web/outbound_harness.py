"""Helpers for outbound-bot tests: register a bot, run `ggp connect` / `ggp player` processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from .harness import ADMIN_HEADERS

REPO = Path(__file__).resolve().parents[2]


async def register_outbound(client: TestClient, name: str, **extra: Any) -> str:
    """Register an outbound bot through the API; its token."""
    response = await client.post(
        "/api/players",
        json={"name": name, "connection": "outbound", **extra},
        headers=ADMIN_HEADERS,
    )
    body = await response.json()
    assert response.status == 201, body
    assert body["connection"] == "outbound" and body["url"] == ""
    token: str = body["token"]
    return token


async def queue(client: TestClient, players: list[str | None], **options: Any) -> str:
    body = {"game": "nineBoardTicTacToe", "players": players, "startclock": 5, "playclock": 2}
    response = await client.post("/api/matches", json={**body, **options}, headers=ADMIN_HEADERS)
    answer = await response.json()
    assert response.status == 201, answer
    match_id: str = answer["id"]
    return match_id


async def log_of(client: TestClient, match_id: str) -> dict[str, Any]:
    record: dict[str, Any] = await (await client.get(f"/api/matches/{match_id}/log")).json()
    return record


class Process:
    """A `ggp` sub-command in its own process; stderr kept in a file to read."""

    def __init__(self, args: list[str], stderr: Path) -> None:
        self.args = args
        self.stderr_path = stderr
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> Process:
        with self.stderr_path.open("ab") as err:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server.cli",
                *self.args,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=err,
                cwd=REPO,
                # the relay's journal goes to the test's folder, not the user's data folder
                env={
                    **os.environ,
                    "PYTHONUNBUFFERED": "1",
                    "GGP_DATA_DIR": str(self.stderr_path.parent / "ggp-data"),
                },
            )
        return self

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    async def wait_for_line(self, text: str, count: int = 1, seconds: float = 30.0) -> None:
        async with asyncio.timeout(seconds):
            while self.stderr.count(text) < count:
                assert self.process is not None
                if self.process.returncode is not None:
                    raise AssertionError(f"exited {self.process.returncode}: {self.stderr}")
                await asyncio.sleep(0.05)

    async def kill(self, signum: int = signal.SIGKILL) -> int:
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signum)
        return await asyncio.wait_for(self.process.wait(), 10)


@contextlib.asynccontextmanager
async def ggp(args: list[str], stderr: Path) -> AsyncIterator[Process]:
    """Run ``ggp ARGS`` for the block; killed at the end if still running."""
    process = await Process(args, stderr).start()
    try:
        yield process
    finally:
        await process.kill()


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Wait until ``condition()`` holds (checked every 20 ms), at most ``seconds``."""
    async with asyncio.timeout(seconds):
        while True:
            if condition():
                return
            await asyncio.sleep(0.02)
