"""Bundled players run as local processes, for ``ggp match`` and tests.

Each player is ``python -m players NAME --port 0`` on the loopback interface; it
prints ``listening on http://HOST:PORT`` once it accepts connections.  The process
is stopped (SIGTERM, then SIGKILL) when the context ends.  It is tied to this
process (``--parent-pid``), so it dies with it even when this process is killed
with SIGKILL, and it runs in its own session, so a Ctrl-C at the terminal reaches
only this process, which then sends ABORT before stopping the players.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections import deque
from collections.abc import AsyncIterator, Sequence

_LISTENING = re.compile(r"listening on (\S+)")
_URL_LIKE = re.compile(r"^[a-z][a-z0-9+.-]*://|^[^/\s]+:\d+(/.*)?$", re.IGNORECASE)

STARTUP_SECONDS = 30.0
STOP_SECONDS = 5.0


def looks_like_url(spec: str) -> bool:
    """True for ``http://host:port/...`` or ``host:port``; false for a player name."""
    return bool(_URL_LIKE.match(spec))


class PlayerProcessError(RuntimeError):
    """A bundled player process that did not start."""


async def _drain(stream: asyncio.StreamReader, keep: deque[str]) -> None:
    while line := await stream.readline():
        keep.append(line.decode("utf-8", errors="replace").rstrip())


@contextlib.asynccontextmanager
async def local_player(name: str, *, seed: int | None = None) -> AsyncIterator[str]:
    """Run the bundled player ``name`` on a free loopback port; yield its URL."""
    command = [sys.executable, "-m", "players", name, "--host", "127.0.0.1", "--port", "0"]
    command += ["--parent-pid", str(os.getpid())]
    if seed is not None:
        command += ["--seed", str(seed)]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    errors: deque[str] = deque(maxlen=20)
    drain_errors = asyncio.create_task(_drain(process.stderr, errors))
    drain_output: asyncio.Task[None] | None = None
    try:
        url = await _wait_for_url(process, process.stdout, errors, name)
        drain_output = asyncio.create_task(_drain(process.stdout, deque(maxlen=20)))
        yield url
    finally:
        await _stop(process)
        for task in (drain_errors, drain_output):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def _wait_for_url(
    process: asyncio.subprocess.Process,
    stdout: asyncio.StreamReader,
    errors: deque[str],
    name: str,
) -> str:
    try:
        async with asyncio.timeout(STARTUP_SECONDS):
            while line := await stdout.readline():
                found = _LISTENING.search(line.decode("utf-8", errors="replace"))
                if found:
                    return found.group(1)
    except TimeoutError:
        pass
    await _stop(process)
    await asyncio.sleep(0)
    detail = "; ".join(errors) or f"exit code {process.returncode}"
    raise PlayerProcessError(f"player {name!r} did not start: {detail}")


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        async with asyncio.timeout(STOP_SECONDS):
            await process.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


@contextlib.asynccontextmanager
async def local_players(
    names: Sequence[str], *, seed: int | None = None
) -> AsyncIterator[list[str]]:
    """Run several bundled players at once; yield their URLs in the same order."""
    async with contextlib.AsyncExitStack() as stack:
        contexts = [
            local_player(name, seed=None if seed is None else seed + index)
            for index, name in enumerate(names)
        ]
        results = await asyncio.gather(
            *(stack.enter_async_context(context) for context in contexts), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result
        yield [str(url) for url in results]
