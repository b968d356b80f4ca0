"""How strong is the ``mcts`` player? Matches against weaker players over loopback HTTP.

Plays ``mcts`` against each ``--opponents`` player (``random``, ``montecarlo`` = flat
Monte Carlo on the same clock, ``uct`` = ``mcts`` without its solver) on every bundled
game and on ticTacToe, connectFour and breakthrough from the shared corpus
(``../shared/conformance/games``, skipped when absent), ``--matches`` times in each
seat, with at most ``--parallel`` matches at once. Every player is its own process,
started for the match, as ``ggp match`` starts bundled players. One line per game and
opponent, with the columns of ``--list-columns``:

- wins, draws and losses of ``mcts`` (by its goal against the best other goal) and
  the share of decisive games it won;
- the median ``mcts`` iterations per second over its moves (from its log);
- the slowest ``mcts`` reply to PLAY, and the play clock it had to beat;
- timeouts (``TO``) and other errors recorded against ``mcts``.

Usage: ``python benchmarks/player_strength.py [--games A,B] [--opponents random,montecarlo]
[--matches N] [--playclock S] [--startclock S] [--parallel P]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import sys
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.gdl import Game

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "conformance" / "games"
CORPUS_GAMES = ("ticTacToe", "connectFour", "breakthrough")

COLUMNS = (
    "game",
    "opponent",
    "matches",
    "wins",
    "draws",
    "losses",
    "decisive_won_pct",
    "iterations_per_s",
    "slowest_reply_s",
    "play_clock_s",
    "timeouts",
    "errors",
)

OPPONENTS = {
    "random": ("random", {}),
    "montecarlo": ("montecarlo", {}),
    "uct": ("mcts", {"GGP_MCTS_SOLVER": "0"}),
}
"""Opponent name: the bundled player it runs and its environment."""

_ITERATIONS = re.compile(r"(\d+) iterations in ([\d.]+) s")


@dataclass
class Tally:
    """The results of one game against one opponent."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    rates: list[float] = field(default_factory=list)
    slowest_ms: int = 0
    timeouts: int = 0
    errors: int = 0

    @property
    def matches(self) -> int:
        return self.wins + self.draws + self.losses


# -- player processes ------------------------------------------------------------------------


async def _drain(stream: asyncio.StreamReader, keep: deque[str] | list[str]) -> None:
    while line := await stream.readline():
        keep.append(line.decode("utf-8", errors="replace").rstrip())


