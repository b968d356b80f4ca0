"""Many concurrent matches between local random players: how much work is the server's own?

Starts two random-player processes (one per role; each takes any number of matches
at once), then runs ``--matches`` matches of ``--game`` with at most
``--concurrency`` at a time, writing their logs, and prints:

- steps per second over the whole run (all matches together);
- the server's own time per step: CPU time of this process per step (rules,
  move checking, records, events, transport), and the runners' own measure of time
  not spent waiting for players;
- the peak number of matches held at once, and the error count (0 when healthy).

Usage: ``python benchmarks/match_throughput.py [--game NAME] [--matches N]
[--concurrency C] [--playclock S] [--no-logs] [--no-fsync]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path


async def serve_random_player(seed: int) -> None:
    """The player process: a random player taking any number of matches at once."""
    from players.agent import PlayerAgent
    from players.registry import create_player
    from players.serve import running

    agent = PlayerAgent(create_player("random", seed=seed), max_matches=1_000_000)
    async with running(agent, "127.0.0.1", 0) as url:
        print(f"listening on {url}", flush=True)
        await asyncio.Event().wait()


@contextlib.asynccontextmanager
async def player_process(seed: int) -> AsyncIterator[str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve-player", str(seed), stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the player process did not start: {line!r}")
        yield line.split()[-1]
    finally:
        process.terminate()
        await process.wait()


async def benchmark(args: argparse.Namespace) -> None:
    from server.games import load_game
    from server.match import LogWriter, MatchConfig, MatchRunner, MatchStats, Player

    game = load_game(args.game)
    config = MatchConfig(
        start_clock=args.startclock, play_clock=args.playclock, network_slack=1.0, seed=1
    )
    folder = Path(tempfile.mkdtemp(prefix="ggp-bench-"))
    writer = LogWriter(folder, durable=not args.no_fsync)
    held = 0
    peak = 0
    stats: list[MatchStats] = []
    errors = 0
    gate = asyncio.Semaphore(args.concurrency)

    async def one_match(urls: list[str], index: int) -> None:
        nonlocal held, peak, errors
        async with gate:
            runner = MatchRunner(
                game,
                [Player(f"random{role}", url) for role, url in enumerate(urls)],
                config,
                game_name=args.game,
                observers=[] if args.no_logs else [writer],
            )
            held += 1
            peak = max(peak, held)
            try:
                record = await runner.run()
            finally:
                held -= 1
            stats.append(runner.stats)
            errors += sum(bool(code) for codes in record.errors or [] for code in codes)

    async with player_process(1) as first, player_process(2) as second:
        urls = [first, second]
        cpu_started = time.process_time()
        wall_started = time.monotonic()
        await asyncio.gather(*(one_match(urls, index) for index in range(args.matches)))
        wall = time.monotonic() - wall_started
        cpu = time.process_time() - cpu_started

    steps = sum(item.steps for item in stats)
    own = [item.server_seconds / item.steps for item in stats if item.steps]
    print(f"game                         {args.game}")
    print(f"matches                      {len(stats)} (at most {args.concurrency} at once)")
    print(f"steps                        {steps}")
    print(f"wall time                    {wall:.2f} s")
    print(f"steps per second             {steps / wall:.1f}")
    print(f"server CPU per step          {1000 * cpu / max(steps, 1):.2f} ms")
    print(f"own time per step (median)   {1000 * statistics.median(own):.2f} ms")
    print(f"peak concurrent matches      {peak}")
    print(f"errors recorded              {errors}")
    print(f"logs                         {'none' if args.no_logs else folder}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="tictactoex9")
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--startclock", type=int, default=10)
    parser.add_argument("--playclock", type=int, default=5)
    parser.add_argument("--no-logs", action="store_true", help="do not write match logs")
    parser.add_argument(
        "--no-fsync", action="store_true", help="do not flush every log write to the disk"
    )
    parser.add_argument("--serve-player", type=int, metavar="SEED", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_player is not None:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_random_player(args.serve_player))
        return 0
    asyncio.run(benchmark(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
