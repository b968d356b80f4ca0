"""Fetching a game from a ggp.org-style game repository, as GGP-Base's RemoteGameRepository does.

The layout of such a repository (``http://games.ggp.org/base/`` is the best known):

- ``<repo>/games/`` lists the game keys as a JSON list of strings;
- ``<repo>/games/<key>/`` is the latest version's METADATA, a JSON object with
  ``version`` and file names such as ``rulesheet``, ``description`` and
  ``stylesheet``, plus ``gameName``, ``roleNames``, ``numRoles`` and others;
- ``<repo>/games/<key>/v<N>/`` is version ``N``'s METADATA;
- every file that METADATA names lives beside it: ``<repo>/games/<key>/v<N>/<file>``.

:func:`fetch_game` accepts the URL of a game, latest or pinned, and reads it
liberally: a missing ``http://``, a missing trailing slash, a trailing
``METADATA``, no ``version``, no ``roleNames`` (then the roles come from the
rules) and a ``description`` given as text rather than a file name all work.
Only the rulesheet is required.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp
from pydantic import BaseModel, Field
from yarl import URL

from .roles import roles_in_text

DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_BYTES = 4_000_000
_VERSION = re.compile(r"v(\d+)")
_FILE_NAME = re.compile(r"[^\s/]+\.[A-Za-z0-9]+")


class GameFetchError(Exception):
    """A game that could not be fetched; ``str()`` is one line saying why."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class FetchedGame(BaseModel):
    """A game as read from a repository."""

    name: str = Field(description="The game's key in the repository, e.g. ticTacToe.")
    title: str | None = Field(default=None, description="METADATA's gameName.")
    version: int | None = None
    rules_text: str
    roles: list[str] = Field(default_factory=list)
    description: str | None = None
    source_url: str = Field(
        description="The game's URL, pinned to the version fetched when it is known."
    )
    rulesheet_url: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict, description="METADATA as served.")


def game_url(url: str) -> tuple[URL, str, int | None]:
    """The game's URL (with a trailing slash), its key, and the pinned version if any."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        parsed = URL(text)
    except ValueError as error:
        raise GameFetchError(f"not a URL: {url!r} ({error})") from error
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise GameFetchError(f"not an http(s) URL of a game: {url!r}")
    parts = [part for part in parsed.path.split("/") if part]
    if parts and parts[-1] == "METADATA":
        parts.pop()
    pinned = None
    if len(parts) >= 2 and (found := _VERSION.fullmatch(parts[-1])):
        pinned = int(found.group(1))
        parts.pop()
    if not parts:
        raise GameFetchError(f"{url} names no game: expected .../games/<name>/ or .../v<N>/")
    base = parsed.with_path("/" + "/".join(parts) + "/", encoded=False).with_query(None)
    return base.with_fragment(None), parts[-1], pinned


async def _get(session: aiohttp.ClientSession, url: URL, max_bytes: int) -> bytes:
    """The body at ``url``; any failure is a :class:`GameFetchError`."""
    try:
        async with session.get(url) as response:
            if response.status >= 400:
                raise GameFetchError(f"{url}: HTTP {response.status} {response.reason or ''}")
            if response.content_length is not None and response.content_length > max_bytes:
                raise GameFetchError(
                    f"{url}: the body has {response.content_length} bytes, "
                    f"over the limit of {max_bytes}"
                )
            body = bytearray()
            async for chunk in response.content.iter_chunked(65_536):
                body += chunk
                if len(body) > max_bytes:
                    raise GameFetchError(f"{url}: the body is over the limit of {max_bytes} bytes")
            return bytes(body)
    except aiohttp.ClientConnectorError as error:
        cause = error.os_error
        reason = (cause.strerror or str(cause)) if cause is not None else str(error)
        raise GameFetchError(f"cannot reach {url.host}:{url.port}: {reason}") from error
    except aiohttp.ClientError as error:
        raise GameFetchError(f"{url}: {type(error).__name__}: {error}") from error


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError:
        return body.decode("latin-1")


async def _get_json(session: aiohttp.ClientSession, url: URL, max_bytes: int) -> Any:
    body = await _get(session, url, max_bytes)
    try:
        return json.loads(_text(body))
    except ValueError as error:
        raise GameFetchError(f"{url}: bad JSON: {error}") from error


async def _description(
    session: aiohttp.ClientSession, base: URL, value: object, max_bytes: int
) -> str | None:
    """METADATA's description: a file beside it (fetched; None if it fails) or the text itself."""
    if not isinstance(value, str) or not value.strip():
        return None
    if not _FILE_NAME.fullmatch(value.strip()):
        return value
    try:
        return _text(await _get(session, base.join(URL(value.strip())), max_bytes)).strip()
    except GameFetchError:
        return None


