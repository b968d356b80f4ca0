"""The log writer: an observer that keeps a match's record on disk, step by step.

While a match runs its record is journaled (:mod:`server.records.journal`): every event
appends one line with what changed, so writing costs O(size of the log) over the whole
match.  When the match closes, the ggp.org JSON log is written once (signed when a key
is given) and the journal removed.  A server killed at any moment leaves a journal that
``ggp replay`` reads and :func:`server.records.journal.recover_folder` folds.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.records import MatchRecord, dump_record
from server.records.journal import JournalWriter, journal_path_for, write_log
from server.records.signing import signed_record_bytes

from .events import MatchClosed, MatchEvent


class LogWriter:
    """Journals every event of a match, then writes ``<folder>/<matchId>.json`` at its close.

    Journal lines are written in the event loop (a small append, no worker thread); the
    final log is written in a worker thread.  ``durable`` flushes the final log to the
    disk before the journal is removed; journal lines reach the operating system at every
    event, so they survive the server being killed.  ``signing_key`` signs the final log.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        durable: bool = True,
        signing_key: Ed25519PrivateKey | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.durable = durable
        self.signing_key = signing_key
        self.paths: dict[str, Path] = {}
        self._journals: dict[str, JournalWriter] = {}

    def path_for(self, match_id: str) -> Path:
        """Where the log of ``match_id`` goes."""
        return self.folder / f"{match_id}.json"

    def journal_for(self, match_id: str) -> Path:
        """Where the journal of ``match_id`` is kept while the match runs."""
        return journal_path_for(self.path_for(match_id))

    def __call__(self, event: MatchEvent) -> Awaitable[None] | None:
        """Journal ``event``; at the close, the coroutine that writes the final log.

        Every other event is handled at once, without a coroutine: one per step adds up.
        """
        journal = self._journals.get(event.match_id)
        if journal is None:
            journal = self._journals[event.match_id] = JournalWriter(
                self.journal_for(event.match_id)
            )
        journal.write(event.record)
        if isinstance(event, MatchClosed):
            del self._journals[event.match_id]
            journal.close()
            return self._finished(event.record)
        return None

    async def _finished(self, record: MatchRecord) -> None:
        await self.finish(record)

    async def finish(self, record: MatchRecord) -> Path:
        """Write the final log of ``record`` (signed if a key is set) and drop its journal."""
        path = self.path_for(record.match_id)
        if self.signing_key is None:
            data = dump_record(record).encode("utf-8")
        else:
            data = signed_record_bytes(record, self.signing_key)
        await asyncio.to_thread(write_log, path, data, durable=self.durable)
        self.paths[record.match_id] = path
        return path
