"""What a relay has passed on to its player, kept in a file, so a relay started again never
passes the same message on twice.

>>> journal = AnswerJournal(Path("relay.jsonl"))       # doctest: +SKIP
>>> journal.lookup(7, "( PLAY m1 NIL )")               # None: never seen
>>> journal.sent(7, "( PLAY m1 NIL )")                 # before posting it to the player
>>> journal.answered(7, "( PLAY m1 NIL )", "( mark 1 1 )")

When the socket drops, the server sends a message again with the same id
(:mod:`server.protocol.envelope`).  A relay process that was restarted has lost its
memory, so the journal remembers, per id and message, whether a PLAY was passed on and
what the player answered: one answered already gets that answer again; one passed on
whose answer was lost with the old process is not passed on again (the player would
apply its moves twice) and gets an error instead, which the server records as that
step's error.  Only PLAY is journaled: a second START, STOP or ABORT is answered busy
and changes nothing, so those are passed on again, which is right when the first never
reached the player.  An entry is one JSON line,
appended as it happens (so it survives the process being killed); the file keeps the
latest ``keep`` entries and is rewritten when it holds twice as many.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Entry:
    """A message the relay passed on, and the player's reply once it came."""

    reply: str | None


def _key(frame_id: int, message: str) -> str:
    # the message's digest too: ids of another server run never match a different message
    digest = hashlib.sha256(message.encode("utf-8")).hexdigest()[:24]
    return f"{frame_id}:{digest}"


class AnswerJournal:
    """Messages passed on and their replies, by envelope id and message, in a file."""

    def __init__(self, path: Path, keep: int = 1024) -> None:
        self.path = path
        self.keep = keep
        self.entries: OrderedDict[str, Entry] = OrderedDict()
        self._lines = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            self._load()

    def _load(self) -> None:
        with self.path.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    data = json.loads(line)  # a line cut short by a kill is skipped
                    self._remember(str(data["key"]), Entry(reply=data.get("reply")))
                    self._lines += 1

    def _remember(self, key: str, entry: Entry) -> None:
        self.entries[key] = entry
        self.entries.move_to_end(key)
        while len(self.entries) > self.keep:
            self.entries.popitem(last=False)

    def lookup(self, frame_id: int, message: str) -> Entry | None:
        """What the journal knows of this message: ``None`` when it was never passed on."""
        return self.entries.get(_key(frame_id, message))

    def sent(self, frame_id: int, message: str) -> None:
        """The message is about to be passed on to the player."""
        self._write(_key(frame_id, message), Entry(reply=None))

    def answered(self, frame_id: int, message: str, reply: str) -> None:
        """The player answered the message with ``reply``."""
        self._write(_key(frame_id, message), Entry(reply=reply))

    def _write(self, key: str, entry: Entry) -> None:
        self._remember(key, entry)
        line = json.dumps({"key": key, "reply": entry.reply}, separators=(",", ":"))
        with self.path.open("a", encoding="utf-8") as journal:
            journal.write(line + "\n")
        self._lines += 1
        if self._lines > 2 * self.keep:
            self._compact()

    def _compact(self) -> None:
        temporary = self.path.with_name(self.path.name + ".new")
        with temporary.open("w", encoding="utf-8") as journal:
            for key, entry in self.entries.items():
                journal.write(json.dumps({"key": key, "reply": entry.reply}) + "\n")
        os.replace(temporary, self.path)
        self._lines = len(self.entries)
