"""Serving a player on a TCP port until the process is told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator

from aiohttp import web

from .agent import PlayerAgent
from .base import Player


def url_of(address: object) -> str:
    """The ``http://host:port`` URL of a bound socket address."""
    host, port = address[0], address[1]  # type: ignore[index]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@contextlib.asynccontextmanager
async def running(agent: PlayerAgent, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve ``agent`` on ``host:port`` (0 picks a free port) and yield its URL."""
    runner = web.AppRunner(agent.app(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        yield url_of(runner.addresses[0])
    finally:
        await runner.cleanup()


async def serve(player: Player | PlayerAgent, host: str = "127.0.0.1", port: int = 0) -> None:
    """Serve ``player`` (or a ready agent) until SIGINT or SIGTERM.

    Once the port is open, prints one line ``listening on http://HOST:PORT`` to
    stdout (flushed) so that a parent process can wait for it.
    """
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stopped.set)
    agent = player if isinstance(player, PlayerAgent) else PlayerAgent(player)
    async with running(agent, host, port) as url:
        print(f"listening on {url}", flush=True)
        await stopped.wait()
