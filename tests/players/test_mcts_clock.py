"""The ``mcts`` player's clock: a safety margin that grows with what it measures."""

from __future__ import annotations

import pytest

from players.mcts import clock
from players.mcts.clock import BASE_MARGIN, MAX_FRACTION, Clock


@pytest.fixture(autouse=True)
def idle_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "machine_load", lambda: 0.5)


def test_an_idle_player_keeps_only_the_base_margin() -> None:
    assert Clock().margin(2) == pytest.approx(BASE_MARGIN)


def test_slow_iterations_and_late_hooks_widen_the_margin() -> None:
    timer = Clock()
    timer.iteration_took(0.1)
    assert timer.margin(2) == pytest.approx(BASE_MARGIN + 0.2)
    timer.hook_started(deadline=10.0, clock=2, now=8.3)  # the usual delay
    timer.hook_started(deadline=20.0, clock=2, now=18.5)  # 0.2 s later than usual
    assert timer.margin(2) == pytest.approx(BASE_MARGIN + 0.2 + 0.4)
    assert timer.stop_time(100.0, 2) == pytest.approx(100.0 - timer.margin(2))


def test_a_loaded_machine_widens_the_margin_up_to_a_share_of_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(clock, "machine_load", lambda: 3.0)
    assert Clock().margin(10) > BASE_MARGIN
    timer = Clock()
    timer.iteration_took(5.0)
    assert timer.margin(2) == pytest.approx(MAX_FRACTION * 2)
