"""Light local players for the throughput benchmarks, so that the players never lag the server.

One process answers for any number of matches on one loopback port, with a bare asyncio
HTTP/1.0 server (no web framework, no worker threads; a request with ``Connection:
keep-alive`` keeps its connection open): ``ready`` to START, a random legal
move to PLAY (the game of a rulesheet is loaded once per process and its states kept per
match, on the compiled engine where it applies), ``done`` to STOP and ABORT, and
``( ( name fast ) ( status available ) )`` to INFO.  With ``--think-ms T`` every PLAY
is answered T milliseconds after it arrived (a timer, no CPU), so matches stay running
as long as real ones.  The throughput benchmarks start several of these
(``--player-processes``); alone it prints ``listening on URL`` and serves:

``python benchmarks/support/fast_players.py [--seed N] [--port-range LOW-HIGH] [--think-ms T]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root is importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

_END_OF_HEADERS = re.compile(rb"\r?\n\r?\n")
_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)
_KEEP_ALIVE = re.compile(rb"\nconnection:\s*keep-alive", re.IGNORECASE)


class FastPlayer:
    """The protocol side: one :meth:`answer` per message; games cached by rulesheet."""

    def __init__(self, seed: int, think: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.think = think
        """Seconds before a PLAY is answered."""
        self.games: dict[str, Any] = {}
        self.matches: dict[str, tuple[Any, str, Any]] = {}

    def answer(self, text: str) -> str:
        from server.gdl import Game
        from server.gdl.compile_budget import CompileBudget
        from server.protocol import Abort, Info, Play, Start, Stop, parse_message, render_move
        from server.protocol.render import render_rules

        message = parse_message(text)
        if isinstance(message, Start):
            key = render_rules(message.rules)
            game = self.games.get(key)
            if game is None:
                budget = CompileBudget.for_start_clock(message.start_clock)
                game = self.games[key] = Game(
                    message.rules,
                    compile_time_limit=budget.time_limit,
                    max_ground_rules=budget.max_ground_rules,
                )
            self.matches[message.match_id] = (game, message.role, game.initial_state())
            return "ready"
        if isinstance(message, Play):
            game, role, state = self.matches[message.match_id]
            if message.moves is not None:
                state = game.next_state(state, message.moves)
                self.matches[message.match_id] = (game, role, state)
            return render_move(self.rng.choice(game.legal_moves(state, role)))
        if isinstance(message, Stop | Abort):
            self.matches.pop(message.match_id, None)
            return "done"
        if isinstance(message, Info):
            return "( ( name fast ) ( status available ) )"
        return "busy"


class _Connection(asyncio.Protocol):
    def __init__(self, player: FastPlayer) -> None:
        self.player = player
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.transport is not None and not self.transport.is_closing():
            found = _END_OF_HEADERS.search(self.buffer)
            if found is None:
                return
            length = _LENGTH.search(self.buffer, 0, found.start())
            size = int(length.group(1)) if length is not None else len(self.buffer) - found.end()
            if len(self.buffer) - found.end() < size:
                return
            keep_alive = _KEEP_ALIVE.search(self.buffer, 0, found.start()) is not None
            text = self.buffer[found.end() : found.end() + size].decode("utf-8")
            self.buffer = self.buffer[found.end() + size :]
            try:
                reply = self.player.answer(text)
            except Exception as error:  # a benchmark player: say what went wrong, keep serving
                print(f"fast player: {error!r}", file=sys.stderr, flush=True)
                reply = "error"
            if self.player.think > 0 and text.lstrip("( ").lower().startswith("play"):
                asyncio.get_running_loop().call_later(
                    self.player.think, self._reply, reply, keep_alive
                )
            else:
                self._reply(reply, keep_alive)

    def _reply(self, reply: str, keep_alive: bool) -> None:
        """Answer; close unless the request asked to keep the connection open."""
        from server.protocol.http import response_bytes

        assert self.transport is not None
        if self.transport.is_closing():
            return
        data = response_bytes(reply)
        if keep_alive:
            data = data.replace(b"\r\n", b"\r\nConnection: keep-alive\r\n", 1)
            self.transport.write(data)
        else:
            self.transport.write(data)
            self.transport.close()


async def serve(seed: int, ports: range | None, think: float = 0.0) -> None:
    """Listen on the first free port of ``ports`` (any free port by default); serve forever."""
    player = FastPlayer(seed, think)
    loop = asyncio.get_running_loop()
    for port in ports or (0,):
        try:
            server = await loop.create_server(
                lambda: _Connection(player), "127.0.0.1", port, backlog=4096
            )
        except OSError:
            continue
        address = server.sockets[0].getsockname()
        print(f"listening on http://{address[0]}:{address[1]}/", flush=True)
        await asyncio.Event().wait()
    print("no free port in the range", flush=True)


@contextlib.asynccontextmanager
async def fast_player_process(
    seed: int, ports: range | None = None, think_ms: int = 0
) -> AsyncIterator[str]:
    """Run one fast player process; yield its URL; stop it at the end."""
    command = [sys.executable, __file__, "--seed", str(seed), "--think-ms", str(think_ms)]
    if ports is not None:
        command += ["--port-range", f"{ports.start}-{ports.stop - 1}"]
    process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the player process did not start: {line!r}")
        yield line.split()[-1]
    finally:
        process.terminate()
        await process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port-range", metavar="LOW-HIGH")
    parser.add_argument("--think-ms", type=int, default=0, help="delay before each PLAY reply")
    args = parser.parse_args()
    ports = None
    if args.port_range:
        low, _, high = args.port_range.partition("-")
        ports = range(int(low), int(high) + 1)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.seed, ports, args.think_ms / 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
