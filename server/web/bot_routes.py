"""Routes of remote bots: the WebSocket outbound bots connect to, player checks, bot tokens.

The player routes of :mod:`server.web.routes` call the helpers here for what concerns
bots: a player's latest check in its answer, a check when it registers or its URL
changes, and switching a player between ``http`` and ``outbound``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from server.bots.hub import BAD_TOKEN
from server.errors import Forbidden, InvalidInput
from server.protocol.envelope import CONNECT_PATH
from server.store import PlayerRecord
from server.store.bot_tokens import OUTBOUND, new_bot_token, switch_connection
from server.store.player_checks import latest_checks, list_checks

from .bot_models import CheckAnswer, CheckSummary, TokenAnswer
from .routes import Route, answer

if TYPE_CHECKING:
    from .routes import Api


async def connect_bot(api: Api, request: web.Request) -> web.StreamResponse:
    """``GET /api/bots/connect``: an outbound bot's WebSocket, authenticated by its token."""
    return await api.service.bots.handle(request)


# -- helpers of the player routes ------------------------------------------------------


async def check_fields(api: Api, names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """``check`` and ``check_pending`` of the player answers, by player name."""
    single = names is not None and len(names) == 1
    latest = await latest_checks(api.store, players=names if single else None)
    wanted = names if names is not None else list(latest)
    return {
        name: {
            "check": CheckSummary.of(latest[name]) if name in latest else None,
            "check_pending": api.service.checks.pending(name),
        }
        for name in wanted
    }


async def check_new_player(api: Api, player: PlayerRecord, trigger: str) -> None:
    """Queue a check of an HTTP player that registered or moved (unless checks are off)."""
    if api.service.settings.check_players and player.connection != OUTBOUND:
        await api.service.checks.request(player.name, trigger)


async def change_connection(
    api: Api, player: PlayerRecord, changes: dict[str, Any]
) -> tuple[PlayerRecord, str | None, bool]:
    """Apply the ``connection`` and ``url`` of a PATCH; what is left of ``changes`` is for
    the store.  Answers the player, the bot's new token (when it became outbound) and
    whether its address changed (so it is checked again)."""
    wanted = changes.pop("connection", None) or player.connection
    url = changes.get("url")
    if wanted == OUTBOUND:
        if url is not None:
            raise InvalidInput("an outbound bot has no URL", field="url")
        if player.connection == OUTBOUND:
            return player, None, False
        player, token = await switch_connection(api.store, player.name, url=None)
        return player, token, False
    if player.connection == OUTBOUND:
        if url is None:
            raise InvalidInput("give the URL the player listens on", field="url")
        del changes["url"]
        player, _ = await switch_connection(api.store, player.name, url=url)
        await api.service.bots.disconnect(player.name, "the player listens at a URL now")
        return player, None, True
    return player, None, url is not None and url != player.url


# -- routes ------------------------------------------------------------------------------


async def list_player_checks(api: Api, request: web.Request) -> web.Response:
    """``GET /api/players/{name}/checks``: the player's checks, latest first."""
    name = request.match_info["name"]
    await api.store.get_player(name)  # 404 for an unknown player
    rows = await list_checks(api.store, name)
    return answer([CheckAnswer(**row.model_dump()) for row in rows])


async def request_player_check(api: Api, request: web.Request) -> web.Response:
    """``POST /api/players/{name}/checks``: check the player again (owner or admin)."""
    actor = await api.actor(request)
    name = request.match_info["name"]
    player = await api.store.get_player(name)
    if not actor.may_manage(player.owner):
        raise Forbidden(f"the player {name} belongs to another owner")
    row = await api.service.checks.request(name, f"asked by {actor.name}")
    await api.store.add_audit(actor.name, "player.check", name, {"check": row.id})
    return answer(CheckAnswer(**row.model_dump()), status=202)


async def rotate_bot_token(api: Api, request: web.Request) -> web.Response:
    """``POST /api/players/{name}/token``: a new token for an outbound bot; the old one is
    refused from now on and its open socket closed."""
    actor = await api.actor(request)
    name = request.match_info["name"]
    player = await api.store.get_player(name)
    if not actor.may_manage(player.owner):
        raise Forbidden(f"the player {name} belongs to another owner")
    token = await new_bot_token(api.store, name)
    await api.service.bots.disconnect(name, "the token was replaced", code=BAD_TOKEN)
    await api.store.add_audit(actor.name, "player.token", name)
    return answer(TokenAnswer(name=name, token=token))


BOT_ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        CONNECT_PATH,
        connect_bot,
        'An outbound bot\'s WebSocket: Bearer token (or a first frame {"token"}), then '
        '{"id", "message"} frames answered by {"id", "reply"}',
    ),
    Route(
        "GET",
        "/api/players/{name}/checks",
        list_player_checks,
        "The player's checks, latest first, each with its report item by item",
        answer=CheckAnswer,
        list_answer=True,
    ),
    Route(
        "POST",
        "/api/players/{name}/checks",
        request_player_check,
        "Check the player again, in the background (owner or admin)",
        answer=CheckAnswer,
        write=True,
        status=202,
    ),
    Route(
        "POST",
        "/api/players/{name}/token",
        rotate_bot_token,
        "A new token for an outbound bot; the old one stops working (owner or admin)",
        answer=TokenAnswer,
        write=True,
    ),
)
