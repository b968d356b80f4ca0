"""What the rules of one match may spend."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_STEP_CPU = 5.0
"""Seconds of CPU time for one step: the next state, its legal moves or goals."""
DEFAULT_LOAD_CPU = 20.0
"""Seconds of CPU time to load a game: parse, validate, compile, step-limit playouts."""
DEFAULT_MEMORY_MB = 2048
"""Megabytes of address space of a worker process."""
MAX_LEGAL_MOVES = 100_000
"""More legal moves than this for one role in one state is past the budget: no
player could be sent or choose among them within a play clock."""
MAX_STATE_TEXT = 1_000_000
"""A state printed longer than this many characters is past the budget (every
state goes into the match log)."""


@dataclass(frozen=True, slots=True)
class RulesBudget:
    """CPU seconds per step and for loading, and the worker's memory in megabytes."""

    step_cpu: float = DEFAULT_STEP_CPU
    load_cpu: float = DEFAULT_LOAD_CPU
    memory_mb: int = DEFAULT_MEMORY_MB

    def wall_backstop(self, cpu: float) -> float:
        """Seconds to wait for an answer before the worker counts as stuck.

        The CPU budget is enforced inside the worker; this wall-clock bound only
        catches a worker that is stopped or starved, so it is generous.
        """
        return 10 * cpu + 10
