"""The ggp.org match archive (JSON Lines of url and data): writing, reading and verifying."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.games import load_game
from server.match import MatchConfig, run_match
from server.records import dump_record
from server.records.archive import (
    ArchiveEntry,
    ArchiveError,
    dump_archive_line,
    read_archive,
    verify_entry,
)
from server.records.signing import public_key_text, sign_record

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
"""The shared reference material next to the repository (absent on most machines)."""
PROTOCOL = SHARED / "protocol"
TIC_TAC_TOE = SHARED / "conformance" / "games" / "ticTacToe.kif"

HOST_KEY = Ed25519PrivateKey.generate()
URL = "http://matches.example.org/matches/0123abcd/"


@pytest.fixture(scope="module")
def our_record() -> dict[str, Any]:
    """A nine-board tic-tac-toe match played by the server itself, as its log's JSON."""
    config = MatchConfig(start_clock=1, play_clock=1, seed=5)
    game = load_game("nineBoardTicTacToe")
    record = asyncio.run(run_match(game, [None, None], config, game_name="nineBoardTicTacToe"))
    return json.loads(dump_record(record))


@pytest.fixture
def signed(our_record: dict[str, Any]) -> dict[str, Any]:
    return sign_record(copy.deepcopy(our_record), HOST_KEY)


def entry_of(data: dict[str, Any]) -> ArchiveEntry:
    [entry] = read_archive([dump_archive_line(URL, data)])
    assert isinstance(entry, ArchiveEntry)
    return entry


# -- writing and reading ---------------------------------------------------------------


def test_a_line_is_compact_json_with_the_keys_as_given() -> None:
    record = {"matchId": "m.1", "zeta": 1, "alpha": ["a b", "ü"], "sep": "x\u2028y"}

    line = dump_archive_line(URL, record)

    assert line == (
        '{"url":"http://matches.example.org/matches/0123abcd/","data":'
        '{"matchId":"m.1","zeta":1,"alpha":["a b","ü"],"sep":"x\\u2028y"}}'
    )
    assert line.splitlines() == [line]
    assert json.loads(line)["data"] == record


def test_reading_an_archive_back(signed: dict[str, Any]) -> None:
    lines = [dump_archive_line(URL, signed), "", dump_archive_line(URL + "2", {"a": 1})]

    first, second = read_archive(lines)

    assert first == ArchiveEntry(line=1, url=URL, data=signed, match_id=signed["matchId"])
    assert second == ArchiveEntry(line=3, url=URL + "2", data={"a": 1}, match_id=None)


def test_a_bad_line_is_reported_and_reading_carries_on() -> None:
    lines = [
        '{"url": "u1", "data": {"matchId": "m1"}}\n',
        "{not json\n",
        "[1, 2]\n",
        '{"data": {}}\n',
        '{"url": 7, "data": {}}\n',
        '{"url": "u6"}\n',
        '{"url": "u7", "data": "text"}\n',
        '{"url": "u8", "url": "u8b", "data": {}}\n',
        "   \n",
        '{"url": "u10", "data": {"matchId": "m10"}}\n',
    ]

    found = list(read_archive(lines))

    assert [(item.line, type(item).__name__) for item in found] == [
        (1, "ArchiveEntry"),
        (2, "ArchiveError"),
        (3, "ArchiveError"),
        (4, "ArchiveError"),
        (5, "ArchiveError"),
        (6, "ArchiveError"),
        (7, "ArchiveError"),
        (8, "ArchiveError"),
        (10, "ArchiveEntry"),
    ]
    messages = [item.message for item in found if isinstance(item, ArchiveError)]
    assert messages[0].startswith("bad JSON: ")
    assert messages[1:] == [
        "expected a JSON object, not list",
        "missing url",
        "url is not a string but int",
        "missing data",
        "data is not a JSON object but str",
        "bad JSON: duplicate key 'url' in a JSON object",
    ]
    assert isinstance(found[-1], ArchiveEntry) and found[-1].match_id == "m10"


# -- verifying our own logs ---------------------------------------------------------------


