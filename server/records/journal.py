"""The journal of a running match: one JSON line per event, appended, folded at the end.

A match log in the ggp.org format is one JSON object whose lists (states, moves, errors,
...) grow every step; rewriting it after every step would cost O(steps²) over a match.
While a match runs, its record goes instead to ``<matchId>.journal.jsonl`` beside the
log: each line holds only what changed since the line before::

    {"set": {"isCompleted": true, ...}, "unset": ["endReason"], "append": {"moves": [[...]]}}

``set`` replaces top-level fields, ``unset`` removes them, ``append`` extends the
per-step lists.  Folding every line in order gives the record as of the last event
(:func:`fold_journal`).  When the match is closed the log is written in full and the
journal removed, so a journal on disk means the match was cut short (the server was
killed): :func:`load_match_fields` reads either, preferring the journal, and
:func:`recover_folder` turns left-over journals into logs.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json

from .model import MatchRecord

JOURNAL_SUFFIX = ".journal.jsonl"
"""A journal is named after its log: ``<matchId>.json`` → ``<matchId>.journal.jsonl``."""

APPENDED_FIELDS = (
    "states",
    "moves",
    "state_times",
    "errors",
    "response_times",
    "raw_replies",
    "error_details",
)
"""The record's per-phase lists: journal lines carry only their new items."""

_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    name: TypeAdapter(Any if (kind := MatchRecord.model_fields[name].annotation) is None else kind)
    for name in APPENDED_FIELDS
}
_ALIASES = {name: MatchRecord.model_fields[name].alias or name for name in APPENDED_FIELDS}
_SCALAR_FIELDS = tuple(name for name in MatchRecord.model_fields if name not in APPENDED_FIELDS)
_scalars_of = operator.attrgetter(*_SCALAR_FIELDS)
"""The values of a record's other fields, as one tuple (at C speed)."""
_MODEL_FIELDS = frozenset({"error_details"})
"""Appended lists whose items are models; the other lists hold JSON values as they are."""


def _copied(value: Any) -> Any:
    """A value as it was now: lists and dicts are copied (the record changes them in place)."""
    return value.copy() if isinstance(value, (list, dict)) else value


def _alias(name: str) -> str:
    field = MatchRecord.model_fields.get(name)
    return name if field is None else field.alias or name


class JournalUnreadable(ValueError):
    """A journal line that is not what the journal writer writes."""


def journal_path_for(log_path: str | os.PathLike[str]) -> Path:
    """The journal beside a log: ``x.json`` → ``x.journal.jsonl``."""
    path = Path(log_path)
    return path.with_name(path.name.removesuffix(".json") + JOURNAL_SUFFIX)


def log_path_for(journal_path: str | os.PathLike[str]) -> Path:
    """The log a journal folds into: ``x.journal.jsonl`` → ``x.json``."""
    path = Path(journal_path)
    return path.with_name(path.name.removesuffix(JOURNAL_SUFFIX) + ".json")


