"""``ggp player NAME``: serve a bundled player over HTTP."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``player`` sub-command."""
    from players.cli import add_arguments

    parser = subparsers.add_parser(
        "player",
        help="serve a bundled player (random, legal, mcts, montecarlo) over HTTP",
        description="Serve a bundled player over HTTP until interrupted. Prints "
        "'listening on http://HOST:PORT' once it accepts connections.",
    )
    add_arguments(parser)
    parser.add_argument(
        "--bot",
        metavar="MODULE:CLASS",
        help="serve your own bot instead: a players.bot.Bot subclass, e.g. mybot:MyBot "
        "(the module is looked up in the current directory; a path/to/file.py works too)",
    )
    from .connect import add_outbound_arguments

    add_outbound_arguments(parser, required=False)
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from players.cli import run

    if args.bot is not None:
        if args.player is not None:
            print("error: give a player NAME or --bot MODULE:CLASS, not both", file=sys.stderr)
            return 2
        if ":" not in args.bot:
            print(
                f"error: --bot {args.bot!r} is not MODULE:CLASS (e.g. mybot:MyBot)", file=sys.stderr
            )
            return 2
        args.player = args.bot
    if args.server is not None or args.token is not None:
        return _run_outbound(args)
    return run(args)  # settles the collector once the player is made


def _run_outbound(args: argparse.Namespace) -> int:
    """``--server URL --token T``: connect to a server outbound instead of serving HTTP."""
    from .connect import outbound_options, run_kit_bot

    if args.server is None:
        print("ggp player: --token needs --server URL", file=sys.stderr)
        return 2
    options = outbound_options(args, "ggp player")
    if options is None:
        return 2
    if args.player is None:
        print("ggp player: name a player or give --bot MODULE:CLASS", file=sys.stderr)
        return 2
    from server.gdl.collector import settle_after_start

    settle_after_start()  # a whole process: its engine runs with the server's collector
    server, token = options
    return run_kit_bot(args.player, server, token, "ggp player", display_name=args.name)
