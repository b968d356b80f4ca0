"""The ground program read through clingo's C interface is the one its Python observer
reads, and grounding stops with the observer's exception; with the C rule buffer
(``_rule_buffer.c``) as without it."""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path

import clingo
import pytest

from server.gdl.compiled import GroundingOverBudget, grounder, rule_observer
from server.gdl.compiled.grounder import GroundProgram, _Collector, ground
from server.gdl.compiled.rule_observer import (
    RULE_BUFFER,
    RULE_POINTER,
    Registration,
    register_rule_observer,
)
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


BUFFERED = [
    pytest.param(False, id="python-callback"),
    pytest.param(
        True,
        id="c-buffer",
        marks=pytest.mark.skipif(
            RULE_BUFFER is None and not os.environ.get("CI"), reason="no C rule buffer built"
        ),
    ),
]
"""Whether a sink's plain rules go through the C buffer or a Python callback (CI installs
with a C compiler, so there the buffer must be there)."""


def through_c(observer: Recorder, buffered: bool = True) -> tuple[clingo.Control, Registration]:
    """A control with PROGRAM added, ``observer`` registered through the C callbacks."""
    control = clingo.Control(["--warn=none"])
    registration = register_rule_observer(control, observer, buffered)
    assert registration is not None
    uses_buffer = buffered and isinstance(observer, Sink) and RULE_BUFFER is not None
    assert (registration.buffer is not None) == uses_buffer
    control.add("base", [], PROGRAM)
    return control, registration


def observed(c_callbacks: bool, observer: Recorder, buffered: bool = True) -> Recorder:
    """``observer``, after PROGRAM was grounded through the C callbacks or clingo's
    Python observer."""
    if c_callbacks:
        control, registration = through_c(observer, buffered)
        control.ground([("base", [])])
        registration.finish()
        return observer
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


@pytest.mark.parametrize("buffered", BUFFERED)
def test_a_sink_has_the_plain_rules_appended_and_the_others_called(buffered: bool) -> None:
    through_python = observed(False, Recorder())
    sink = observed(True, Sink(), buffered)
    assert isinstance(sink, Sink)
    plain = [(head[0], tuple(body)) for choice, head, body in through_python.calls if not choice]
    assert sink.plain_rules == plain and len(plain) >= 4
    assert sink.calls == [call for call in through_python.calls if call[0]]
    assert sink.looks == list(range(2, len(plain) + 1, 2))
    assert sink.atoms == through_python.atoms


@pytest.mark.parametrize("buffered", BUFFERED)
def test_an_exception_of_the_sinks_look_stops_grounding_and_is_kept(buffered: bool) -> None:
    sink = Sink(stop_at=2)
    control, registration = through_c(sink, buffered)
    with pytest.raises(RuntimeError, match="seen enough plain rules"):
        control.ground([("base", [])])
    assert isinstance(registration.failure, ValueError)
    assert len(sink.plain_rules) == 2