class JournalWriter:
    """Appends one line per call of :meth:`write` to a match's journal.

    Every line is one ``write`` on a file opened for appending, so a process killed at
    any moment leaves whole lines (and at worst one cut last line, which readers
    skip).  The cost of a line is the size of what changed, not of the record.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(
            self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644
        )
        self._fields: dict[str, Any] = {}
        self._snapshot: tuple[Any, ...] | None = None
        self._extra: dict[str, Any] = {}
        self._written: dict[str, int] = {}

    def line_for(self, record: MatchRecord) -> bytes:
        """The journal line that brings the last written state up to ``record``."""
        entry: dict[str, Any] = {}
        fields = record.__dict__
        snapshot = _scalars_of(record)
        extra = record.model_extra or {}
        if snapshot != self._snapshot or extra != self._extra:
            self._set_scalars(record, entry)
            self._snapshot = tuple(_copied(value) for value in snapshot)
            self._extra = {name: _copied(value) for name, value in extra.items()}
        appended: dict[str, Any] = {}
        for name in APPENDED_FIELDS:
            items = fields.get(name)
            if items is None:
                continue
            done = self._written.get(name)
            if done is None or len(items) > done:
                new = items[done or 0 :]
                if name in _MODEL_FIELDS and any(item is not None for row in new for item in row):
                    new = _ADAPTERS[name].dump_python(
                        new, mode="json", by_alias=True, exclude_none=True
                    )
                appended[_ALIASES[name]] = new
                self._written[name] = len(items)
        if appended:
            entry["append"] = appended
        return to_json(entry) + b"\n"  # the bytes of json.dumps(separators=(",", ":")), faster

    def _set_scalars(self, record: MatchRecord, entry: dict[str, Any]) -> None:
        """Put in ``entry`` the fields that are new, changed (``set``) or gone (``unset``)."""
        values = {name: getattr(record, name) for name in _SCALAR_FIELDS}
        values.update(record.model_extra or {})
        changed = {
            name
            for name, value in values.items()
            if value is not None and self._fields.get(name, _MISSING) != value
        }
        gone = [name for name in self._fields if values.get(name) is None]
        if changed:
            entry["set"] = record.model_dump(
                mode="json", by_alias=True, exclude_none=True, include=changed
            )
        if gone:
            entry["unset"] = [_alias(name) for name in gone]
        self._fields = {name: _copied(value) for name, value in values.items() if value is not None}

    def write(self, record: MatchRecord) -> None:
        """Append what changed in ``record`` since the last call."""
        if self._fd is None:
            raise ValueError(f"the journal {self.path} is closed")
        data = self.line_for(record)
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def sync(self) -> None:
        """Flush the journal to the disk."""
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file (it stays on disk)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _Missing:
    pass


_MISSING = _Missing()


def fold_journal(lines: Iterable[bytes]) -> dict[str, Any]:
    """The record fields (JSON keys) the journal lines add up to."""
    fields: dict[str, Any] = {}
    for number, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
            for key, value in entry.get("set", {}).items():
                fields[key] = value
            for key in entry.get("unset", []):
                fields.pop(key, None)
            for key, items in entry.get("append", {}).items():
                fields.setdefault(key, []).extend(items)
        except (ValueError, AttributeError, TypeError) as error:
            raise JournalUnreadable(f"line {number} of the journal is damaged: {error}") from None
    return fields


def read_journal(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Fold a journal file; a last line cut short by a crash is left out."""
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    complete = lines[:-1]  # the part after the last newline is empty or cut short
    if not complete:
        raise JournalUnreadable(f"{path} holds no complete line")
    return fold_journal(complete)


def load_match_fields(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A match log's JSON object, from the log or, when one is beside it, its journal.

    A journal (given directly, or beside the log) wins: it exists only while the match
    runs or after the server was killed, when the log may be missing or half written.
    """
    given = Path(path)
    journal = given if given.name.endswith(JOURNAL_SUFFIX) else journal_path_for(given)
    if journal.exists():
        return read_journal(journal)
    fields = json.loads(given.read_bytes())
    if not isinstance(fields, dict):
        raise ValueError(f"{given} is not a match log: a JSON object is expected")
    return fields


def write_log(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """Write a finished log in place, then remove its journal.

    No temporary file is involved: until the journal is gone, readers take the
    journal (see :func:`load_match_fields`), so a log cut short by a crash is never read.
    """
    target = Path(path)
    with open(target, "wb") as stream:
        stream.write(data)
        if durable:
            stream.flush()
            os.fsync(stream.fileno())
    journal_path_for(target).unlink(missing_ok=True)
    return target


def recover_folder(folder: str | os.PathLike[str]) -> list[Path]:
    """Fold every journal left in ``folder`` (by a killed server) into its log.

    The recovered logs are unsigned and, unless the journal had reached the end of the
    match, not completed.  Returns the paths of the logs written.
    """
    from .io import dump_record

    written = []
    for journal in sorted(Path(folder).glob("*" + JOURNAL_SUFFIX)):
        record = MatchRecord.model_validate(read_journal(journal))
        written.append(write_log(log_path_for(journal), dump_record(record).encode("utf-8")))
    return written
