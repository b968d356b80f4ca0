"""``ggp games``: list the bundled games; ``show NAME`` prints one's GDL; ``lint FILE`` checks one."""

from __future__ import annotations

import argparse
import sys


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
    from pathlib import Path

    from server.games import UnknownGameError, game_text, is_bundled
    from server.games.lint import lint_game

    from ._common import EXIT_FAILED, EXIT_OK, InputError, check_rule_file, one_line

    failed = False
    for name in args.files:
        try:
            if is_bundled(name) and not Path(name).is_file():
                text = game_text(name)
            else:
                check_rule_file(Path(name))
                text = Path(name).read_text(encoding="utf-8")
        except UnknownGameError as error:
            raise InputError(one_line(error)) from None
        report = lint_game(text, playouts=max(0, args.playouts))
        for problem in report.problems:
            where = f"{name}:{problem.line}:{problem.column}" if problem.line else name
            print(f"{where}: {problem.severity}: {problem.message}")
        errors = sum(problem.severity == "error" for problem in report.problems)
        failed = failed or not report.ok
        print(f"{name}: {'ok' if report.ok else 'refused'} ({errors} error(s))")
    return EXIT_FAILED if failed else EXIT_OK
