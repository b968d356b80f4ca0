"""``ggp check-player URL``: send a player the edge cases real servers send; print a report card."""

from __future__ import annotations

import argparse
import asyncio
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``check-player`` sub-command."""
    from server.bots.items import ITEMS

    parser = subparsers.add_parser(
        "check-player",
        help="check that a player handles what real game servers send",
        description="Play a few short matches of games the player has never seen and send "
        "the edge cases real servers send (NIL, scrambled symbols, keywords in any case, "
        "ABORT, a second START, unknown match ids); print one line per item. Exit status: "
        "0 every item passed, 1 an item failed, 2 unusable input or nobody listening. "
        "Items: " + ", ".join(ITEMS) + ".",
    )
    parser.add_argument(
        "url", metavar="URL", help="the player's address, e.g. http://127.0.0.1:9147"
    )
    parser.add_argument(
        "--startclock", type=int, default=5, metavar="SECONDS", help="start clock (default 5)"
    )
    parser.add_argument(
        "--playclock", type=int, default=2, metavar="SECONDS", help="play clock (default 2)"
    )
    parser.add_argument(
        "--items", metavar="NAME,...", help="check only these items (comma-separated)"
    )
    parser.add_argument("--seed", type=int, help="seed for the games and the checker's moves")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from server.bots.checker import CheckerError, check_player, parse_items

    try:
        items = parse_items(args.items)
        report = asyncio.run(
            check_player(
                args.url,
                start_clock=args.startclock,
                play_clock=args.playclock,
                items=items,
                seed=args.seed,
            )
        )
    except CheckerError as error:
        print(f"ggp check-player: {error}", file=sys.stderr)
        return 2
    print(report.model_dump_json(indent=2) if args.json else report.render())
    return 0 if report.passed else 1
