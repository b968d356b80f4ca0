"""Live match pages under load: many server-sent-event viewers of one match and many matches.

Starts two random-player processes and a real ``Service`` (SQLite in a temporary folder)
on a loopback port, registers the players and queues ``--matches`` matches of ``--game``.
A separate viewer process opens ``--viewers`` event streams (``/matches/{id}/events``) on
the first match and one on each of the others, as match pages do, and notes when each step
arrives.  The service notes when the runner published each step to its live hub; the
difference is how far a viewer is behind the match.  Prints one row:

- viewers, matches, the steps played and the step events delivered to viewers;
- the delay from publishing to arrival: median, 95th percentile and maximum, in ms;
- viewers dropped by the hub for falling behind (they reconnect and catch up), and the
  player replies recorded as timeouts (a delayed match would show here).

Usage: ``python benchmarks/live_viewers.py [--viewers N] [--matches M] [--game NAME]
[--playclock S]``; ``--list-columns`` prints the column names, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

COLUMNS = (
    "viewers",
    "matches",
    "steps",
    "events_delivered",
    "delay_median_ms",
    "delay_p95_ms",
    "delay_max_ms",
    "viewers_dropped",
    "missed_deadlines",
    "wall_s",
)


async def view(base: str, match_id: str, arrivals: dict[str, list[float]]) -> None:
    """One page's event stream until the match ends; every step's arrival time is noted."""
    import aiohttp

    last = -1
    timeout = aiohttp.ClientTimeout(total=None, sock_read=120)
    while True:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(f"{base}/matches/{match_id}/events") as response,
        ):
            name = ""
            async for raw in response.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") and name == "step":
                    step = json.loads(line[6:])["step"]
                    if step > last:
                        arrivals.setdefault(f"{match_id} {step}", []).append(time.time())
                        last = step
                elif line.startswith("data: ") and name == "end":
                    return
        await asyncio.sleep(0.2)  # dropped for falling behind: reconnect and catch up


async def viewers_main(base: str, ids: list[str], crowd: int) -> None:
    arrivals: dict[str, list[float]] = {}
    tasks = [view(base, ids[0], arrivals) for _ in range(crowd)]
    tasks += [view(base, match_id, arrivals) for match_id in ids[1:]]
    await asyncio.gather(*tasks)
    print(json.dumps(arrivals), flush=True)


async def benchmark(args: argparse.Namespace) -> dict[str, object]:
    import aiohttp
    from support.fast_players import fast_player_process
    from support.service import served_service

    from server.match import StepPlayed

    published: dict[str, float] = {}
    async with served_service(
        prefix="ggp-viewers-bench-", concurrency=args.matches, poll_seconds=0.05
    ) as served:
        service, base = served.service, served.base
        publish = service.live.publish

        def noting(event: Any) -> None:
            if isinstance(event, StepPlayed):
                published[f"{event.match_id} {event.step}"] = time.time()
            publish(event)

        service.live.publish = noting  # type: ignore[method-assign]
        service.runner.watchers = (noting,)
        async with (
            fast_player_process(1) as first,
            fast_player_process(2) as second,
            aiohttp.ClientSession(headers=served.headers) as session,
        ):
            for name, player_url in (("p1", first), ("p2", second)):
                body = {"name": name, "url": player_url, "max_matches": 1000}
                async with session.post(f"{base}/api/players", json=body) as response:
                    assert response.status == 201, await response.text()
            ids = []
            for _ in range(args.matches):
                body = {
                    "game": args.game,
                    "players": ["p1", "p2"],
                    "startclock": 5,
                    "playclock": args.playclock,
                }
                async with session.post(f"{base}/api/matches", json=body) as response:
                    assert response.status == 201, await response.text()
                    ids.append((await response.json())["id"])
            started = time.monotonic()
            viewers = await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "--view",
                base,
                str(args.viewers),
                *ids,
                stdout=asyncio.subprocess.PIPE,
            )
            output, _ = await viewers.communicate()
            wall = time.monotonic() - started
            arrivals: dict[str, list[float]] = json.loads(output or b"{}")
            missed = 0
            for match_id in ids:
                for row in await service.store.steps(match_id):
                    missed += sum(code == "TO" for code in row.errors)
    delays = sorted(
        (arrived - published[key]) * 1000
        for key, times in arrivals.items()
        if key in published
        for arrived in times
    )
    quantile = (lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]) if delays else None
    return {
        "viewers": args.viewers + args.matches - 1,
        "matches": args.matches,
        "steps": len(published),
        "events_delivered": len(delays),
        "delay_median_ms": round(statistics.median(delays), 1) if delays else None,
        "delay_p95_ms": round(quantile(0.95), 1) if quantile else None,
        "delay_max_ms": round(delays[-1], 1) if delays else None,
        "viewers_dropped": service.live.dropped,
        "missed_deadlines": missed,
        "wall_s": round(wall, 1),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--view":
        asyncio.run(viewers_main(sys.argv[2], sys.argv[4:], int(sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--viewers", type=int, default=50, help="viewers of the first match")
    parser.add_argument("--matches", type=int, default=10, help="matches played at once")
    parser.add_argument("--game", default="tictactoex9")
    parser.add_argument("--playclock", type=int, default=2)
    parser.add_argument("--list-columns", action="store_true", help="print the column names")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return
    row = asyncio.run(benchmark(args))
    print("  ".join(COLUMNS))
    print("  ".join(str(row[column]) for column in COLUMNS))


if __name__ == "__main__":
    main()
