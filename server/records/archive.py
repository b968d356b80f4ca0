"""The ggp.org match archive: JSON Lines of ``{"url": ..., "data": <match record>}``.

This is the layout of the match dumps ggp.org publishes: one match per line, the
URL the match was published at and the match record itself in the ggp.org JSON
format. :func:`dump_archive_line` writes one line, :func:`read_archive` reads
lines back (a bad line is reported and reading carries on), and
:func:`verify_entry` checks one match: our Ed25519 host signature (see
:mod:`server.records.signing`) and a replay against its rules (see
:mod:`server.replay`), as ``ggp verify`` and ``ggp replay --check`` do.

``verify_entry`` is the one place in :mod:`server.records` that reaches down to
:mod:`server.replay`; it imports it when called, so reading and writing archives
never loads the rules engine.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from .signing import (
    SIGNATURE_FIELD,
    PublicKeyLike,
    VerificationStatus,
    parse_public_key,
    verify_record,
)

if TYPE_CHECKING:
    from server.replay import ResolvedGame

GGP_BASE_SIGNATURE_FIELD = "matchHostSignature"
"""Where GGP-Base keeps its own (RSA) host signature, which is not checked here."""


class ArchiveEntry(BaseModel):
    """One match of an archive, with the line it was read from (1-based)."""

    line: int
    url: str
    data: dict[str, Any]
    match_id: str | None = None


class ArchiveError(BaseModel):
    """A line that is not an archive entry, and why."""

    line: int
    message: str


class EntryVerdict(BaseModel):
    """What :func:`verify_entry` found about one match.

    ``signature``: ``valid`` (our host signature, by the trusted key), ``invalid``
    (the signed content changed, or the signature is malformed), ``absent`` (no
    host signature of ours; GGP-Base's RSA signature is not checked) or
    ``untrusted`` (intact, but by a key other than the trusted one, or no
    trusted key was given). ``replay``: ``ok``, ``mismatch``, or ``skipped`` when
    the rules are not available (neither embedded nor a bundled game) or the
    data is not a match record.
    """

    match_id: str | None
    signature: Literal["valid", "invalid", "absent", "untrusted"]
    replay: Literal["ok", "mismatch", "skipped"]
    message: str


# -- writing and reading -----------------------------------------------------------


def dump_archive_line(url: str, record: dict[str, Any]) -> str:
    """One archive line: compact JSON, the record's keys in their given order, no newline."""
    text = json.dumps(
        {"url": url, "data": record},
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    # JSON allows these two raw inside strings, but many line readers split on them.
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r} in a JSON object")
        result[key] = value
    return result


def _entry(number: int, text: str) -> ArchiveEntry | ArchiveError:
    try:
        found = json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except ValueError as error:
        return ArchiveError(line=number, message=f"bad JSON: {error}")
    if not isinstance(found, dict):
        return ArchiveError(
            line=number, message=f"expected a JSON object, not {type(found).__name__}"
        )
    url = found.get("url")
    if not isinstance(url, str):
        why = "missing url" if url is None else f"url is not a string but {type(url).__name__}"
        return ArchiveError(line=number, message=why)
    if "data" not in found:
        return ArchiveError(line=number, message="missing data")
    data = found["data"]
    if not isinstance(data, dict):
        return ArchiveError(
            line=number, message=f"data is not a JSON object but {type(data).__name__}"
        )
    match_id = data.get("matchId")
    return ArchiveEntry(
        line=number, url=url, data=data, match_id=match_id if isinstance(match_id, str) else None
    )


def read_archive(lines: Iterable[str]) -> Iterator[ArchiveEntry | ArchiveError]:
    """Each line's entry, or an error for a line that is not one; blank lines are skipped."""
    for number, line in enumerate(lines, start=1):
        text = line.strip().lstrip("\ufeff")
        if text:
            yield _entry(number, text)


# -- step rows -------------------------------------------------------------------------

STEP_FIELDS = (
    "states",
    "moves",
    "stateTimes",
    "errors",
    "responseTimes",
    "rawReplies",
    "errorDetails",
)
"""The per-step lists of a match record; the header is everything else."""


def record_header(data: Mapping[str, Any]) -> dict[str, Any]:
    """The record without its per-step lists (what is kept once per match)."""
    return {key: value for key, value in data.items() if key not in STEP_FIELDS}


def step_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per phase of a match record (step 0: the initial state; step k: the
    k-th joint move and the state after it), as the service keeps a match it ran.

    GGP-Base's logs have only states, moves, state times and errors; what a record
    lacks is filled per role with ``""`` (errors) or ``None``.  Raises
    :class:`ValueError` naming the field when the lists do not fit together.
    """
    states = data.get("states")
    if not isinstance(states, list) or not all(isinstance(state, str) for state in states):
        raise ValueError("states is not a list of states as text")
    moves = data.get("moves") or []
    if not isinstance(moves, list) or not all(
        isinstance(joint, list) and all(isinstance(move, str) for move in joint) for joint in moves
    ):
        raise ValueError("moves is not a list of joint moves as text")
    if states and len(moves) != len(states) - 1:
        raise ValueError(f"{len(moves)} moves do not fit {len(states)} states")
    roles = len(data.get("playerNamesFromHost") or data.get("gameRoleNames") or [])
    roles = roles or (len(moves[0]) if moves else 1)

    def per_step(name: str, blank: object) -> list[Any]:
        values = data.get(name)
        if values is None:
            return [[blank] * roles for _ in states]
        if not isinstance(values, list) or len(values) != len(states):
            raise ValueError(f"{name} does not have one entry per state")
        return values

    times = data.get("stateTimes")
    if times is None:
        times = [int(data.get("startTime") or 0)] * len(states)
    if not isinstance(times, list) or len(times) != len(states):
        raise ValueError("stateTimes does not have one entry per state")
    errors = per_step("errors", "")
    responses = per_step("responseTimes", None)
    raw = per_step("rawReplies", None)
    details = per_step("errorDetails", None)
    return [
        {
            "step": step,
            "moves": None if step == 0 else list(moves[step - 1]),
            "state": state,
            "state_time": int(times[step]),
            "errors": list(errors[step]),
            "response_times": list(responses[step]),
            "raw_replies": list(raw[step]),
            "details": list(details[step]),
        }
        for step, state in enumerate(states)
    ]


# -- verifying -------------------------------------------------------------------------


def _signature(
    data: Mapping[str, Any], trusted: PublicKeyLike | None
) -> tuple[Literal["valid", "invalid", "absent", "untrusted"], str]:
    if SIGNATURE_FIELD not in data:
        if GGP_BASE_SIGNATURE_FIELD in data:
            return "absent", "no host signature of ours (GGP-Base's RSA signature is not checked)"
        return "absent", "no host signature"
    checked = verify_record(data, trusted)
    if checked.ok:
        return ("valid" if trusted is not None else "untrusted"), checked.message
    if checked.status is VerificationStatus.KEY_MISMATCH:
        intact = verify_record(data)
        if intact.ok:
            return "untrusted", f"intact, but signed by {intact.signer_key}, not the trusted key"
        return "invalid", intact.message
    if checked.status is VerificationStatus.MISSING_SIGNATURE:
        return "untrusted", checked.message
    return "invalid", checked.message


_CACHE_SIZE = 8
_games = threading.local()


def _rules_for(data: Mapping[str, Any]) -> ResolvedGame:
    """The rules of a record, reusing the last few games loaded in this thread."""
    from server.replay import resolve_game
    from server.replay.source import RULES_FIELDS

    # The fields resolve_game reads: the rules themselves, else the game's name.
    chosen = {field: data.get(field) for field in (*RULES_FIELDS, "gameName", "gameMetaURL")}
    key = hashlib.sha256(json.dumps(chosen, sort_keys=True).encode()).hexdigest()
    cache: OrderedDict[str, ResolvedGame] = getattr(_games, "cache", None) or OrderedDict()
    _games.cache = cache
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    resolved = resolve_game(data)
    cache[key] = resolved
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)
    return resolved


def _replay(data: Mapping[str, Any]) -> tuple[Literal["ok", "mismatch", "skipped"], str]:
    from pydantic import ValidationError

    from server.gdl import GdlError
    from server.records import MatchRecord
    from server.replay import RulesNotFound, replay_record

    try:
        record = MatchRecord.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the record"
        return "skipped", f"not a ggp.org match record ({where}: {first['msg']})"
    try:
        resolved = _rules_for(data)
    except RulesNotFound as error:
        return "skipped", f"rules not available: {error}"
    try:
        replay = replay_record(record, resolved.game, resolved.source)
    except GdlError as error:
        return "mismatch", f"the rules engine failed on this match: {error}"
    return ("ok" if replay.ok else "mismatch"), replay.verdict()


def verify_entry(
    entry: ArchiveEntry, *, trusted_key: PublicKeyLike | str | None = None
) -> EntryVerdict:
    """Check an entry's host signature and replay it against its rules.

    ``trusted_key`` is the key whose signature counts as ``valid``: an Ed25519
    key, or its text (base64 as ``ggp key`` prints it, or PEM). Blocking and
    CPU-bound (the replay runs the rules engine).
    """
    trusted = parse_public_key(trusted_key) if isinstance(trusted_key, str) else trusted_key
    signature, signed = _signature(entry.data, trusted)
    replay, replayed = _replay(entry.data)
    return EntryVerdict(
        match_id=entry.match_id,
        signature=signature,
        replay=replay,
        message=f"signature {signature}: {signed}; replay {replay}: {replayed}",
    )
