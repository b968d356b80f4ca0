"""The bot's side of an outbound connection: dial the server, answer GGP messages, reconnect.

>>> async def answer(text: str) -> str: ...
>>> await stay_connected("http://ggp.example.org:9000", token, answer, stop)  # doctest: +SKIP

A bot behind a firewall opens a WebSocket to ``ggp serve`` (``/api/bots/connect``)
with its player token and answers each GGP message on it, framed as
:mod:`server.protocol.envelope` describes; every message is answered in a task of its
own, so several matches run at once.  A message the server sends again after a
reconnect (same id) is answered from the answer already made, never played twice; a
relay keeps a journal of them so that this holds when its process is restarted too
(:mod:`players.answer_journal`).  A lost connection is opened again with a growing
pause (0.5 s, doubling, at most 10 s); each connect and disconnect is one line on
stderr.  A refused token ends the loop, since retrying cannot help.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from server.protocol import ProtocolError, parse_message
from server.protocol.envelope import (
    CONNECT_PATH,
    BotMessage,
    BotReply,
    BotWelcome,
    dump_frame,
    parse_frame,
)

from .agent import PlayerAgent, RequestRejected
from .answer_journal import AnswerJournal

Answer = Callable[[str], Awaitable[str]]
"""Turns one GGP message into its reply text; raising gives the server an error frame."""

FIRST_PAUSE = 0.5
LONGEST_PAUSE = 10.0
HEARTBEAT = 10.0
"""Seconds between the client's own WebSocket pings, which find a dead server."""


class BadToken(Exception):
    """The server refused the token."""


