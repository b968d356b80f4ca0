"""The step-by-step text view of a replayed match."""

from __future__ import annotations

from server.gdl.terms import to_kif

from .board import GridLayout, detect_layouts, draw_board, other_fluents
from .replayer import Replay, ReplayedStep


def _seconds(milliseconds: int | None) -> str:
    return "?" if milliseconds is None else f"{milliseconds / 1000:.2f} s"


def _header(replay: Replay) -> list[str]:
    record = replay.record
    players = record.player_names_from_host or []
    roles = []
    for index, role in enumerate(replay.game.roles):
        name = players[index] if index < len(players) and players[index] else None
        roles.append(f"{role} ({name})" if name else role)
    clocks = f"start clock {record.start_clock} s, play clock {record.play_clock} s"
    lines = [
        f"Match {record.match_id}",
        f"Rules: {replay.rules_source}",
        f"Roles: {', '.join(roles)}",
        f"Clocks: {clocks}" + (", scrambled on the wire" if record.scrambled else ""),
    ]
    if record.end_reason is not None:
        lines.append(f"End reason (recorded): {record.end_reason.value}")
    return lines


def _clock_line(replay: Replay, step: ReplayedStep) -> str | None:
    parts = []
    if step.elapsed_ms is not None:
        clock = replay.record.start_clock if step.number == 0 else replay.record.play_clock
        limit = f" of a {clock} s clock" if clock is not None and step.number > 0 else ""
        parts.append(f"step took {_seconds(step.elapsed_ms)}{limit}")
    if step.response_times_ms:
        answers = ", ".join(
            f"{role} {_seconds(ms)}" if ms is not None else f"{role} (server)"
            for role, ms in zip(replay.game.roles, step.response_times_ms, strict=False)
        )
        parts.append(f"replies: {answers}")
    return "  clock: " + "; ".join(parts) if parts else None


def _errors_line(replay: Replay, step: ReplayedStep) -> str | None:
    found = []
    for index, role in enumerate(replay.game.roles):
        code = step.errors[index] if index < len(step.errors) else ""
        if not code:
            continue
        message = step.error_messages[index] if index < len(step.error_messages) else None
        found.append(f"{role} {code}" + (f" ({message})" if message else ""))
    return "  player errors: " + "; ".join(found) if found else None


def render_step(replay: Replay, step: ReplayedStep, layouts: list[GridLayout]) -> list[str]:
    """One step: its moves, clock use, recorded errors, the board, and any mismatch."""
    if step.number == 0:
        title = "Step 0 (start): initial state"
    else:
        moves = step.moves or []
        played = ", ".join(
            f"{role} {to_kif(move)}" for role, move in zip(replay.game.roles, moves, strict=False)
        )
        title = f"Step {step.number}: {played}"
    lines = [title]
    for extra in (_clock_line(replay, step), _errors_line(replay, step)):
        if extra:
            lines.append(extra)
    facts = step.state.facts
    for layout in layouts:
        if len(layouts) > 1:
            lines.append(f"    {layout.functor}:")
        lines.extend("    " + line for line in draw_board(facts, layout))
    rest = other_fluents(facts, layouts)
    if rest:
        lines.append("    " + " ".join(rest))
    for problem in step.problems:
        lines.append(f"  !! {problem.message}")
    return lines


def _summary(replay: Replay) -> list[str]:
    lines = []
    roles = replay.game.roles
    if replay.rule_goals is not None:
        shown = ", ".join(
            f"{role} {'-' if goal is None else goal}"
            for role, goal in zip(roles, replay.rule_goals, strict=True)
        )
        lines.append(f"Goals by the rules: {shown}")
    if replay.recorded_goals is not None:
        shown = ", ".join(
            f"{role} {goal}" for role, goal in zip(roles, replay.recorded_goals, strict=False)
        )
        forfeits = replay.record.forfeited or []
        if any(forfeits):
            shown += (
                " (forfeited: "
                + ", ".join(role for role, lost in zip(roles, forfeits, strict=False) if lost)
                + ")"
            )
        lines.append(f"Goals recorded:     {shown}")
    times = replay.record.state_times
    if len(times) >= 2:
        lines.append(
            f"Match time: {_seconds(times[-1] - times[0])} from the first to the last state"
        )
    per_role = _clock_use_by_role(replay)
    if per_role:
        lines.append("Clock use: " + "; ".join(per_role))
    error_counts = _error_counts(replay)
    if error_counts:
        lines.append("Player errors: " + "; ".join(error_counts))
    return lines


def _clock_use_by_role(replay: Replay) -> list[str]:
    found = []
    for index, role in enumerate(replay.game.roles):
        values = [
            step.response_times_ms[index]
            for step in replay.steps
            if step.number > 0 and index < len(step.response_times_ms)
        ]
        known = [value for value in values if value is not None]
        if known:
            found.append(
                f"{role} mean {_seconds(round(sum(known) / len(known)))}, "
                f"longest {_seconds(max(known))}"
            )
    return found


def _error_counts(replay: Replay) -> list[str]:
    found = []
    errors = replay.record.errors or []
    for index, role in enumerate(replay.game.roles):
        codes = [row[index] for row in errors if index < len(row) and row[index]]
        if codes:
            kinds: dict[str, int] = {}
            for code in codes:
                kind = code.split(" ", 1)[0]
                kinds[kind] = kinds.get(kind, 0) + 1
            found.append(f"{role} " + ", ".join(f"{n} {kind}" for kind, n in kinds.items()))
    return found


def render_replay(replay: Replay) -> str:
    """The whole view: header, every step, the problems, a summary and the verdict."""
    layouts = detect_layouts(
        [step.state.facts for step in replay.steps]
        + [step.recorded_state for step in replay.steps if step.recorded_state is not None]
    )
    lines = _header(replay)
    for step in replay.steps:
        lines.append("")
        lines.extend(render_step(replay, step, layouts))
    lines.append("")
    if replay.stopped_at is not None:
        lines.append(
            f"Replay stopped at step {replay.stopped_at}: the recorded move cannot be applied."
        )
    for problem in replay.problems:
        if not any(problem in step.problems for step in replay.steps):
            lines.append(f"!! {problem}")
    lines.extend(_summary(replay))
    lines.append(replay.verdict())
    return "\n".join(lines) + "\n"
