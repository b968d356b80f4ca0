"""Bearer tokens: the administrator's, and one per owner that manages only its players."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from server.errors import Forbidden, Unauthenticated
from server.store import Store, hash_token

ADMIN_TOKEN_HASH_FILE = "admin_token.sha256"


@dataclass(frozen=True)
class Actor:
    """Who is writing: the administrator, or an owner."""

    admin: bool
    owner: str | None = None

    @property
    def name(self) -> str:
        return "admin" if self.admin else f"owner:{self.owner}"

    def may_manage(self, owner: str | None) -> bool:
        """True for the administrator, and for the owner of the thing."""
        return self.admin or (owner is not None and owner == self.owner)


def admin_token_hash(data_dir: Path, given: str | None) -> tuple[str, str | None]:
    """The admin token's hash, and the token itself when it was generated just now.

    A given token wins; otherwise the hash kept in the data folder; otherwise a new
    token is generated, its hash kept, and the token returned to be printed once.
    """
    if given:
        return hash_token(given), None
    kept = data_dir / ADMIN_TOKEN_HASH_FILE
    if kept.is_file():
        return kept.read_text(encoding="ascii").strip(), None
    token = secrets.token_urlsafe(24)
    data_dir.mkdir(parents=True, exist_ok=True)
    kept.write_text(hash_token(token) + "\n", encoding="ascii")
    kept.chmod(0o600)
    return hash_token(token), token


def bearer_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def authenticate(request: web.Request, store: Store, admin_hash: str) -> Actor:
    """The actor behind the request's bearer token; 401 without a valid one."""
    token = bearer_token(request)
    if token is None:
        raise Unauthenticated("writing needs a bearer token (Authorization: Bearer TOKEN)")
    if hmac.compare_digest(hash_token(token), admin_hash):
        return Actor(admin=True)
    owner = await store.owner_for_token(token)
    if owner is None:
        raise Unauthenticated("the bearer token is not valid")
    return Actor(admin=False, owner=owner)


def require_admin(actor: Actor) -> None:
    if not actor.admin:
        raise Forbidden("only the administrator may do this")