def test_our_signed_log_is_valid_and_replays(signed: dict[str, Any]) -> None:
    verdict = verify_entry(entry_of(signed), trusted_key=HOST_KEY.public_key())

    assert (verdict.signature, verdict.replay) == ("valid", "ok")
    assert verdict.match_id == signed["matchId"]
    assert "replay ok: OK: " in verdict.message


def test_the_trusted_key_may_be_given_as_text(signed: dict[str, Any]) -> None:
    verdict = verify_entry(entry_of(signed), trusted_key=public_key_text(HOST_KEY))

    assert verdict.signature == "valid"


def test_a_log_signed_by_another_host_is_untrusted(signed: dict[str, Any]) -> None:
    other = Ed25519PrivateKey.generate().public_key()

    assert verify_entry(entry_of(signed), trusted_key=other).signature == "untrusted"
    assert verify_entry(entry_of(signed)).signature == "untrusted"


def test_a_changed_move_breaks_the_signature_and_the_replay(signed: dict[str, Any]) -> None:
    tampered = copy.deepcopy(signed)
    first_move = tampered["moves"][0]
    legal_elsewhere = (
        "( play 1 1 1 1 x )" if first_move[0] != "( play 1 1 1 1 x )" else ("( play 3 3 3 3 x )")
    )
    tampered["moves"][0] = [legal_elsewhere, first_move[1]]

    verdict = verify_entry(entry_of(tampered), trusted_key=HOST_KEY.public_key())

    assert (verdict.signature, verdict.replay) == ("invalid", "mismatch")
    assert "MISMATCH in" in verdict.message and "at step 1" in verdict.message


def test_an_unsigned_log_has_no_signature_but_still_replays(our_record: dict[str, Any]) -> None:
    verdict = verify_entry(entry_of(our_record), trusted_key=HOST_KEY.public_key())

    assert (verdict.signature, verdict.replay) == ("absent", "ok")


def test_a_log_without_available_rules_is_skipped(our_record: dict[str, Any]) -> None:
    elsewhere = {
        key: value for key, value in our_record.items() if key not in ("gameRulesheet", "gameName")
    }
    elsewhere["gameMetaURL"] = "http://games.example.org/base/games/somethingElse/v3/"

    verdict = verify_entry(entry_of(elsewhere))

    assert verdict.replay == "skipped"
    assert "rules not available" in verdict.message


def test_data_that_is_not_a_match_record_is_skipped() -> None:
    verdict = verify_entry(entry_of({"gameName": "nineBoardTicTacToe"}))

    assert (verdict.match_id, verdict.signature, verdict.replay) == (None, "absent", "skipped")
    assert "not a ggp.org match record (matchId: Field required)" in verdict.message


# -- GGP-Base's logs --------------------------------------------------------------------------


def shared_log(name: str) -> dict[str, Any]:
    path = PROTOCOL / name
    if not path.is_file():
        pytest.skip(f"the shared protocol captures (../shared/protocol/{name}) are absent")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("name", ["nineboard-match.json", "faults-match.json"])
def test_ggp_base_nine_board_logs_replay_against_the_bundled_game(name: str) -> None:
    data = shared_log(name)

    verdict = verify_entry(entry_of(data), trusted_key=HOST_KEY.public_key())

    assert (verdict.signature, verdict.replay) == ("absent", "ok"), verdict.message
    assert verdict.match_id == data["matchId"]


def test_a_ggp_base_rsa_signature_counts_as_no_signature_of_ours() -> None:
    data = shared_log("nineboard-match.json")
    data["matchHostPK"] = '{"K":"RSA","N":"00","E":"010001"}'
    data["matchHostSignature"] = "c2lnbmVk"

    verdict = verify_entry(entry_of(data))

    assert (verdict.signature, verdict.replay) == ("absent", "ok")
    assert "GGP-Base's RSA signature is not checked" in verdict.message


def test_a_ggp_base_tic_tac_toe_log_is_skipped_until_its_rules_are_embedded() -> None:
    data = shared_log("ttt-match.json")
    if not TIC_TAC_TOE.is_file():
        pytest.skip("ticTacToe.kif is not in the shared conformance games")

    assert verify_entry(entry_of(data)).replay == "skipped"

    data["gameRulesheet"] = TIC_TAC_TOE.read_text(encoding="utf-8")
    assert verify_entry(entry_of(data)).replay == "ok"
