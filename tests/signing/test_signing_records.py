"""Signed records: any change to the signed content is caught, and the reason is named."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.records import MatchRecord
from server.records.signing import (
    PUBLIC_KEY_FIELD,
    SIGNATURE_FIELD,
    VerificationStatus,
    canonical_bytes,
    read_record_json,
    sign_record,
    sign_record_file,
    verify_record,
    verify_record_file,
)

RECORD: dict[str, Any] = {
    "matchId": "example.ticTacToe.1",
    "startClock": 5,
    "playClock": 3,
    "states": [
        "( ( cell 1 1 b ) ( control xplayer ) )",
        "( ( cell 1 1 x ) ( control oplayer ) )",
    ],
    "moves": [["( mark 1 1 )", "noop"]],
    "errors": [["", ""], ["", ""]],
    "stateTimes": [1000, 2000],
    "goalValues": [100, 0],
    "isCompleted": True,
    "playerNamesFromHost": ["Zoë", "Bob"],
}


@pytest.fixture(scope="module")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def test_a_signed_record_verifies_against_the_signing_key(key: Ed25519PrivateKey) -> None:
    signed = sign_record(RECORD, key)

    result = verify_record(signed, key.public_key())

    assert result.ok, result.message
    assert set(signed) == set(RECORD) | {PUBLIC_KEY_FIELD, SIGNATURE_FIELD}


def test_the_signed_content_is_canonical_json_without_the_signature_fields(
    key: Ed25519PrivateKey,
) -> None:
    signed = sign_record(RECORD, key)

    content = canonical_bytes(signed)

    assert content == canonical_bytes(RECORD)
    assert content.startswith(b'{"errors":[["",""],["",""]],"goalValues":[100,0],')
    assert "Zoë".encode() in content
    assert b", " not in content and b": " not in content


def test_key_order_and_layout_of_the_file_do_not_matter(key: Ed25519PrivateKey) -> None:
    signed = sign_record(RECORD, key)
    reordered = json.loads(json.dumps(dict(reversed(list(signed.items()))), indent=4))

    assert verify_record(reordered, key.public_key()).ok


def _change_move(record: dict[str, Any]) -> None:
    record["moves"][0][0] = "( mark 1 2 )"


def _change_goal(record: dict[str, Any]) -> None:
    record["goalValues"][1] = 50


def _remove_step(record: dict[str, Any]) -> None:
    for field in ("moves", "states", "stateTimes", "errors"):
        record[field].pop()


def _change_number_type(record: dict[str, Any]) -> None:
    record["goalValues"][0] = 100.0


def _add_field(record: dict[str, Any]) -> None:
    record["note"] = "added later"


def _change_a_name(record: dict[str, Any]) -> None:
    record["playerNamesFromHost"][0] = "Zoe"


@pytest.mark.parametrize(
    "tamper",
    [_change_move, _change_goal, _remove_step, _change_number_type, _add_field, _change_a_name],
)
def test_any_change_to_the_content_breaks_the_signature(
    key: Ed25519PrivateKey, tamper: Any
) -> None:
    signed = sign_record(RECORD, key)
    tampered = copy.deepcopy(signed)
    tamper(tampered)

    result = verify_record(tampered, key.public_key())

    assert result.status is VerificationStatus.BAD_SIGNATURE
    assert "bad signature" in result.message


def test_an_unsigned_record_is_reported_as_missing_its_signature(key: Ed25519PrivateKey) -> None:
    result = verify_record(RECORD, key.public_key())

    assert result.status is VerificationStatus.MISSING_SIGNATURE
    assert "missing signature" in result.message


def test_a_record_signed_by_another_key_is_a_key_mismatch(key: Ed25519PrivateKey) -> None:
    someone_else = Ed25519PrivateKey.generate()
    signed = sign_record(RECORD, someone_else)

    result = verify_record(signed, key.public_key())

    assert result.status is VerificationStatus.KEY_MISMATCH
    assert "key mismatch" in result.message


def test_re_signing_with_a_forged_key_field_still_fails(key: Ed25519PrivateKey) -> None:
    forged = sign_record(RECORD, Ed25519PrivateKey.generate())
    forged[PUBLIC_KEY_FIELD] = sign_record(RECORD, key)[PUBLIC_KEY_FIELD]

    assert verify_record(forged, key.public_key()).status is VerificationStatus.BAD_SIGNATURE


def test_a_garbled_signature_is_reported_as_malformed(key: Ed25519PrivateKey) -> None:
    signed = sign_record(RECORD, key)
    signed[SIGNATURE_FIELD] = "not base64!"

    assert verify_record(signed, key.public_key()).status is VerificationStatus.MALFORMED_SIGNATURE


def test_signing_a_file_keeps_its_content_and_adds_the_signature(
    tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    path = tmp_path / "match.json"
    path.write_text(json.dumps(RECORD), encoding="utf-8")

    sign_record_file(path, key)

    stored = read_record_json(path)
    assert {
        k: v for k, v in stored.items() if k not in (PUBLIC_KEY_FIELD, SIGNATURE_FIELD)
    } == RECORD
    assert verify_record_file(path, key.public_key()).ok
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_file_with_duplicate_keys_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    path.write_text('{"matchId": "a", "goalValues": [0, 100], "goalValues": [100, 0]}')

    with pytest.raises(ValueError, match="duplicate key 'goalValues'"):
        read_record_json(path)


def test_a_match_record_model_is_signed_as_it_is_written(key: Ed25519PrivateKey) -> None:
    record = MatchRecord.model_validate(RECORD)

    signed = sign_record(record, key)

    assert signed["matchId"] == "example.ticTacToe.1"
    assert verify_record(signed, key.public_key()).ok
