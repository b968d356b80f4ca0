"""Rows the storage tests write: a plain queued match and the phases of a two-role match."""

from __future__ import annotations

from server.store import StepRow, Store


async def queue(
    store: Store, match_id: str, players: list[str], game: str = "g", **more: object
) -> None:
    """Queue ``match_id`` of ``game`` (version 1) with default clocks and policy."""
    await store.queue_match(
        match_id,
        game_name=game,
        game_version=1,
        players=players,
        start_clock=1,
        play_clock=1,
        policy="random",
        config={},
        **more,  # type: ignore[arg-type]
    )


def step_row(number: int) -> StepRow:
    """Phase ``number`` of a two-role match (0: START), the second role timing out."""
    return StepRow(
        step=number,
        moves=None if number == 0 else [f"(m {number})", "noop"],
        state=f"( (cell {number}) )",
        state_time=1000 + number,
        errors=["", ""],
        response_times=[5, None],
        raw_replies=["ready", None],
        details=[None, {"kind": "timeout"}],
    )
