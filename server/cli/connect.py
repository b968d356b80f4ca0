"""``ggp connect``: connect a player to a server from behind a firewall (outbound WebSocket)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from players.answer_journal import AnswerJournal

TOKEN_VARIABLE = "GGP_BOT_TOKEN"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``connect`` sub-command."""
    parser = subparsers.add_parser(
        "connect",
        help="connect a player to a ggp serve from behind a firewall (outbound WebSocket)",
        description="Open a WebSocket to SERVER with the player's token and answer the GGP "
        "messages that come on it: relay them to an HTTP player (--player URL, any GGP "
        "player, unchanged) or play them with a bot of the kit (--bot MODULE:CLASS) or a "
        "bundled player (--bot random). Reconnects with backoff; one line on stderr per "
        "connect and disconnect; SIGINT or SIGTERM stops it.",
    )
    add_outbound_arguments(parser, required=True)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--player", metavar="URL", help="the HTTP player to relay to")
    target.add_argument("--bot", metavar="MODULE:CLASS", help="a bot of the kit, or random/legal")
    parser.add_argument(
        "--journal",
        metavar="FILE",
        help="with --player: where the relay keeps the PLAY messages it passed on, so that "
        "a restarted relay never passes one on twice (default: relay/TOKEN-DIGEST.jsonl in "
        "$GGP_DATA_DIR, else ggp under $XDG_DATA_HOME)",
    )
    parser.set_defaults(run=run)


def add_outbound_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--server",
        required=required,
        metavar="URL",
        help="the ggp serve to connect to, e.g. http://ggp.example.org:9000",
    )
    parser.add_argument(
        "--token",
        metavar="TOKEN",
        help=f"the player's token from POST /api/players (default ${TOKEN_VARIABLE})",
    )


def outbound_options(args: argparse.Namespace, prog: str) -> tuple[str, str] | None:
    """The checked server URL and token; ``None`` after printing why they are unusable."""
    from players.outbound import connect_url

    token = args.token or os.environ.get(TOKEN_VARIABLE)
    if not token:
        print(f"{prog}: give the player's token with --token or ${TOKEN_VARIABLE}", file=sys.stderr)
        return None
    try:
        connect_url(args.server)
    except ValueError as error:
        print(f"{prog}: --server: {error}", file=sys.stderr)
        return None
    return args.server, token


def run(args: argparse.Namespace) -> int:
    options = outbound_options(args, "ggp connect")
    if options is None:
        return 2
    server, token = options
    if args.player is not None:
        from server.bots.connect import run_relay
        from server.bots.relay import relay_answer
        from server.match.transport import PlayerAddress

        try:
            address = PlayerAddress.parse(args.player)
        except ValueError as error:
            print(f"ggp connect: --player: {error}", file=sys.stderr)
            return 2
        try:
            journal = relay_journal(args.journal, token)
        except OSError as error:
            print(f"ggp connect: --journal: {error}", file=sys.stderr)
            return 2
        return _run(run_relay(server, token, relay_answer(address), journal))
    return run_kit_bot(args.bot, server, token, "ggp connect")


def relay_journal(path: str | None, token: str) -> AnswerJournal:
    """The relay's journal: ``path``, else one per token in the data folder."""
    import hashlib
    from pathlib import Path

    from players.answer_journal import AnswerJournal
    from server.web.settings import default_data_dir

    if path is None:
        digest = hashlib.sha256(token.encode("utf-8")).hexdigest()[:16]
        return AnswerJournal(default_data_dir() / "relay" / f"{digest}.jsonl")
    return AnswerJournal(Path(path).expanduser())


def run_kit_bot(
    name: str, server: str, token: str, prog: str, *, display_name: str | None = None
) -> int:
    """Load a bot (or a bundled player) and connect it outbound; the exit status."""
    from players.agent import PlayerAgent
    from players.registry import create_player
    from server.bots.connect import run_bot

    try:
        agent = PlayerAgent(create_player(name, display_name=display_name))
    except (KeyError, ValueError, ImportError) as error:
        reason = error.args[0] if isinstance(error, KeyError) else error
        print(f"{prog}: {reason}", file=sys.stderr)
        return 2
    return _run(run_bot(agent, server, token))


def _run(work: object) -> int:
    try:
        return int(asyncio.run(work))  # type: ignore[arg-type]
    except KeyboardInterrupt:
        return 0
