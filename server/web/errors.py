"""One JSON error shape and the middleware that turns every failure into it.

``{"error": {"status": 400, "message": "...", "field": "players.1"}}``; a failure
nobody foresaw is a 500 with a plain message (the traceback goes to the log only).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from pydantic import BaseModel, ValidationError

from server.errors import (
    Clash,
    Forbidden,
    GgpError,
    InvalidInput,
    Missing,
    TooLarge,
    Unauthenticated,
)

log = logging.getLogger(__name__)

MAX_BODY = web.AppKey("max_body", int)
"""The application's body size cap, for the 413 message."""

STATUSES: tuple[tuple[type[GgpError], int], ...] = (
    (InvalidInput, 400),
    (Unauthenticated, 401),
    (Forbidden, 403),
    (Missing, 404),
    (Clash, 409),
    (TooLarge, 413),
)


class ErrorBody(BaseModel):
    status: int
    message: str
    field: str | None = None
    details: list[dict[str, object]] | None = None


class ErrorAnswer(BaseModel):
    """Every error the API gives."""

    error: ErrorBody


def error_response(
    status: int,
    message: str,
    field: str | None = None,
    details: list[dict[str, object]] | None = None,
) -> web.Response:
    body = ErrorAnswer(
        error=ErrorBody(status=status, message=message, field=field, details=details)
    )
    response = web.json_response(body.model_dump(mode="json", exclude_none=True), status=status)
    if status == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


def status_of(error: GgpError) -> int:
    for kind, status in STATUSES:
        if isinstance(error, kind):
            return status
    return 400


def validation_response(error: ValidationError) -> web.Response:
    """A pydantic error as a 400 naming the first field at fault (``body`` for the whole)."""
    problems = error.errors(include_url=False, include_context=False, include_input=False)
    first = problems[0]
    field = ".".join(str(part) for part in first["loc"]) or "body"
    details: list[dict[str, object]] = [
        {"field": ".".join(str(part) for part in p["loc"]) or "body", "message": p["msg"]}
        for p in problems
    ]
    return error_response(400, f"{field}: {first['msg']}", field, details)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every error as the one JSON shape; never a traceback to the user."""
    try:
        return await handler(request)
    except GgpError as error:
        details = getattr(error, "details", None)
        return error_response(status_of(error), error.message, error.field, details)
    except ValidationError as error:
        return validation_response(error)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        message = error.reason
        if isinstance(error, web.HTTPRequestEntityTooLarge):
            message = f"the request body is over {request.app[MAX_BODY]} bytes"
        return error_response(error.status, message)
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return error_response(500, "the server failed; the error is in its log")
