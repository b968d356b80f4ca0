"""The command line of a player process: ``python -m players NAME --port N``.

The same arguments serve ``ggp player NAME``. This module imports nothing heavy
at the top, so the ``ggp`` command stays quick to start.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of a player process."""
    parser.add_argument(
        "player",
        metavar="NAME",
        nargs="?",
        help="the bundled player to serve, e.g. random or legal",
    )
    parser.add_argument(
        "--port", type=int, default=9147, help="TCP port to listen on; 0 picks a free one"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--name", help="the name the player gives in reply to INFO")
    parser.add_argument("--seed", type=int, help="seed for the player's random choices")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every match event")


def run(args: argparse.Namespace) -> int:
    """Serve the chosen player until interrupted; the exit code."""
    from .registry import create_player

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        player = create_player(args.player, display_name=args.name, seed=args.seed)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 2
    from .agent import PlayerAgent
    from .serve import serve

    try:
        PlayerAgent(player)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(player, args.host, args.port))
    except OSError as error:
        print(f"error: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m players``."""
    parser = argparse.ArgumentParser(
        prog="python -m players", description="Serve a bundled GGP player over HTTP."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
