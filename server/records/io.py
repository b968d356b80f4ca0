"""Reading and writing match records as JSON files; writes are atomic."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .model import MatchRecord


def dump_record(record: MatchRecord, *, indent: int | None = 1) -> str:
    """The record as JSON text, in the ggp.org format (unknown values left out)."""
    return record.model_dump_json(exclude_none=True, indent=indent)


def parse_record(text: str | bytes) -> MatchRecord:
    """Read a record from JSON text; keys unknown to the model are kept."""
    return MatchRecord.model_validate(json.loads(text))


def load_record(path: str | os.PathLike[str]) -> MatchRecord:
    """Read a record from a JSON file written by this server or another GGP server."""
    return parse_record(Path(path).read_bytes())


def write_atomically(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    A reader, or a crash, sees either the previous complete file or the new one.
    ``durable`` also flushes the data to the disk before the rename.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    return target


def write_record(
    path: str | os.PathLike[str], record: MatchRecord, *, durable: bool = True
) -> Path:
    """Write the record atomically (see :func:`write_atomically`)."""
    return write_atomically(path, dump_record(record).encode("utf-8"), durable=durable)
