"""Does the ``mcts`` player keep its clock on every game? Short matches, two at once.

For every bundled game and every corpus game the compiled engine compiles (listed in
``tests/gdl/compiled_games.txt``; the rules come from ``../shared/conformance/games``,
skipped when absent), ``mcts`` plays the first ``--steps`` steps against the server's
own random moves, with a short start clock and a 2-second play clock. ``--parallel``
lanes (default 2) run at once, each with its own ``mcts`` process that plays its
games one after another, so two searches compete for the cores as in a busy
tournament. One line per game, with the columns of ``--list-columns``:

- the steps played and the slowest ``mcts`` reply to PLAY against the play clock;
- the ``mcts`` reply to START against the start clock (compiling the game and filling
  the tree);
- timeouts (``TO``) at PLAY and at START, and other errors recorded against ``mcts``;
- how long the player still answered INFO with ``busy`` after the match (a match it
  never let go of); the lane waits for it to be ``available`` before its next game.

The last lines (stderr) give the totals and the load average before and after.

Usage: ``python benchmarks/mcts_clock.py [--games A,B] [--steps N] [--playclock S]
[--startclock S] [--parallel P]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from player_strength import CORPUS, ROOT, player_process  # noqa: E402

COMPILED_LIST = ROOT / "tests" / "gdl" / "compiled_games.txt"

COLUMNS = (
    "game",
    "roles",
    "steps",
    "slowest_reply_s",
    "play_clock_s",
    "start_reply_s",
    "start_clock_s",
    "timeouts",
    "start_timeouts",
    "errors",
    "busy_after_s",
)


@dataclass
class Row:
    """What one short match showed about the ``mcts`` player's clock."""

    game: str
    roles: int = 0
    steps: int = 0
    slowest_ms: int = 0
    start_ms: int = 0
    timeouts: int = 0
    start_timeouts: int = 0
    errors: int = 0
    busy_after: float = 0.0
    failure: str = ""


def corpus_games() -> list[str]:
    """The corpus games the compiled engine compiles and whose rules are at hand."""
    if not CORPUS.is_dir() or not COMPILED_LIST.is_file():
        return []
    names = []
    for line in COMPILED_LIST.read_text().splitlines():
        name, _, verdict = line.partition("\t")
        if verdict == "compiles" and (CORPUS / f"{name}.kif").is_file():
            names.append(name)
    return names


def default_games() -> list[str]:
    from server.games import list_games

    return [info.name for info in list_games()] + corpus_games()


async def one_match(url: str, name: str, seat_seed: int, args: argparse.Namespace) -> Row:
    from server.games import is_bundled, load_game
    from server.gdl import Game
    from server.match import MatchConfig, MatchRunner, Player

    row = Row(name)
    # The server's rules run in their own worker process; this copy only names the roles.
    game = (
        load_game(name, engine="interpreter")
        if is_bundled(name)
        else Game.from_file(CORPUS / f"{name}.kif", engine="interpreter")
    )
    row.roles = len(game.roles)
    seat = seat_seed % len(game.roles)
    config = MatchConfig(
        start_clock=args.startclock,
        play_clock=args.playclock,
        network_slack=1.0,
        step_limit=args.steps,
        seed=seat_seed,
    )
    players: list[Player | None] = [None] * len(game.roles)
    players[seat] = Player("mcts", url)
    record = await MatchRunner(game, players, config, game_name=name).run()
    errors = record.errors or []
    times = record.response_times or []
    row.steps = max(0, len(times) - 1)
    for index, codes in enumerate(errors):
        code = codes[seat]
        if index == 0:
            row.start_timeouts += code == "TO"
        else:
            row.timeouts += code == "TO"
        row.errors += bool(code) and code != "TO"
    for index, replies in enumerate(times):
        if replies[seat] is None:
            continue
        if index == 0:
            row.start_ms = replies[seat]
        else:
            row.slowest_ms = max(row.slowest_ms, replies[seat])
    return row


