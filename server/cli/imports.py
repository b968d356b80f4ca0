"""``ggp import ARCHIVE``: store the matches of a ggp.org archive, verified where possible."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.replay import ResolvedGames


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import",
        help="store the matches of a ggp.org archive (JSON Lines)",
        description='Read an archive of {"url", "data"} lines (ours or ggp.org\'s dumps), '
        "check each match's signature and, where the rules are known, replay it; store the "
        "matches that pass. One line per match; the exit status is 1 when any was refused.",
    )
    parser.add_argument("archive", metavar="ARCHIVE", help="the archive file ('-' for stdin)")
    from ._service_options import add_database_arguments

    add_database_arguments(parser)
    parser.add_argument(
        "--key", metavar="PUBKEY_OR_FILE", help="the public key the signatures must be by"
    )
    parser.add_argument(
        "--keep-mismatches", action="store_true", help="store matches whose replay disagrees too"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from ._service_options import database_url

    trusted = None
    if args.key:
        from server.records.signing import read_public_key

        try:
            trusted = read_public_key(args.key)
        except (OSError, ValueError) as error:
            print(f"ggp import: unusable key: {error}", file=sys.stderr)
            return 2
    try:
        stream = sys.stdin if args.archive == "-" else open(args.archive, encoding="utf-8")
    except OSError as error:
        print(f"ggp import: cannot read {args.archive}: {error.strerror}", file=sys.stderr)
        return 2
    with stream:
        lines = stream.readlines()
    return asyncio.run(_import(args, database_url(args), lines, trusted))


def _name_in(meta_url: object) -> str:
    """The game's name in a ggp.org game URL (``.../games/<name>/v0/``), else ``unknown``."""
    parts = [part for part in str(meta_url or "").split("/") if part]
    if "games" in parts[:-1]:
        return parts[parts.index("games") + 1]
    return "unknown"


def _replay_verdict(data: dict, games: ResolvedGames) -> str:
    from server.records import MatchRecord
    from server.replay import RulesNotFound, replay_record

    try:
        resolved = games.resolve(data)
        replay = replay_record(MatchRecord.model_validate(data), resolved.game, resolved.source)
    except RulesNotFound:
        return "skipped"
    except Exception:
        games.discard(data)  # whatever broke, the next line of the game loads it afresh
        return "mismatch"
    return "ok" if replay.ok else "mismatch"


async def _import(args: argparse.Namespace, url: str, lines: list[str], trusted: object) -> int:
    import asyncio

    from server.records.archive import (
        ArchiveError,
        read_archive,
        record_header,
        step_rows,
        verify_entry,
    )
    from server.records.json_text import indented_json
    from server.store import Conflict, MatchStatus, Store, redacted

    store = Store(url)
    try:
        await store.open()
    except Exception as error:
        print(f"ggp import: cannot open {redacted(url)}: {error}", file=sys.stderr)
        return 1
    from server.replay import ResolvedGames

    games = ResolvedGames()  # the lines are replayed one after another
    stored = refused = 0
    try:
        for item in read_archive(lines):
            if isinstance(item, ArchiveError):
                print(f"line {item.line}: refused: {item.message}")
                refused += 1
                continue
            if item.match_id is None:
                print(f"line {item.line}: refused: the record has no matchId")
                refused += 1
                continue
            verdict = verify_entry(item, trusted_key=trusted)  # type: ignore[arg-type]
            replay = await asyncio.to_thread(_replay_verdict, item.data, games)
            if verdict.signature == "invalid" or (
                replay == "mismatch" and not args.keep_mismatches
            ):
                print(f"{item.match_id}: refused: signature {verdict.signature}, replay {replay}")
                refused += 1
                continue
            data = item.data
            try:
                steps = step_rows(data)
            except (ValueError, TypeError) as error:
                print(f"{item.match_id}: refused: {error}")
                refused += 1
                continue
            game_name = str(data.get("gameName") or _name_in(data.get("gameMetaURL")))
            version = 0
            rules = data.get("gameRulesheet")
            roles = data.get("gameRoleNames") or []
            if isinstance(rules, str) and rules.strip():
                game = await store.add_game_version(
                    game_name, rules, roles=roles, source=f"import:{item.url}"
                )
                version = game.version
            completed = bool(data.get("isCompleted"))
            try:
                await store.import_match(
                    item.match_id,
                    game_name=game_name,
                    game_version=version,
                    players=list(data.get("playerNamesFromHost") or []),
                    start_clock=int(data.get("startClock") or 0),
                    play_clock=int(data.get("playClock") or 0),
                    status=MatchStatus.FINISHED if completed else MatchStatus.ABORTED,
                    end_reason=str(
                        data.get("endReason") or ("terminal" if completed else "aborted")
                    ),
                    goals=data.get("goalValues"),
                    started_at=data.get("startTime"),
                    log_text=indented_json(data, allow_nan=True),
                    source=item.url,
                    header=record_header(data),
                    steps=steps,
                )
            except Conflict:
                print(f"{item.match_id}: skipped: already stored")
                continue
            print(f"{item.match_id}: stored (signature {verdict.signature}, replay {replay})")
            stored += 1
    finally:
        await store.close()
    print(f"{stored} stored, {refused} refused", file=sys.stderr)
    return 1 if refused else 0
