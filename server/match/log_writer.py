"""The log writer: an observer that keeps a match's JSON record on disk after every event."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from server.records import dump_record, write_atomically

from .events import MatchEvent


class LogWriter:
    """Rewrites ``<folder>/<matchId>.json`` atomically on every event of a match.

    The JSON is produced in the event loop (the record changes between events) and the
    file is written in a worker thread, so a slow disk does not stall other matches.
    A crash loses at most the step in flight.
    """

    def __init__(self, folder: str | os.PathLike[str], *, durable: bool = True) -> None:
        self.folder = Path(folder)
        self.durable = durable
        self.paths: dict[str, Path] = {}

    def path_for(self, match_id: str) -> Path:
        """Where the record of ``match_id`` goes."""
        return self.folder / f"{match_id}.json"

    async def __call__(self, event: MatchEvent) -> None:
        path = self.path_for(event.match_id)
        data = dump_record(event.record).encode("utf-8")
        await asyncio.to_thread(write_atomically, path, data, durable=self.durable)
        self.paths[event.match_id] = path
