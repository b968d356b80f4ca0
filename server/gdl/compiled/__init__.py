"""The compiled rules engine: ground a game once with clingo, then run generated Python.

Entry point: :func:`compile_engine` (or :meth:`CompiledEngine.from_rules`), which
raises :class:`CompileError` (subclasses :class:`GroundingTooLarge`,
:class:`GroundingTooSlow`, :class:`GroundingOverBudget`, :class:`GroundingPastStretch` and
:class:`NetworkOverBudget`)
with a ``reason`` when the game cannot be compiled within the configured limits, so
that the caller can fall back to the interpreter.
"""

from __future__ import annotations

from .. import native

native.load("compiled")  # before the modules it may import from their sources

from ..parser import Rule  # noqa: E402
from .engine import DEFAULT_MAX_GROUND_RULES, DEFAULT_TIME_LIMIT, CompiledEngine, Playout  # noqa: E402
from .errors import (  # noqa: E402
    CompileError,
    GroundingOverBudget,
    GroundingPastStretch,
    GroundingTooLarge,
    GroundingTooSlow,
    NetworkOverBudget,
    OutsideGroundingError,
)


def compile_engine(
    rules: list[Rule],
    *,
    max_ground_rules: int = DEFAULT_MAX_GROUND_RULES,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> CompiledEngine:
    """Shorthand for :meth:`CompiledEngine.from_rules`."""
    return CompiledEngine.from_rules(
        rules, max_ground_rules=max_ground_rules, time_limit=time_limit
    )


__all__ = [
    "DEFAULT_MAX_GROUND_RULES",
    "DEFAULT_TIME_LIMIT",
    "CompileError",
    "CompiledEngine",
    "GroundingOverBudget",
    "GroundingPastStretch",
    "GroundingTooLarge",
    "GroundingTooSlow",
    "NetworkOverBudget",
    "OutsideGroundingError",
    "Playout",
    "compile_engine",
]
