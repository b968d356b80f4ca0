"""Outbound bots: registering one (a player with no URL) and the token it connects with.

>>> player, token = await add_outbound_player(store, "mybot", owner="ann")  # doctest: +SKIP
>>> (await player_for_bot_token(store, token)).name                         # doctest: +SKIP
'mybot'

Only the token's SHA-256 is kept, as for owners' tokens.
"""

from __future__ import annotations

import secrets

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from .errors import Conflict, NotFound
from .records import PlayerRecord
from .store import Store, hash_token, now_ms
from .tables import bot_tokens, players

TOKEN_PREFIX = "bot_"
"""Bot tokens start with this, so a token never reads as a command-line option (``-x``)."""

OUTBOUND = "outbound"
"""The ``connection`` of a player that connects to the server by WebSocket."""


async def add_outbound_player(
    store: Store,
    name: str,
    *,
    owner: str | None = None,
    contact: str = "",
    notes: str = "",
    max_matches: int = 1,
) -> tuple[PlayerRecord, str]:
    """Register an outbound bot; its record and its new token (shown once)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    await store.add_player(
        name, "", owner=owner, contact=contact, notes=notes, max_matches=max_matches
    )
    try:
        async with store._writing() as connection:
            await connection.execute(
                update(players).where(players.c.name == name).values(connection=OUTBOUND)
            )
            await connection.execute(
                insert(bot_tokens).values(
                    player=name, token_hash=hash_token(token), created_at=now_ms()
                )
            )
    except IntegrityError as error:  # a token collision: practically never
        await store.delete_player(name)
        raise Conflict(f"could not register {name!r}, try again") from error
    return await store.get_player(name), token


async def player_for_bot_token(store: Store, token: str) -> PlayerRecord | None:
    """The outbound player this token belongs to, or ``None``."""
    async with store._reading() as connection:
        row = (
            await connection.execute(
                select(players)
                .join(bot_tokens, bot_tokens.c.player == players.c.name)
                .where(bot_tokens.c.token_hash == hash_token(token))
            )
        ).first()
    return None if row is None else PlayerRecord.model_validate(dict(row._mapping))


async def new_bot_token(store: Store, name: str) -> str:
    """Give the outbound player ``name`` a new token (shown once); the old one stops working."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    async with store._writing() as connection:
        connection_kind = await connection.scalar(
            select(players.c.connection).where(players.c.name == name)
        )
        if connection_kind is None:
            raise NotFound(f"no player named {name!r}")
        if connection_kind != OUTBOUND:
            raise Conflict(f"the player {name} is not an outbound bot: it has no token")
        await connection.execute(delete(bot_tokens).where(bot_tokens.c.player == name))
        await connection.execute(
            insert(bot_tokens).values(
                player=name, token_hash=hash_token(token), created_at=now_ms()
            )
        )
    return token


async def switch_connection(
    store: Store, name: str, *, url: str | None
) -> tuple[PlayerRecord, str | None]:
    """Make ``name`` an HTTP player at ``url``, or an outbound bot when ``url`` is ``None``.

    Becoming outbound issues a token (returned, shown once) and clears the URL; becoming
    an HTTP player drops the bot's token.  Answers the player and the new token, if any.
    """
    async with store._writing() as connection:
        if url is None:
            await connection.execute(
                update(players).where(players.c.name == name).values(connection=OUTBOUND, url="")
            )
        else:
            await connection.execute(delete(bot_tokens).where(bot_tokens.c.player == name))
            await connection.execute(
                update(players).where(players.c.name == name).values(connection="http", url=url)
            )
    token = await new_bot_token(store, name) if url is None else None
    return await store.get_player(name), token
