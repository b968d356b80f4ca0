"""The match journal: folding it gives the record as of every event; crashes lose nothing read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from server.gdl import Game
from server.match import LogWriter, MatchConfig, MatchEvent, MatchRunner
from server.records import MatchRecord, dump_record, load_record
from server.records.journal import (
    JournalUnreadable,
    JournalWriter,
    load_match_fields,
    read_journal,
    recover_folder,
)
from server.replay import replay_file

COUNTING = """
(role left) (role right)
(init (count 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(<= (legal ?r (push ?n)) (role ?r) (succ ?n ?m))
(<= (legal ?r noop) (role ?r))
(<= (next (count ?y)) (true (count ?x)) (succ ?x ?y))
(<= terminal (true (count 4)))
(goal left 50) (goal right 50)
"""


async def _run(folder: Path, watch: list[tuple[MatchRecord, dict]] | None = None) -> MatchRecord:
    writer = LogWriter(folder, durable=False)

    def fold_now(event: MatchEvent) -> None:
        if watch is not None:
            fields = load_match_fields(writer.path_for(event.match_id))
            watch.append((event.record.model_copy(deep=True), fields))

    runner = MatchRunner(
        Game.from_text(COUNTING), [None, None], MatchConfig(seed=2), observers=[writer, fold_now]
    )
    return await runner.run()


async def test_the_folded_journal_is_the_record_after_every_event(tmp_path: Path) -> None:
    seen: list[tuple[MatchRecord, dict]] = []
    record = await _run(tmp_path, seen)

    assert len(seen) == 4 + 4  # started, players started, four steps, ended, closed
    for live, fields in seen:
        assert json.loads(dump_record(MatchRecord.model_validate(fields))) == json.loads(
            dump_record(live)
        )
    assert load_record(tmp_path / f"{record.match_id}.json") == record


async def test_a_journal_cut_at_any_byte_folds_to_a_prefix_of_the_match(tmp_path: Path) -> None:
    seen: list[tuple[MatchRecord, dict]] = []
    await _run(tmp_path / "logs", seen)
    whole = tmp_path / "whole.journal.jsonl"
    journal = JournalWriter(whole)
    for live, _ in seen:
        journal.write(live)
    journal.close()
    data = whole.read_bytes()
    prefixes = [json.loads(dump_record(live)) for live, _ in seen]

    piece = tmp_path / "cut.journal.jsonl"
    for cut in range(1, len(data) + 1):
        piece.write_bytes(data[:cut])
        if b"\n" not in data[:cut]:
            with pytest.raises(JournalUnreadable):
                read_journal(piece)
            continue
        folded = MatchRecord.model_validate(read_journal(piece))
        assert json.loads(dump_record(folded)) in prefixes


async def test_a_left_over_journal_is_read_by_replay_and_folded_by_recovery(
    tmp_path: Path,
) -> None:
    record = await _run(tmp_path)
    log = tmp_path / f"{record.match_id}.json"
    final = log.read_bytes()
    # What a server killed after step two leaves: a journal and no log.
    partial = record.model_copy(deep=True)
    for name in ("states", "state_times", "errors", "response_times", "raw_replies"):
        setattr(partial, name, getattr(partial, name)[:3])
    partial.error_details = (partial.error_details or [])[:3]
    partial.moves = partial.moves[:2]
    partial.is_completed = False
    partial.goal_values = partial.rule_goal_values = partial.end_reason = None
    os.unlink(log)
    journal = JournalWriter(tmp_path / f"{record.match_id}.journal.jsonl")
    journal.write(partial)
    journal.close()

    replay = replay_file(tmp_path / f"{record.match_id}.journal.jsonl")
    assert replay.ok and replay.recorded_steps == 2
    assert replay_file(log).ok  # the log's name finds the journal beside it
    assert load_match_fields(log)["moves"] == record.model_dump(by_alias=True)["moves"][:2]

    assert recover_folder(tmp_path) == [log]
    assert os.listdir(tmp_path) == [log.name]
    assert load_record(log).moves == record.moves[:2]
    assert final != log.read_bytes()