async def until_available(url: str, limit: float = 60.0) -> float:
    """Seconds until the player at ``url`` answers INFO with ``available`` (at most ``limit``)."""
    from server.match.ping import PlayerStatus, ping_player
    from server.match.transport import PlayerAddress

    address = PlayerAddress.parse(url)
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if (await ping_player(address)).status is PlayerStatus.AVAILABLE:
            break
        await asyncio.sleep(0.5)
    return time.monotonic() - started


async def lane(
    number: int, queue: asyncio.Queue[tuple[int, str]], args: argparse.Namespace, rows: list[Row]
) -> None:
    """One ``mcts`` process playing the queued games one after another."""
    async with player_process("mcts", number, {}) as (url, log):
        while not queue.empty():
            index, name = queue.get_nowait()
            try:
                row = await one_match(url, name, index, args)
            except Exception as error:  # a game the server refuses: reported, not fatal
                row = Row(name, failure=" ".join(f"{type(error).__name__}: {error}".split())[:120])
            row.busy_after = await until_available(url)
            rows.append(row)
            print(
                f"  [{len(rows)}] {name}: slowest {row.slowest_ms} ms, start {row.start_ms} ms, "
                f"timeouts {row.timeouts}+{row.start_timeouts}, errors {row.errors}, "
                f"busy after {row.busy_after:.1f} s "
                f"{row.failure}",
                file=sys.stderr,
                flush=True,
            )
            if args.show_logs:
                for line in log:
                    print("    " + line, file=sys.stderr)
            log.clear()


async def benchmark(args: argparse.Namespace) -> int:
    games = args.games.split(",") if args.games else default_games()
    queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    for index, name in enumerate(games):
        queue.put_nowait((index, name))
    rows: list[Row] = []
    started = time.monotonic()
    print(
        f"{len(games)} games; load average before: {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores",
        file=sys.stderr,
    )
    await asyncio.gather(*(lane(n, queue, args, rows) for n in range(args.parallel)))
    print("\t".join(COLUMNS))
    order = {name: i for i, name in enumerate(games)}
    for row in sorted(rows, key=lambda row: order[row.game]):
        print(
            "\t".join(
                [
                    row.game,
                    str(row.roles),
                    str(row.steps),
                    f"{row.slowest_ms / 1000:.2f}",
                    str(args.playclock),
                    f"{row.start_ms / 1000:.2f}",
                    str(args.startclock),
                    str(row.timeouts),
                    str(row.start_timeouts),
                    str(row.errors) if not row.failure else f"{row.errors} ({row.failure})",
                    f"{row.busy_after:.1f}",
                ]
            ),
            flush=True,
        )
    played = [row for row in rows if not row.failure]
    slowest = max(played, key=lambda row: row.slowest_ms, default=None)
    print(
        f"{len(played)} games played ({len(rows) - len(played)} refused), "
        f"{sum(r.steps for r in played)} steps, "
        f"{sum(r.timeouts for r in played)} play timeouts, "
        f"{sum(r.start_timeouts for r in played)} start timeouts, "
        f"{sum(r.errors for r in played)} other errors, "
        f"{sum(r.busy_after > 1 for r in played)} games left the player busy; slowest reply "
        f"{(slowest.slowest_ms / 1000) if slowest else 0:.2f} s ({slowest.game if slowest else '-'})"
        f" against {args.playclock} s; {time.monotonic() - started:.0f} s; "
        f"load average after: {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--games", help="comma-separated games (default: bundled + compiled corpus)"
    )
    parser.add_argument("--steps", type=int, default=6, help="steps per match (default 6)")
    parser.add_argument("--playclock", type=int, default=2)
    parser.add_argument("--startclock", type=int, default=5)
    parser.add_argument("--parallel", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--show-logs", action="store_true", help="print the mcts player's log")
    parser.add_argument(
        "--list-columns", action="store_true", help="print the column names, one a line, and exit"
    )
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    if args.steps < 1 or args.parallel < 1:
        parser.error("--steps and --parallel must be positive")
    return asyncio.run(benchmark(args))


if __name__ == "__main__":
    sys.exit(main())
