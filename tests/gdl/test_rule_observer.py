"""The ground program read through clingo's C interface is the one its Python observer
reads, and grounding stops with the observer's exception."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import clingo
import pytest

from server.gdl.compiled import GroundingOverBudget, grounder
from server.gdl.compiled.grounder import GroundProgram, ground
from server.gdl.compiled.rule_observer import Registration, register_rule_observer
from server.gdl.parser import parse_gdl

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    """Every call, as clingo's Python observer interface makes it."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.calls: list[tuple[bool, list[int], list[int]]] = []
        self.atoms: list[tuple[str, int]] = []
        self.stop_after = stop_after

    def rule(self, choice: bool, head: list[int], body: list[int]) -> None:
        self.calls.append((choice, head, body))
        if self.stop_after is not None and len(self.calls) > self.stop_after:
            raise ValueError("seen enough")

    def output_atom(self, symbol: clingo.Symbol, atom: int) -> None:
        self.atoms.append((str(symbol), atom))


PROGRAM = """
cell(1..3). next(X) :- cell(X), not blocked(X). blocked(2) :- cell(3).
{ move(X) } :- cell(X). won :- move(1), move(3), not move(2).
#show cell/1. #show won/0.
"""


def through_c(observer: Recorder) -> tuple[clingo.Control, Registration]:
    """A control with PROGRAM added, ``observer`` registered through the C callbacks."""
    control = clingo.Control(["--warn=none"])
    registration = register_rule_observer(control, observer)
    assert registration is not None
    control.add("base", [], PROGRAM)
    return control, registration


def observed(c_callbacks: bool, observer: Recorder) -> Recorder:
    """``observer``, after PROGRAM was grounded through the C callbacks or clingo's
    Python observer."""
    if c_callbacks:
        control, _ = through_c(observer)
    else:
        control = clingo.Control(["--warn=none"])
        control.register_observer(observer, replace=True)  # type: ignore[arg-type]
        control.add("base", [], PROGRAM)
    control.ground([("base", [])])
    return observer


def test_the_c_callbacks_make_the_calls_of_the_python_observer() -> None:
    by_c = observed(True, Recorder())
    by_python = observed(False, Recorder())
    assert by_c.calls == by_python.calls
    assert by_c.atoms == by_python.atoms
    assert any(not body for _, _, body in by_c.calls)  # facts: empty bodies
    assert any(choice for choice, _, _ in by_c.calls)
    assert ("won", 0) not in by_c.atoms and ("cell(1)", 0) in by_c.atoms


def test_an_exception_of_the_observer_stops_grounding_and_is_kept() -> None:
    observer = Recorder(stop_after=2)
    control, registration = through_c(observer)
    with pytest.raises(RuntimeError, match="seen enough"):
        control.ground([("base", [])])
    assert isinstance(registration.failure, ValueError)
    assert len(observer.calls) == 3


class Sink(Recorder):
    """A recorder that takes the plain rules in a list (a ``PlainRuleSink``) and stops
    after the ``stop_at``-th of them, in ``look``."""

    def __init__(self, stop_at: int | None = None) -> None:
        super().__init__()
        self.plain_rules: list[tuple[int, tuple[int, ...]]] = []
        self.next_look = 2
        self.looks: list[int] = []
        self.stop_at = stop_at

    def look(self) -> None:
        self.looks.append(len(self.plain_rules))
        self.next_look += 2
        if self.stop_at is not None and len(self.plain_rules) >= self.stop_at:
            raise ValueError("seen enough plain rules")


def test_a_sink_has_the_plain_rules_appended_and_the_others_called() -> None:
    through_python = observed(False, Recorder())
    sink = observed(True, Sink())
    assert isinstance(sink, Sink)
    plain = [(head[0], tuple(body)) for choice, head, body in through_python.calls if not choice]
    assert sink.plain_rules == plain and len(plain) >= 4
    assert sink.calls == [call for call in through_python.calls if call[0]]
    assert sink.looks == list(range(2, len(plain) + 1, 2))
    assert sink.atoms == through_python.atoms


def test_an_exception_of_the_sinks_look_stops_grounding_and_is_kept() -> None:
    sink = Sink(stop_at=2)
    control, registration = through_c(sink)
    with pytest.raises(RuntimeError, match="seen enough plain rules"):
        control.ground([("base", [])])
    assert isinstance(registration.failure, ValueError)
    assert len(sink.plain_rules) == 2


@pytest.mark.parametrize("make", [Recorder, Sink], ids=["observer", "sink"])
def test_the_observer_goes_with_its_registration_without_the_cyclic_collector(
    make: type[Recorder],
) -> None:
    """Nothing the callbacks hold points back at the registration, so the observer (a
    collector holding the whole ground program) is freed as soon as grounding is done
    with, not at the cyclic collector's next run."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        observer = make()
        control, registration = through_c(observer)
        control.ground([("base", [])])
        gone = weakref.ref(observer)
        del observer, control, registration
        assert gone() is None
    finally:
        if was_enabled:
            gc.enable()


def program_of(game: str, budget: int | None = None) -> GroundProgram:
    rules = parse_gdl((ROOT / "server" / "games" / f"{game}.kif").read_text(encoding="utf-8"))
    return ground(rules, max_rules=10**6, deadline=1e9, budget=budget, work_budget=1e18)


@pytest.mark.source_modules
@pytest.mark.parametrize("game", ["nineBoardTicTacToe", "double_tictactoe_dengji"])
def test_a_game_grounds_to_the_same_program_either_way(
    monkeypatch: pytest.MonkeyPatch, game: str
) -> None:
    through_c = program_of(game)
    monkeypatch.setattr(grounder, "register_rule_observer", lambda control, observer: None)
    through_python = program_of(game)
    assert through_c.rules == through_python.rules and through_c.rules
    assert through_c.choices == through_python.choices
    assert through_c.opened_by == through_python.opened_by
    assert through_c.names == through_python.names
    assert through_c.facts == through_python.facts
    assert through_c.estimate_floor == through_python.estimate_floor


def test_the_rule_budget_stops_grounding_through_the_c_callbacks() -> None:
    with pytest.raises(GroundingOverBudget):
        program_of("nineBoardTicTacToe", budget=100)
