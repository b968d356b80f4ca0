"""Where the host key lives, how keys are read from text, and what a wrong one is told."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.records.signing import (
    HOST_KEY_ENV,
    default_host_key_path,
    load_host_key,
    load_or_create_host_key,
    parse_public_key,
    public_key_pem,
    public_key_text,
    read_public_key,
    read_record_json,
    sign_record_file,
)


@pytest.fixture
def no_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in (HOST_KEY_ENV, "XDG_DATA_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_without_configuration_the_key_is_under_the_home_folder(no_configuration: Path) -> None:
    expected = no_configuration / "home" / ".local" / "share" / "ggp" / "host_key.pem"
    assert default_host_key_path() == expected


def test_a_relative_data_folder_is_ignored(
    no_configuration: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")
    assert default_host_key_path().parent.parent == no_configuration / "home" / ".local" / "share"


def test_a_key_file_named_with_a_tilde_is_under_the_home_folder(
    no_configuration: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_KEY_ENV, "~/keys/host.pem")
    assert default_host_key_path() == no_configuration / "home" / "keys" / "host.pem"


def test_an_empty_variable_means_the_default(
    no_configuration: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_KEY_ENV, "")
    assert default_host_key_path().name == "host_key.pem"
    assert default_host_key_path().parent.name == "ggp"


def test_the_key_is_created_in_a_private_folder_and_read_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "host.pem"
    created = load_or_create_host_key(path)

    assert (path.parent.stat().st_mode & 0o777) == 0o700
    assert path.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert public_key_text(load_host_key(path)) == public_key_text(created)
    assert public_key_text(load_or_create_host_key(path)) == public_key_text(created)
    assert sorted(p.name for p in path.parent.iterdir()) == ["host.pem"]


def test_a_key_file_of_another_kind_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ec.pem"
    path.write_bytes(
        generate_private_key(SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(ValueError, match="ec.pem holds a ECPrivateKey, not an Ed25519 key"):
        load_host_key(path)


def test_a_private_pem_key_gives_its_public_half() -> None:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    assert public_key_text(parse_public_key(pem)) == public_key_text(key)
    assert public_key_text(parse_public_key("\n  " + public_key_pem(key) + "\n")) == (
        public_key_text(key)
    )


def test_a_pem_key_of_another_kind_is_refused() -> None:
    other = generate_private_key(SECP256R1()).public_key()
    pem = other.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    with pytest.raises(ValueError, match="not an Ed25519 key but a ECPublicKey"):
        parse_public_key(pem)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not a key!", "not base64 and not PEM: 'not a key!'"),
        (
            base64.b64encode(bytes(31)).decode(),
            "an Ed25519 public key has 32 bytes, this one has 31",
        ),
        (
            base64.b64encode(bytes(33)).decode(),
            "an Ed25519 public key has 32 bytes, this one has 33",
        ),
    ],
)
def test_a_wrong_public_key_is_told_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_public_key(text)
    assert str(caught.value) == message


def test_a_public_key_is_read_from_a_file_or_from_the_text_itself(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    path = tmp_path / "signer.pub"
    path.write_text(public_key_pem(key))

    assert public_key_text(read_public_key(str(path))) == public_key_text(key)
    assert public_key_text(read_public_key(public_key_text(key))) == public_key_text(key)
    with pytest.raises(ValueError):
        read_public_key(str(tmp_path / "missing.pub"))


def test_a_record_file_must_be_a_json_object(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError) as caught:
        read_record_json(path)
    assert str(caught.value) == f"{path}: a match record is a JSON object, not list"


def test_a_signed_file_is_rewritten_readably_with_its_non_ascii_names(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    path.write_text(json.dumps({"matchId": "m", "playerNamesFromHost": ["Zoë"]}))

    sign_record_file(path, Ed25519PrivateKey.generate())

    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n "matchId": "m",\n') and "Zoë" in text
    assert read_record_json(path)["playerNamesFromHost"] == ["Zoë"]


def test_the_windows_data_folder_is_ignored_elsewhere(
    no_configuration: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCALAPPDATA", str(no_configuration / "AppData" / "Local"))
    home_default = no_configuration / "home" / ".local" / "share" / "ggp" / "host_key.pem"
    assert default_host_key_path() == home_default


def test_loading_without_a_path_reads_the_configured_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_KEY_ENV, str(tmp_path / "configured.pem"))
    created = load_or_create_host_key()
    assert public_key_text(load_host_key()) == public_key_text(created)


def test_base64_with_stray_characters_is_not_a_key() -> None:
    text = public_key_text(Ed25519PrivateKey.generate())
    with pytest.raises(ValueError, match="not base64 and not PEM"):
        parse_public_key(text[:10] + "!" + text[10:])


def test_a_long_wrong_key_is_quoted_only_in_part() -> None:
    text = "x" * 59 + "yz!" + "w" * 100
    with pytest.raises(ValueError) as caught:
        parse_public_key(text)
    assert str(caught.value) == f"not base64 and not PEM: {'x' * 59 + 'y'!r}"
