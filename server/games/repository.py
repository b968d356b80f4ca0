"""Fetching a game from a ggp.org-style repository: ``<url>/METADATA`` names the rulesheet.

A minimal version: ``METADATA`` (JSON) gives ``rulesheet``, ``gameName``, ``roleNames``,
``description`` and ``version``; the rules are read from the rulesheet next to it.
"""

from __future__ import annotations

import json
from urllib.parse import urljoin

import aiohttp
from pydantic import BaseModel


class GameFetchError(Exception):
    """The URL does not lead to a game (unreachable, too large, not a repository)."""


class FetchedGame(BaseModel):
    name: str
    title: str
    version: int | None
    rules_text: str
    roles: list[str]
    description: str
    source_url: str


async def _get(session: aiohttp.ClientSession, url: str, max_bytes: int) -> bytes:
    try:
        async with session.get(url) as response:
            if response.status != 200:
                raise GameFetchError(f"{url} answered HTTP {response.status}")
            data = await response.content.read(max_bytes + 1)
    except (aiohttp.ClientError, TimeoutError) as error:
        raise GameFetchError(f"cannot fetch {url}: {error or type(error).__name__}") from error
    if len(data) > max_bytes:
        raise GameFetchError(f"{url} is over {max_bytes} bytes")
    return data


async def fetch_game(url: str, *, timeout: float = 10.0, max_bytes: int = 4_000_000) -> FetchedGame:
    """The game at a repository URL (its folder, with or without the trailing slash)."""
    if not url.startswith(("http://", "https://")):
        raise GameFetchError(f"not an http(s) URL: {url!r}")
    base = url if url.endswith("/") else url + "/"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        try:
            metadata = json.loads(await _get(session, urljoin(base, "METADATA"), max_bytes))
        except ValueError as error:
            raise GameFetchError(f"{base}METADATA is not JSON: {error}") from error
        if not isinstance(metadata, dict) or not isinstance(metadata.get("rulesheet"), str):
            raise GameFetchError(f"{base}METADATA names no rulesheet")
        rules = await _get(session, urljoin(base, metadata["rulesheet"]), max_bytes)
    name = str(metadata.get("gameName") or base.rstrip("/").rsplit("/", 1)[-1])
    version = metadata.get("version")
    return FetchedGame(
        name=name,
        title=str(metadata.get("gameName") or name),
        version=version if isinstance(version, int) else None,
        rules_text=rules.decode("utf-8", errors="replace"),
        roles=[str(role) for role in metadata.get("roleNames") or []],
        description=str(metadata.get("description") or ""),
        source_url=base,
    )
