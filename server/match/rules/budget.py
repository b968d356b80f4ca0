"""What the rules of one match may spend."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_STEP_CPU = 5.0
"""Seconds of CPU time for one step: the next state, its legal moves or goals."""
DEFAULT_LOAD_CPU = 30.0
"""Seconds of CPU time to load a game (parse, validate, compile: at most 10 s, what a
start clock of a minute or more buys, and the interpreter when that fails), and again
for its step-limit playouts."""
COMPILE_SHARE_OF_LOAD = 1 / 3
"""The share of the load budget a compile attempt may take (10 s of the default 30 s),
so that the interpreter still loads within the budget when the attempt fails, even
after an attempt that overran its limit (the longest on the corpus: about 16 s of CPU
time for a 10 s limit)."""
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
    """CPU seconds per step and for loading, the worker's memory in megabytes, and the
    limits of engine ``auto``'s compile attempt (``None``: the engine's defaults)."""

    step_cpu: float = DEFAULT_STEP_CPU
    load_cpu: float = DEFAULT_LOAD_CPU
    memory_mb: int = DEFAULT_MEMORY_MB
    compile_time_limit: float | None = None
    max_ground_rules: int | None = None

    @classmethod
    def for_start_clock(
        cls,
        start_clock: float,
        *,
        step_cpu: float = DEFAULT_STEP_CPU,
        load_cpu: float = DEFAULT_LOAD_CPU,
        memory_mb: int = DEFAULT_MEMORY_MB,
    ) -> RulesBudget:
        """The budget of a match whose players get ``start_clock`` seconds to load the
        game: its rules compile within what that start clock buys the players
        (:class:`~server.gdl.compile_budget.CompileBudget`), cut down to
        :data:`COMPILE_SHARE_OF_LOAD` of ``load_cpu``."""
        from server.gdl.compile_budget import CompileBudget

        compile_budget = CompileBudget.for_start_clock(start_clock).within(
            load_cpu * COMPILE_SHARE_OF_LOAD
        )
        return cls(
            step_cpu,
            load_cpu,
            memory_mb,
            compile_budget.time_limit,
            compile_budget.max_ground_rules,
        )

    def wall_backstop(self, cpu: float) -> float:
        """Seconds to wait for an answer before the worker counts as stuck.

        The CPU budget is enforced inside the worker; this wall-clock bound only
        catches a worker that is stopped or starved, so it is generous.
        """
        return 10 * cpu + 10
