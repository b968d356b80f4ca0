"""A player that answers with exactly the HTTP framing of GGP-Base's RandomGamer.

Not GGP-Base itself (its Java build is not available here): a replica of how its
``GamePlayer`` behaves on the wire, as captured byte for byte in the protocol
transcripts of ``../shared/protocol`` (``player-probes-transcript.txt``), so that a
relay can be tested against what a GGP-Base player sends and expects:

* one connection at a time (the Java player is single-threaded), read as
  ``HttpReader.readAsServer`` reads it: ``POST`` bodies of exactly Content-Length
  characters (or up to the client's half-close), ``GET /<url-encoded message>``,
  every header but Content-Length ignored;
* every reply is ``HTTP/1.0 200 OK`` with the lower-case ``Content-type`` and
  ``Content-length`` headers and the four CORS headers, in that order, the body
  with no newline, then the socket is closed;
* ``OPTIONS`` and other methods get the same headers with an empty body, and the
  socket is left open; a message it cannot read (unknown type, wrong arity, bad
  GDL) gets no bytes at all and the socket is left open, as the Java player
  swallows the exception;
* one match at a time: a second START, or PLAY/STOP/ABORT for another match id,
  is answered ``busy``; INFO answers ``( ( name Random ) ( status available ) )``,
  ``busy`` while in a match; a PLAY is answered with a uniformly random legal move
  printed as GGP-Base prints GDL terms (``( mark 1 2 )``, ``noop``).

Run as ``python ggp_base_replica.py [--port N] [--seed S]``: prints
``listening on http://127.0.0.1:PORT/`` once ready.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import urllib.parse
from dataclasses import dataclass
from typing import Any

from server.gdl import Game, State
from server.protocol import Abort, Info, Play, ProtocolError, Start, Stop, parse_message
from server.protocol.replies import render_move

CORS = (
    b"Access-Control-Allow-Origin: *\r\n"
    b"Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n"
    b"Access-Control-Allow-Headers: Content-Type\r\n"
    b"Access-Control-Allow-Age: 86400\r\n"
)


def reply_bytes(body: str) -> bytes:
    """``HttpWriter.writeAsServer``: the status line, GGP-Base's header spelling, the body."""
    return (
        b"HTTP/1.0 200 OK\r\n"
        b"Content-type: text/acl\r\n"
        + f"Content-length: {len(body)}\r\n".encode()
        + CORS
        + b"\r\n"
        + body.encode("utf-8")
    )


@dataclass
class CurrentMatch:
    match_id: str
    role: str
    game: Game
    state: State


class RandomGamer:
    """The match logic of GGP-Base's RandomGamer: one match, random legal moves."""

    def __init__(self, seed: int | None) -> None:
        self.rng = random.Random(seed)
        self.match: CurrentMatch | None = None

    def answer(self, message: Any) -> str:
        match = self.match
        if isinstance(message, Info):
            status = "busy" if match is not None else "available"
            return f"( ( name Random ) ( status {status} ) )"
        if isinstance(message, Start):
            if match is not None:
                return "busy"
            game = Game(message.rules)  # rules that are not GDL raise: no reply
            self.match = CurrentMatch(message.match_id, message.role, game, game.initial_state())
            return "ready"
        if match is None or getattr(message, "match_id", None) != match.match_id:
            return "busy"
        if isinstance(message, Play):
            try:
                if message.moves is not None:
                    match.state = match.game.next_state(match.state, list(message.moves))
                if match.role not in match.game.roles:
                    return "nil"
                legal = match.game.legal_moves(match.state, match.role)
                return render_move(self.rng.choice(legal))  # ( mark 1 2 ), as GDL prints it
            except Exception:
                return "nil"  # GGP-Base answers nil when move selection throws
        if isinstance(message, Stop):
            self.match = None
            return "done"
        if isinstance(message, Abort):
            self.match = None
            return "aborted"
        raise ProtocolError("a message RandomGamer does not handle")


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str]:
    """(method, message) as ``HttpReader.readAsServer`` reads them."""
    request_line = (await reader.readline()).decode("utf-8", "replace")
    length: int | None = None
    while True:
        line = (await reader.readline()).decode("utf-8", "replace")
        if line in ("\r\n", "\n", ""):
            break
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    method, _, rest = request_line.partition(" ")
    method = method.upper()
    if method == "GET":
        path = rest.split(" ")[0]
        return method, urllib.parse.unquote(path[1:] if path.startswith("/") else path)
    if method != "POST":
        return method, ""
    body = await (reader.read() if length is None else reader.readexactly(length))
    return method, body.decode("utf-8", "replace")


class ReplicaServer:
    """Accepts one connection at a time, as ``GamePlayer.run`` does."""

    def __init__(self, seed: int | None) -> None:
        self.gamer = RandomGamer(seed)
        self.turn = asyncio.Lock()
        self.left_open: set[asyncio.StreamWriter] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with self.turn:
            try:
                method, text = await read_request(reader)
            except (ValueError, asyncio.IncompleteReadError, ConnectionError):
                writer.close()
                return
            if method not in ("GET", "POST"):
                writer.write(reply_bytes(""))  # and the socket is left open
                self.left_open.add(writer)
                return
            try:
                reply = self.gamer.answer(parse_message(text))
            except Exception:
                self.left_open.add(writer)  # no bytes, socket left open
                return
            writer.write(reply_bytes(reply))
            try:
                await writer.drain()
            except ConnectionError:
                pass
            writer.close()


async def serve(port: int, seed: int | None) -> None:
    replica = ReplicaServer(seed)
    server = await asyncio.start_server(replica.handle, "127.0.0.1", port)
    bound = server.sockets[0].getsockname()[1]
    print(f"listening on http://127.0.0.1:{bound}/", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.port, args.seed))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
