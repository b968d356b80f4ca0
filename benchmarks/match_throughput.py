"""Many concurrent matches between local random players: how much work is the server's own?

Starts two random-player processes (one per role; each takes any number of matches
at once): the bundled random player (``--players bundled``, the default: aiohttp and the
player agent) or the light players of ``support/fast_players.py`` (``--players fast``,
which answer with a fraction of the CPU, so that less of the two cores goes to the
players and the server's figure is less inflated by sharing them).  Then runs
``--matches`` matches of ``--game`` with at most ``--concurrency`` at a time, first
writing their logs, then without logs (or only without, with ``--no-logs``), and prints
one row per mode:

- steps per second and wall time per step over the whole run (all matches together);
- the server's CPU time per step: CPU time of this process only (rules, move checking,
  records, events, transport; the player processes are not counted), and the runners'
  own measure of time not spent waiting for players;
- the peak number of matches actually in progress at once (from START to the close of
  the match, counted from the matches' own events), and the error count (0 when healthy).

Usage: ``python benchmarks/match_throughput.py [--game NAME] [--matches N]
[--concurrency C] [--playclock S] [--port-range LOW-HIGH] [--players bundled|fast] [--keep-alive]
[--no-logs] [--no-fsync]
[--loop auto|asyncio|uvloop] [--list-columns]``; the server runs on uvloop when it is
installed (the ``fast`` extra) unless ``--loop asyncio``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import Any

from support.fast_players import fast_player_process

COLUMNS = (
    "logs",
    "matches",
    "steps",
    "wall s",
    "steps/s",
    "wall ms/step",
    "server CPU ms/step",
    "own ms/step (median)",
    "peak concurrent",
    "errors",
)
"""The columns of the printed table, in order (``--list-columns`` prints them)."""


def parse_port_range(text: str) -> range:
    """``LOW-HIGH`` (inclusive) as a range of ports."""
    low, _, high = text.partition("-")
    try:
        ports = range(int(low), int(high) + 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW-HIGH, got {text!r}") from None
    if not ports or ports.start < 1 or ports.stop > 65536:
        raise argparse.ArgumentTypeError(f"not a range of ports: {text!r}")
    return ports


async def serve_random_player(seed: int, ports: range | None) -> None:
    """The player process: a random player taking any number of matches at once."""
    from players.agent import PlayerAgent
    from players.registry import create_player
    from players.serve import running

    agent = PlayerAgent(create_player("random", seed=seed), max_matches=1_000_000)
    for port in ports or (0,):
        try:
            async with running(agent, "127.0.0.1", port) as url:
                print(f"listening on {url}", flush=True)
                await asyncio.Event().wait()
        except OSError:
            continue
    print("no free port in the range", flush=True)


@contextlib.asynccontextmanager
async def player_process(seed: int, ports: range | None) -> AsyncIterator[str]:
    command = [sys.executable, __file__, "--serve-player", str(seed)]
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


@dataclass
class InProgress:
    """Counts the matches between their first event and their close: the honest peak."""

    now: int = 0
    peak: int = 0

    def __call__(self, event: Any) -> None:
        from server.match import MatchClosed, MatchStarted

        if isinstance(event, MatchStarted):
            self.now += 1
            self.peak = max(self.peak, self.now)
        elif isinstance(event, MatchClosed):
            self.now -= 1


async def measure(
    args: argparse.Namespace, game: Any, urls: list[str], logs: bool, matches: int
) -> list[str]:
    """Run ``matches`` matches; the row of the table."""
    from server.match import LogWriter, MatchConfig, MatchRunner, MatchStats, Player

    config = MatchConfig(
        start_clock=args.startclock, play_clock=args.playclock, network_slack=1.0, seed=1
    )
    folder = tempfile.TemporaryDirectory(prefix="ggp-bench-")  # removed with its logs after
    writer = LogWriter(folder.name, durable=not args.no_fsync)
    counter = InProgress()
    stats: list[MatchStats] = []
    errors = 0
    gate = asyncio.Semaphore(args.concurrency)

    async def one_match() -> None:
        nonlocal errors
        async with gate:
            runner = MatchRunner(
                game,
                [
                    Player(f"random{role}", url, keep_alive=args.keep_alive)
                    for role, url in enumerate(urls)
                ],
                config,
                game_name=args.game,
                observers=[counter, writer] if logs else [counter],
            )
            record = await runner.run()
            stats.append(runner.stats)
            errors += sum(bool(code) for codes in record.errors or [] for code in codes)

    cpu_started = time.process_time()
    wall_started = time.monotonic()
    with folder:
        await asyncio.gather(*(one_match() for _ in range(matches)))
        wall = time.monotonic() - wall_started
        cpu = time.process_time() - cpu_started

    steps = max(1, sum(item.steps for item in stats))
    own = [item.server_seconds / item.steps for item in stats if item.steps] or [0.0]
    return [
        "yes" if logs else "no",
        str(len(stats)),
        str(steps),
        f"{wall:.2f}",
        f"{steps / wall:.1f}",
        f"{1000 * wall / steps:.3f}",
        f"{1000 * cpu / steps:.3f}",
        f"{1000 * statistics.median(own):.3f}",
        str(counter.peak),
        str(errors),
    ]


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(cell) for cell in column) for column in zip(COLUMNS, *rows, strict=True)]
    for row in (list(COLUMNS), *rows):
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))


async def benchmark(args: argparse.Namespace) -> None:
    print(
        f"game {args.game}, {args.matches} matches, at most {args.concurrency} at once, "
        f"fsync {'off' if args.no_fsync else 'on'}, {args.players} players, "
        f"connections {'as the pings show' if args.keep_alive is None else 'kept' if args.keep_alive else 'one per message'}",
        flush=True,
    )
    from server.games import load_game
    from server.gdl.collector import settle_after_start
    from server.match import PlayerAddress, ping_player

    game = load_game(args.game)
    start = player_process if args.players == "bundled" else fast_player_process
    async with start(1, args.port_range) as first, start(2, args.port_range) as second:
        urls = [first, second]
        if args.keep_alive is None:
            pings = [await ping_player(PlayerAddress.parse(url)) for url in urls]
            args.keep_alive = all(ping.keeps_connections for ping in pings)
            print(
                f"the pings {'kept' if args.keep_alive else 'did not keep'} connections "
                f"open: {'one kept-open connection per player and match' if args.keep_alive else 'one connection per message'}",
                flush=True,
            )
        settle_after_start()  # as `ggp match` does before its match
        # warm up: code paths compiled, caches full, the rules workers of as many matches at
        # once forked (a fork costs the server milliseconds, which the first row would carry)
        await measure(args, game, urls, True, args.concurrency)
        modes = [False] if args.no_logs else [True, False]
        rows = [await measure(args, game, urls, logs, args.matches) for logs in modes]
    print_table(rows)


def run(main: Coroutine[Any, Any, None], loop: str) -> None:
    """Run ``main`` on the event loop chosen (``auto``: uvloop when it is installed)."""
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                raise
        else:
            print("event loop: uvloop", flush=True)
            uvloop.run(main)
            return
    print("event loop: asyncio", flush=True)
    asyncio.run(main)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="tictactoex9")
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--startclock", type=int, default=10)
    parser.add_argument("--playclock", type=int, default=5)
    parser.add_argument(
        "--port-range",
        type=parse_port_range,
        metavar="LOW-HIGH",
        help="ports for the local player processes (default: any free port)",
    )
    parser.add_argument(
        "--players",
        choices=("bundled", "fast"),
        default="bundled",
        help="the player processes: the bundled random player, or the light players of "
        "benchmarks/support/fast_players.py (default: bundled)",
    )
    parser.add_argument(
        "--keep-alive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="ask the players to keep each match's connection open (HTTP keep-alive), or "
        "with --no-keep-alive open one connection per message as GGP-Base; by default, as "
        "`ggp match` does, kept connections for a player whose INFO ping kept one open",
    )
    parser.add_argument(
        "--no-logs", action="store_true", help="only the run without logs (default: both)"
    )
    parser.add_argument(
        "--no-fsync", action="store_true", help="do not flush the final logs to the disk"
    )
    parser.add_argument(
        "--list-columns", action="store_true", help="print the table's column names and exit"
    )
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="the server's event loop (auto: uvloop when installed)",
    )
    parser.add_argument("--serve-player", type=int, metavar="SEED", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    if args.serve_player is not None:
        from players.event_loop import run_event_loop

        with contextlib.suppress(KeyboardInterrupt):  # the bundled players' loop, as `ggp player`
            run_event_loop(serve_random_player(args.serve_player, args.port_range))
        return 0
    run(benchmark(args), args.loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
