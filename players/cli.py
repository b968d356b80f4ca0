"""The command line of a player process: ``python -m players NAME --port N``.

The same arguments serve ``ggp player NAME``. This module imports nothing heavy
at the top, so the ``ggp`` command stays quick to start.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import NoReturn


def port_number(text: str) -> int:
    """A TCP port number from 0 to 65535, for ``argparse``."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (0 to 65535)")
    return port


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds of 0 or more")
    return value


def _pid(text: str) -> int:
    try:
        pid = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a process id") from None
    if pid < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a process id")
    return pid


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of a player process."""
    from .agent import SILENCE_MARGIN

    parser.add_argument(
        "player",
        metavar="NAME",
        nargs="?",
        help="the bundled player to serve, e.g. random or legal",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=9147,
        help="TCP port to listen on (0 to 65535); 0 picks a free one",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--name", help="the name the player gives in reply to INFO")
    parser.add_argument("--seed", type=int, help="seed for the player's random choices")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every match event")
    parser.add_argument(
        "--silence-margin",
        type=_seconds,
        default=SILENCE_MARGIN,
        metavar="S",
        help="forget a match whose server stays silent this many seconds past its clock "
        f"(default {SILENCE_MARGIN:g})",
    )
    parser.add_argument(
        "--compile-aside",
        action="store_true",
        default=None,
        help="compile a game the start clock's budget cannot in another process while "
        "playing on the interpreter, and switch when it is ready (also GGP_COMPILE_ASIDE=1)",
    )
    parser.set_defaults(prog=parser.prog)
    parser.add_argument(
        "--parent-pid",
        type=_pid,
        metavar="PID",
        help="exit when the process PID (this one's parent) ends",
    )


def run(args: argparse.Namespace) -> int:
    """Serve the chosen player until interrupted; the exit code."""
    from .registry import create_player

    if args.parent_pid is not None:
        from .lifeline import tie_to_parent

        tie_to_parent(args.parent_pid)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger().setLevel(logging.INFO if args.verbose else logging.WARNING)
    try:
        player = create_player(args.player, display_name=args.name, seed=args.seed)
    except KeyError as error:
        print(f"{args.prog}: {error.args[0]}", file=sys.stderr)
        return 2
    from server.gdl.collector import settle_after_start

    from .agent import PlayerAgent
    from .event_loop import run_event_loop
    from .serve import serve

    try:
        agent = PlayerAgent(
            player, silence_margin=args.silence_margin, compile_aside=args.compile_aside
        )
    except ValueError as error:
        print(f"{args.prog}: {error}", file=sys.stderr)
        return 2
    settle_after_start()  # a whole process: its engine runs with the server's collector
    try:
        run_event_loop(serve(agent, args.host, args.port))
    except OSError as error:
        reason = error.strerror or str(error)
        print(f"{args.prog}: cannot listen on {args.host}:{args.port}: {reason}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


class _OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m players``."""
    parser = _OneLineParser(
        prog="python -m players", description="Serve a bundled GGP player over HTTP."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
