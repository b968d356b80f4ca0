"""Re-running a match log against its rules and finding the first step that disagrees.

Steps are numbered as in the ggp.org format: step 0 is the START phase and the
initial state (``states[0]``, ``errors[0]``); step ``i`` (from 1) applies the joint
move ``moves[i-1]`` and records ``states[i]`` and ``errors[i]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from server.gdl import Game, GdlError, State
from server.gdl.terms import RawTerm, to_kif
from server.records import EndReason, MatchRecord

from .states import describe_difference, describe_terms, parse_move_text, parse_state_text


class ProblemKind(StrEnum):
    """Ways in which a log can disagree with its rules (or with itself)."""

    MALFORMED = "malformed"
    """The log itself is inconsistent: lengths that do not match, unreadable text."""
    ROLES = "roles"
    """The roles the log names are not the roles of the rules."""
    MOVE_COUNT = "move_count"
    """A joint move without exactly one move per role."""
    UNPARSABLE_MOVE = "unparsable_move"
    ILLEGAL_MOVE = "illegal_move"
    MOVE_AFTER_TERMINAL = "move_after_terminal"
    """A move recorded after the rules reached a terminal state."""
    STATE_MISMATCH = "state_mismatch"
    """A recorded state that is not the state the rules compute."""
    NOT_TERMINAL = "not_terminal"
    """A log marked completed whose last state is not terminal."""
    GOAL_MISMATCH = "goal_mismatch"
    """Recorded goals that are not the goals of the rules."""


@dataclass(frozen=True)
class Problem:
    """One disagreement, at a step, with a sentence that explains it."""

    step: int
    kind: ProblemKind
    message: str

    @property
    def where(self) -> str:
        if self.kind is ProblemKind.GOAL_MISMATCH:
            return f"step {self.step} (goals)"
        return f"step {self.step}"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class ReplayedStep:
    """One step as recorded and as recomputed."""

    number: int
    state: State
    """The state the rules give after this step (the initial state for step 0)."""
    moves: list[RawTerm] | None = None
    """The joint move applied at this step, in role order (``None`` for step 0)."""
    recorded_state: frozenset[RawTerm] | None = None
    errors: list[str] = field(default_factory=list)
    """The recorded error codes per role (``""`` for none)."""
    error_messages: list[str | None] = field(default_factory=list)
    response_times_ms: list[int | None] = field(default_factory=list)
    elapsed_ms: int | None = None
    """Time from the previous state to this one, from ``stateTimes``."""
    problems: list[Problem] = field(default_factory=list)


class Outcome(StrEnum):
    """How the recorded match ended."""

    COMPLETED = "completed"
    STEP_LIMIT = "step_limit"
    ABORTED = "aborted"
    UNFINISHED = "unfinished"


@dataclass
class Replay:
    """The result of replaying a log: every step, every problem, and a verdict."""

    record: MatchRecord
    game: Game
    rules_source: str
    steps: list[ReplayedStep] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    outcome: Outcome = Outcome.UNFINISHED
    recorded_goals: list[int] | None = None
    rule_goals: list[int | None] | None = None
    """The goals the rules give in the last replayed state, when it is final."""
    stopped_at: int | None = None
    """The step at which replaying had to stop (an unusable move), if any."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first_problem(self) -> Problem | None:
        return min(self.problems, key=lambda problem: problem.step) if self.problems else None

    @property
    def recorded_steps(self) -> int:
        return len(self.record.moves)

    def verdict(self) -> str:
        """One line: consistent or not, and where it first goes wrong."""
        match_id = self.record.match_id
        first = self.first_problem
        if first is not None:
            more = len(self.problems) - 1
            tail = f" ({more} more problem{'s' if more != 1 else ''})" if more else ""
            return f"MISMATCH in {match_id} at {first}{tail}"
        steps = self.recorded_steps
        plural = "s" if steps != 1 else ""
        if self.outcome is Outcome.COMPLETED:
            goals = " ".join(str(value) for value in self.recorded_goals or [])
            return (
                f"OK: {match_id} replays: {steps} step{plural}, every move legal, every state "
                f"and the goals ({goals}) match the rules"
            )
        if self.outcome is Outcome.STEP_LIMIT:
            goals = " ".join(str(value) for value in self.recorded_goals or [])
            return (
                f"OK (ended by the step limit after {steps} step{plural}): {match_id} replays, "
                f"every move legal, every state and the goals ({goals}) match the rules"
            )
        if self.outcome is Outcome.ABORTED:
            return (
                f"OK (aborted after {steps} step{plural}): {match_id} replays as far as it "
                "goes, every move legal and every state matches the rules; no goals recorded"
            )
        final = self.steps[-1].state if self.steps else None
        reason = (
            "the last state is terminal but no goals were recorded"
            if final is not None and self.game.is_terminal(final)
            else "the log ends before a terminal state"
        )
        return (
            f"OK (unfinished after {steps} step{plural}: {reason}): {match_id} replays as far "
            "as it goes, every move legal and every state matches the rules"
        )


