"""A round robin through the hosting service: how busy the scheduler keeps the runner.

Starts one random-player process per player (each may take ``--capacity`` matches at
once, its ``max_matches``) and registers ``--players`` of them; starts a real ``Service`` (SQLite in a temporary folder, or
``--database URL``) on a loopback port, creates a round robin of every pair in every
seating, ``--matches`` times each, through ``POST /api/tournaments`` and waits until
it is finished. Prints one row:

- the wall time against the sum of the matches' own times (started to finished);
- the scheduler's efficiency: that sum over wall time times the concurrency limit
  (the smaller of ``--concurrency`` and the matches the players' capacity allows at
  once), the fraction of the limit kept busy;
- the scheduler's own time per match: the wall time of the tournament driver's passes
  (reading the results, ``next_matches``, queueing; it shares the event loop with the
  matches, so it includes waiting for them), and the time in ``next_matches`` alone;
  and its number of passes.

Usage: ``python benchmarks/tournament_throughput.py [--players N] [--matches M]
[--game NAME] [--playclock S] [--capacity K] [--concurrency C] [--database URL]``;
``--list-columns`` prints the column names, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator

from support.service import served_service

COLUMNS = (
    "database",
    "game",
    "players",
    "matches",
    "limit",
    "wall_s",
    "match_s_sum",
    "busy_fraction",
    "scheduler_ms_per_match",
    "core_ms_per_match",
    "passes",
    "aborted",
)


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


async def benchmark(args: argparse.Namespace) -> dict[str, object]:
    import aiohttp

    from server.store import MatchStatus

    names = [f"p{i}" for i in range(args.players)]
    async with served_service(
        prefix="ggp-tournament-bench-",
        concurrency=args.concurrency,
        poll_seconds=0.2,
        database=args.database,
    ) as served:
        service, base, url = served.service, served.base, served.database_url
        async with contextlib.AsyncExitStack() as stack:
            urls = [
                await stack.enter_async_context(player_process(seed))
                for seed in range(args.players)
            ]
            session = await stack.enter_async_context(aiohttp.ClientSession(headers=served.headers))
            for index, name in enumerate(names):
                body = {"name": name, "url": urls[index], "max_matches": args.capacity}
                async with session.post(f"{base}/api/players", json=body) as response:
                    assert response.status == 201, await response.text()
            spec = {
                "name": "benchmark",
                "game": args.game,
                "format": "round_robin",
                "players": names,
                "matches_per_seating": args.matches,
                "startclock": args.startclock,
                "playclock": args.playclock,
            }
            wall_started = time.monotonic()
            async with session.post(f"{base}/api/tournaments", json=spec) as response:
                assert response.status == 201, await response.text()
                tournament_id = (await response.json())["id"]
            while True:
                async with session.get(f"{base}/api/tournaments/{tournament_id}") as response:
                    tournament = await response.json()
                if tournament["status"] != "running":
                    break
                await asyncio.sleep(0.2)
            wall = time.monotonic() - wall_started
            driver = service.tournaments
            assert driver is not None
            matches = await driver.tournaments.matches(tournament_id)
    finished = [m for m in matches if m.status is MatchStatus.FINISHED]
    aborted = [m for m in matches if m.status is MatchStatus.ABORTED]
    busy = sum(((m.finished_at or 0) - (m.started_at or 0)) / 1000 for m in matches)
    limit = min(args.concurrency, args.players * args.capacity // 2)
    return {
        "database": "postgresql" if url.startswith("postgres") else "sqlite",
        "game": args.game,
        "players": args.players,
        "matches": f"{len(finished)}/{tournament['progress']['total']}",
        "limit": limit,
        "wall_s": f"{wall:.1f}",
        "match_s_sum": f"{busy:.1f}",
        "busy_fraction": f"{busy / (wall * limit):.2f}",
        "scheduler_ms_per_match": f"{1000 * driver.scheduler_seconds / max(len(matches), 1):.1f}",
        "core_ms_per_match": f"{1000 * driver.core_seconds / max(len(matches), 1):.2f}",
        "passes": driver.passes,
        "aborted": len(aborted),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", metavar="URL", help="default: SQLite in a temporary folder")
    parser.add_argument("--game", default="double_tictactoe_dengji")
    parser.add_argument("--players", type=int, default=6, help="players in the round robin")
    parser.add_argument("--matches", type=int, default=1, help="matches per seating")
    parser.add_argument("--capacity", type=int, default=1, help="matches at once per player")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--startclock", type=int, default=5)
    parser.add_argument("--playclock", type=int, default=2)
    parser.add_argument("--list-columns", action="store_true", help="print the column names")
    parser.add_argument("--serve-player", type=int, metavar="SEED", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    if args.serve_player is not None:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_random_player(args.serve_player))
        return 0
    row = asyncio.run(benchmark(args))
    widths = [max(len(name), len(str(row[name]))) for name in COLUMNS]
    print("  ".join(name.ljust(width) for name, width in zip(COLUMNS, widths, strict=True)))
    print(
        "  ".join(str(row[name]).ljust(width) for name, width in zip(COLUMNS, widths, strict=True))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
