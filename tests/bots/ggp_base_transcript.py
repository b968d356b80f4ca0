"""Reading the captured probes of a GGP-Base player (``player-probes-transcript.txt``).

Each probe is a title, the exact request bytes and the exact response bytes. In the
transcript a header line ends in a literal ``\\r\\n`` marker, bodies are raw and have
no newline of their own; the declared byte counts let a probe whose body the
transcript elided (long STARTs) be told apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SEPARATOR = "=" * 100 + "\n"


@dataclass(frozen=True)
class Probe:
    title: str
    request: bytes
    request_complete: bool
    """False when the transcript elided part of the request (its bytes are not all there)."""
    response: bytes
    closed: bool
    """True when the player closed the connection after answering."""
    half_close: bool
    """True when the client half-closed its side after the request."""


def _bytes(lines: list[str]) -> bytes:
    text = "".join(line[:-4] + "\r\n" if line.endswith("\\r\\n") else line + "\n" for line in lines)
    if text.endswith("\n") and not text.endswith("\r\n"):
        text = text[:-1]  # the transcript's own line end after a raw body
    return text.encode("utf-8")


def read_probes(path: Path) -> list[Probe]:
    probes = []
    for entry in path.read_text(encoding="utf-8").split(SEPARATOR):
        if not entry.startswith("### "):
            continue
        lines = entry.split("\n")
        sent = next(index for index, line in enumerate(lines) if line.startswith(">>> "))
        got = next(index for index, line in enumerate(lines) if line.startswith("<<< "))
        declared = int(re.findall(r"\((\d+) bytes\)", lines[sent])[0])
        request = _bytes(lines[sent + 1 : got])
        answer = lines[got + 1 :]
        while answer and answer[-1] == "":
            answer.pop()
        probes.append(
            Probe(
                title=lines[0][4:],
                request=request,
                request_complete=len(request) == declared,
                response=b"" if answer == ["(no bytes)"] else _bytes(answer),
                closed="closed by player" in lines[got],
                half_close="half-closed" in lines[sent],
            )
        )
    return probes
