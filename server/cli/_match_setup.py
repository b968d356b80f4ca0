"""The checks ``ggp match`` runs before it starts anything, each failing as one line.

Players, the output folder, the match id and the host key are all checked before a
player process is started or a message is sent, so a bad input costs nothing and
leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._common import InputError, one_line

SAFE_MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""A match id that is a plain file name: no folder, no leading dot, at most 200 characters."""


@dataclass(frozen=True)
class PlayerSpec:
    """One role's PLAYER: a remote URL, a bundled player's name, or the server itself."""

    role: str
    url: str | None = None
    bundled: str | None = None

    @property
    def remote(self) -> bool:
        return self.url is not None


def players_for_roles(roles: list[str], players: list[str]) -> list[PlayerSpec]:
    """One checked PLAYER per role; the server's own ``random`` role may be left out."""
    from server.match import RANDOM_ROLE

    if len(players) == len(roles):
        given = list(players)
    elif len(players) == len([role for role in roles if role != RANDOM_ROLE]):
        remaining = iter(players)
        given = ["" if role == RANDOM_ROLE else next(remaining) for role in roles]
    else:
        raise InputError(
            f"the game has {len(roles)} roles ({', '.join(roles)}); give one PLAYER per role, "
            f"got {len(players)}"
        )
    specs = [
        PlayerSpec(role) if role == RANDOM_ROLE else _player_spec(role, text)
        for role, text in zip(roles, given, strict=True)
    ]
    _refuse_shared_urls(specs)
    return specs


def _player_spec(role: str, text: str) -> PlayerSpec:
    from players.registry import player_names
    from server.match.local_players import looks_like_url
    from server.match.transport import PlayerAddress

    if not looks_like_url(text):
        if text not in player_names():
            raise InputError(
                f"{role}: {text!r} is neither a player URL (http://host:port) nor a bundled "
                f"player ({', '.join(player_names())})"
            )
        return PlayerSpec(role, bundled=text)
    try:
        address = PlayerAddress.parse(text)
    except ValueError as error:
        raise InputError(f"{role}: {text} is not a usable player URL: {one_line(error)}") from None
    if not 1 <= address.port <= 65535:
        raise InputError(f"{role}: {text} is not a usable player URL: port {address.port}")
    return PlayerSpec(role, url=text)


def _refuse_shared_urls(specs: list[PlayerSpec]) -> None:
    from server.match.transport import PlayerAddress

    seen: dict[tuple[str, int, str], str] = {}
    for spec in specs:
        if spec.url is None:
            continue
        address = PlayerAddress.parse(spec.url)
        key = (address.host.lower(), address.port, address.path.rstrip("/") or "/")
        if key in seen:
            raise InputError(
                f"{seen[key]} and {spec.role} have the same player URL {spec.url}; "
                "a player takes one role per match"
            )
        seen[key] = spec.role


def check_match_id(match_id: str) -> None:
    """Refuse a match id that is not a plain, safe file name."""
    if not SAFE_MATCH_ID.fullmatch(match_id) or ".." in match_id:
        raise InputError(
            f"--match-id {match_id!r} is not a plain name: use letters, digits, '.', '_' "
            "and '-' (starting with a letter or digit, no '..', at most 200 characters)"
        )


def check_output_folder(folder: Path) -> None:
    """Refuse an output folder that is a file or that cannot be created or written."""
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        where = "" if probe == folder else f" ({probe} is a file)"
        raise InputError(f"--out {folder} is not a folder{where}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"--out {folder}: no permission to write in {probe}")


def prepare_output_folder(folder: Path) -> None:
    """Create the output folder and prove that a file can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise InputError(f"--out {folder}: cannot write there: {error.strerror or error}") from None


def check_log_is_new(path: Path, match_id: str) -> None:
    """Refuse to overwrite the log of an earlier match."""
    if path.exists():
        raise InputError(
            f"a log of match {match_id} already exists ({path}); choose another --match-id"
        )


def load_signing_key(key_file: str | None) -> Any:
    """The host key that will sign the log, read (or created) now rather than after the match."""
    from server.records.signing import default_host_key_path, load_or_create_host_key

    path = key_file or default_host_key_path()
    try:
        return load_or_create_host_key(path)
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or one_line(error, 200)
        raise InputError(f"cannot use the host key {path}: {reason}") from None


async def ping_remote_players(specs: list[PlayerSpec], seconds: float) -> dict[str, Any]:
    """INFO to every remote player at once; the results by role."""
    from server.match import PlayerAddress, ping_player

    remote = [spec for spec in specs if spec.url is not None]
    results = await asyncio.gather(
        *(
            ping_player(PlayerAddress.parse(spec.url or ""), timeout=seconds, receiver=spec.role)
            for spec in remote
        )
    )
    return {spec.role: result for spec, result in zip(remote, results, strict=True)}