@contextlib.asynccontextmanager
async def player_process(
    name: str, seed: int, env: dict[str, str]
) -> AsyncIterator[tuple[str, list[str]]]:
    """A bundled player in its own process; yields its URL and its log lines (live)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "players",
        name,
        "--port",
        "0",
        "--seed",
        str(seed),
        "--verbose",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **env},
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    log: list[str] = []
    drain = asyncio.create_task(_drain(process.stderr, log))
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        if not line.startswith("listening on "):
            raise RuntimeError(f"player {name} did not start: {line!r} {log[-5:]}")
        yield line.split()[-1], log
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await process.wait()
        await asyncio.gather(drain, return_exceptions=True)


# -- matches ---------------------------------------------------------------------------------


def load(name: str) -> Game:
    """A bundled game, or one of the corpus games."""
    from server.games import is_bundled, load_game
    from server.gdl import Game

    if is_bundled(name):
        return load_game(name)
    return Game.from_file(CORPUS / f"{name}.kif")


async def one_match(
    game_name: str, opponent: str, seat: int, index: int, args: argparse.Namespace, tally: Tally
) -> None:
    from server.match import LogWriter, MatchConfig, MatchRunner, Player

    game = load(game_name)
    config = MatchConfig(
        start_clock=args.startclock,
        play_clock=args.playclock,
        network_slack=1.0,
        seed=index,
    )
    other, env = OPPONENTS[opponent]
    async with contextlib.AsyncExitStack() as stack:
        mine, log = await stack.enter_async_context(player_process("mcts", 100 + index, {}))
        urls = []
        for role_index in range(len(game.roles)):
            if role_index == seat:
                urls.append(mine)
            else:
                url, _ = await stack.enter_async_context(
                    player_process(other, 200 + 10 * index + role_index, env)
                )
                urls.append(url)
        players = [Player(f"p{r}", url) for r, url in enumerate(urls)]
        observers = [LogWriter(args.logs)] if args.logs else []
        runner = MatchRunner(game, players, config, game_name=game_name, observers=observers)
        record = await runner.run()
    goals = record.goal_values or [0] * len(game.roles)
    best_other = max(goal for r, goal in enumerate(goals) if r != seat)
    if goals[seat] > best_other:
        tally.wins += 1
    elif goals[seat] == best_other:
        tally.draws += 1
    else:
        tally.losses += 1
    for line in log:
        if args.show_logs:
            print("    " + line, file=sys.stderr)
        found = _ITERATIONS.search(line)
        if found and float(found.group(2)) > 0.2:
            tally.rates.append(int(found.group(1)) / float(found.group(2)))
    for codes in (record.errors or [])[1:]:
        code = codes[seat]
        tally.timeouts += code == "TO"
        tally.errors += bool(code) and code != "TO"
    for times in (record.response_times or [])[1:]:
        if times[seat] is not None:
            tally.slowest_ms = max(tally.slowest_ms, times[seat])
    print(
        f"  {game_name} vs {opponent}, mcts as {game.roles[seat]}: goals {goals}, "
        f"{len(record.moves)} steps",
        file=sys.stderr,
        flush=True,
    )


async def benchmark(args: argparse.Namespace) -> None:
    games = args.games.split(",") if args.games else default_games()
    opponents = args.opponents.split(",")
    tallies = {(game, opponent): Tally() for game in games for opponent in opponents}
    gate = asyncio.Semaphore(args.parallel)
    jobs = []
    index = 0
    for game in games:
        seats = len(load(game).roles)
        for opponent in opponents:
            for seat in range(seats):
                for _ in range(args.matches):
                    index += 1
                    jobs.append((game, opponent, seat, index))

    async def run(job: tuple[str, str, int, int]) -> None:
        async with gate:
            game, opponent, seat, number = job
            await one_match(game, opponent, seat, number, args, tallies[(game, opponent)])

    started = time.monotonic()
    print(
        f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr
    )
    await asyncio.gather(*(run(job) for job in jobs))
    print("\t".join(COLUMNS))
    for (game, opponent), tally in tallies.items():
        decided = tally.wins + tally.losses
        row = [
            game,
            opponent,
            str(tally.matches),
            str(tally.wins),
            str(tally.draws),
            str(tally.losses),
            f"{100 * tally.wins / decided:.0f}" if decided else "-",
            f"{statistics.median(tally.rates):.0f}" if tally.rates else "-",
            f"{tally.slowest_ms / 1000:.2f}",
            str(args.playclock),
            str(tally.timeouts),
            str(tally.errors),
        ]
        print("\t".join(row), flush=True)
    print(
        f"{len(jobs)} matches in {time.monotonic() - started:.0f} s; "
        f"load average after: {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )


def default_games() -> list[str]:
    from server.games import list_games

    games = [info.name for info in list_games()]
    games += [name for name in CORPUS_GAMES if (CORPUS / f"{name}.kif").is_file()]
    return games


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", help="comma-separated games (default: bundled + corpus three)")
    parser.add_argument(
        "--opponents",
        default="random,montecarlo",
        help=f"comma-separated opponents among {', '.join(OPPONENTS)}",
    )
    parser.add_argument("--matches", type=int, default=5, help="matches per seat (default 5)")
    parser.add_argument("--playclock", type=int, default=2)
    parser.add_argument("--startclock", type=int, default=10)
    parser.add_argument("--parallel", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--logs", type=Path, help="write the match logs into this folder")
    parser.add_argument("--show-logs", action="store_true", help="print the mcts player's log")
    parser.add_argument(
        "--list-columns", action="store_true", help="print the column names, one a line, and exit"
    )
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    unknown = set(args.opponents.split(",")) - set(OPPONENTS)
    if unknown:
        parser.error(f"unknown opponents: {', '.join(sorted(unknown))}")
    asyncio.run(benchmark(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