@pytest.mark.parametrize("buffered", BUFFERED)
@pytest.mark.parametrize("make", [Recorder, Sink], ids=["observer", "sink"])
def test_the_observer_goes_with_its_registration_without_the_cyclic_collector(
    make: type[Recorder], buffered: bool
) -> None:
    """Nothing the callbacks hold points back at the registration, so the observer (a
    collector holding the whole ground program) is freed as soon as grounding is done
    with, not at the cyclic collector's next run."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        observer = make()
        control, registration = through_c(observer, buffered)
        control.ground([("base", [])])
        registration.finish()
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


@pytest.mark.parametrize("game", ["nineBoardTicTacToe", "double_tictactoe_dengji"])
def test_a_game_grounds_to_the_same_program_with_and_without_the_c_buffer(
    monkeypatch: pytest.MonkeyPatch, game: str
) -> None:
    if RULE_BUFFER is None and not os.environ.get("CI"):
        pytest.skip("no C rule buffer built")
    buffered = program_of(game)
    monkeypatch.setattr(rule_observer, "RULE_BUFFER", None)
    unbuffered = program_of(game)
    assert buffered.rules == unbuffered.rules and len(buffered.rules) > 300
    assert buffered.choices == unbuffered.choices
    assert buffered.opened_by == unbuffered.opened_by
    assert buffered.names == unbuffered.names
    assert buffered.estimate_floor == unbuffered.estimate_floor


def test_a_collector_is_a_sink_the_c_buffer_takes() -> None:
    registration = register_rule_observer(clingo.Control(), _Collector(10, 1e9))
    assert registration is not None
    assert (registration.buffer is not None) == (RULE_BUFFER is not None)


class CBuffer:
    """The C buffer driven as clingo drives it: its C function called with each rule."""

    def __init__(self, next_look: int = 3, stop_at: int = 0, raise_at: int = 0) -> None:
        assert RULE_BUFFER is not None and rule_observer._ffi is not None
        self.ffi = rule_observer._ffi
        self.rules: list[tuple[int, tuple[int, ...]]] = []
        self.looks: list[int] = []
        self.others: list[tuple[bool, list[int], list[int]]] = []
        self.stop_at, self.raise_at = stop_at, raise_at
        self.buffer = RULE_BUFFER.RuleBuffer(self.rules, self.look, self.other, next_look)
        self.callback = self.ffi.cast(RULE_POINTER, RULE_BUFFER.RULE_CALLBACK)

    def look(self) -> int:
        count = len(self.rules)
        self.looks.append(count)
        if self.raise_at and count >= self.raise_at:
            raise ValueError("raised in look")
        return 0 if self.stop_at and count >= self.stop_at else count + 3

    def other(self, choice: bool, head: list[int], body: list[int]) -> bool:
        self.others.append((choice, head, body))
        return True

    def rule(self, head: list[int], body: list[int], choice: bool = False) -> bool:
        """What the C function answers clingo for one rule."""
        heads = self.ffi.new("clingo_atom_t[]", head) if head else self.ffi.NULL
        literals = self.ffi.new("clingo_literal_t[]", body) if body else self.ffi.NULL
        data = self.ffi.cast("void *", self.buffer.address)
        return bool(self.callback(choice, heads, len(head), literals, len(body), data))


needs_c_buffer = pytest.mark.skipif(
    RULE_BUFFER is None and not os.environ.get("CI"), reason="no C rule buffer built"
)


@needs_c_buffer
def test_the_c_buffer_hands_over_plain_rules_in_batches_and_others_at_once() -> None:
    driven = CBuffer(next_look=3)
    assert driven.rule([7], [1, -2])
    assert driven.rule([8], [])
    assert driven.rules == [] and driven.buffer.buffered == 2
    assert driven.rule([5], [9], choice=True)  # the plain rules before it go first
    assert driven.rules == [(7, (1, -2)), (8, ())]
    assert driven.others == [(True, [5], [9])]
    assert driven.rule([], [3, 4])  # a constraint: not one head
    assert driven.others[-1] == (False, [], [3, 4])
    assert driven.rule([9], [2**31 - 1, -(2**31) + 1])  # the third plain rule: a look
    assert driven.looks == [3] and driven.buffer.buffered == 0
    assert driven.rules[-1] == (9, (2**31 - 1, -(2**31) + 1))
    assert driven.rule([10], [1])
    assert driven.buffer.buffered == 1
    driven.buffer.flush()
    assert driven.rules[-1] == (10, (1,)) and driven.buffer.buffered == 0
    assert driven.buffer.error is None


@needs_c_buffer
def test_the_c_buffer_stops_when_look_says_so_or_raises() -> None:
    stopped = CBuffer(next_look=2, stop_at=2)
    assert stopped.rule([1], [])
    assert not stopped.rule([2], [])
    assert stopped.rules == [(1, ()), (2, ())] and stopped.buffer.error is None
    raised = CBuffer(next_look=2, raise_at=2)
    assert raised.rule([1], [])
    assert not raised.rule([2], [])
    assert isinstance(raised.buffer.error, ValueError)
    assert str(raised.buffer.error) == "raised in look"
