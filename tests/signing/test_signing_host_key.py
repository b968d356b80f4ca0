"""The host key: created once on first use, where configuration says, private to its owner."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from server.records.signing import (
    HOST_KEY_ENV,
    default_host_key_path,
    load_host_key,
    load_or_create_host_key,
    parse_public_key,
    public_key_pem,
    public_key_text,
)


def test_the_key_is_created_on_first_use_and_reused_afterwards(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "host_key.pem"

    first = load_or_create_host_key(path)
    second = load_or_create_host_key(path)

    assert path.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert public_key_text(first) == public_key_text(second)


def test_the_key_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "host_key.pem"
    load_or_create_host_key(path)

    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_loading_without_creating_reports_a_missing_key(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_host_key(tmp_path / "absent.pem")


def test_the_environment_variable_names_the_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_KEY_ENV, str(tmp_path / "configured.pem"))

    load_or_create_host_key()

    assert default_host_key_path() == tmp_path / "configured.pem"
    assert (tmp_path / "configured.pem").exists()


def test_by_default_the_key_lives_in_the_user_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(HOST_KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))

    assert default_host_key_path() == tmp_path / "ggp" / "host_key.pem"


def test_a_public_key_reads_back_from_base64_and_from_pem(tmp_path: Path) -> None:
    key = load_or_create_host_key(tmp_path / "k.pem")
    text = public_key_text(key)

    assert len(text) == 44  # base64 of 32 bytes
    assert public_key_text(parse_public_key(text)) == text
    assert public_key_text(parse_public_key(public_key_pem(key))) == text
    assert public_key_text(parse_public_key((tmp_path / "k.pem").read_text())) == text


@pytest.mark.parametrize("text", ["not a key", "AAAA", "-----BEGIN PUBLIC KEY-----\nxx\n"])
def test_anything_else_is_not_a_public_key(text: str) -> None:
    with pytest.raises(ValueError):
        parse_public_key(text)