def connect_url(server: str) -> str:
    """The WebSocket URL of a server given as ``http(s)://host:port``; ValueError if not one."""
    parts = urlsplit(server if "://" in server else "http://" + server)
    schemes = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
    if parts.scheme not in schemes or not parts.hostname:
        raise ValueError(f"not a server URL: {server!r} (give http://HOST:PORT)")
    try:
        parts.port  # noqa: B018 - raises for a port out of range
    except ValueError as error:
        raise ValueError(f"not a server URL: {server!r} ({error})") from None
    path = parts.path.rstrip("/")
    if not path.endswith(CONNECT_PATH):
        path += CONNECT_PATH
    return urlunsplit((schemes[parts.scheme], parts.netloc, path, "", ""))


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def stay_connected(
    server: str,
    token: str,
    answer: Answer,
    stop: asyncio.Event,
    *,
    on_welcome: Callable[[BotWelcome], None] | None = None,
    heartbeat: float = HEARTBEAT,
    journal: AnswerJournal | None = None,
) -> None:
    """Keep a connection to ``server`` until ``stop`` is set; :class:`BadToken` if refused.

    With a ``journal``, a message passed on before a restart of this process is not
    passed on again (a relay's player would act on it twice)."""
    url = connect_url(server)
    pause = FIRST_PAUSE
    answers = _Answers(answer, journal=journal)
    async with aiohttp.ClientSession() as session:
        while not stop.is_set():
            try:
                reason = await _one_connection(
                    session, url, token, answers, stop, on_welcome, heartbeat
                )
                pause = FIRST_PAUSE
            except BadToken:
                raise
            except (aiohttp.ClientError, OSError, ProtocolError, TimeoutError) as error:
                reason = str(error) or type(error).__name__
            if stop.is_set():
                return
            say(f"disconnected from {url}: {reason}; connecting again in {pause:g} s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)
            pause = min(pause * 2, LONGEST_PAUSE)


async def _one_connection(
    session: aiohttp.ClientSession,
    url: str,
    token: str,
    answers: _Answers,
    stop: asyncio.Event,
    on_welcome: Callable[[BotWelcome], None] | None,
    heartbeat: float,
) -> str:
    """Serve one socket until it closes; why it closed."""
    try:
        socket = await session.ws_connect(
            url,
            headers={"Authorization": f"Bearer {token}"},
            heartbeat=heartbeat,
            max_msg_size=0,
        )
    except aiohttp.WSServerHandshakeError as error:
        if error.status == 401:
            raise BadToken("the server refused the token") from None
        raise
    tasks: set[asyncio.Task[None]] = set()
    stopping = asyncio.ensure_future(stop.wait())
    try:
        first = await socket.receive(timeout=10)
        if first.type is not aiohttp.WSMsgType.TEXT:
            if socket.close_code == 4401:
                raise BadToken("the server refused the token")
            return f"closed before the welcome (code {socket.close_code})"
        welcome = parse_frame(first.data, BotWelcome)
        say(f"connected to {url} as {welcome.welcome}")
        if on_welcome is not None:
            on_welcome(welcome)
        while True:
            receiving = asyncio.ensure_future(socket.receive())
            await asyncio.wait({receiving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if stopping.done():
                receiving.cancel()
                await socket.close()
                return "stopped"
            message = receiving.result()
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            frame = parse_frame(message.data, BotMessage)
            task = asyncio.create_task(_answer_one(socket, frame, answers))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    finally:
        stopping.cancel()
        for task in tasks:
            task.cancel()
        if not socket.closed:
            await socket.close()
    code = socket.close_code
    return "the connection was lost" if code in (None, 1006) else f"closed (code {code})"


class AnsweredBeforeRestart(Exception):
    """The message was passed on before this process started; its answer was lost."""


class _Answers:
    """Each message answered once: a message the server sends again after a reconnect
    (same id) gets the answer already made, or waits for the one being made.  With a
    journal, this holds across a restart of the process too (see
    :mod:`players.answer_journal`)."""

    def __init__(
        self, answer: Answer, keep: int = 1024, journal: AnswerJournal | None = None
    ) -> None:
        self.answer = answer
        self.keep = keep
        self.journal = journal
        self.made: OrderedDict[tuple[int, int], asyncio.Future[str]] = OrderedDict()

    async def _first(self, frame: BotMessage) -> str:
        journal = self.journal
        if journal is None or not _is_play(frame.message):
            # only PLAY acts twice when it comes twice (its moves applied twice); a second
            # START, STOP or ABORT is answered busy, and INFO may be asked any number of times
            return await self.answer(frame.message)
        entry = journal.lookup(frame.id, frame.message)
        if entry is not None:
            if entry.reply is not None:
                return entry.reply
            raise AnsweredBeforeRestart(
                "passed on to the player before the relay restarted; not passed on twice"
            )
        journal.sent(frame.id, frame.message)
        reply = await self.answer(frame.message)
        journal.answered(frame.id, frame.message, reply)
        return reply

    def of(self, frame: BotMessage) -> asyncio.Future[str]:
        key = (frame.id, hash(frame.message))  # an id of another server run is another message
        made = self.made.get(key)
        if made is None:
            made = asyncio.ensure_future(self._first(frame))
            self.made[key] = made
            while len(self.made) > self.keep:
                self.made.popitem(last=False)
        return made


def _is_play(message: str) -> bool:
    words = message.replace("(", " ").split()
    return bool(words) and words[0].lower() == "play"


async def _answer_one(
    socket: aiohttp.ClientWebSocketResponse, frame: BotMessage, answers: _Answers
) -> None:
    try:
        reply = BotReply(id=frame.id, reply=await asyncio.shield(answers.of(frame)))
    except Exception as error:
        reply = BotReply(id=frame.id, error=f"{type(error).__name__}: {error}")
    with contextlib.suppress(ConnectionError, RuntimeError):
        await socket.send_str(dump_frame(reply))


def agent_answer(agent: PlayerAgent) -> Answer:
    """Answers for a player agent, as its HTTP side would give them."""

    async def answer(text: str) -> str:
        received = time.monotonic()
        try:
            return await agent.answer(parse_message(text), received)
        except (ProtocolError, RequestRejected) as error:
            raise ValueError(f"cannot act on the message: {error}") from None

    return answer


async def run_agent_outbound(
    agent: PlayerAgent, server: str, token: str, stop: asyncio.Event
) -> None:
    """Connect ``agent`` to ``server`` until ``stop``; it takes as many matches as registered."""

    def welcome(frame: BotWelcome) -> None:
        agent.max_matches = frame.max_matches

    async def sweep() -> None:
        while True:
            await asyncio.sleep(0.5)
            agent.forget_silent_matches()

    sweeper = asyncio.create_task(sweep())
    try:
        await stay_connected(server, token, agent_answer(agent), stop, on_welcome=welcome)
    finally:
        sweeper.cancel()
