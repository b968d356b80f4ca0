"""``ggp player NAME``: serve a bundled player over HTTP."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``player`` sub-command."""
    from players.cli import add_arguments

    parser = subparsers.add_parser(
        "player",
        help="serve a bundled player (e.g. random, legal) over HTTP",
        description="Serve a bundled player over HTTP until interrupted. Prints "
        "'listening on http://HOST:PORT' once it accepts connections.",
    )
    add_arguments(parser)
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from players.cli import run

    return run(args)
