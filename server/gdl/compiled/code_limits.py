"""The size limits of generated code, shared by the stages that predict and check it.

The plan's count (:func:`server.gdl.compiled.codegen.next_body_chars`) and the earlier
prediction from the ground program (:mod:`server.gdl.compiled.ground_size`) refuse a
program with the same error; the plan and that prediction agree on which gates over
moves are inlined.
"""

from __future__ import annotations

import math

from .errors import GroundingTooLarge

MAX_SOURCE = 8_000_000
"""Larger generated modules are refused (compiling them would take too long)."""

MAX_NEXT_BODY_CHARS = 6_000_000
"""A plan whose next-state rule bodies left to code (:func:`next_body_chars`) take more
characters than this is refused before any code is generated, as a module over
:data:`MAX_SOURCE`: ``next`` and ``playout`` both write these bodies, and on the corpus
a module is 0.99 to 1.44 times the count when it passes a million. A prediction, not a
bound: every corpus game that compiles counts at most 4.7 million (snakeParallel, whose
module takes 6.6 million characters); the games it refuses count 7.1 million
(mummymaze2p) to 305 million, and generating their code took 0.6 s or more."""

MAX_MOVE_GATE_BODIES = 64
"""Gates over moves with more bodies than this stay gates instead of being inlined."""

DIGITS_PER_BIT = math.log10(2)
"""Decimal digits per bit of a number, to count a literal's characters unwritten."""


def predicted_too_large() -> GroundingTooLarge:
    """The refusal of a program whose next-state code is predicted past the cap."""
    return GroundingTooLarge(
        f"the generated code would exceed {MAX_SOURCE} characters"
        " (predicted from the next-state rule bodies)"
    )


__all__ = [
    "DIGITS_PER_BIT",
    "MAX_MOVE_GATE_BODIES",
    "MAX_NEXT_BODY_CHARS",
    "MAX_SOURCE",
    "predicted_too_large",
]
