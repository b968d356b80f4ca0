"""Match logs on disk: written whole or not at all, read back as written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from server.records import MatchRecord, dump_record, load_record, parse_record, write_record
from server.records.io import write_atomically

RECORD = MatchRecord(
    match_id="io.counting.1",
    states=["( ( count 0 ) )", "( ( count 1 ) )"],
    moves=[["( push 1 )", "noop"]],
    state_times=[1000, 1250],
    errors=[["", ""], ["TO", ""]],
)


def test_a_record_is_written_with_unknown_values_left_out_one_space_indented() -> None:
    text = dump_record(RECORD)
    assert text.startswith('{\n "matchId": "io.counting.1",\n')
    assert "null" not in text and "goalValues" not in text
    assert json.loads(text)["errors"] == [["", ""], ["TO", ""]]
    assert "\n" not in dump_record(RECORD, indent=None)


def test_text_and_bytes_read_back_as_the_record() -> None:
    text = dump_record(RECORD)
    assert parse_record(text) == RECORD
    assert parse_record(text.encode("utf-8")) == RECORD


def test_keys_another_server_writes_are_kept() -> None:
    record = parse_record('{"matchId": "m", "states": [], "tournamentFlavour": "blue"}')
    assert json.loads(dump_record(record))["tournamentFlavour"] == "blue"


def test_a_written_record_loads_back_equal_and_no_temporary_file_remains(tmp_path: Path) -> None:
    path = write_record(tmp_path / "logs" / "match.json", RECORD, durable=False)

    assert path == tmp_path / "logs" / "match.json"
    assert load_record(path) == RECORD
    assert path.read_text(encoding="utf-8") == dump_record(RECORD)
    assert sorted(p.name for p in path.parent.iterdir()) == ["match.json"]


def test_a_durable_write_flushes_to_the_disk_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])

    write_atomically(tmp_path / "a.json", b"{}")
    assert len(synced) == 1
    write_atomically(tmp_path / "b.json", b"{}", durable=False)
    assert len(synced) == 1


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "match.json"
    path.write_bytes(b"old")

    def broken_replace(source: str, target: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, b"new")

    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["match.json"]


def test_a_rewrite_replaces_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    write_atomically(path, b"a much longer first version", durable=False)
    write_atomically(path, b"short", durable=False)
    assert path.read_bytes() == b"short"


def test_the_temporary_file_is_hidden_beside_the_target_so_the_rename_is_atomic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renamed: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def spying_replace(source: str, target: str) -> None:
        renamed.append((Path(source), Path(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", spying_replace)
    write_atomically(tmp_path / "match.json", b"{}", durable=False)

    ((temporary, target),) = renamed
    assert target == tmp_path / "match.json"
    assert temporary.parent == tmp_path
    assert temporary.name.startswith(".match.json.") and temporary.name.endswith(".tmp")


def test_missing_folders_on_the_way_are_created(tmp_path: Path) -> None:
    path = write_record(tmp_path / "2026" / "11" / "match.json", RECORD, durable=False)
    assert load_record(path) == RECORD


def test_a_record_is_written_durably_unless_asked_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])

    write_record(tmp_path / "a.json", RECORD)
    assert len(synced) == 1
    write_record(tmp_path / "b.json", RECORD, durable=False)
    assert len(synced) == 1
