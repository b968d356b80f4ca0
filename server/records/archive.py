"""Match archives in the ggp.org format: JSON Lines of ``{"url": ..., "data": record}``.

A minimal version; reading never raises for a bad line, it yields an error for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .signing import PublicKeyLike, VerificationStatus, verify_record


@dataclass(frozen=True)
class ArchiveEntry:
    """One match of an archive."""

    line: int
    url: str
    data: dict[str, Any]
    match_id: str


@dataclass(frozen=True)
class ArchiveError:
    """A line of an archive that is not a match."""

    line: int
    message: str


@dataclass(frozen=True)
class EntryVerdict:
    """What could be checked of one archived match."""

    match_id: str
    signature: Literal["valid", "invalid", "absent", "untrusted"]
    replay: Literal["ok", "mismatch", "skipped"]
    message: str


def dump_archive_line(url: str, record: dict[str, Any]) -> str:
    """One line of an archive (without the line break)."""
    return json.dumps({"url": url, "data": record}, ensure_ascii=False, separators=(",", ":"))


def read_archive(lines: Iterable[str]) -> Iterator[ArchiveEntry | ArchiveError]:
    """The matches of an archive, in order, with an error for every unusable line."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            item = json.loads(text)
        except ValueError as error:
            yield ArchiveError(number, f"not JSON: {error}")
            continue
        if not isinstance(item, dict) or not isinstance(item.get("data"), dict):
            yield ArchiveError(number, 'not an archive line: {"url": ..., "data": {...}} expected')
            continue
        data = item["data"]
        match_id = data.get("matchId")
        if not isinstance(match_id, str) or not match_id:
            yield ArchiveError(number, "the match has no matchId")
            continue
        yield ArchiveEntry(number, str(item.get("url") or ""), data, match_id)


def verify_entry(entry: ArchiveEntry, *, trusted_key: PublicKeyLike | None = None) -> EntryVerdict:
    """Check an archived match's host signature (its replay is left to the caller)."""
    if "hostSignature" not in entry.data:
        return EntryVerdict(entry.match_id, "absent", "skipped", "no host signature")
    verification = verify_record(entry.data, trusted_key)
    if verification.ok:
        signature: Literal["valid", "invalid", "absent", "untrusted"] = (
            "valid" if trusted_key is not None else "untrusted"
        )
    elif verification.status is VerificationStatus.KEY_MISMATCH:
        signature = "untrusted"
    else:
        signature = "invalid"
    return EntryVerdict(entry.match_id, signature, "skipped", verification.message)
