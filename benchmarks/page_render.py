"""How long each web page takes with many matches in the database.

Fills a fresh database (SQLite in a temporary folder, or ``--database URL`` of an empty
PostgreSQL database) through the store with ``--matches`` finished matches (default
10,000) between ``--players`` registered players over the bundled games: every step
of each kept (states from real random playouts of the game, a few timeouts and illegal
moves among the errors), a log text of the usual size, a finished round robin, a
single elimination and a Swiss tournament among them, and the ratings computed.
Then serves the application (in this process) and requests each page one time to warm
it (``first_ms``, which includes compiling the page's template and finding a game's boards
once) and ``--requests`` more times, one after another: the median and the maximum wall
time of those, the median CPU time of the process per request (server and client; less
noisy than wall time on a busy machine), the page's size, and ``pass`` when the maximum
is at most ``--limit-ms`` (default 200).

Usage: ``python benchmarks/page_render.py [--matches N] [--players N] [--requests N]
[--database URL | --keep FILE]``; ``--keep FILE`` fills an SQLite file once and times the
pages on it in later runs. ``--list-columns`` prints the column names, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from support.service import served_service

COLUMNS = (
    "page",
    "path",
    "requests",
    "first_ms",
    "median_ms",
    "max_ms",
    "cpu_ms",
    "kb",
    "pass",
)

GAMES = ("tictactoex9", "ticTacHeaven", "nineBoardTicTacToe", "double_tictactoe_dengji")
"""Two-role bundled games; the first plays most matches and every tournament."""
PLAYOUTS_PER_GAME = 40
ERRORS = ("", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "TO", "IL")


def playouts(name: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """Random playouts of a bundled game: states, moves and goals (at most 60 steps)."""
    from server.games import game_text
    from server.gdl import Game

    game = Game.from_text(game_text(name))
    found = []
    for _ in range(count):
        state = game.initial_state()
        states, moves = [state.to_ggp()], []
        while not game.is_terminal(state) and len(moves) < 60:
            joint = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
            state = game.next_state(state, joint)
            moves.append([str(move) for move in joint])
            states.append(state.to_ggp())
        goals = [game.goal(state, role) or 0 for role in game.roles]
        found.append({"states": states, "moves": moves, "goals": goals, "roles": game.roles})
    return found


async def store_match(
    store: Any,
    match_id: str,
    game: str,
    players: list[str],
    playout: dict[str, Any],
    rng: random.Random,
    *,
    tournament: str | None = None,
    schedule_key: str | None = None,
    goals: list[int] | None = None,
) -> int:
    """One finished match through the store: queued, every step, ended with a log."""
    from server.store import MatchStatus, StepRow, now_ms

    final = goals or playout["goals"]
    log = {
        "matchId": match_id,
        "gameRoleNames": playout["roles"],
        "playerNamesFromHost": players,
        "states": playout["states"],
        "moves": playout["moves"],
        "goalValues": final,
        "isCompleted": True,
    }
    if tournament is None:  # one transaction: the match as an archive would bring it
        await store.import_match(
            match_id,
            game_name=game,
            game_version=1,
            players=players,
            start_clock=10,
            play_clock=5,
            status=MatchStatus.FINISHED,
            end_reason="terminal",
            goals=final,
            started_at=now_ms() - 60_000,
            log_text=json.dumps(log),
            source="benchmark",
        )
    else:  # as the tournament driver queues it
        await store.queue_match(
            match_id,
            game_name=game,
            game_version=1,
            players=players,
            start_clock=10,
            play_clock=5,
            policy="random",
            config={},
            tournament_id=tournament,
            schedule_key=schedule_key,
        )
        await store.claim_match(match_id)
    at = now_ms()
    rows = []
    for step, state in enumerate(playout["states"]):
        rows.append(
            StepRow(
                step=step,
                moves=playout["moves"][step - 1] if step else None,
                state=state,
                state_time=at + step * 100,
                errors=[rng.choice(ERRORS) for _ in players],
                response_times=[rng.randint(1, 900) for _ in players],
                raw_replies=[None for _ in players],
                details=[None for _ in players],
            )
        )
    await asyncio.gather(*(store.add_step(match_id, row) for row in rows))
    if tournament is not None:
        await store.end_match(
            match_id,
            status=MatchStatus.FINISHED,
            end_reason="terminal",
            goals=final,
            signed_record=json.dumps(log),
        )
    return len(rows)


def tournament_specs(players: list[str]) -> list[dict[str, Any]]:
    base = {"game": GAMES[0], "startclock": 10, "playclock": 5}
    return [
        {**base, "name": "Round robin", "format": "round_robin", "players": players[:10]},
        {
            **base,
            "name": "Elimination",
            "format": "single_elimination",
            "players": players[:8],
            "best_of": 3,
        },
        {**base, "name": "Swiss", "format": "swiss", "players": players[:8], "rounds": 3},
    ]


def scheduled(spec: Any, rng: random.Random) -> list[Any]:
    """Every match the tournament needs until it ends, each with made-up goals."""
    from datetime import UTC, datetime

    from server.tournament import MatchResult, next_matches

    results: list[MatchResult] = []
    while True:
        answer = next_matches(spec, {spec.game: 2}, results, [], {}, now=datetime.now(UTC))
        results += answer.record
        if answer.finished or not answer.matches:
            return [r for r in results if not r.bye]
        for planned in answer.matches:
            goals = rng.choice(([100, 0], [0, 100], [50, 50], [100, 0]))
            results.append(
                MatchResult(
                    key=planned.key, game=planned.game, players=planned.players, goals=goals
                )
            )


async def fill(url: str, matches: int, player_count: int, seed: int) -> dict[str, Any]:
    """The database: players, games, matches with their steps, tournaments, ratings."""
    from server.catalog import seed_bundled_games
    from server.league import recompute_stored_ratings
    from server.store import Store, TournamentStore, now_ms
    from server.tournament import TournamentSpec

    rng = random.Random(seed)
    store = Store(url)
    await store.open(upgrade=True)
    try:
        await seed_bundled_games(store)
        players = [f"bot-{n:02d}" for n in range(player_count)]
        for name in players:
            await store.add_player(name, "http://127.0.0.1:9/")
        samples = {game: playouts(game, PLAYOUTS_PER_GAME, rng) for game in GAMES}
        tournaments = TournamentStore(store)
        planned: list[tuple[str, str | None, str | None, list[str], list[int] | None]] = []
        ids = []
        for spec_data in tournament_specs(players):
            spec = TournamentSpec.model_validate(spec_data)
            row = await tournaments.create(
                f"t-{spec.format}",
                spec.model_dump(mode="json"),
                status="running",
                created_by="admin",
            )
            ids.append(row.id)
            for result in scheduled(spec, rng):
                planned.append((spec.game, row.id, result.key, result.players, result.goals))
        while len(planned) < matches:
            game = GAMES[0] if rng.random() < 0.7 else rng.choice(GAMES[1:])
            planned.append((game, None, None, rng.sample(players, 2), None))
        steps = 0
        batch = 100
        for start in range(0, len(planned), batch):
            jobs = [
                store_match(
                    store,
                    f"m{start + n:06d}",
                    game,
                    seated,
                    rng.choice(samples[game]),
                    rng,
                    tournament=tournament,
                    schedule_key=key,
                    goals=goals,
                )
                for n, (game, tournament, key, seated, goals) in enumerate(
                    planned[start : start + batch]
                )
            ]
            steps += sum(await asyncio.gather(*jobs))
        for tournament_id in ids:
            await tournaments.change(tournament_id, status="finished", finished_at=now_ms())
        rated, _, _ = await recompute_stored_ratings(tournaments)
    finally:
        await store.close()
    return {"matches": len(planned), "steps": steps, "rated": rated, "tournaments": ids}


async def filled_already(url: str) -> dict[str, Any]:
    """What :func:`fill` said of a database it filled in an earlier run (``--keep``)."""
    from server.store import Store, TournamentStore

    store = Store(url)
    await store.open(upgrade=True)
    try:
        counts = await store.count_matches()
        rows = await TournamentStore(store).find()
    finally:
        await store.close()
    order = {"round_robin": 0, "single_elimination": 1, "swiss": 2}
    ids = [row.id for row in sorted(rows, key=lambda row: order.get(row.format, 3))]
    return {"matches": sum(counts.values()), "tournaments": ids}


async def time_pages(base: str, pages: list[tuple[str, str]], requests: int) -> list[list[Any]]:
    from aiohttp import ClientSession

    rows = []
    async with ClientSession() as session:
        for name, path in pages:
            times, cpu = [], []
            size = 0
            for _ in range(requests + 1):
                started, cpu_started = time.perf_counter(), time.process_time()
                async with session.get(base + path) as reply:
                    body = await reply.read()
                    if reply.status != 200:
                        raise SystemExit(f"{path} answered {reply.status}: {body[:200]!r}")
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - cpu_started) * 1000)
                size = len(body)
            first, rest = times[0], times[1:]
            median_cpu = statistics.median(cpu[1:])
            rows.append(
                [name, path, requests, first, statistics.median(rest), max(rest), median_cpu, size]
            )
    return rows


async def main(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    if args.keep is not None and args.keep.exists():
        url = f"sqlite:///{args.keep}"
        filled = await filled_already(url)
    else:
        path = args.keep or Path(tempfile.mkdtemp(prefix="pages-")) / "ggp.db"
        url = args.database or f"sqlite:///{path}"
        filled = await fill(url, args.matches, args.players, args.seed)
        print(
            f"filled {filled['matches']} matches, {filled['steps']} steps, "
            f"{filled['rated']} rated, in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
    async with served_service(
        prefix="pages-", concurrency=4, poll_seconds=1.0, database=url
    ) as served:
        last_page = (filled["matches"] - 1) // 25
        round_robin, elimination, swiss = filled["tournaments"]
        pages = [
            ("home", "/"),
            ("players", "/players"),
            ("player", "/players/bot-00"),
            ("games", "/games"),
            ("game", f"/games/{GAMES[0]}"),
            ("tournaments", "/tournaments"),
            ("round robin", f"/tournaments/{round_robin}"),
            ("elimination", f"/tournaments/{elimination}"),
            ("swiss", f"/tournaments/{swiss}"),
            ("match", f"/matches/m{filled['matches'] // 2:06d}"),
            ("matches", "/matches?page=0"),
            ("matches, last page", f"/matches?page={last_page}"),
            ("home, page 100", "/?page=100"),
        ]
        rows = await time_pages(served.base, pages, args.requests)
    widths = [20, 34, 8, 9, 9, 9, 7, 5, 5]
    print("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True)))
    for name, path, count, first, median, worst, cpu, size in rows:
        verdict = "yes" if worst <= args.limit_ms else "NO"
        cells = [name, path, str(count), f"{first:.1f}", f"{median:.1f}", f"{worst:.1f}"]
        cells.append(f"{cpu:.1f}")
        cells += [f"{size / 1024:.0f}", verdict]
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=12)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--limit-ms", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", help="an empty PostgreSQL database's URL")
    parser.add_argument(
        "--keep",
        type=Path,
        help="an SQLite file: filled and kept when missing, used as it is when present",
    )
    parser.add_argument("--list-columns", action="store_true", help="print the columns and exit")
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    if options.list_columns:
        print("\n".join(COLUMNS))
        sys.exit(0)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main(options))
