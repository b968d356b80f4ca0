"""Ed25519 signatures on match records, and the host key that makes them.

The host (the server that ran the match) signs a finished record so that anyone
holding the host's public key can check that no byte of it changed since.

What is signed: the record as a JSON object *without* the two signature fields,
serialised canonically (:func:`canonical_bytes`): keys sorted, no whitespace,
UTF-8 without ``\\u`` escapes, numbers as Python's ``json`` prints them.  File
layout (indentation, key order) is therefore free, but every key, string, number
and list element is covered: changing a move, a state, a goal or a time, adding
or removing a key or a step breaks the signature.

Where it is stored, in two fields of the record itself:

- ``hostPublicKey``: the signer's public key, base64 of the raw 32 bytes;
- ``hostSignature``: the Ed25519 signature, base64 of the raw 64 bytes.

GGP-Base's ``matchHostPK`` / ``matchHostSignature`` (RSA, a different scheme) are
left alone; when present they are ordinary signed content.

The host key is a PKCS#8 PEM file, created on first use with mode 0600 at
:func:`default_host_key_path`: ``$GGP_HOST_KEY`` if set, otherwise
``$XDG_DATA_HOME/ggp/host_key.pem`` (``~/.local/share/ggp/host_key.pem``).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from .io import write_atomically
from .json_text import indented_json

PUBLIC_KEY_FIELD = "hostPublicKey"
"""Record field holding the signer's public key (base64 of the raw 32 bytes)."""
SIGNATURE_FIELD = "hostSignature"
"""Record field holding the Ed25519 signature (base64 of the raw 64 bytes)."""
SIGNATURE_FIELDS = (PUBLIC_KEY_FIELD, SIGNATURE_FIELD)
"""The fields left out of the signed content."""

HOST_KEY_ENV = "GGP_HOST_KEY"
"""Environment variable naming the host key file."""
HOST_KEY_FILENAME = "host_key.pem"


# -- the host key ------------------------------------------------------------------


def default_host_key_path() -> Path:
    """Where the host key lives unless a path is given.

    ``$GGP_HOST_KEY`` if set; otherwise ``ggp/host_key.pem`` in the user's data
    folder (``$XDG_DATA_HOME``, else ``~/.local/share``; ``%LOCALAPPDATA%`` on
    Windows).
    """
    configured = os.environ.get(HOST_KEY_ENV)
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():
        base = Path(xdg)
    elif os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path.home() / ".local" / "share"
    return base / "ggp" / HOST_KEY_FILENAME


