"""The size limits of generated code, shared by the stages that predict and check it.

The plan's count (:func:`server.gdl.compiled.codegen.next_body_chars`) and the earlier
prediction from the ground program (:mod:`server.gdl.compiled.ground_size`) refuse a
program with the same error; the plan and that prediction agree on which gates over
moves are inlined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import GroundingTooLarge

MAX_SOURCE = 8_000_000
"""Larger generated modules are refused at the default time limit (compiling them would
take too long); see :func:`caps_for` for longer ones."""

MAX_NEXT_BODY_CHARS = 700_000
"""A plan whose next-state rule bodies left to code (:func:`next_body_chars`) take more
characters than this, counted as written (wide numbers as placeholders), is refused
before any code is generated: ``next`` and ``playout`` both write these bodies. A
prediction, not a bound. Fluents copied (or moved by the same number of bits) under the
same other literals count once, as they are written as one mask operation: kalaha5x2x3
then counts 0.64 million (1.2 million before) and compiles in 1.35 s, kalaha6x2x4 1.8
million, alexChess 0.15 million (0.74 before), mineClearingSmall 4,000 (1.7 million)."""

BASE_TIME_LIMIT = 2.0
"""The compiled engine's default compile time limit (seconds, CPU time): the caps above
are set for it, and the cost estimate's margin (:mod:`.estimate`) is set at it."""


@dataclass(frozen=True)
class CodeCaps:
    """The size caps of generated code for one compile attempt."""

    max_source: int = MAX_SOURCE
    max_next_body_chars: int = MAX_NEXT_BODY_CHARS


def caps_for(time_limit: float) -> CodeCaps:
    """The caps a compile ``time_limit`` allows: those of :data:`BASE_TIME_LIMIT`, grown
    in proportion to a longer limit (the time to generate and compile code grows with
    its size). At a 10 s limit (a 60 s start clock) kalaha5x2x3, kalaha6x2x4, pacman3p
    and four_way_battle compile in 1.8 to 6.2 s and run 2 to 4 times faster than on the
    interpreter; a game past its limit all the same is stopped by the deadline."""
    scale = max(1.0, time_limit / BASE_TIME_LIMIT)
    return CodeCaps(int(MAX_SOURCE * scale), int(MAX_NEXT_BODY_CHARS * scale))


MAX_MOVE_GATE_BODIES = 64
"""Gates over moves with more bodies than this stay gates instead of being inlined."""

DIGITS_PER_BIT = math.log10(2)
"""Decimal digits per bit of a number, to count a literal's characters unwritten."""

WIDE_NUMBER_BITS = 64
"""Numbers wider than this are written as placeholders in the generated code
(:class:`server.gdl.compiled.codegen.Numbers`)."""

PLACEHOLDER_CHARS = 6
"""The characters of a placeholder as written (``'#1234'``)."""


def number_chars(bits: float) -> float:
    """The characters of a number of ``bits`` bits as the generated code writes it."""
    return bits * DIGITS_PER_BIT if bits <= WIDE_NUMBER_BITS else PLACEHOLDER_CHARS


def predicted_too_large(max_source: int) -> GroundingTooLarge:
    """The refusal of a program whose next-state code is predicted past the cap."""
    return GroundingTooLarge(
        f"the generated code would exceed {max_source} characters"
        " (predicted from the next-state rule bodies)"
    )


__all__ = [
    "BASE_TIME_LIMIT",
    "CodeCaps",
    "DIGITS_PER_BIT",
    "MAX_MOVE_GATE_BODIES",
    "MAX_NEXT_BODY_CHARS",
    "MAX_SOURCE",
    "PLACEHOLDER_CHARS",
    "WIDE_NUMBER_BITS",
    "caps_for",
    "number_chars",
    "predicted_too_large",
]