def _versioned(base: URL, version: int | None) -> URL:
    """``<game>/v<N>/``, or the game's URL itself when the version is unknown."""
    return base if version is None else base.join(URL(f"v{version}/"))


async def _fetch(session: aiohttp.ClientSession, url: str, max_bytes: int) -> FetchedGame:
    base, key, pinned = game_url(url)
    metadata = await _get_json(session, _versioned(base, pinned), max_bytes)
    if not isinstance(metadata, dict):
        raise GameFetchError(f"{url}: METADATA is not a JSON object but {type(metadata).__name__}")
    version = metadata.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        version = pinned
    here = _versioned(base, version)
    rulesheet = metadata.get("rulesheet")
    if not isinstance(rulesheet, str) or not rulesheet.strip():
        raise GameFetchError(f"{here}: METADATA names no rulesheet")
    rulesheet_url = here.join(URL(rulesheet.strip()))
    rules_text = _text(await _get(session, rulesheet_url, max_bytes))
    if not rules_text.strip():
        raise GameFetchError(f"{rulesheet_url}: the rulesheet is empty")
    role_names = metadata.get("roleNames")
    if isinstance(role_names, list) and all(isinstance(role, str) for role in role_names):
        roles = list(role_names)
    else:
        roles = roles_in_text(rules_text)
    title = metadata.get("gameName")
    return FetchedGame(
        name=key,
        title=title if isinstance(title, str) else None,
        version=version,
        rules_text=rules_text,
        roles=roles,
        description=await _description(session, here, metadata.get("description"), max_bytes),
        source_url=str(here),
        rulesheet_url=str(rulesheet_url),
        metadata=metadata,
    )


async def fetch_game(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - one deadline for every request
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> FetchedGame:
    """Fetch the game at ``url`` (``.../games/<name>/`` or ``.../games/<name>/v<N>/``).

    ``timeout`` bounds the whole fetch and ``max_bytes`` every body. Raises
    :class:`GameFetchError` for an unreachable host, an HTTP error, bad JSON, a
    METADATA without a rulesheet, or a body over the limit.
    """
    try:
        async with asyncio.timeout(timeout), aiohttp.ClientSession() as session:
            return await _fetch(session, url, max_bytes)
    except TimeoutError as error:
        raise GameFetchError(f"{url}: no complete answer within {timeout:g} s") from error


async def list_repository_games(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - one deadline for every request
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[str]:
    """The game keys a repository lists at ``<url>/games/``."""
    text = url.strip().rstrip("/")
    if "://" not in text:
        text = "http://" + text
    try:
        listing = URL(text + "/games/")
    except ValueError as error:
        raise GameFetchError(f"not a URL: {url!r} ({error})") from error
    try:
        async with asyncio.timeout(timeout), aiohttp.ClientSession() as session:
            names = await _get_json(session, listing, max_bytes)
    except TimeoutError as error:
        raise GameFetchError(f"{listing}: no complete answer within {timeout:g} s") from error
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise GameFetchError(f"{listing}: expected a JSON list of game names")
    return names
