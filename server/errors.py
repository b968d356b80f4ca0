"""The root of the service's errors: each kind says what went wrong, not how it is shown.

The web maps the kinds to HTTP statuses (400, 401, 403, 404, 409, 413) and the CLI to
one line on stderr; a user never sees a traceback.
"""

from __future__ import annotations


class GgpError(Exception):
    """Anything the service refuses or cannot do, with a message for the user.

    ``field`` names the input at fault, when one is.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(GgpError):
    """The input is malformed or breaks a rule (400)."""


class Unauthenticated(GgpError):
    """No token, or a token nobody holds (401)."""


class Forbidden(GgpError):
    """The token is valid but may not do this (403)."""


class Missing(GgpError):
    """The thing asked for does not exist (404)."""


class Clash(GgpError):
    """The request contradicts what is stored (409)."""


class TooLarge(GgpError):
    """The request body is over the size cap (413)."""
