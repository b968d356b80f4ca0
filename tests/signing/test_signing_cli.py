"""`ggp key` and `ggp verify` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import main
from server.records.signing import (
    HOST_KEY_ENV,
    load_or_create_host_key,
    public_key_pem,
    public_key_text,
    sign_record_file,
)

RECORD = {
    "matchId": "example.1",
    "states": ["( ( control a ) )"],
    "moves": [],
    "stateTimes": [1],
    "isCompleted": False,
}


@pytest.fixture
def host_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "host" / "host_key.pem"
    monkeypatch.setenv(HOST_KEY_ENV, str(path))
    return path


@pytest.fixture
def signed_log(tmp_path: Path, host_key_file: Path) -> Path:
    path = tmp_path / "match.json"
    path.write_text(json.dumps(RECORD))
    sign_record_file(path, load_or_create_host_key(host_key_file))
    return path


def test_ggp_key_creates_the_host_key_and_prints_its_public_half(
    host_key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["key"]) == 0

    printed = capsys.readouterr().out.strip()
    assert host_key_file.exists()
    assert printed == public_key_text(load_or_create_host_key(host_key_file))


def test_ggp_key_prints_pem_for_a_given_key_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_file = tmp_path / "other.pem"

    assert main(["key", "--key-file", str(key_file), "--pem"]) == 0

    assert capsys.readouterr().out == public_key_pem(load_or_create_host_key(key_file))


def test_verify_accepts_a_log_signed_by_this_host(
    signed_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", str(signed_log)]) == 0
    assert "valid signature" in capsys.readouterr().out


def test_verify_fails_on_one_changed_byte(
    signed_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    signed_log.write_text(signed_log.read_text().replace("example.1", "example.2"))

    assert main(["verify", str(signed_log)]) == 1
    assert "bad signature" in capsys.readouterr().err


def test_verify_names_a_missing_signature(
    tmp_path: Path, host_key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load_or_create_host_key(host_key_file)
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps(RECORD))

    assert main(["verify", str(unsigned)]) == 1
    assert "missing signature" in capsys.readouterr().err


def test_verify_with_another_hosts_key_is_a_key_mismatch(
    tmp_path: Path, signed_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = public_key_text(load_or_create_host_key(tmp_path / "other.pem"))

    assert main(["verify", str(signed_log), "--key", other]) == 1
    assert "key mismatch" in capsys.readouterr().err


def test_verify_takes_the_signers_key_from_a_file(
    tmp_path: Path, signed_log: Path, host_key_file: Path
) -> None:
    public_file = tmp_path / "host.pub"
    public_file.write_text(public_key_pem(load_or_create_host_key(host_key_file)))

    assert main(["verify", str(signed_log), "--key", str(public_file)]) == 0


def test_verify_without_any_key_says_what_to_do(
    tmp_path: Path, host_key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "match.json"
    log.write_text(json.dumps(RECORD))

    assert main(["verify", str(log)]) == 2
    assert "--key" in capsys.readouterr().err
    assert not host_key_file.exists()


def test_the_installed_command_round_trip(signed_log: Path, host_key_file: Path) -> None:
    command = [sys.executable, "-m", "server.cli"]
    printed = subprocess.run(
        [*command, "key"], capture_output=True, text=True, check=True
    ).stdout.strip()

    checked = subprocess.run(
        [*command, "verify", str(signed_log), "--key", printed], capture_output=True, text=True
    )

    assert checked.returncode == 0, checked.stderr
