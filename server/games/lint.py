"""The upload check of the game library: is this GDL a game the server can host?

:func:`lint_game` reads the text, validates it, builds the rules engine the way
``Game(..., engine="auto")`` does, then plays seeded random playouts. It reports

- syntax errors and validation errors, with the line and column where the parser
  or the validator names one, and the validator's warnings;
- playouts that do not end within ``max_steps``, roles with no legal move, and
  terminal states where a role has no unique goal, each naming the step and role;
- which engine was chosen (and why the compiled one was not), the set-up time,
  transitions per second and the playout lengths;
- whether the game is *heavy* to host (see :func:`heavy_reason`).

It is blocking and CPU-bound: run it in a worker process or an executor. Work
past ``time_budget`` seconds stops with a warning rather than running forever
(the engine's set-up itself is bounded by the compiled engine's own time limit).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from server.gdl import Game, GdlError, GdlSyntaxError, Rule, State, parse_gdl
from server.gdl.errors import OutsideGroundingError
from server.gdl.terms import to_kif
from server.gdl.validator import validate

from .roles import declared_roles

HEAVY_SETUP_SECONDS = 5.0
"""A game whose engine takes longer than this to set up is heavy."""
HEAVY_TRANSITIONS_PER_SECOND = 200.0
"""A game whose random playouts run slower than this (transitions per second) is heavy."""

_POSITION = re.compile(r"^line (\d+), column (\d+): (.*)$", re.DOTALL)


class LintProblem(BaseModel):
    """One finding; ``line`` and ``column`` (1-based) are set when the text has a place for it."""

    severity: Literal["error", "warning"]
    message: str
    line: int | None = None
    column: int | None = None


class LintReport(BaseModel):
    """Everything :func:`lint_game` found out about a game."""

    ok: bool = Field(description="True when there is no error (warnings allowed).")
    problems: list[LintProblem] = Field(default_factory=list)
    roles: list[str] = Field(default_factory=list)
    engine: Literal["compiled", "interpreter"] | None = None
    engine_reason: str | None = Field(
        default=None, description="Why the compiled engine was not used, if it was not."
    )
    setup_seconds: float | None = None
    transitions_per_second: float | None = None
    playouts: int = Field(default=0, description="Playouts run to their end or first error.")
    playouts_terminated: int = Field(default=0, description="Playouts that reached a terminal.")
    average_length: float | None = Field(
        default=None, description="Mean steps of the playouts that terminated."
    )
    max_length: int | None = None
    heavy: bool = False
    heavy_reason: str | None = None


def heavy_reason(
    setup_seconds: float | None, transitions_per_second: float | None, starved: bool = False
) -> str | None:
    """Why a game is heavy to host, or None when it is not.

    Heavy means: the engine took more than :data:`HEAVY_SETUP_SECONDS` to set up,
    random playouts ran at fewer than :data:`HEAVY_TRANSITIONS_PER_SECOND`
    transitions per second, or (``starved``) not one playout finished within the
    time budget.
    """
    if setup_seconds is not None and setup_seconds > HEAVY_SETUP_SECONDS:
        return f"set-up took {setup_seconds:.1f} s (over {HEAVY_SETUP_SECONDS:g} s)"
    if transitions_per_second is not None and transitions_per_second < HEAVY_TRANSITIONS_PER_SECOND:
        return (
            f"{transitions_per_second:.0f} transitions per second "
            f"(under {HEAVY_TRANSITIONS_PER_SECOND:g})"
        )
    if starved:
        return "not one random playout finished within the time budget"
    return None


def _positioned(severity: Literal["error", "warning"], text: str) -> LintProblem:
    """A validator message, with the ``line L, column C:`` prefix moved into fields."""
    found = _POSITION.match(text)
    if found is None:
        return LintProblem(severity=severity, message=text)
    line, column, rest = found.groups()
    return LintProblem(severity=severity, message=rest, line=int(line), column=int(column))


def _build(rules: list[Rule]) -> tuple[Game, str | None]:
    """The engine ``auto`` would pick, and why the compiled one was refused (if it was)."""
    try:
        return Game(rules, validate=False, engine="compiled"), None
    except GdlError as reason:
        return Game(rules, validate=False, engine="interpreter"), str(reason)


@dataclass
class _Playouts:
    """Counters and the (deduplicated) problems of the random playouts."""

    run: int = 0
    terminated: int = 0
    lengths: list[int] = field(default_factory=list)
    transitions: int = 0
    seconds: float = 0.0
    out_of_time: bool = False
    problems: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Problem kind -> (first message, how many playouts had it)."""

    def note(self, kind: str, message: str) -> None:
        first, count = self.problems.get(kind, (message, 0))
        self.problems[kind] = (first, count + 1)


