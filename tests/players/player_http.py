"""Talking to players over real loopback HTTP, byte for byte as GGP-Base does."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urlsplit

from players.legal_player import LegalPlayer
from players.match import PlayerMatch
from server.gdl import Game
from server.protocol.http import request_bytes

TICKING = """
; Two roles take turns to tick or tock until the count reaches 3.
(role left) (role right)
(init (count 0)) (init (control left))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal ?r tick) (true (control ?r)))
(<= (legal ?r tock) (true (control ?r)))
(<= (legal ?r noop) (role ?r) (not (true (control ?r))))
(<= (next (count ?n)) (true (count ?m)) (succ ?m ?n))
(<= (next (control right)) (true (control left)))
(<= (next (control left)) (true (control right)))
(<= terminal (true (count 3)))
(<= (goal ?r 50) (role ?r))
"""
"""A tiny two-role game: left moves on steps 1 and 3, right on step 2."""

TICKING_RULES = (
    "(" + " ".join(line for line in TICKING.splitlines() if line and not line.startswith(";")) + ")"
)


@dataclass(frozen=True)
class Reply:
    """A player's HTTP reply: status code, headers (as sent) and the body."""

    status: int
    headers: list[tuple[str, str]]
    body: str

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def _split(data: bytes) -> Reply:
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = [tuple(line.split(": ", 1)) for line in lines]
    return Reply(int(status_line.split()[1]), headers, body.decode("utf-8"))  # type: ignore[arg-type]


async def send_raw(url: str, data: bytes) -> Reply:
    """Write raw bytes on a fresh connection and read the reply until the player closes."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(data)
        await writer.drain()
        return _split(await reader.read())
    finally:
        writer.close()


async def send(url: str, message: str) -> Reply:
    """Send one message exactly as GGP-Base's game server does: one HTTP/1.0 POST."""
    return await send_raw(url, request_bytes(message, urlsplit(url).hostname or "", "tester"))


def start_message(match_id: str, role: str, start_clock: int = 5, play_clock: int = 3) -> str:
    """A START for the ticking game."""
    return f"( START {match_id} {role} {TICKING_RULES} {start_clock} {play_clock})"


class Remembering(LegalPlayer):
    """A legal player that notes the game of every match it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.games: dict[str, Game] = {}

    def start(self, match: PlayerMatch) -> None:
        self.games[match.match_id] = match.game
