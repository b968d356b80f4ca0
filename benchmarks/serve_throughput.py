"""The hosting service under load: many matches queued through its REST API.

Starts ``--player-processes`` light random players (``support/fast_players.py``: each
process takes any number of matches at once and never lags the server), starts a real
``Service`` (SQLite in a temporary folder, or ``--database URL``) on a loopback port,
registers the players, queues ``--matches`` matches of ``--game`` through
``POST /api/matches`` and waits until every one has ended.  Every step is written to
the database and every log signed, as in production.  With ``--think-ms T`` the
players answer each PLAY after T milliseconds, so matches stay running (with
``--step-limit`` to keep them from lasting too long) and the peak of matches held at
once shows.  The players are registered with ``keep_alive`` left at ``auto`` (the
pings decide; the light players keep connections open), or ``--keep-alive`` /
``--no-keep-alive`` (one connection per match or per message).  Prints one row:

- matches per minute and steps per second over the whole run;
- the server's CPU time per step (this process: API, queue, rules, store, signing);
- the peak number of matches running at once, the most rules processes running at
  once (templates and workers), and the missed deadlines (player replies recorded as
  timeouts; 0 when the server kept up).

Usage: ``python benchmarks/serve_throughput.py [--database URL] [--game NAME]
[--matches N] [--concurrency C] [--playclock S] [--think-ms T] [--step-limit N]
[--player-processes N] [--[no-]keep-alive] [--loop auto|asyncio|uvloop]``; ``--list-columns`` prints the
column names, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from support.fast_players import fast_player_process
from support.service import TOKEN, served_service
from support.table import print_row

COLUMNS = (
    "database",
    "game",
    "matches",
    "concurrency",
    "think_ms",
    "keep_alive",
    "steps",
    "wall_s",
    "matches_per_minute",
    "steps_per_second",
    "cpu_ms_per_step",
    "peak_running",
    "rules_processes",
    "missed_deadlines",
)


async def benchmark(args: argparse.Namespace) -> dict[str, object]:
    import aiohttp

    from server.gdl.collector import settle_after_start
    from server.match.rules import default_pool
    from server.store import MatchStatus

    peak = processes = 0
    async with served_service(
        prefix="ggp-serve-bench-",
        concurrency=args.concurrency,
        poll_seconds=args.poll_seconds,
        database=args.database,
    ) as served:
        service, base, url = served.service, served.base, served.database_url
        metrics = service.metrics
        async with contextlib.AsyncExitStack() as stack:
            session = await stack.enter_async_context(aiohttp.ClientSession(headers=served.headers))
            names = []
            for index in range(max(2, args.player_processes)):
                player_url = await stack.enter_async_context(
                    fast_player_process(index + 1, think_ms=args.think_ms)
                )
                names.append(f"p{index + 1}")
                body = {
                    "name": names[-1],
                    "url": player_url,
                    "max_matches": args.matches,
                    "keep_alive": "auto" if args.keep_alive is None else args.keep_alive,
                }
                async with session.post(f"{base}/api/players", json=body) as response:
                    assert response.status == 201, await response.text()
            settle_after_start()  # as `ggp serve` does once it is up
            cpu_started = time.process_time()
            wall_started = time.monotonic()
            bodies = []
            for number in range(args.matches):
                body: dict[str, object] = {
                    "game": args.game,
                    "players": [names[number % len(names)], names[(number + 1) % len(names)]],
                    "startclock": args.startclock,
                    "playclock": args.playclock,
                    "seed": 1,
                }
                if args.step_limit:
                    body["step_limit"] = args.step_limit
                bodies.append(body)

            async def watch() -> None:
                nonlocal peak, processes
                pool = default_pool()
                while True:
                    peak = max(peak, len(service.runner.running))
                    processes = max(processes, pool.process_count)
                    await asyncio.sleep(0.25)

            watcher = asyncio.create_task(watch())
            # the client queues from a process of its own: its CPU time is not the server's
            client = await asyncio.create_subprocess_exec(
                sys.executable,
                str(Path(__file__).parent / "support" / "api_client.py"),
                base,
                TOKEN,
                stdin=asyncio.subprocess.PIPE,
            )
            await client.communicate(json.dumps({"bodies": bodies, "at_once": 8}).encode())
            if client.returncode != 0:
                raise SystemExit("queuing the matches failed")
            while True:
                counts = await service.store.count_matches()
                if counts["finished"] + counts["aborted"] >= args.matches:  # type: ignore[index]
                    break
                await asyncio.sleep(0.5)
            watcher.cancel()
            wall = time.monotonic() - wall_started
            cpu = time.process_time() - cpu_started
            counts = await service.store.count_matches()
            for match in await service.store.list_matches(status=MatchStatus.ABORTED):
                print(
                    f"aborted {match.id}: {match.end_reason} {match.end_message}", file=sys.stderr
                )
    sample = metrics.registry.get_sample_value
    steps = int(sample("ggp_step_seconds_count") or 0)
    missed = int(sample("ggp_player_errors_total", {"code": "TO"}) or 0)
    return {
        "database": "postgresql" if url.startswith("postgres") else "sqlite",
        "game": args.game,
        "matches": f"{counts['finished']}/{args.matches}",  # type: ignore[index]
        "concurrency": args.concurrency,
        "think_ms": args.think_ms,
        "keep_alive": "auto" if args.keep_alive is None else "yes" if args.keep_alive else "no",
        "steps": steps,
        "wall_s": f"{wall:.1f}",
        "matches_per_minute": f"{60 * args.matches / wall:.0f}",
        "steps_per_second": f"{steps / wall:.0f}",
        "cpu_ms_per_step": f"{1000 * cpu / max(steps, 1):.2f}",
        "peak_running": peak,
        "rules_processes": processes,
        "missed_deadlines": missed,
    }


def run(main: Coroutine[Any, Any, dict[str, object]], loop: str) -> dict[str, object]:
    """Run ``main`` on the event loop chosen (``auto``: uvloop when it is installed)."""
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                raise
        else:
            print("event loop: uvloop", file=sys.stderr, flush=True)
            return uvloop.run(main)
    print("event loop: asyncio", file=sys.stderr, flush=True)
    return asyncio.run(main)


def _default_poll_seconds() -> float:
    from server.web import ServiceSettings

    default = ServiceSettings.model_fields["poll_seconds"].default
    assert isinstance(default, float)
    return default


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", metavar="URL", help="default: SQLite in a temporary folder")
    parser.add_argument("--game", default="tictactoex9")
    parser.add_argument(
        "--keep-alive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="register the players as keeping one connection open per match (HTTP "
        "keep-alive), or with --no-keep-alive as taking one connection per message as "
        "GGP-Base; by default auto: as their INFO pings show",
    )
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--startclock", type=int, default=10)
    parser.add_argument("--playclock", type=int, default=5)
    parser.add_argument(
        "--think-ms", type=int, default=0, help="the players' delay before each PLAY reply"
    )
    parser.add_argument(
        "--step-limit", type=int, default=0, help="end each match after N steps (0: the game's)"
    )
    parser.add_argument("--list-columns", action="store_true", help="print the column names")
    parser.add_argument(
        "--poll-seconds",
        type=float,
        default=_default_poll_seconds(),
        metavar="S",
        help="seconds between the service's fallback polls of the queue, the job queue and "
        "the tournaments (default: what `ggp serve` uses); matches start when they are "
        "queued or a seat frees up, not on a poll",
    )
    parser.add_argument(
        "--player-processes",
        type=int,
        default=2,
        metavar="N",
        help="light local player processes (benchmarks/support/fast_players.py) the matches share",
    )
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="the server's event loop (auto: uvloop when installed)",
    )
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    row = run(benchmark(args), args.loop)
    print_row(COLUMNS, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