def _at(values: list | None, index: int) -> object | None:
    if values is None or index >= len(values):
        return None
    return values[index]


class _Replayer:
    def __init__(self, record: MatchRecord, game: Game, rules_source: str) -> None:
        self.record = record
        self.game = game
        self.roles = game.roles
        self.result = Replay(record=record, game=game, rules_source=rules_source)

    def problem(self, step: int, kind: ProblemKind, message: str) -> Problem:
        found = Problem(step, kind, message)
        self.result.problems.append(found)
        return found

    # -- the pieces of one step ---------------------------------------------------------

    def recorded_state(self, step: int) -> frozenset[RawTerm] | None:
        text = _at(self.record.states, step)
        if text is None:
            return None
        try:
            return parse_state_text(str(text))
        except (GdlError, ValueError) as error:
            self.problem(step, ProblemKind.MALFORMED, f"the recorded state does not read: {error}")
            return None

    def step_record(self, number: int, state: State) -> ReplayedStep:
        record = self.record
        errors = _at(record.errors, number)
        details = _at(record.error_details, number)
        times = _at(record.response_times, number)
        elapsed = None
        if number > 0 and number < len(record.state_times):
            elapsed = record.state_times[number] - record.state_times[number - 1]
        step = ReplayedStep(
            number=number,
            state=state,
            errors=[str(code) for code in errors] if isinstance(errors, list) else [],
            error_messages=[detail.message if detail is not None else None for detail in details]
            if isinstance(details, list)
            else [],
            response_times_ms=list(times) if isinstance(times, list) else [],
            elapsed_ms=elapsed,
        )
        step.recorded_state = self.recorded_state(number)
        return step

    def compare_state(self, step: ReplayedStep) -> None:
        if step.recorded_state is None:
            return
        computed = step.state.facts
        if step.recorded_state != computed:
            step.problems.append(
                self.problem(
                    step.number,
                    ProblemKind.STATE_MISMATCH,
                    "the recorded state is not the rules' state: "
                    + describe_difference(step.recorded_state, computed),
                )
            )

    def joint_move(self, number: int, state: State, texts: list[str]) -> list[RawTerm] | None:
        """The step's moves, parsed and checked for legality; None when unusable."""
        if len(texts) != len(self.roles):
            self.problem(
                number,
                ProblemKind.MOVE_COUNT,
                f"{len(texts)} moves recorded for {len(self.roles)} roles "
                f"({', '.join(self.roles)})",
            )
            return None
        moves: list[RawTerm] = []
        usable = True
        for role, text in zip(self.roles, texts, strict=True):
            try:
                move = parse_move_text(str(text))
            except (GdlError, ValueError) as error:
                self.problem(
                    number,
                    ProblemKind.UNPARSABLE_MOVE,
                    f"{role}'s move {text!r} does not read: {error}",
                )
                usable = False
                continue
            legal = self.game.legal_moves(state, role)
            if move not in legal:
                self.problem(
                    number,
                    ProblemKind.ILLEGAL_MOVE,
                    f"{role}'s move {to_kif(move)} is not legal here "
                    f"(legal: {describe_terms(legal) or 'nothing'})",
                )
                usable = False
            moves.append(move)
        return moves if usable else None

    # -- the whole log ------------------------------------------------------------------

    def check_shape(self) -> None:
        record = self.record
        moves = len(record.moves)
        ended_before_the_first_state = not moves and not record.states
        if len(record.states) != moves + 1 and not ended_before_the_first_state:
            self.problem(
                min(len(record.states), moves + 1),
                ProblemKind.MALFORMED,
                f"{len(record.states)} states recorded for {moves} moves (expected {moves + 1})",
            )
        if record.state_times and len(record.state_times) != len(record.states):
            self.problem(
                min(len(record.state_times), len(record.states)),
                ProblemKind.MALFORMED,
                f"{len(record.state_times)} state times recorded for {len(record.states)} states",
            )
        if record.errors is not None and len(record.errors) != moves + 1:
            self.problem(
                min(len(record.errors), moves + 1),
                ProblemKind.MALFORMED,
                f"{len(record.errors)} error lists recorded for {moves} moves "
                f"(expected {moves + 1})",
            )
        named_roles = record.game_role_names
        if named_roles is not None and list(named_roles) != list(self.roles):
            self.problem(
                0,
                ProblemKind.ROLES,
                f"the log names the roles {', '.join(named_roles)}; the rules have "
                f"{', '.join(self.roles)}",
            )

    def run(self) -> Replay:
        self.check_shape()
        state = self.game.initial_state()
        first = self.step_record(0, state)
        self.compare_state(first)
        self.result.steps.append(first)
        for index, texts in enumerate(self.record.moves):
            number = index + 1
            if self.game.is_terminal(state):
                self.problem(
                    number,
                    ProblemKind.MOVE_AFTER_TERMINAL,
                    f"a move is recorded after the rules ended the game at step {number - 1}",
                )
                self.result.stopped_at = number
                break
            moves = self.joint_move(number, state, list(texts))
            if moves is None:
                self.result.stopped_at = number
                break
            state = self.game.next_state(state, moves)
            step = self.step_record(number, state)
            step.moves = moves
            self.compare_state(step)
            self.result.steps.append(step)
        self.check_ending(state)
        self.result.problems.sort(key=lambda problem: problem.step)
        return self.result

    # -- how it ended ---------------------------------------------------------------------

    def outcome(self) -> Outcome:
        record = self.record
        reason = record.end_reason
        if reason is EndReason.STEP_LIMIT:
            return Outcome.STEP_LIMIT
        if record.is_aborted or reason in (
            EndReason.ABORTED,
            EndReason.START_REFUSED,
            EndReason.ERROR,
        ):
            return Outcome.ABORTED
        if record.is_completed:
            return Outcome.COMPLETED
        return Outcome.UNFINISHED

    def check_ending(self, state: State) -> None:
        outcome = self.outcome()
        result = self.result
        result.outcome = outcome
        result.recorded_goals = list(self.record.goal_values) if self.record.goal_values else None
        if result.stopped_at is not None:
            return
        last = len(self.record.moves)
        terminal = self.game.is_terminal(state)
        if outcome is Outcome.COMPLETED and not terminal:
            self.problem(
                last,
                ProblemKind.NOT_TERMINAL,
                "the log is marked completed but the rules do not end the game here",
            )
            return
        limit = self.record.step_limit
        if outcome is Outcome.STEP_LIMIT and limit is not None and last > limit:
            self.problem(
                last,
                ProblemKind.MALFORMED,
                f"{last} steps recorded beyond the step limit of {limit}",
            )
        if terminal or outcome is Outcome.STEP_LIMIT:
            result.rule_goals = [self.game.goal(state, role) for role in self.roles]
        if outcome in (Outcome.COMPLETED, Outcome.STEP_LIMIT):
            self.check_goals(last)

    def check_goals(self, last: int) -> None:
        recorded = self.result.recorded_goals
        rule_goals = self.result.rule_goals or []
        if recorded is None:
            self.problem(
                last, ProblemKind.GOAL_MISMATCH, "the match ended but no goals are recorded"
            )
            return
        if len(recorded) != len(self.roles):
            self.problem(
                last,
                ProblemKind.GOAL_MISMATCH,
                f"{len(recorded)} goals recorded for {len(self.roles)} roles",
            )
            return
        forfeited = self.record.forfeited or [False] * len(self.roles)
        recorded_rule_goals = self.record.rule_goal_values
        wrong = []
        for index, role in enumerate(self.roles):
            rule_goal = rule_goals[index]
            if recorded_rule_goals is not None and _at(recorded_rule_goals, index) != rule_goal:
                wrong.append(
                    f"{role}: the rules give {_goal_text(rule_goal)}, the log says the rules "
                    f"gave {_goal_text(_at(recorded_rule_goals, index))}"
                )
            if _at(forfeited, index):
                expected: int | None = 0
            elif rule_goal is None and (
                recorded_rule_goals is not None or self.result.outcome is Outcome.STEP_LIMIT
            ):
                continue  # the rules give no goal and the log says so: any recorded value
            else:
                expected = rule_goal
            if recorded[index] != expected:
                why = " (forfeited)" if _at(forfeited, index) else ""
                wrong.append(
                    f"{role}: recorded {recorded[index]}, the rules give "
                    f"{_goal_text(expected)}{why}"
                )
        if wrong:
            self.problem(last, ProblemKind.GOAL_MISMATCH, "; ".join(wrong))


def _goal_text(value: object) -> str:
    return "no unique goal" if value is None else str(value)


def replay_record(record: MatchRecord, game: Game, rules_source: str = "given rules") -> Replay:
    """Replay a record against ``game`` and report every disagreement."""
    return _Replayer(record, game, rules_source).run()
