"""Checking an uploaded game: it parses, validates, and random playouts end with goals.

A minimal version of the game lint; blocking, so run it in an executor.
"""

from __future__ import annotations

import random
import time
from typing import Literal

from pydantic import BaseModel

HEAVY_TRANSITIONS_PER_SECOND = 200.0
"""Below this many state transitions per second a game is flagged heavy."""


class LintProblem(BaseModel):
    """One finding of the lint, with its place in the text when known."""

    severity: Literal["error", "warning"]
    message: str
    line: int | None = None
    column: int | None = None


class LintReport(BaseModel):
    """What the lint found about a game."""

    ok: bool
    problems: list[LintProblem] = []
    roles: list[str] = []
    engine: Literal["compiled", "interpreter"] | None = None
    setup_seconds: float = 0.0
    transitions_per_second: float = 0.0
    playouts: int = 0
    playouts_terminated: int = 0
    average_length: float = 0.0
    max_length: int = 0
    heavy: bool = False
    heavy_reason: str | None = None


def lint_game(
    text: str,
    *,
    playouts: int = 10,
    seed: int = 0,
    max_steps: int = 1000,
    time_budget: float = 10.0,
) -> LintReport:
    """Parse and validate ``text``, then play random playouts that must end with goals."""
    from server.gdl import Game, GdlError
    from server.gdl.errors import GdlSyntaxError, GdlValidationError

    started = time.monotonic()
    try:
        game = Game.from_text(text)
    except GdlSyntaxError as error:
        problem = LintProblem(
            severity="error", message=error.reason, line=error.line, column=error.column
        )
        return LintReport(ok=False, problems=[problem])
    except GdlValidationError as error:
        return LintReport(
            ok=False,
            problems=[LintProblem(severity="error", message=text) for text in error.problems],
        )
    except GdlError as error:
        return LintReport(ok=False, problems=[LintProblem(severity="error", message=str(error))])
    setup = time.monotonic() - started
    engine: Literal["compiled", "interpreter"] = (
        "interpreter"
        if type(game.engine).__module__.startswith("server.gdl.interp")
        else "compiled"
    )
    rng = random.Random(seed)
    problems: list[LintProblem] = []
    lengths: list[int] = []
    transitions = 0
    played = 0
    deadline = time.monotonic() + time_budget
    clock = time.monotonic()
    try:
        for _ in range(playouts):
            if time.monotonic() > deadline:
                break
            played += 1
            state = game.initial_state()
            steps = 0
            while not game.is_terminal(state) and steps < max_steps and time.monotonic() < deadline:
                joint = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
                state = game.next_state(state, joint)
                steps += 1
            transitions += steps
            if game.is_terminal(state):
                lengths.append(steps)
                game.goals(state)
    except GdlError as error:
        problems.append(LintProblem(severity="error", message=f"a random playout failed: {error}"))
    elapsed = max(time.monotonic() - clock, 1e-9)
    if played and not lengths and not problems:
        problems.append(
            LintProblem(
                severity="error", message=f"no random playout ended within {max_steps} steps"
            )
        )
    elif len(lengths) < played:
        problems.append(
            LintProblem(
                severity="warning",
                message=f"{played - len(lengths)} of {played} random playouts did not end",
            )
        )
    speed = transitions / elapsed
    heavy = speed < HEAVY_TRANSITIONS_PER_SECOND or setup > 5.0
    return LintReport(
        ok=not any(problem.severity == "error" for problem in problems),
        problems=problems,
        roles=list(game.roles),
        engine=engine,
        setup_seconds=round(setup, 3),
        transitions_per_second=round(speed, 1),
        playouts=played,
        playouts_terminated=len(lengths),
        average_length=round(sum(lengths) / len(lengths), 1) if lengths else 0.0,
        max_length=max(lengths, default=0),
        heavy=heavy,
        heavy_reason=f"{speed:.0f} transitions per second" if heavy else None,
    )