def load_host_key(path: str | os.PathLike[str] | None = None) -> Ed25519PrivateKey:
    """Read the host key; ``FileNotFoundError`` when there is none yet."""
    target = Path(path) if path is not None else default_host_key_path()
    key = serialization.load_pem_private_key(target.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{target} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def load_or_create_host_key(path: str | os.PathLike[str] | None = None) -> Ed25519PrivateKey:
    """The host key at ``path`` (default :func:`default_host_key_path`), created if absent.

    Creation is race-free: the key is written to a private temporary file and
    linked into place only if no key exists yet, so two processes starting at
    once end up with the same key.
    """
    target = Path(path) if path is not None else default_host_key_path()
    try:
        return load_host_key(target)
    except FileNotFoundError:
        pass
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        os.chmod(temporary, 0o600)
        with os.fdopen(handle, "wb") as stream:
            stream.write(pem)
            stream.flush()
            os.fsync(stream.fileno())
        try:
            os.link(temporary, target)
        except FileExistsError:
            pass  # another process created it first: use that one
    finally:
        os.unlink(temporary)
    return load_host_key(target)


# -- public keys as text -----------------------------------------------------------


PublicKeyLike = Ed25519PrivateKey | Ed25519PublicKey


def _public(key: PublicKeyLike) -> Ed25519PublicKey:
    return key.public_key() if isinstance(key, Ed25519PrivateKey) else key


def public_key_text(key: PublicKeyLike) -> str:
    """The public key as stored in records and printed by ``ggp key``: base64 of 32 bytes."""
    raw = _public(key).public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def public_key_pem(key: PublicKeyLike) -> str:
    """The public key as a PEM ``PUBLIC KEY`` block (SubjectPublicKeyInfo)."""
    return (
        _public(key)
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode("ascii")
    )


def parse_public_key(text: str) -> Ed25519PublicKey:
    """Read a public key given as base64 of the raw 32 bytes, or as PEM.

    A PEM private key is accepted too (its public half is used).  Raises
    ``ValueError`` for anything else.
    """
    text = text.strip()
    if text.startswith("-----BEGIN"):
        data = text.encode("ascii")
        key: Any
        if "PRIVATE KEY" in text.split("\n", 1)[0]:
            key = serialization.load_pem_private_key(data, password=None)
        else:
            key = serialization.load_pem_public_key(data)
        if isinstance(key, Ed25519PrivateKey):
            return key.public_key()
        if isinstance(key, Ed25519PublicKey):
            return key
        raise ValueError(f"not an Ed25519 key but a {type(key).__name__}")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"not base64 and not PEM: {text[:60]!r}") from error
    if len(raw) != 32:
        raise ValueError(f"an Ed25519 public key has 32 bytes, this one has {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


def read_public_key(value: str) -> Ed25519PublicKey:
    """A public key given on the command line: the key itself, or a file that holds it."""
    candidate = Path(value).expanduser()
    try:
        is_file = candidate.is_file()
    except OSError:  # a base64 key is not a valid path on every system
        is_file = False
    if is_file:
        return parse_public_key(candidate.read_text(encoding="utf-8"))
    return parse_public_key(value)


# -- signing -----------------------------------------------------------------------


def canonical_bytes(record: Mapping[str, Any]) -> bytes:
    """The signed content: the record without its signature fields, canonical JSON.

    Keys sorted at every level, separators without whitespace, UTF-8 without
    ``\\u`` escapes; NaN and infinities are refused.
    """
    content = {key: value for key, value in record.items() if key not in SIGNATURE_FIELDS}
    return json.dumps(
        content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _as_dict(record: Any) -> dict[str, Any]:
    """A record as a JSON object; a pydantic record is dumped exactly as written to disk."""
    if isinstance(record, Mapping):
        return dict(record)
    from .io import dump_record

    return json.loads(dump_record(record))


def sign_record(record: Mapping[str, Any] | Any, key: Ed25519PrivateKey) -> dict[str, Any]:
    """A copy of the record (a JSON object or a ``MatchRecord``) with the host signature.

    An existing ``hostPublicKey`` / ``hostSignature`` is replaced.
    """
    signed = {k: v for k, v in _as_dict(record).items() if k not in SIGNATURE_FIELDS}
    signature = key.sign(canonical_bytes(signed))
    signed[PUBLIC_KEY_FIELD] = public_key_text(key)
    signed[SIGNATURE_FIELD] = base64.b64encode(signature).decode("ascii")
    return signed


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r} in a JSON object")
        result[key] = value
    return result


def read_record_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file as a JSON object, refusing duplicate keys.

    Duplicate keys would let a file show one value to one reader and another to
    the next, so a signed record must not have any.
    """
    data = json.loads(
        Path(path).read_bytes().decode("utf-8"), object_pairs_hook=_reject_duplicate_keys
    )
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a match record is a JSON object, not {type(data).__name__}")
    return data


def _signed_json_bytes(data: Mapping[str, Any]) -> bytes:
    return indented_json(data).encode("utf-8")


def _write_json_atomically(path: Path, data: Mapping[str, Any]) -> None:
    write_atomically(path, _signed_json_bytes(data))


def signed_record_bytes(record: Mapping[str, Any] | Any, key: Ed25519PrivateKey) -> bytes:
    """A record signed with ``key``, as :func:`sign_record_file` writes it to disk."""
    return _signed_json_bytes(sign_record(record, key))


def sign_record_file(
    path: str | os.PathLike[str], key: Ed25519PrivateKey | None = None
) -> dict[str, Any]:
    """Sign the record file in place (atomically) and return the signed record.

    ``key`` defaults to the host key (:func:`load_or_create_host_key`).  Sign a
    record only once it is finished: any later write must sign it again.
    """
    target = Path(path)
    signed = sign_record(read_record_json(target), key or load_or_create_host_key())
    _write_json_atomically(target, signed)
    return signed


# -- verifying ---------------------------------------------------------------------


class VerificationStatus(StrEnum):
    """The outcome of checking a record's signature."""

    VALID = "valid"
    MISSING_SIGNATURE = "missing_signature"
    MALFORMED_SIGNATURE = "malformed_signature"
    KEY_MISMATCH = "key_mismatch"
    BAD_SIGNATURE = "bad_signature"


@dataclass(frozen=True)
class Verification:
    """What :func:`verify_record` found, with a sentence that says why."""

    status: VerificationStatus
    message: str
    signer_key: str | None = None
    """The public key named in the record (base64), if any."""

    @property
    def ok(self) -> bool:
        return self.status is VerificationStatus.VALID


def verify_record(
    record: Mapping[str, Any], trusted_key: PublicKeyLike | None = None
) -> Verification:
    """Check the record's host signature.

    With ``trusted_key`` the record must be signed by that key (the usual case:
    the host's own key, or one a user was given).  Without it the signature is
    only checked against the key the record names, which proves integrity but
    not who signed.
    """
    named = record.get(PUBLIC_KEY_FIELD)
    signature_text = record.get(SIGNATURE_FIELD)
    if signature_text is None:
        return Verification(
            VerificationStatus.MISSING_SIGNATURE,
            f"missing signature: the record has no {SIGNATURE_FIELD} field",
            named if isinstance(named, str) else None,
        )
    if not isinstance(signature_text, str):
        return Verification(
            VerificationStatus.MALFORMED_SIGNATURE, f"{SIGNATURE_FIELD} is not a string"
        )
    try:
        signature = base64.b64decode(signature_text, validate=True)
    except (binascii.Error, ValueError):
        return Verification(
            VerificationStatus.MALFORMED_SIGNATURE, f"{SIGNATURE_FIELD} is not base64"
        )
    if len(signature) != 64:
        return Verification(
            VerificationStatus.MALFORMED_SIGNATURE,
            f"{SIGNATURE_FIELD} has {len(signature)} bytes; an Ed25519 signature has 64",
        )
    named_key: Ed25519PublicKey | None = None
    if named is not None:
        try:
            named_key = parse_public_key(str(named))
        except ValueError as error:
            return Verification(
                VerificationStatus.MALFORMED_SIGNATURE, f"{PUBLIC_KEY_FIELD}: {error}"
            )
    named_text = public_key_text(named_key) if named_key is not None else None
    if trusted_key is not None:
        expected = public_key_text(trusted_key)
        if named_text is not None and named_text != expected:
            return Verification(
                VerificationStatus.KEY_MISMATCH,
                f"key mismatch: the record is signed by {named_text}, not by the expected "
                f"key {expected}",
                named_text,
            )
        checking_key = _public(trusted_key)
    elif named_key is not None:
        checking_key = named_key
    else:
        return Verification(
            VerificationStatus.MISSING_SIGNATURE,
            f"missing signer: the record has no {PUBLIC_KEY_FIELD} and no key was given",
        )
    try:
        checking_key.verify(signature, canonical_bytes(record))
    except InvalidSignature:
        return Verification(
            VerificationStatus.BAD_SIGNATURE,
            "bad signature: the signed content was changed after signing "
            "(or the signature was made over different content)",
            named_text,
        )
    signer = public_key_text(checking_key)
    how = "" if trusted_key is not None else " (the key named in the record; not a trusted key)"
    return Verification(VerificationStatus.VALID, f"valid signature by {signer}{how}", signer)


def verify_record_file(
    path: str | os.PathLike[str], trusted_key: PublicKeyLike | None = None
) -> Verification:
    """:func:`verify_record` on a record file."""
    return verify_record(read_record_json(path), trusted_key)
