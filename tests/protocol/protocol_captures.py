"""Reading the captured GGP-Base exchanges in ``../shared/protocol``.

A missing file skips the test, or fails it under ``GGP_REQUIRE_SHARED=1``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared_material import shared_path

_EXCHANGE = re.compile(
    r"^######## (?P<who>\S+) exchange.*?\n"
    r">>> REQUEST[^\n]*\n(?P<request>.*?)\n\[end of body[^\n]*\]\n"
    r"<<< RESPONSE[^\n]*\n(?P<response>.*?)\n\[end of body[^\n]*\]\n",
    re.DOTALL | re.MULTILINE,
)


@dataclass(frozen=True)
class Exchange:
    """One captured HTTP exchange: the request and the response, split into head and body."""

    who: str
    request_head: bytes
    request_body: str
    response_head: bytes
    response_body: str

    @property
    def request(self) -> bytes:
        return self.request_head + self.request_body.encode("utf-8")

    @property
    def response(self) -> bytes:
        return self.response_head + self.response_body.encode("utf-8")


def _split(captured: str) -> tuple[bytes, str]:
    """A captured message: header lines end with a literal ``\\r\\n`` marker, the body is raw."""
    head, _, body = captured.partition("\\r\\n\n\\r\\n\n")
    return (head.replace("\\r\\n\n", "\r\n") + "\r\n\r\n").encode("utf-8"), body


def load_exchanges(name: str) -> list[Exchange]:
    """Every exchange of a capture file of ``../shared/protocol``."""
    path = shared_path("protocol", name)
    exchanges = []
    for match in _EXCHANGE.finditer(path.read_text(encoding="utf-8")):
        request_head, request_body = _split(match["request"])
        response_head, response_body = _split(match["response"])
        exchanges.append(
            Exchange(match["who"], request_head, request_body, response_head, response_body)
        )
    assert exchanges, f"no exchanges found in {name}"
    return exchanges


def shared_game_text(name: str) -> str:
    """The text of a game of the shared corpus."""
    return shared_path("conformance", "games", f"{name}.kif").read_text(encoding="utf-8")
