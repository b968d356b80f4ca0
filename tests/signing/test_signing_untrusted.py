"""Verifying without a trusted key: the record's own key proves integrity, not authorship."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_signing_records import RECORD

from server.records.signing import (
    PUBLIC_KEY_FIELD,
    SIGNATURE_FIELD,
    VerificationStatus,
    public_key_text,
    sign_record,
    verify_record,
    verify_record_file,
)


@pytest.fixture(scope="module")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def test_an_intact_record_is_valid_by_the_key_it_names_and_says_that_key_is_untrusted(
    key: Ed25519PrivateKey,
) -> None:
    result = verify_record(sign_record(RECORD, key))

    assert result.status is VerificationStatus.VALID
    assert result.signer_key == public_key_text(key)
    assert result.message == (
        f"valid signature by {public_key_text(key)} (the key named in the record; "
        "not a trusted key)"
    )


def test_a_trusted_key_drops_the_warning(key: Ed25519PrivateKey) -> None:
    result = verify_record(sign_record(RECORD, key), key.public_key())

    assert result.message == f"valid signature by {public_key_text(key)}"


def test_a_changed_move_is_a_bad_signature_even_without_a_trusted_key(
    key: Ed25519PrivateKey,
) -> None:
    tampered = copy.deepcopy(sign_record(RECORD, key))
    tampered["moves"][0][0] = "( mark 2 2 )"

    result = verify_record(tampered)

    assert result.status is VerificationStatus.BAD_SIGNATURE
    assert result.signer_key == public_key_text(key)


def test_a_swapped_key_field_is_a_bad_signature_without_a_trusted_key(
    key: Ed25519PrivateKey,
) -> None:
    signed = sign_record(RECORD, key)
    signed[PUBLIC_KEY_FIELD] = public_key_text(Ed25519PrivateKey.generate())

    assert verify_record(signed).status is VerificationStatus.BAD_SIGNATURE


def test_a_signature_without_a_named_key_cannot_be_checked(key: Ed25519PrivateKey) -> None:
    signed = sign_record(RECORD, key)
    del signed[PUBLIC_KEY_FIELD]

    result = verify_record(signed)

    assert result.status is VerificationStatus.MISSING_SIGNATURE
    assert result.message == (
        f"missing signer: the record has no {PUBLIC_KEY_FIELD} and no key was given"
    )
    assert verify_record(signed, key).ok


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (SIGNATURE_FIELD, 42, f"{SIGNATURE_FIELD} is not a string"),
        (SIGNATURE_FIELD, "***", f"{SIGNATURE_FIELD} is not base64"),
        (
            SIGNATURE_FIELD,
            base64.b64encode(bytes(63)).decode(),
            f"{SIGNATURE_FIELD} has 63 bytes; an Ed25519 signature has 64",
        ),
    ],
)
def test_a_malformed_signature_is_named_without_a_trusted_key(
    key: Ed25519PrivateKey, field: str, value: object, message: str
) -> None:
    signed = sign_record(RECORD, key)
    signed[field] = value

    result = verify_record(signed)

    assert result.status is VerificationStatus.MALFORMED_SIGNATURE
    assert result.message == message


def test_a_garbled_named_key_is_malformed(key: Ed25519PrivateKey) -> None:
    signed = sign_record(RECORD, key)
    signed[PUBLIC_KEY_FIELD] = "not a key"

    result = verify_record(signed)

    assert result.status is VerificationStatus.MALFORMED_SIGNATURE
    assert result.message.startswith(f"{PUBLIC_KEY_FIELD}: ")


def test_an_unsigned_record_names_its_missing_signature_and_any_key(
    key: Ed25519PrivateKey,
) -> None:
    named_only = {**RECORD, PUBLIC_KEY_FIELD: public_key_text(key)}

    result = verify_record(named_only)

    assert result.status is VerificationStatus.MISSING_SIGNATURE
    assert result.message == f"missing signature: the record has no {SIGNATURE_FIELD} field"
    assert result.signer_key == public_key_text(key)


def test_a_key_mismatch_names_the_key_that_did_sign(key: Ed25519PrivateKey) -> None:
    someone_else = Ed25519PrivateKey.generate()
    result = verify_record(sign_record(RECORD, someone_else), key)

    assert result.status is VerificationStatus.KEY_MISMATCH
    assert result.signer_key == public_key_text(someone_else)


def test_a_bad_signature_says_what_it_means(key: Ed25519PrivateKey) -> None:
    signed = sign_record(RECORD, key)
    signed["goalValues"] = [0, 100]

    assert verify_record(signed).message == (
        "bad signature: the signed content was changed after signing "
        "(or the signature was made over different content)"
    )


def test_a_named_key_that_is_not_text_is_not_reported_as_the_signer() -> None:
    result = verify_record({**RECORD, PUBLIC_KEY_FIELD: 42})
    assert result.status is VerificationStatus.MISSING_SIGNATURE
    assert result.signer_key is None


def test_a_file_is_checked_against_the_key_it_is_given(
    tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    path = tmp_path / "match.json"
    path.write_text(json.dumps(sign_record(RECORD, key)), encoding="utf-8")

    assert verify_record_file(path).ok
    assert verify_record_file(path, key).ok
    other = Ed25519PrivateKey.generate()
    assert verify_record_file(path, other).status is VerificationStatus.KEY_MISMATCH
