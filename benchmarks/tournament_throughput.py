"""A round robin through the hosting service: how busy the scheduler keeps the runner.

Starts one light player process per player (``support/fast_players.py``: a random legal
move at once, any number of matches at a time) and registers ``--players`` of them,
each taking ``--capacity`` matches at once (its ``max_matches``); starts a real
``Service`` (SQLite in a temporary folder, or ``--database URL``) on a loopback port,
creates a round robin of every subset of the players in every seating, ``--matches``
times each, through ``POST /api/tournaments`` and waits until it is finished. The
defaults are 8 players, 10 matches per seating and a limit of 4 (what 8 players of
capacity 1 fill in a two-role game). Prints one row:

- the tournament's wall time (from its start to its end, as the service recorded them)
  against the sum of its matches' own times (started to finished);
- the limit: the smaller of ``--concurrency`` and the matches the players' capacity
  allows at once; ``busy_fraction``: that sum over wall time times the limit, the
  fraction of the limit kept busy;
- the tail: from the last moment the limit was full to the end, and the share of the
  limit's time it left idle (``tail_idle_fraction``, part of ``1 - busy_fraction``);
- ``gap_ms_median``: the median time from a player's match ending to its next match
  starting (the driver's reaction when the player has a match left to play);
- the scheduler's own time per match: the wall time of the tournament driver's work
  (reading results, ``next_matches``, queueing and starting; it shares the event loop
  with the matches, so it includes waiting for them), the time in ``next_matches``
  alone, and the driver's passes (full ones in brackets).

Usage: ``python benchmarks/tournament_throughput.py [--players N] [--matches M]
[--game NAME] [--playclock S] [--capacity K] [--concurrency C] [--database URL]``;
``--list-columns`` prints the column names, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
from collections import defaultdict

from support.fast_players import fast_player_process
from support.service import served_service
from support.table import print_row

COLUMNS = (
    "database",
    "game",
    "players",
    "matches",
    "limit",
    "wall_s",
    "match_s_sum",
    "busy_fraction",
    "tail_s",
    "tail_idle_fraction",
    "gap_ms_median",
    "scheduler_ms_per_match",
    "core_ms_per_match",
    "passes",
    "aborted",
)


def tail(spans: list[tuple[int, int]], limit: int, end: int) -> tuple[float, float]:
    """From the last moment ``limit`` matches ran at once to ``end``: its length (s) and
    the idle slot time in it (slot-seconds)."""
    events = sorted([(s, 1) for s, _ in spans] + [(f, -1) for _, f in spans])
    running, last_full = 0, min((s for s, _ in spans), default=end)
    for at, change in events:
        if running >= limit and running + change < limit:
            last_full = at
        running += change
    busy_after = sum(max(0, f - max(s, last_full)) for s, f in spans)
    return (end - last_full) / 1000, (limit * (end - last_full) - busy_after) / 1000


def player_gaps(matches: list[object]) -> list[int]:
    """For each player, the times from one of its matches ending to its next starting."""
    by_player: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for match in matches:
        for name in match.players:  # type: ignore[attr-defined]
            by_player[name].append((match.started_at, match.finished_at))  # type: ignore[attr-defined]
    gaps = []
    for spans in by_player.values():
        spans.sort()
        gaps += [b[0] - a[1] for a, b in zip(spans, spans[1:], strict=False)]
    return gaps


async def benchmark(args: argparse.Namespace) -> dict[str, object]:
    import aiohttp

    from server.store import MatchStatus

    names = [f"p{i}" for i in range(args.players)]
    async with served_service(
        prefix="ggp-tournament-bench-",
        concurrency=args.concurrency,
        poll_seconds=1.0,
        database=args.database,
    ) as served:
        service, base, url = served.service, served.base, served.database_url
        async with contextlib.AsyncExitStack() as stack:
            urls = [
                await stack.enter_async_context(fast_player_process(seed))
                for seed in range(args.players)
            ]
            session = await stack.enter_async_context(aiohttp.ClientSession(headers=served.headers))
            for player_url in urls:  # the first message loads the player's modules: not timed
                async with session.post(player_url, data="( info )") as response:
                    await response.read()
            for index, name in enumerate(names):
                body = {"name": name, "url": urls[index], "max_matches": args.capacity}
                async with session.post(f"{base}/api/players", json=body) as response:
                    assert response.status == 201, await response.text()
            roles = len((await service.store.get_game(args.game)).roles)
            spec = {
                "name": "benchmark",
                "game": args.game,
                "format": "round_robin",
                "players": names,
                "matches_per_seating": args.matches,
                "startclock": args.startclock,
                "playclock": args.playclock,
            }
            async with session.post(f"{base}/api/tournaments", json=spec) as response:
                assert response.status == 201, await response.text()
                tournament_id = (await response.json())["id"]
            while True:
                async with session.get(f"{base}/api/tournaments/{tournament_id}") as response:
                    tournament = await response.json()
                if tournament["status"] != "running":
                    break
                await asyncio.sleep(0.2)
            driver = service.tournaments
            assert driver is not None
            row = await driver.tournaments.get(tournament_id)
            matches = await driver.tournaments.matches(tournament_id)
    finished = [m for m in matches if m.status is MatchStatus.FINISHED]
    aborted = [m for m in matches if m.status is MatchStatus.ABORTED]
    spans = [(m.started_at or 0, m.finished_at or 0) for m in matches if m.started_at]
    wall = ((row.finished_at or 0) - (row.started_at or 0)) / 1000
    busy = sum(f - s for s, f in spans) / 1000
    limit = min(args.concurrency, args.players * args.capacity // roles)
    tail_s, tail_idle = tail(spans, limit, row.finished_at or 0)
    gaps = player_gaps(finished)
    return {
        "database": "postgresql" if url.startswith("postgres") else "sqlite",
        "game": args.game,
        "players": args.players,
        "matches": f"{len(finished)}/{tournament['progress']['total']}",
        "limit": limit,
        "wall_s": f"{wall:.1f}",
        "match_s_sum": f"{busy:.1f}",
        "busy_fraction": f"{busy / (wall * limit):.3f}",
        "tail_s": f"{tail_s:.2f}",
        "tail_idle_fraction": f"{tail_idle / (wall * limit):.3f}",
        "gap_ms_median": f"{statistics.median(gaps):.1f}" if gaps else "-",
        "scheduler_ms_per_match": f"{1000 * driver.scheduler_seconds / max(len(matches), 1):.2f}",
        "core_ms_per_match": f"{1000 * driver.core_seconds / max(len(matches), 1):.2f}",
        "passes": f"{driver.passes} ({driver.full_passes})",
        "aborted": len(aborted),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", metavar="URL", help="default: SQLite in a temporary folder")
    parser.add_argument("--game", default="double_tictactoe_dengji")
    parser.add_argument("--players", type=int, default=8, help="players in the round robin")
    parser.add_argument("--matches", type=int, default=10, help="matches per seating")
    parser.add_argument("--capacity", type=int, default=1, help="matches at once per player")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--startclock", type=int, default=5)
    parser.add_argument("--playclock", type=int, default=2)
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
