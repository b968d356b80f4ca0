"""Real parts for the scale-out tests: a PostgreSQL database, player and worker processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from pgcluster import create_database
from sqlalchemy import select

from server.catalog import seed_bundled_games
from server.store import MatchRow, MatchStatus, Store
from server.store.tables import matches

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).with_name("bots.py")
_numbers = iter(range(1_000_000))


async def prepared_database(base_url: str) -> str:
    """A fresh database in the test cluster, at the latest schema, with the bundled games."""
    url = create_database(base_url, f"workers_{os.getpid()}_{next(_numbers)}")
    store = Store(url)
    await store.open(upgrade=True)
    await seed_bundled_games(store)
    await store.close()
    return url


def spawn_player(spec: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """A player process (a bundled name or ``bots.py:Class``); (process, URL)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "players", spec, "--port", "0", "--parent-pid", str(os.getpid())],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("listening on "), line
    return process, line.split()[-1]


@contextlib.contextmanager
def players(specs: dict[str, str], env: dict[str, str] | None = None) -> Iterator[dict[str, str]]:
    """Player processes by name; their URLs by name."""
    started: dict[str, tuple[subprocess.Popen[str], str]] = {}
    try:
        for name, spec in specs.items():
            started[name] = spawn_player(spec, env)
        yield {name: url for name, (_, url) in started.items()}
    finally:
        for process, _ in started.values():
            process.terminate()
        for process, _ in started.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)


class WorkerProcess:
    """``ggp worker`` in a process of its own."""

    def __init__(
        self,
        url: str,
        name: str,
        key_file: Path,
        *,
        games: list[str] | None = None,
        concurrency: int = 4,
        lost_after: float = 6.0,
        requeue: bool = False,
        log_dir: Path | None = None,
    ) -> None:
        command = [
            sys.executable,
            "-m",
            "server.cli",
            "worker",
            "--database",
            url,
            "--name",
            name,
            "--concurrency",
            str(concurrency),
            "--lost-after",
            str(lost_after),
        ]
        if games:
            command += ["--games", ",".join(games)]
        if requeue:
            command.append("--requeue-interrupted")
        self.name = name
        self.log = (log_dir or key_file.parent) / f"{name}.log"
        self._log_file = self.log.open("w")
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            text=True,
            cwd=ROOT,
            env={**os.environ, "GGP_HOST_KEY": str(key_file)},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith(f"worker {name}: running"), (line, self.log.read_text())

    def kill(self) -> None:
        """SIGKILL: no goodbye, no ABORT, nothing written."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log_file.close()
        return self.process.returncode


@contextlib.contextmanager
def workers_running(*workers: WorkerProcess) -> Iterator[list[WorkerProcess]]:
    """Stop every worker (those started later too, when appended) at the end."""
    group = list(workers)
    try:
        yield group
    finally:
        for worker in group:
            worker.stop()


async def all_matches(store: Store) -> list[dict[str, Any]]:
    """Every match row with the scale-out columns (worker, job)."""
    async with store.engine.connect() as connection:
        rows = await connection.execute(select(matches).order_by(matches.c.queued_at))
        return [dict(row._mapping) for row in rows]


async def wait_until_settled(store: Store, seconds: float = 180.0) -> list[MatchRow]:
    """Wait until no match is queued or running; every match."""
    deadline = time.monotonic() + seconds
    while True:
        counts = await store.count_matches()
        if counts[MatchStatus.QUEUED] == 0 and counts[MatchStatus.RUNNING] == 0:
            return await store.list_matches(limit=100_000)
        assert time.monotonic() < deadline, f"matches still open after {seconds} s: {counts}"
        await asyncio.sleep(0.3)


@contextlib.asynccontextmanager
async def open_store(url: str) -> AsyncIterator[Store]:
    store = Store(url)
    await store.open()
    try:
        yield store
    finally:
        await store.close()
