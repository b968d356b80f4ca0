"""``ggp match GAME PLAYER...``: run one match and write its log.

Each PLAYER, one per role in role order, is a URL (``http://host:port``) or the name
of a bundled player (``random``, ``legal``), which is started on a free loopback port
for the match.  A role named ``random`` is played by the server; its PLAYER may be
left out.  Progress goes to stderr; stdout gets the goals, then the log path as the
last line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_NOT_COMPLETED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "match",
        help="run one match between players and write its log",
        description="Run one match of GAME (a bundled game's name or a .kif file) between "
        "PLAYERs, one per role in role order: URLs of running players, or names of bundled "
        "players (random, legal), which are started for the match. Progress goes to stderr; "
        "the goals and then the path of the match log (ggp.org JSON) go to stdout.",
    )
    parser.add_argument("game", metavar="GAME", help="a bundled game's name or a .kif path")
    parser.add_argument("players", metavar="PLAYER", nargs="+", help="a URL or a bundled player")
    parser.add_argument(
        "--startclock", type=int, default=10, metavar="S", help="start clock (default 10 s)"
    )
    parser.add_argument(
        "--playclock", type=int, default=5, metavar="S", help="play clock (default 5 s)"
    )
    parser.add_argument(
        "--slack",
        type=float,
        default=1.0,
        metavar="S",
        help="network slack added to every deadline (default 1 s)",
    )
    parser.add_argument(
        "--steps", type=int, metavar="N", help="step limit (default: derived from the game)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("matches"),
        metavar="DIR",
        help="folder for the log (default ./matches)",
    )
    parser.add_argument(
        "--policy",
        choices=("random", "first", "forfeit"),
        default="random",
        help="substitute for late, failed or illegal replies (default random)",
    )
    parser.add_argument("--seed", type=int, help="seed of the substitute moves (logged)")
    parser.add_argument(
        "--scramble", action="store_true", help="rename the game's symbols on the wire"
    )
    parser.add_argument("--match-id", help="the match id (default <prefix>.<game>.<ms>)")
    parser.add_argument(
        "--no-sign", action="store_true", help="do not sign the finished log with the host key"
    )
    from .key import add_key_file_argument

    add_key_file_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from server.games import UnknownGameError, is_bundled, load_game

    try:
        game = load_game(args.game)
    except (UnknownGameError, FileNotFoundError) as error:
        print(f"ggp match: {error}", file=sys.stderr)
        return EXIT_USAGE
    game_name = args.game if is_bundled(args.game) else Path(args.game).stem
    try:
        specs = _players_for_roles(game.roles, args.players)
    except ValueError as error:
        print(f"ggp match: {error}", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_run(args, game, game_name, specs))


def _players_for_roles(roles: list[str], players: list[str]) -> list[str | None]:
    """One PLAYER per role; the server's own ``random`` role may be left out."""
    from server.match import RANDOM_ROLE

    if len(players) == len(roles):
        return [
            None if role == RANDOM_ROLE else spec for role, spec in zip(roles, players, strict=True)
        ]
    contacted = [role for role in roles if role != RANDOM_ROLE]
    if len(players) == len(contacted):
        given = iter(players)
        return [None if role == RANDOM_ROLE else next(given) for role in roles]
    raise ValueError(
        f"the game has {len(roles)} roles ({', '.join(roles)}); give one PLAYER per role, "
        f"got {len(players)}"
    )


async def _run(args: argparse.Namespace, game: Any, game_name: str, specs: list[str | None]) -> int:
    import asyncio
    import contextlib
    import signal

    from server.match import LogWriter, MatchConfig, MatchRunner, Player
    from server.match.local_players import PlayerProcessError, local_players, looks_like_url
    from server.records import EndReason, SubstitutePolicy

    bundled = [spec for spec in specs if spec is not None and not looks_like_url(spec)]
    config = MatchConfig(
        start_clock=args.startclock,
        play_clock=args.playclock,
        network_slack=args.slack,
        step_limit=args.steps,
        policy=SubstitutePolicy(args.policy),
        seed=args.seed,
        scramble=args.scramble,
    )
    try:
        async with local_players(bundled, seed=args.seed) as urls:
            started = iter(urls)
            players = [
                None
                if spec is None
                else Player(spec.split("://")[-1].rstrip("/"), spec)
                if looks_like_url(spec)
                else Player(spec, next(started))
                for spec in specs
            ]
            writer = LogWriter(args.out, signing_key=_signing_key(args))
            runner = MatchRunner(
                game,
                players,
                config,
                game_name=game_name,
                match_id=args.match_id,
                observers=[writer, ProgressPrinter(sys.stderr)],
            )
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signal.SIGINT, runner.abort)
            try:
                record = await runner.run()
            finally:
                with contextlib.suppress(NotImplementedError):
                    loop.remove_signal_handler(signal.SIGINT)
    except PlayerProcessError as error:
        print(f"ggp match: {error}", file=sys.stderr)
        return EXIT_NOT_COMPLETED
    path = writer.path_for(record.match_id)
    if record.goal_values is not None:
        goals = ", ".join(
            f"{role} {goal}" for role, goal in zip(game.roles, record.goal_values, strict=True)
        )
        print(f"goals: {goals}")
    else:
        print(f"no goals: {record.end_reason} ({record.end_message})")
    print(path)
    if record.end_reason is EndReason.ABORTED:
        return EXIT_INTERRUPTED
    return 0 if record.is_completed else EXIT_NOT_COMPLETED


def _signing_key(args: argparse.Namespace) -> Any:
    """The host key that signs the log as the writer writes it, or ``None`` with --no-sign."""
    if args.no_sign:
        return None
    from server.records.signing import load_or_create_host_key

    return load_or_create_host_key(args.key_file)


class ProgressPrinter:
    """An observer that prints a line per phase: steps, moves, clock use, errors."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.roles: list[str] = []
        self.play_clock = 0

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _times(self, times: list[int | None], clock: float) -> str:
        return ", ".join(
            f"{role} {'-' if ms is None else f'{ms / 1000:.2f}'}/{clock:g} s"
            for role, ms in zip(self.roles, times, strict=True)
        )

    def _errors(self, errors: list[str]) -> str:
        found = [f"{role} {code}" for role, code in zip(self.roles, errors, strict=True) if code]
        return f"  errors: {'; '.join(found)}" if found else ""

    def __call__(self, event: Any) -> None:
        from server.match import MatchEnded, MatchStarted, PlayersStarted, StepPlayed

        if isinstance(event, MatchStarted):
            self.roles = event.roles
            self.play_clock = event.play_clock
            cast = ", ".join(
                f"{role}={player}" for role, player in zip(event.roles, event.players, strict=True)
            )
            self._print(
                f"match {event.match_id}: {event.game_name} with {cast}; clocks "
                f"{event.start_clock}/{event.play_clock} s, step limit {event.step_limit}"
            )
        elif isinstance(event, PlayersStarted):
            clock = event.record.start_clock or 0
            self._print(
                f"start: {self._times(event.response_times, clock)}{self._errors(event.errors)}"
            )
        elif isinstance(event, StepPlayed):
            self._print(
                f"step {event.step}: {' | '.join(event.moves)}  "
                f"[{self._times(event.response_times, self.play_clock)}]"
                f"{self._errors(event.errors)}"
            )
        elif isinstance(event, MatchEnded):
            ending = f"ended: {event.reason}"
            if event.goals is not None:
                ending += " goals " + ", ".join(str(goal) for goal in event.goals)
            if event.record.end_message:
                ending += f" ({event.record.end_message})"
            self._print(ending)
