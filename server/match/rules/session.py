"""The rules of one match, answered by a leased worker: one round trip per step."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from server.gdl import Game
from server.gdl.terms import RawTerm

from .budget import RulesBudget
from .pool import GameKey, Lease, RulesPool, default_pool

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Position:
    """A state held by the worker, with everything a match needs to know about it."""

    handle: int
    text: str
    """The state as GGP-Base prints it."""
    terminal: bool
    legal: list[list[RawTerm]] | None
    """Per role in role order, the legal moves in the engine's fixed order (not terminal)."""
    goals: dict[str, int] | None
    """The uniquely defined goals (terminal only)."""
    goal_error: str | None
    """Why a role has no unique goal, when one has none (terminal only)."""

    @classmethod
    def of(cls, answer: tuple[object, ...]) -> Position:
        return cls(*answer)  # type: ignore[arg-type]


def engine_for(game: Game, budget: RulesBudget | None = None) -> str:
    """The engine a worker loading with ``budget`` should use: the interpreter when
    ``game`` settled on it and the worker could not compile it either (its compile
    budget is no larger than the one ``game`` failed with), else ``auto``."""
    if game.engine.name != "interpreter":
        return "auto"
    tried = game.compile_budget
    if tried is None or budget is None:  # the interpreter was asked for
        return "interpreter"
    more_time = (budget.compile_time_limit or 0.0) > tried.time_limit
    more_rules = (budget.max_ground_rules or 0) > tried.max_ground_rules
    return "auto" if more_time or more_rules else "interpreter"


class RulesSession:
    """One match's lease of a worker with its game loaded."""

    def __init__(self, lease: Lease, pool: RulesPool) -> None:
        self._lease = lease
        self._pool = pool
        self.roles = lease.roles
        self.step_limit = lease.step_limit
        self.engine = lease.engine
        """The engine the worker answers with: ``compiled`` or ``interpreter``."""
        self._budget = lease.key.budget
        self._closed = False

    @classmethod
    async def open(
        cls,
        rules_text: str,
        engine: str,
        budget: RulesBudget,
        *,
        want_step_limit: bool = False,
        pool: RulesPool | None = None,
    ) -> RulesSession:
        """Lease a worker with the game loaded (within ``budget.load_cpu``)."""
        pool = pool or default_pool()
        lease = await pool.acquire(GameKey(rules_text, engine, budget), want_step_limit)
        return cls(lease, pool)

    async def _call(
        self, request: tuple[object, ...], what: str, cpu: float | None = None
    ) -> object:
        """The worker's answer; ``cpu`` is the budget the worker applies to the request
        (by default the step budget), from which the wall-clock backstop follows."""
        budget = self._budget.step_cpu if cpu is None else cpu
        return await self._lease.worker.call(request, budget, what)

    async def initial(self) -> Position:
        """The initial state."""
        answer = await self._call(("initial",), "for the initial state")
        return Position.of(answer)  # type: ignore[arg-type]

    async def step(self, position: Position, joint: Sequence[RawTerm]) -> Position:
        """The state after ``joint`` (one move per role, already legal); ``position``
        is used up."""
        answer = await self._call(("step", position.handle, list(joint)), "in one step")
        return Position.of(answer)  # type: ignore[arg-type]

    async def at(self, state_text: str) -> Position:
        """A position for a state printed as logs print it."""
        answer = await self._call(("state", state_text), "for a recorded state")
        return Position.of(answer)  # type: ignore[arg-type]

    async def goals_at(self, state_text: str) -> tuple[dict[str, int], str | None]:
        """The goals in a state printed as logs print it (see :meth:`goals`)."""
        # Reading a recorded state runs under the load budget in the worker (a state
        # near the size cap takes seconds to parse); the backstop must wait as long.
        answer = await self._call(("goals_at", state_text), "for the goals", self._budget.load_cpu)
        return answer  # type: ignore[return-value]

    async def goals(self, position: Position) -> tuple[dict[str, int], str | None]:
        """The uniquely defined goals, and why the others are not, if any is not."""
        if position.goals is not None:
            return position.goals, position.goal_error
        answer = await self._call(("goals", position.handle), "for the goals")
        return answer  # type: ignore[return-value]

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self._lease.worker.pid

    async def close(self) -> None:
        """End the lease: the worker goes back to the pool, or is stopped if out of order."""
        if not self._closed:
            self._closed = True
            await self._pool.release(self._lease)


async def goals_in_fresh_worker(
    rules_text: str, engine: str, budget: RulesBudget, state_text: str
) -> dict[str, int] | None:
    """The goals defined in a recorded state, asked of another worker (within the
    same budget); ``None`` when that worker cannot tell either."""
    from server.gdl import GdlError

    from .errors import RulesFailure

    try:
        session = await RulesSession.open(rules_text, engine, budget)
    except (RulesFailure, GdlError):
        return None
    try:
        defined, _ = await session.goals_at(state_text)
    except (RulesFailure, GdlError) as error:
        log.info("no goals for the last state: %s", error)
        return None
    finally:
        await session.close()
    return defined
