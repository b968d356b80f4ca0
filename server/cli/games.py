"""``ggp games``: list the bundled games; ``show NAME`` prints one's GDL; ``lint FILE`` checks one."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.gdl import Game
    from server.gdl.engine_store import EngineStore


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "games",
        help="list the bundled games, or print one's rules",
        description="List the games bundled with the server: name, title, roles and "
        "recommended clocks. Any command that takes a game accepts one of these names "
        "or a path to a .kif file.",
    )
    parser.set_defaults(run=run_list)
    actions = parser.add_subparsers(dest="games_command", metavar="ACTION")
    show = actions.add_parser(
        "show",
        help="print a bundled game's GDL text",
        description="Print the GDL text of a bundled game and nothing else, so that it "
        "can be piped to a file: `ggp games show nineBoardTicTacToe > nine.kif`.",
    )
    show.add_argument("name", help="a bundled game's name (see `ggp games`)")
    show.set_defaults(run=run_show)
    lint = actions.add_parser(
        "lint",
        help="check GDL files as an upload is checked",
        description="Check each GDL file (or bundled game) as an upload is checked: syntax, "
        "the restrictions of the GDL specification, then seeded random playouts. Every "
        "problem is printed as `FILE:LINE:COLUMN: error|warning: message` (without the "
        "place when it has none). Exit status 1 when a file has an error.",
    )
    lint.add_argument("files", nargs="+", metavar="FILE", help="a .kif file or a game's name")
    lint.add_argument(
        "--playouts", type=int, default=10, help="random playouts per game (default 10)"
    )
    lint.set_defaults(run=run_lint)
    compile_ = actions.add_parser(
        "compile",
        help="compile heavy games ahead of their matches, into the engine store",
        description="Compile each game within a larger budget than a match's set-up has "
        "(by default the 10 s of CPU time a 60 s start clock buys), race it against the "
        "interpreter, and keep the engine in the engine store: every later process on "
        "this machine that loads the same rules (the server, its workers, the bundled "
        "players, ggp replay) then plays it compiled from the start. A game that does not "
        "compile within the budget is remembered as such (exit status 1). The store is "
        "at ~/.cache/ggp/engines, or where GGP_ENGINE_STORE says.",
    )
    compile_.add_argument("files", nargs="+", metavar="FILE", help="a .kif file or a game's name")
    compile_.add_argument(
        "--time-limit",
        type=_time_limit,
        default=None,
        metavar="SECONDS",
        help="CPU time the compile may take, 1 to 600 (default 10)",
    )
    compile_.set_defaults(run=run_compile)
    store = actions.add_parser(
        "store",
        help="show or empty the engine store",
        description="Print where the engine store is, how many compiled engines and "
        "remembered failures it holds and their size; with --clear, empty it first.",
    )
    store.add_argument("--clear", action="store_true", help="remove every entry first")
    store.set_defaults(run=run_store)


def _time_limit(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 1 <= seconds <= MAX_COMPILE_SECONDS:
        raise argparse.ArgumentTypeError(f"{text} is not between 1 and {MAX_COMPILE_SECONDS}")
    return seconds


MAX_COMPILE_SECONDS = 600


def run_list(args: argparse.Namespace) -> int:
    from server.games import list_games

    rows = [
        (info.name, info.title, ", ".join(info.roles), f"{info.start_clock}/{info.play_clock}")
        for info in list_games()
    ]
    header = ("NAME", "TITLE", "ROLES", "CLOCKS (start/play s)")
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(3)]
    for row in [header, *rows]:
        cells = [text.ljust(width) for text, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[3]]))
    return 0


def run_show(args: argparse.Namespace) -> int:
    from server.games import UnknownGameError, game_text

    try:
        text = game_text(args.name)
    except UnknownGameError as error:
        print(f"ggp games show: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


def run_lint(args: argparse.Namespace) -> int:
    from server.games.lint import lint_game

    from ._common import EXIT_FAILED, EXIT_OK

    failed = False
    for name in args.files:
        text = _game_text(name)
        report = lint_game(text, playouts=max(0, args.playouts))
        for problem in report.problems:
            where = f"{name}:{problem.line}:{problem.column}" if problem.line else name
            print(f"{where}: {problem.severity}: {problem.message}")
        errors = sum(problem.severity == "error" for problem in report.problems)
        failed = failed or not report.ok
        print(f"{name}: {'ok' if report.ok else 'refused'} ({errors} error(s))")
    return EXIT_FAILED if failed else EXIT_OK


def _game_text(name: str) -> str:
    """The rules of a bundled game or of a file (an :class:`InputError` otherwise)."""
    from pathlib import Path

    from server.games import UnknownGameError, game_text, is_bundled

    from ._common import InputError, check_rule_file, one_line

    try:
        if is_bundled(name) and not Path(name).is_file():
            return game_text(name)
        check_rule_file(Path(name))
        return Path(name).read_text(encoding="utf-8")
    except UnknownGameError as error:
        raise InputError(one_line(error)) from None


def _store_or_refuse() -> EngineStore:
    """The engine store, or an :class:`InputError` when it is turned off."""
    from server.gdl.engine_store import STORE_VARIABLE, engine_store

    from ._common import InputError

    try:
        store = engine_store()
    except ValueError as error:
        raise InputError(str(error)) from None
    if store is None:
        raise InputError(f"the engine store is turned off ({STORE_VARIABLE}=off)")
    problem = store.problem()
    if problem is not None:
        raise InputError(f"the engine store at {store.directory} cannot be used: {problem}")
    return store


def run_compile(args: argparse.Namespace) -> int:
    import time

    from server.gdl import Game
    from server.gdl.compile_aside import aside_budget
    from server.gdl.compile_budget import max_ground_rules_for

    from ._common import EXIT_FAILED, EXIT_OK, InputError, describe_gdl_error

    store = _store_or_refuse()
    time_limit = args.time_limit or aside_budget().time_limit
    rules_cap = max(max_ground_rules_for(time_limit), aside_budget().max_ground_rules)
    texts = [(name, _game_text(name)) for name in args.files]
    failed = False
    for name, text in texts:
        started = time.process_time()
        try:
            game = Game.from_text(
                text, engine="auto", compile_time_limit=time_limit, max_ground_rules=rules_cap
            )
        except (ValueError, RecursionError) as error:
            raise InputError(describe_gdl_error(error, name)) from None
        spent = time.process_time() - started
        if game.engine_storing is not None:
            game.engine_storing.join()
        elif game.fallback_reason is None and not game.engine_stored:
            _store_now(store, game)  # cheap to compile, but asked for
        print(f"{name}: {_compile_outcome(game, spent, time_limit)}")
        failed = failed or game.fallback_reason is not None
    return EXIT_FAILED if failed else EXIT_OK


def _compile_outcome(game: Game, spent: float, time_limit: float) -> str:
    """What ``ggp games compile`` did with one game, in a sentence."""
    race = game.engine_race
    speeds = ""
    if race is not None:
        speeds = f"; {race.compiled_rate:,.0f} transitions a second"
        if race.interpreter_rate is not None:
            speeds += f" (the interpreter {race.interpreter_rate:,.0f})"
    if game.engine_stored:
        return f"compiled, read from the engine store{speeds}"
    if game.fallback_reason is not None:
        when = "" if game.failed_compile_seconds else " (as remembered)"
        return f"not compiled within {time_limit:g} s{when}: {game.fallback_reason}"
    return f"compiled in {spent:.2f} s{speeds}; stored"


def _store_now(store: EngineStore, game: Game) -> None:
    """Store the engine a game compiled, which a load leaves out of the store when it
    compiles quickly (but ``ggp games compile`` was asked to store it)."""
    from ._common import InputError

    portable = getattr(game.engine, "portable", None)
    if portable is None or game.compile_budget is None:
        return
    if not store.entry(game.rules).keep_engine(portable(), game.engine_race, game.compile_budget):
        raise InputError(
            f"the engine could not be written to the engine store at {store.directory}"
        )


def run_store(args: argparse.Namespace) -> int:
    store = _store_or_refuse()
    if args.clear:
        print(f"removed {store.clear()} file(s)")
    summary = store.summary()
    print(
        f"{summary['directory']}: {summary['engines']} compiled engine(s), "
        f"{summary['failures']} game(s) with remembered failures, "
        f"{summary['megabytes']} MB of {summary['limit_megabytes']} MB"
    )
    return 0
