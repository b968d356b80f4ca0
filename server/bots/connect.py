"""Running an outbound connection until SIGINT or SIGTERM: a relay, or a bot of the kit."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from players.agent import PlayerAgent
from players.answer_journal import AnswerJournal
from players.outbound import Answer, BadToken, run_agent_outbound, say, stay_connected


async def until_signalled() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    return stop


async def run_relay(
    server: str, token: str, answer: Answer, journal: AnswerJournal | None = None
) -> int:
    """Bridge until stopped; the exit status (1 when the token is refused)."""
    stop = await until_signalled()
    try:
        await stay_connected(server, token, answer, stop, journal=journal)
    except BadToken as error:
        say(f"ggp connect: {error}")
        return 1
    say("stopped")
    return 0


async def run_bot(agent: PlayerAgent, server: str, token: str) -> int:
    """Connect a kit bot (or a bundled player) until stopped; the exit status."""
    stop = await until_signalled()
    try:
        await run_agent_outbound(agent, server, token, stop)
    except BadToken as error:
        say(f"ggp connect: {error}")
        return 1
    say("stopped")
    return 0
