"""Match records read every ggp.org match JSON and write GGP-Base's keys exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared_material import shared_files

from server.records import (
    RECORD_FORMAT,
    EndReason,
    ErrorDetail,
    ErrorKind,
    MatchRecord,
    dump_record,
    load_record,
    new_random_token,
    parse_record,
    write_record,
)

SHARED_RECORDS = shared_files("protocol", "*.json")

GGP_BASE_KEYS = {
    "matchId", "randomToken", "startTime", "gameMetaURL", "isCompleted", "isAborted",
    "states", "moves", "stateTimes", "errors", "goalValues", "previewClock", "startClock",
    "playClock", "playerNamesFromHost", "isPlayerHuman", "tournamentNameFromHost",
    "scrambled", "matchHostPK", "matchHostSignature",
}  # fmt: skip


@pytest.mark.parametrize("path", SHARED_RECORDS, ids=lambda path: path.name)
def test_every_record_written_by_ggp_base_loads_and_writes_back_unchanged(path: Path) -> None:
    original = json.loads(path.read_text())
    record = load_record(path)
    assert record.match_id == original["matchId"]
    assert len(record.states) == len(record.moves) + 1 == len(record.state_times)
    assert json.loads(dump_record(record)) == original


@pytest.mark.shared("protocol/*.json")
def test_the_shared_records_include_a_finished_and_an_aborted_match() -> None:
    assert {path.name for path in SHARED_RECORDS} >= {"ttt-match.json", "abort-match.json"}


def test_a_record_from_another_server_with_missing_and_unknown_keys_loads() -> None:
    text = json.dumps(
        {
            "matchId": "tiltyard.connectFour.1",
            "startClock": "30",
            "playClock": 15,
            "states": ["( ( control red ) )"],
            "moves": [],
            "stateTimes": [1400000000000],
            "isCompleted": False,
            "gameName": "Connect Four",
            "hashedMatchHostPK": "abc",
            "allErrors": [],
        }
    )
    record = parse_record(text)
    assert record.start_clock == 30
    assert record.errors is None and record.goal_values is None
    assert record.preview_clock == -1 and record.scrambled is False
    written = json.loads(dump_record(record))
    assert written["hashedMatchHostPK"] == "abc" and written["allErrors"] == []
    assert "goalValues" not in written and "errors" not in written


def test_our_additions_use_names_ggp_base_does_not_write() -> None:
    record = MatchRecord(
        match_id="local.ticTacToe.1",
        random_token=new_random_token(),
        start_time=1,
        start_clock=5,
        play_clock=3,
        states=["( ( control xplayer ) )", "( ( control oplayer ) )"],
        moves=[["( mark 1 1 )", "noop"]],
        state_times=[1, 2],
        errors=[["", "CE"], ["IL null", ""]],
        record_format=RECORD_FORMAT,
        game_role_names=["xplayer", "oplayer"],
        end_reason=EndReason.STEP_LIMIT,
        response_times=[[3, None], [1000, 2]],
        error_details=[
            [None, ErrorDetail(kind=ErrorKind.CONNECTION_ERROR, message="refused")],
            [ErrorDetail(kind=ErrorKind.UNPARSABLE, raw_reply="(((", substitute="noop"), None],
        ],
    )
    written = json.loads(dump_record(record))
    ours = set(written) - GGP_BASE_KEYS
    assert ours == {
        "recordFormat", "gameRoleNames", "endReason", "responseTimes", "errorDetails",
    }  # fmt: skip
    assert written["errorDetails"][1][0] == {
        "kind": "unparsable", "message": "", "rawReply": "(((", "substitute": "noop",
    }  # fmt: skip
    assert written["errorDetails"][0][0] is None
    assert written["responseTimes"] == [[3, None], [1000, 2]]
    assert parse_record(json.dumps(written)) == record


def test_random_tokens_look_like_ggp_base_ones() -> None:
    token = new_random_token()
    assert len(token) == 32 and token.isalnum() and token.isascii()
    assert new_random_token() != token


def test_writing_replaces_the_file_atomically_and_leaves_no_temporary_files(
    tmp_path: Path,
) -> None:
    target = tmp_path / "logs" / "m.json"
    record = MatchRecord(match_id="m", states=["( )"], state_times=[5])
    write_record(target, record)
    record.states.append("( ( x ) )")
    record.moves.append(["a"])
    record.state_times.append(6)
    write_record(target, record)
    assert load_record(target).states == ["( )", "( ( x ) )"]
    assert [path.name for path in target.parent.iterdir()] == ["m.json"]