def _play(
    game: Game, rng: random.Random, max_steps: int, deadline: float, tally: _Playouts
) -> None:
    """One random playout; records its outcome in ``tally``."""
    number = tally.run + 1
    state = game.initial_state()
    for step in range(max_steps + 1):
        if time.monotonic() > deadline:
            tally.out_of_time = True
            return
        if game.is_terminal(state):
            tally.run += 1
            tally.terminated += 1
            tally.lengths.append(step)
            for role in game.roles:
                if game.goal(state, role) is None:
                    found = _goal_detail(game, state, role)
                    tally.note(
                        f"goal {role}",
                        f"playout {number}: role {role} has no unique goal in the terminal state "
                        f"reached at step {step} ({found})",
                    )
            return
        if step == max_steps:
            break
        joint = []
        for role in game.roles:
            legal = game.legal_moves(state, role)
            if not legal:
                tally.run += 1
                tally.note(
                    f"legal {role}",
                    f"playout {number}: role {role} has no legal move at step {step} "
                    "in a state that is not terminal",
                )
                return
            joint.append(rng.choice(legal))
        state = game.next_state(state, joint)
        tally.transitions += 1
    tally.run += 1
    tally.note(
        "endless",
        f"playout {number} did not reach a terminal state within {max_steps} steps",
    )


def _goal_detail(game: Game, state: State, role: str) -> str:
    try:
        values = [to_kif(value) for value in game.engine.goal_values(state, role)]
    except OutsideGroundingError:
        return "no unique goal value"
    return f"goal values {', '.join(values)}" if values else "no goal value"


def _run_playouts(
    game: Game, playouts: int, seed: int, max_steps: int, deadline: float
) -> tuple[_Playouts, str | None]:
    tally = _Playouts()
    rng = random.Random(seed)
    started = time.perf_counter()
    failure = None
    try:
        while tally.run < playouts and not tally.out_of_time:
            _play(game, rng, max_steps, deadline, tally)
    except GdlError as error:
        tally.run += 1
        failure = f"playout {tally.run}: the rules engine failed: {error}"
    tally.seconds = time.perf_counter() - started
    return tally, failure


def lint_game(
    text: str,
    *,
    playouts: int = 10,
    seed: int = 0,
    max_steps: int = 1000,
    time_budget: float = 10.0,
) -> LintReport:
    """Check GDL ``text`` for upload to the game library; never raises on bad GDL."""
    began = time.monotonic()
    deadline = began + time_budget
    report = LintReport(ok=False)
    try:
        rules = parse_gdl(text)
    except GdlSyntaxError as error:
        report.problems.append(
            LintProblem(
                severity="error", message=error.reason, line=error.line, column=error.column
            )
        )
        return report
    report.roles = declared_roles(rules)
    validation = validate(rules)
    report.problems += [_positioned("error", problem) for problem in validation.errors]
    report.problems += [_positioned("warning", problem) for problem in validation.warnings]
    if validation.errors:
        return report

    started = time.perf_counter()
    try:
        game, reason = _build(rules)
    except GdlError as error:
        report.problems.append(_positioned("error", f"the rules engine refuses the game: {error}"))
        return report
    spent = time.perf_counter() - started
    if game.engine_reused or game.engine_stored:  # no compile here: report the compile's
        spent = getattr(game.engine, "setup_seconds", spent)
    report.setup_seconds = round(spent, 3)
    report.engine = "compiled" if game.engine.name == "compiled" else "interpreter"
    report.engine_reason = reason
    report.roles = list(game.roles)

    starved = True
    if time.monotonic() > deadline:
        report.problems.append(
            LintProblem(
                severity="warning",
                message=f"no playout was run: set-up used up the time budget of {time_budget:g} s",
            )
        )
    else:
        out_of_time = _report_playouts(
            report, game, playouts, seed, max_steps, deadline, time_budget
        )
        starved = out_of_time and report.playouts == 0
    report.heavy_reason = heavy_reason(report.setup_seconds, report.transitions_per_second, starved)
    report.heavy = report.heavy_reason is not None
    report.ok = not any(problem.severity == "error" for problem in report.problems)
    return report


def _report_playouts(
    report: LintReport,
    game: Game,
    playouts: int,
    seed: int,
    max_steps: int,
    deadline: float,
    time_budget: float,
) -> bool:
    """Run the playouts into ``report``; True when the time budget cut them short."""
    tally, failure = _run_playouts(game, playouts, seed, max_steps, deadline)
    report.playouts = tally.run
    report.playouts_terminated = tally.terminated
    if tally.lengths:
        report.average_length = round(sum(tally.lengths) / len(tally.lengths), 2)
        report.max_length = max(tally.lengths)
    if tally.transitions and tally.seconds > 0:
        report.transitions_per_second = round(tally.transitions / tally.seconds, 1)
    for message, count in tally.problems.values():
        more = f" (and in {count - 1} more playout{'s' if count > 2 else ''})" if count > 1 else ""
        report.problems.append(LintProblem(severity="error", message=message + more))
    if failure is not None:
        report.problems.append(LintProblem(severity="error", message=failure))
    if tally.out_of_time:
        report.problems.append(
            LintProblem(
                severity="warning",
                message=f"stopped after {tally.run} of {playouts} playouts: the time budget of "
                f"{time_budget:g} s ran out",
            )
        )
    return tally.out_of_time
