"""Players for tests: a scripted GGP player on raw sockets that misbehaves on demand.

:class:`FakePlayer` speaks the protocol well enough to play any game (it follows the
state from the joint moves in PLAY and answers its first legal move), and answers
with a scheduled fault on chosen messages. It is written on asyncio streams, not
aiohttp, so that it can break HTTP itself: no headers, trickled bytes, floods.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from server.gdl import Game
from server.gdl.terms import to_ggp
from server.match.transport import PlayerAddress
from server.protocol import Abort, Play, Start, Stop, parse_message
from server.protocol.http import response_bytes

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
"""What a raw loopback server does with each connection."""


@contextlib.asynccontextmanager
async def loopback_server(handler: Handler) -> AsyncIterator[PlayerAddress]:
    """A raw TCP server on a free loopback port, each connection given to ``handler``
    (which reads the request and writes anything); closed on the way out."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    try:
        yield PlayerAddress("127.0.0.1", server.sockets[0].getsockname()[1])
    finally:
        server.close()


FAULTS = (
    "sleep",  # answers only after `delay` seconds, past the deadline
    "trickle",  # status line, headers and body in pieces, each gap shorter than the clock
    "garbage",  # an unparsable body
    "illegal",  # a well-formed term that is not a legal move
    "nil",  # the word nil
    "busy",  # the word busy
    "close",  # closes the connection without a byte
    "http500",  # HTTP 500 with the right move in the body
    "huge",  # a body far over the size limit, without a length
    "no_headers",  # the bare body, no status line, no headers
    "no_length",  # HTTP/1.0 without Content-Length, body ended by closing
    "chunked",  # HTTP/1.1 with a chunked body
    "chunk_extensions",  # the body in two chunks whose size lines carry extensions
    "upper",  # the right move in upper case
    "spaces",  # the right move surrounded by blank lines and spaces
    "empty",  # 200 with an empty body
)


@dataclass
class FakePlayer:
    """A GGP player on ``127.0.0.1`` with faults scheduled by message.

    ``faults`` maps ``"start"``, ``"stop"``, ``"abort"`` or a PLAY step number (from 1)
    to one of :data:`FAULTS`.  ``script``, when given, is the reply to each PLAY in
    turn instead of the first legal move.
    """

    faults: dict[str | int, str] = field(default_factory=dict)
    script: list[str] | None = None
    delay: float = 2.0
    trickle_gap: float = 0.45
    huge_bytes: int = 1_500_000
    requests: list[bytes] = field(default_factory=list)
    messages: list[object] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._game: Game | None = None
        self._role = ""
        self._state = None
        self._step = 0
        self._received = asyncio.Condition()

    async def received(self, count: int) -> None:
        """Wait until at least ``count`` messages have arrived."""
        async with self._received:
            await self._received.wait_for(lambda: len(self.messages) >= count)

    async def __aenter__(self) -> FakePlayer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 1)

    # -- protocol -------------------------------------------------------------------

    def _answer(self, message: object) -> tuple[str, str | int]:
        """The honest reply to a message, and the key its fault is scheduled under."""
        if isinstance(message, Start):
            self._game = Game(message.rules)
            self._role = message.role
            self._state = self._game.initial_state()
            self._step = 0
            return "ready", "start"
        if isinstance(message, Play):
            assert self._game is not None and self._state is not None
            if message.moves is not None:
                self._state = self._game.next_state(self._state, message.moves)
            self._step += 1
            if self.script is not None:
                return self.script[self._step - 1], self._step
            return to_ggp(self._game.legal_moves(self._state, self._role)[0]), self._step
        if isinstance(message, Stop):
            return "done", "stop"
        if isinstance(message, Abort):
            return "aborted", "abort"
        return "( ( name Fake ) ( status available ) )", "info"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length)
            self.requests.append(head + body)
            message = parse_message(body.decode())
            self.messages.append(message)
            async with self._received:
                self._received.notify_all()
            reply, key = self._answer(message)
            await self._reply(writer, reply, self.faults.get(key))
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.transport.abort()

    async def _reply(self, writer: asyncio.StreamWriter, reply: str, fault: str | None) -> None:
        if fault is None:
            writer.write(response_bytes(reply))
        elif fault == "sleep":
            await asyncio.sleep(self.delay)
            writer.write(response_bytes(reply))
        elif fault == "trickle":
            data = response_bytes(reply)
            pieces = [data[:17], data[17:60], data[60:-4], data[-4:]]
            for piece in pieces:
                writer.write(piece)
                await writer.drain()
                await asyncio.sleep(self.trickle_gap)
        elif fault in ("garbage", "illegal", "nil", "busy", "empty"):
            text = {
                "garbage": "((( this is not a move",
                "illegal": "( fly 9 9 )",
                "nil": "nil",
                "busy": "busy",
                "empty": "",
            }[fault]
            writer.write(response_bytes(text))
        elif fault == "close":
            return
        elif fault == "http500":
            data = response_bytes(reply).replace(b"200 OK", b"500 Internal Server Error", 1)
            writer.write(data)
        elif fault == "huge":
            writer.write(b"HTTP/1.0 200 OK\r\nContent-type: text/acl\r\n\r\n")
            chunk = b"x" * 65536
            for _ in range(self.huge_bytes // len(chunk) + 1):
                writer.write(chunk)
                await writer.drain()
        elif fault == "no_headers":
            writer.write(reply.encode())
        elif fault == "no_length":
            writer.write(b"HTTP/1.0 200 OK\r\nContent-type: text/acl\r\n\r\n" + reply.encode())
        elif fault == "chunked":
            body = reply.encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + f"{len(body):x}\r\n".encode()
                + body
                + b"\r\n0\r\n\r\n"
            )
        elif fault == "chunk_extensions":
            body = reply.encode()
            half = len(body) // 2
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + f"{half:X};name=value\r\n".encode()
                + body[:half]
                + f'\r\n{len(body) - half:x} ; quoted="a;b"\r\n'.encode()
                + body[half:]
                + b"\r\n0;last\r\n\r\n"
            )
        elif fault == "upper":
            writer.write(response_bytes(reply.upper()))
        elif fault == "spaces":
            writer.write(response_bytes(f"\r\n  {reply} \n\n"))
        else:
            raise ValueError(f"unknown fault {fault!r}")
        with contextlib.suppress(ConnectionError):
            await writer.drain()


def unused_port() -> int:
    """A loopback port with nobody listening on it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def counting_game(steps: int, roles: tuple[str, ...] = ("left", "right")) -> str:
    """A game that ends after exactly ``steps`` steps; every role may push 1 or 2 (or
    noop) each step, and everyone scores 50."""
    lines = [f"(role {role})" for role in roles]
    lines += ["(init (count 0))", "(choice 1) (choice 2)"]
    lines += [f"(succ {n} {n + 1})" for n in range(steps)]
    lines += [
        "(<= (legal ?r (push ?n)) (role ?r) (choice ?n))",
        "(<= (legal ?r noop) (role ?r))",
        "(<= (next (count ?y)) (true (count ?x)) (succ ?x ?y))",
        f"(<= terminal (true (count {steps})))",
    ]
    lines += [f"(goal {role} 50)" for role in roles]
    return "\n".join(lines)
