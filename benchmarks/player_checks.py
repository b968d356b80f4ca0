"""Player checks in the service: how long registering a player takes to answer, how long
its background check takes, and what a check costs the service.

Starts a real ``Service`` (SQLite in a temporary folder, checks on) on a loopback port
and ``--players`` bundled players (``--player random`` by default) in processes of their
own, registers them all at once through the API and waits for every check to finish.
Reports the slowest answer to ``POST /api/players`` (it must not wait for the check),
the median and slowest time from registering to a finished check (checks run at most
``--concurrency`` at once, so later ones queue), the wall time of the whole round, the
service's CPU time per check (the checker keeps every game's state with the rules engine,
in the service's process) and how many checks passed.

Prints one row.  Usage: ``python benchmarks/player_checks.py [--players N]
[--player NAME] [--concurrency N]``; ``--list-columns`` prints the column names.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

import aiohttp
from support.service import served_service
from support.table import print_row

COLUMNS = (
    "player",
    "players",
    "concurrency",
    "register_max_ms",
    "check_median_s",
    "check_max_s",
    "wall_s",
    "cpu_ms_per_check",
    "passed",
)


async def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    from server.match.local_players import local_players

    async with (
        local_players([args.player] * args.players, seed=1) as urls,
        served_service(
            prefix="ggp-checks-",
            concurrency=4,
            poll_seconds=0.5,
            check_players=True,
            check_concurrency=args.concurrency,
        ) as served,
        aiohttp.ClientSession() as session,
    ):
        cpu = time.process_time()
        started = time.perf_counter()

        async def register(index: int, url: str) -> float:
            before = time.perf_counter()
            body = {"name": f"p{index}", "url": url}
            async with session.post(
                f"{served.base}/api/players", json=body, headers=served.headers
            ) as response:
                assert response.status == 201, await response.text()
            return time.perf_counter() - before

        answers = await asyncio.gather(*(register(i, url) for i, url in enumerate(urls)))
        finished: dict[str, dict[str, Any]] = {}
        while len(finished) < len(urls):
            for index in range(len(urls)):
                name = f"p{index}"
                if name in finished:
                    continue
                async with session.get(f"{served.base}/api/players/{name}/checks") as response:
                    checks = await response.json()
                if checks and checks[0]["status"] == "finished":
                    finished[name] = checks[0]
            await asyncio.sleep(0.1)
        wall = time.perf_counter() - started
        used = time.process_time() - cpu
    spans = [(check["finished_at"] - check["requested_at"]) / 1000 for check in finished.values()]
    return {
        "player": args.player,
        "players": args.players,
        "concurrency": args.concurrency,
        "register_max_ms": f"{max(answers) * 1000:.1f}",
        "check_median_s": f"{statistics.median(spans):.2f}",
        "check_max_s": f"{max(spans):.2f}",
        "wall_s": f"{wall:.2f}",
        "cpu_ms_per_check": f"{used * 1000 / len(finished):.0f}",
        "passed": sum(bool(check["passed"]) for check in finished.values()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=8, help="players registered at once")
    parser.add_argument("--player", default="random", help="the bundled player to check")
    parser.add_argument("--concurrency", type=int, default=2, help="checks run at once")
    parser.add_argument("--list-columns", action="store_true", help="print the column names")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    row = asyncio.run(benchmark(args))
    print_row(COLUMNS, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
