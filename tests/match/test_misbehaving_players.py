"""Matches against players that misbehave: every match completes, every fault is recorded.

One fake player answers each PLAY with a different fault while an honest one plays
along; the record must carry GGP-Base's error code for each step, the details with
their kind and raw reply, and a legal substitute move, and nothing may be lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.gdl import Game
from server.gdl.terms import MAX_TERM_DEPTH
from server.match import LogWriter, MatchConfig, MatchRunner, Player
from server.match.runner import RAW_REPLY_LIMIT
from server.protocol import QUOTE_LIMIT
from server.records import EndReason, ErrorKind, MatchRecord, dump_record, load_record
from server.records.journal import load_match_fields
from server.records.signing import verify_record_file
from server.replay import replay_file

from .fakes import FakePlayer, counting_game, unused_port
from .hostile import HostilePlayer, ReplyScript, honest

QUICK = MatchConfig(start_clock=1, play_clock=1, network_slack=0.25, seed=7)

FAULTS_AND_CODES: list[tuple[str, str, ErrorKind | None]] = [
    ("sleep", "TO", ErrorKind.TIMEOUT),
    ("trickle", "TO", ErrorKind.TIMEOUT),
    ("garbage", "IL null", ErrorKind.UNPARSABLE),
    ("illegal", "IL ( fly 9 9 )", ErrorKind.ILLEGAL),
    ("nil", "IL nil", ErrorKind.ILLEGAL),
    ("busy", "IL busy", ErrorKind.ILLEGAL),
    ("close", "CE", ErrorKind.CONNECTION_ERROR),
    ("http500", "", None),
    ("huge", "CE", ErrorKind.TOO_LARGE),
    ("no_headers", "CE", ErrorKind.CONNECTION_ERROR),
    ("no_length", "", None),
    ("chunked", "", None),
    ("chunk_extensions", "", None),
    ("upper", "IL NOOP", ErrorKind.ILLEGAL),
    ("spaces", "", None),
    ("empty", "IL null", ErrorKind.UNPARSABLE),
]


def assert_complete(record: MatchRecord, roles: int) -> None:
    """Every per-step list of the record has one entry per state or step and role."""
    steps = len(record.moves)
    assert len(record.states) == len(record.state_times) == steps + 1
    assert record.errors is not None and record.error_details is not None
    assert record.response_times is not None and record.raw_replies is not None
    for table in (record.errors, record.error_details, record.response_times, record.raw_replies):
        assert len(table) == steps + 1
        assert all(len(row) == roles for row in table)
    assert all(len(joint) == roles for joint in record.moves)
    for codes, details in zip(record.errors, record.error_details, strict=True):
        assert [bool(code) for code in codes] == [detail is not None for detail in details]


async def test_each_fault_gets_its_code_a_substitute_and_the_match_completes(
    tmp_path: Path,
) -> None:
    game = Game.from_text(counting_game(len(FAULTS_AND_CODES) + 1))
    faults = {step: fault for step, (fault, _, _) in enumerate(FAULTS_AND_CODES, start=1)}
    writer = LogWriter(tmp_path)
    async with FakePlayer(faults=faults, delay=1.6) as faulty, FakePlayer() as honest:
        runner = MatchRunner(
            game,
            [Player("Faulty", faulty.url), Player("Honest", honest.url)],
            QUICK,
            game_name="counting",
            observers=[writer],
        )
        record = await runner.run()

    assert record.is_completed and record.end_reason is EndReason.TERMINAL
    assert record.goal_values == [50, 50]
    assert_complete(record, 2)
    assert record.errors is not None and record.error_details is not None
    for step, (fault, code, kind) in enumerate(FAULTS_AND_CODES, start=1):
        assert record.errors[step] == [code, ""], fault
        detail = record.error_details[step][0]
        if kind is None:
            assert detail is None, fault
            assert record.moves[step - 1][0] == "noop", fault
        else:
            assert detail is not None and detail.kind is kind, fault
            assert detail.substitute == record.moves[step - 1][0]
            assert detail.substitute in ("noop", "( push 1 )", "( push 2 )")
            assert detail.response_time_ms is not None
            if kind is ErrorKind.TIMEOUT:  # cut at the deadline: the clock plus the slack
                assert 1250 <= detail.response_time_ms <= 1250 + 1000, fault
            elif fault in ("garbage", "illegal", "nil", "busy", "empty"):  # answered at once
                assert detail.response_time_ms < 1250, fault
    garbage = record.error_details[3][0]
    assert garbage is not None and garbage.raw_reply == "((( this is not a move"
    assert load_record(writer.path_for(record.match_id)) == record


async def test_a_player_that_is_busy_at_start_is_recorded_and_plays_on() -> None:
    game = Game.from_text(counting_game(2))
    async with FakePlayer(faults={"start": "busy"}) as busy, FakePlayer() as honest:
        record = await MatchRunner(
            game, [Player("Busy", busy.url), Player("Honest", honest.url)], QUICK
        ).run()
    assert record.errors is not None and record.error_details is not None
    assert record.errors[0] == ["IL busy", ""]
    refused = record.error_details[0][0]
    assert refused is not None and refused.kind is ErrorKind.REFUSED and refused.raw_reply == "busy"
    assert record.errors[1:] == [["", ""], ["", ""]]
    assert record.is_completed


async def test_a_start_refusal_can_abort_the_match_instead() -> None:
    game = Game.from_text(counting_game(2))
    config = QUICK.model_copy(update={"abort_on_refused_start": True})
    async with FakePlayer(faults={"start": "busy"}) as busy, FakePlayer() as honest:
        record = await MatchRunner(
            game, [Player("Busy", busy.url), Player("Honest", honest.url)], config
        ).run()
        kinds = [type(message).__name__ for message in honest.messages]
    assert record.is_aborted and not record.is_completed
    assert record.end_reason is EndReason.START_REFUSED and "left" in (record.end_message or "")
    assert record.moves == [] and record.goal_values is None
    assert kinds == ["Start", "Abort"]


async def test_nobody_listening_is_a_connection_error_at_every_step() -> None:
    game = Game.from_text(counting_game(3))
    absent = f"http://127.0.0.1:{unused_port()}/"
    async with FakePlayer() as honest:
        record = await MatchRunner(
            game, [Player("Honest", honest.url), Player("Nobody", absent)], QUICK
        ).run()
    assert record.errors == [["", "CE"]] * 4
    assert record.is_completed and record.goal_values == [50, 50]
    assert record.stop_errors is not None
    assert record.stop_errors[0] is None and record.stop_errors[1] is not None
    assert record.stop_errors[1].kind is ErrorKind.CONNECTION_ERROR


async def test_a_late_start_is_a_timeout_and_the_player_still_plays() -> None:
    game = Game.from_text(counting_game(2))
    async with FakePlayer(faults={"start": "sleep"}, delay=1.6) as late, FakePlayer() as honest:
        record = await MatchRunner(
            game, [Player("Late", late.url), Player("Honest", honest.url)], QUICK
        ).run()
        late_plays = sum(type(message).__name__ == "Play" for message in late.messages)
    assert record.errors is not None and record.errors[0] == ["TO", ""]
    assert late_plays == 2


async def test_the_log_on_disk_follows_every_step(tmp_path: Path) -> None:
    game = Game.from_text(counting_game(3))
    seen: list[int] = []
    writer = LogWriter(tmp_path)

    def read_back(event: object) -> None:
        seen.append(len(load_match_fields(writer.path_for(runner.match_id))["moves"]))

    async with FakePlayer() as one, FakePlayer() as two:
        runner = MatchRunner(
            game, [Player("One", one.url), Player("Two", two.url)], QUICK, observers=[writer]
        )
        runner.subscribe(read_back)
        record = await runner.run()
    assert seen == [0, 0, 1, 2, 3, 3, 3]
    assert not writer.journal_for(record.match_id).exists()
    assert os.listdir(tmp_path) == [f"{record.match_id}.json"]
    assert json.loads(writer.path_for(record.match_id).read_text()) == json.loads(
        dump_record(record)
    )


# -- hostile replies: deep, huge, in the wrong case ----------------------------------------


async def _match_against(
    script: ReplyScript, folder: Path, steps: int = 4, config: MatchConfig = QUICK
) -> tuple[MatchRecord, Path, Ed25519PrivateKey]:
    """One signed match of the counting game: a hostile player against an honest one."""
    game = Game.from_text(counting_game(steps), engine="interpreter")
    key = Ed25519PrivateKey.generate()
    writer = LogWriter(folder, signing_key=key)
    async with HostilePlayer(script) as hostile, HostilePlayer() as fair:
        record = await MatchRunner(
            game,
            [Player("Hostile", hostile.url), Player("Fair", fair.url)],
            config,
            game_name="counting",
            observers=[writer],
        ).run()
    return record, writer.path_for(record.match_id), key


def _assert_signed_and_replayable(log: Path, key: Ed25519PrivateKey) -> None:
    assert verify_record_file(log, key.public_key()).ok
    replay = replay_file(log)
    assert replay.ok, replay.problems


async def test_a_deeply_nested_reply_is_an_illegal_move_quoted_briefly(tmp_path: Path) -> None:
    depth = MAX_TERM_DEPTH - 5
    deep = "( f " * depth + "x" + " )" * depth

    record, log, key = await _match_against(lambda step, move: deep, tmp_path)

    assert record.is_completed and record.end_reason is EndReason.TERMINAL
    assert record.errors is not None and record.error_details is not None
    for codes, details in zip(record.errors[1:], record.error_details[1:], strict=True):
        assert codes[0] == "IL " + deep[:QUOTE_LIMIT] + "..."
        assert details[0] is not None and len(details[0].message) < QUOTE_LIMIT + 100
    _assert_signed_and_replayable(log, key)


async def test_a_reply_nested_past_the_cap_is_unparsable_not_a_crash(tmp_path: Path) -> None:
    depth = 50_000
    deep = "(f " * depth + "x" + ")" * depth

    record, log, key = await _match_against(lambda step, move: deep, tmp_path)

    assert record.is_completed
    assert record.errors is not None
    assert all(codes == ["IL null", ""] for codes in record.errors[1:])
    _assert_signed_and_replayable(log, key)


async def test_a_megabyte_illegal_move_adds_a_bounded_amount_to_the_log(tmp_path: Path) -> None:
    huge = "( say " + "word " * 190_000 + ")"
    assert 900_000 < len(huge) < QUICK.max_reply_bytes
    steps = 4

    honest_record, honest_log, _ = await _match_against(honest, tmp_path / "honest", steps)
    record, log, key = await _match_against(lambda step, move: huge, tmp_path / "hostile", steps)

    assert honest_record.errors is not None and record.errors is not None
    assert all(codes == ["", ""] for codes in honest_record.errors)
    assert all(codes[0].startswith("IL ( say word") for codes in record.errors[1:])
    assert all(len(codes[0]) <= len("IL ") + QUOTE_LIMIT + 3 for codes in record.errors[1:])
    # Per step the hostile role adds its raw reply cut short (in rawReplies and in
    # errorDetails) and two short quotes of its move, whatever it sends.
    per_step = 2 * RAW_REPLY_LIMIT + 2 * QUOTE_LIMIT + 600
    assert log.stat().st_size <= honest_log.stat().st_size + steps * per_step
    _assert_signed_and_replayable(log, key)


async def test_a_move_in_the_wrong_case_is_illegal_as_in_ggp_base(tmp_path: Path) -> None:
    record, log, key = await _match_against(lambda step, move: move.upper(), tmp_path)

    assert record.errors is not None and record.error_details is not None
    assert all(codes == ["IL NOOP", ""] for codes in record.errors[1:])
    detail = record.error_details[1][0]
    assert detail is not None and detail.kind is ErrorKind.ILLEGAL
    _assert_signed_and_replayable(log, key)


async def test_lenient_move_case_accepts_a_move_in_the_wrong_case(tmp_path: Path) -> None:
    config = QUICK.model_copy(update={"lenient_move_case": True})

    record, log, key = await _match_against(
        lambda step, move: move.upper(), tmp_path, config=config
    )

    assert record.errors is not None
    assert all(codes == ["", ""] for codes in record.errors)
    assert all(joint[0] == "noop" for joint in record.moves)
    _assert_signed_and_replayable(log, key)
