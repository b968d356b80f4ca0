"""``ggp games``: list the bundled games; ``ggp games show NAME`` prints one's GDL."""

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
