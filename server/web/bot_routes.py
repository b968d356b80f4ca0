"""Routes of outbound bots: the WebSocket they connect to (see :mod:`server.bots.hub`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from server.protocol.envelope import CONNECT_PATH

from .routes import Route

if TYPE_CHECKING:
    from .routes import Api


async def connect_bot(api: Api, request: web.Request) -> web.StreamResponse:
    """``GET /api/bots/connect``: an outbound bot's WebSocket, authenticated by its token."""
    return await api.service.bots.handle(request)


BOT_ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        CONNECT_PATH,
        connect_bot,
        'An outbound bot\'s WebSocket: Bearer token (or a first frame {"token"}), then '
        '{"id", "message"} frames answered by {"id", "reply"}',
    ),
)
