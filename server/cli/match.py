"""``ggp match GAME PLAYER...``: run one match and write its log.

Each PLAYER, one per role in role order, is a URL (``http://host:port``) or the name
of a bundled player (``random``, ``legal``), which is started on a free loopback port
for the match.  A role named ``random`` is played by the server; its PLAYER may be
left out.  Progress goes to stderr; stdout gets the goals, then the log path as the
last line.

Everything that can be checked before the match is checked first (players, clocks,
the output folder, the match id, the host key), then every remote player must answer
INFO.  SIGINT and SIGTERM abort the match: ABORT goes to the players and the log is
marked aborted and signed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._common import (
    EXIT_FAILED,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_UNREACHABLE,
    InputError,
    memory_mb,
    non_negative_float,
    non_negative_int,
    one_line,
    positive_float,
    positive_int,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    from server.match import DEFAULT_PING_TIMEOUT
    from server.match.rules.budget import DEFAULT_LOAD_CPU, DEFAULT_MEMORY_MB, DEFAULT_STEP_CPU

    parser = subparsers.add_parser(
        "match",
        help="run one match between players and write its log",
        description="Run one match of GAME (a bundled game's name or a .kif file) between "
        "PLAYERs, one per role in role order: URLs of running players, or names of bundled "
        "players (random, legal, mcts, montecarlo), which are started for the match. Every player URL must "
        "answer INFO first. Progress goes to stderr; the goals and then the path of the "
        "match log (ggp.org JSON) go to stdout. SIGINT or SIGTERM aborts the match (ABORT "
        "to the players; the log is kept, marked aborted and signed). Exit status: 0 "
        "completed, 1 not completed, 2 bad input, 3 a player did not answer INFO, "
        "130 SIGINT, 143 SIGTERM.",
    )
    parser.add_argument("game", metavar="GAME", help="a bundled game's name or a .kif path")
    parser.add_argument("players", metavar="PLAYER", nargs="+", help="a URL or a bundled player")
    parser.add_argument(
        "--startclock",
        type=non_negative_int,
        default=10,
        metavar="S",
        help="start clock (default 10 s)",
    )
    parser.add_argument(
        "--playclock", type=positive_int, default=5, metavar="S", help="play clock (default 5 s)"
    )
    parser.add_argument(
        "--slack",
        type=non_negative_float,
        default=1.0,
        metavar="S",
        help="network slack added to every deadline (default 1 s)",
    )
    parser.add_argument(
        "--steps",
        type=positive_int,
        metavar="N",
        help="step limit (default: derived from the game)",
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
    parser.add_argument(
        "--lenient-case",
        action="store_true",
        help="accept a reply that equals a legal move but for letter case (NOOP for noop); "
        "by default it is illegal, as GGP-Base and Tiltyard record it",
    )
    parser.add_argument(
        "--rules-cpu",
        type=positive_float,
        default=DEFAULT_STEP_CPU,
        metavar="S",
        help=f"CPU seconds the rules may spend on one step (default {DEFAULT_STEP_CPU:g}); "
        "past it the match ends with rules_limit",
    )
    parser.add_argument(
        "--rules-load-cpu",
        type=positive_float,
        default=DEFAULT_LOAD_CPU,
        metavar="S",
        help=f"CPU seconds to load the game and derive its step limit "
        f"(default {DEFAULT_LOAD_CPU:g})",
    )
    parser.add_argument(
        "--rules-memory",
        type=memory_mb,
        default=DEFAULT_MEMORY_MB,
        metavar="MB",
        help=f"memory of the rules process in MB (default {DEFAULT_MEMORY_MB}, at least 256)",
    )
    parser.add_argument(
        "--match-id",
        help="the match id, a plain name not used by a log in --out (default <prefix>.<game>.<ms>)",
    )
    parser.add_argument(
        "--keep-alive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="one kept-open connection per player for the whole match (HTTP keep-alive; "
        "less work per step) or, with --no-keep-alive, one connection per message with "
        "GGP-Base's exact request bytes; by default a player gets kept connections when its "
        "reply to the INFO ping before the match kept the connection open (bundled players "
        "do, GGP-Base's do not)",
    )
    parser.add_argument(
        "--allow-unreachable",
        action="store_true",
        help="play even against player URLs that do not answer INFO (they get substitute "
        "moves; the summary names them)",
    )
    parser.add_argument(
        "--ping-timeout",
        type=positive_float,
        default=DEFAULT_PING_TIMEOUT,
        metavar="S",
        help=f"seconds a player URL has to answer INFO (default {DEFAULT_PING_TIMEOUT:g})",
    )
    parser.add_argument(
        "--no-sign", action="store_true", help="do not sign the finished log with the host key"
    )
    from .key import add_key_file_argument

    add_key_file_argument(parser)
    parser.set_defaults(run=run)


class _StoppedEarly(Exception):
    """A signal arrived while the inputs were being checked."""


def _stop_early(signal_number: int, frame: object) -> None:
    raise _StoppedEarly(signal_number)


def run(args: argparse.Namespace) -> int:
    import signal

    previous = signal.signal(signal.SIGTERM, _stop_early)
    try:
        return _checked_run(args)
    except (_StoppedEarly, KeyboardInterrupt) as stop:
        signal_number = stop.args[0] if isinstance(stop, _StoppedEarly) else signal.SIGINT
        name = signal.Signals(signal_number).name
        print(f"ggp match: stopped by {name} before the match began", file=sys.stderr)
        return EXIT_SIGTERM if signal_number == signal.SIGTERM else EXIT_SIGINT
    finally:
        signal.signal(signal.SIGTERM, previous)


def _checked_run(args: argparse.Namespace) -> int:
    import asyncio

    from server.games import is_bundled
    from server.match import LogWriter, MatchConfig, new_match_id
    from server.records import SubstitutePolicy

    from . import _match_setup as setup
    from ._common import load_game_checked

    if args.match_id is not None:
        setup.check_match_id(args.match_id)
    setup.check_output_folder(args.out)
    game = load_game_checked(args.game)
    game_name = args.game if is_bundled(args.game) else Path(args.game).stem
    specs = setup.players_for_roles(list(game.roles), args.players)
    match_id = args.match_id or new_match_id("local", game_name)
    setup.check_log_is_new(LogWriter(args.out).path_for(match_id), match_id)
    try:
        config = MatchConfig(
            start_clock=args.startclock,
            play_clock=args.playclock,
            network_slack=args.slack,
            step_limit=args.steps,
            policy=SubstitutePolicy(args.policy),
            seed=args.seed,
            scramble=args.scramble,
            lenient_move_case=args.lenient_case,
            rules_step_cpu=args.rules_cpu,
            rules_load_cpu=args.rules_load_cpu,
            rules_memory_mb=args.rules_memory,
        )
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        raise InputError(one_line(error)) from None
    return asyncio.run(_run(args, game, game_name, match_id, specs, config))


class _Stopper:
    """Turns SIGINT and SIGTERM into an aborted match (or, before it, a cancelled start)."""

    def __init__(self) -> None:
        import asyncio

        self.signal_number: int | None = None
        self.runner: Any = None
        self.task = asyncio.current_task()

    def __call__(self, signal_number: int) -> None:
        first = self.signal_number is None
        if first:
            self.signal_number = signal_number
        if self.runner is not None:
            self.runner.abort()
        elif first and self.task is not None:
            self.task.cancel()

    @property
    def exit_code(self) -> int:
        import signal

        return EXIT_SIGTERM if self.signal_number == signal.SIGTERM else EXIT_SIGINT

    @property
    def name(self) -> str:
        import signal

        return signal.Signals(self.signal_number or signal.SIGINT).name


async def _run(
    args: argparse.Namespace,
    game: Any,
    game_name: str,
    match_id: str,
    specs: list[Any],
    config: Any,
) -> int:
    import asyncio
    import contextlib
    import signal

    loop = asyncio.get_running_loop()
    stopper = _Stopper()
    handled = (signal.SIGINT, signal.SIGTERM)
    for signal_number in handled:
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal_number, stopper, signal_number)
    try:
        return await _play(args, game, game_name, match_id, specs, config, stopper)
    except asyncio.CancelledError:
        if stopper.signal_number is None:
            raise
        print(f"ggp match: stopped by {stopper.name} before the match began", file=sys.stderr)
        return stopper.exit_code
    finally:
        for signal_number in handled:
            with contextlib.suppress(NotImplementedError):
                loop.remove_signal_handler(signal_number)


async def _play(
    args: argparse.Namespace,
    game: Any,
    game_name: str,
    match_id: str,
    specs: list[Any],
    config: Any,
    stopper: _Stopper,
) -> int:
    from server.gdl.collector import settle_after_start
    from server.match import LogWriter, MatchRunner, Player
    from server.match.local_players import PlayerProcessError, local_players
    from server.records import EndReason

    from ._match_setup import load_signing_key, ping_remote_players, prepare_output_folder

    pings = await ping_remote_players(specs, args.ping_timeout)
    silent = [spec for spec in specs if spec.url and not pings[spec.role].reachable]
    if silent and not args.allow_unreachable:
        named = "; ".join(
            f"{spec.role} at {spec.url} ({one_line(pings[spec.role].message, 120)})"
            for spec in silent
        )
        print(
            f"ggp match: no answer to INFO from {named}; check the URL, or pass "
            "--allow-unreachable to play anyway",
            file=sys.stderr,
        )
        return EXIT_UNREACHABLE
    for spec in silent:
        print(f"warning: {spec.role} at {spec.url} did not answer INFO", file=sys.stderr)
    for role, ping in pings.items():
        if ping.status == "busy":
            print(f"warning: {role} says it is busy; it may refuse START", file=sys.stderr)
    key = None if args.no_sign else load_signing_key(args.key_file)
    prepare_output_folder(args.out)
    bundled = [spec.bundled for spec in specs if spec.bundled is not None]
    try:
        async with local_players(bundled, seed=args.seed) as urls:
            started = iter(urls)
            players = [
                None
                if spec.url is None and spec.bundled is None
                else Player(
                    spec.bundled,
                    next(started),
                    keep_alive=args.keep_alive is not False,  # aiohttp keeps connections
                )
                if spec.bundled is not None
                else Player(
                    pings[spec.role].name or spec.url.split("://")[-1].rstrip("/"),
                    spec.url,
                    keep_alive=bool(
                        pings[spec.role].keeps_connections
                        if args.keep_alive is None
                        else args.keep_alive
                    ),
                )
                for spec in specs
            ]
            writer = LogWriter(args.out, signing_key=key)
            runner = MatchRunner(
                game,
                players,
                config,
                game_name=game_name,
                match_id=match_id,
                observers=[writer, ProgressPrinter(sys.stderr)],
            )
            stopper.runner = runner
            settle_after_start()  # the game, the players and the log are set up
            try:
                record = await runner.run()
            except Exception as error:  # the runner aborted the match and logged why
                print(f"ggp match: the match failed: {one_line(error)}", file=sys.stderr)
                record = runner.record
    except PlayerProcessError as error:
        print(f"ggp match: {one_line(error)}", file=sys.stderr)
        return EXIT_FAILED
    path = writer.path_for(record.match_id)
    if not path.exists():
        print(
            f"ggp match: the log of match {match_id} could not be written in {args.out}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    if silent:
        never = ", ".join(f"{spec.role} ({spec.url})" for spec in silent)
        print(f"never answered INFO: {never}")
    if record.goal_values is not None:
        goals = ", ".join(
            f"{role} {goal}" for role, goal in zip(game.roles, record.goal_values, strict=True)
        )
        print(f"goals: {goals}")
    else:
        print(f"no goals: {record.end_reason} ({record.end_message})")
    print(path)
    if record.end_reason is EndReason.ABORTED:
        if stopper.signal_number is not None:
            print(f"ggp match: stopped by {stopper.name}; the match was aborted", file=sys.stderr)
        return stopper.exit_code
    return 0 if record.is_completed else EXIT_FAILED


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
