"""Which matches a worker stops when the database no longer gives them to it."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.workers.runner import taken_from_here


@dataclass
class _Runner:
    is_ended: bool = False
    aborted: list[bool] = field(default_factory=list)


def test_a_match_held_elsewhere_is_taken_from_this_worker() -> None:
    running = {"a": _Runner(), "b": _Runner()}
    assert taken_from_here(running, ["a", "b"], held={"b"}) == ["a"]  # type: ignore[arg-type]


def test_a_match_whose_end_is_stored_while_it_sends_stop_is_not_taken() -> None:
    # its row says finished, so the database does not give it to this worker any more,
    # but it ended here: no warning, no abort
    running = {"done": _Runner(is_ended=True), "playing": _Runner()}
    assert taken_from_here(running, ["done", "playing"], held={"playing"}) == []  # type: ignore[arg-type]


def test_a_match_that_left_the_worker_meanwhile_is_skipped() -> None:
    assert taken_from_here({}, ["gone"], held=set()) == []
