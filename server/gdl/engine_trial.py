"""A timed race between the compiled engine and the interpreter, for engine ``auto``.

A game that compiles is nearly always much faster compiled, but not always: a ground
network of hundreds of thousands of gates that each move touches (gt_two_thirds_2p at a
long start clock, amazons_10x10) can run slower than the interpreter, which evaluates
only what a state asks. So once a game compiles, the compiled engine plays a few random
transitions; when it is fast enough outright, it is kept at once (a few milliseconds).
Otherwise the interpreter plays the same transitions (the same seed and move order, so
the same states), and the faster engine is kept. Both are timed in the CPU time of the
calling thread, so the load of the machine weighs on both alike.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from .engine import Engine
from .errors import GdlError

FAST_ENOUGH = 20_000.0
"""Transitions per second from which the compiled engine is kept without a race: over
ten times what the interpreter reaches on all but the smallest games."""
WARM_UP_TRANSITIONS = 16
"""Transitions played before the clock starts: the first states cost more on either
engine (indexes, caches, the interpreter's budget trials)."""
TRIAL_TRANSITIONS = 512
"""Transitions timed at most per engine."""
INTERPRETER_WINS_BY = 1.25
"""How much faster the interpreter must be to be chosen: the compiled engine also offers
playout loops and batches that the public calls do not show."""
SEED = 20_260_101


@dataclass(frozen=True)
class Race:
    """Transitions per second each engine reached, and which one to keep."""

    compiled_rate: float
    interpreter_rate: float | None
    """``None`` when the compiled engine was fast enough not to race."""

    @property
    def interpreter_wins(self) -> bool:
        return (
            self.interpreter_rate is not None
            and self.interpreter_rate > self.compiled_rate * INTERPRETER_WINS_BY
        )

    @property
    def reason(self) -> str:
        """Why the interpreter was kept, in the words of ``Game.fallback_reason``."""
        return (
            f"the interpreter ran {self.interpreter_rate or 0:,.0f} transitions a second in a "
            f"timed trial, the compiled engine {self.compiled_rate:,.0f}"
        )


def transition_rate(engine: Engine, *, seconds: float, transitions: int) -> float:
    """Transitions per second of CPU time over random playouts from the initial state
    (every role's goals read at the end of each), after :data:`WARM_UP_TRANSITIONS`; at
    most ``transitions`` or ``seconds``.

    A playout that ends starts again; a game over from the start, or a state where a
    role has no legal move, ends the trial early (errors of the rules propagate).
    """
    rng = random.Random(SEED)
    roles = list(engine.roles)
    clock = time.thread_time
    state = engine.initial_state()
    if engine.is_terminal(state):
        return float("inf")
    done = 0
    start = deadline = 0.0
    target = WARM_UP_TRANSITIONS + transitions
    while done < target:
        if done == WARM_UP_TRANSITIONS:
            start = clock()
            deadline = start + seconds
        elif done > WARM_UP_TRANSITIONS and clock() >= deadline:
            break
        if engine.is_terminal(state):
            for role in roles:  # what a match or a search asks at the end
                engine.goal_values(state, role)
            state = engine.initial_state()
        joint = []
        for role in roles:
            moves = engine.legal_moves(state, role)
            if not moves:
                return _rate(done, start)
            joint.append(moves[int(rng.random() * len(moves))])
        state = engine.next_state(state, joint)
        done += 1
    return _rate(done, start)


def _rate(done: int, start: float) -> float:
    """Timed transitions per second since ``start`` (thread CPU time)."""
    timed = done - WARM_UP_TRANSITIONS
    if timed <= 0:
        return float("inf")  # too few transitions to tell: nothing to race on
    elapsed = time.thread_time() - start
    return timed / elapsed if elapsed > 0 else float("inf")


def race(
    compiled: Engine, make_interpreter: Callable[[], Engine], *, seconds: float
) -> tuple[Race, Engine | None]:
    """Time ``compiled``, then, unless it is fast enough, a new interpreter made by
    ``make_interpreter()`` for up to ``seconds`` each; returns the race and the
    interpreter (``None`` when it was not made or an error of the rules stopped it)."""
    try:
        compiled_rate = transition_rate(compiled, seconds=seconds, transitions=TRIAL_TRANSITIONS)
    except GdlError:
        return Race(float("inf"), None), None
    if compiled_rate >= FAST_ENOUGH:
        return Race(compiled_rate, None), None
    try:
        interpreter = make_interpreter()
        interpreter_rate = transition_rate(
            interpreter, seconds=seconds, transitions=TRIAL_TRANSITIONS
        )
    except GdlError:
        return Race(compiled_rate, None), None
    return Race(compiled_rate, interpreter_rate), interpreter
