"""The compiled engine's next state, one kind of ``next`` rule at a time.

Each game is tiny; each test plays a position and states the next one, then the
compiled engine must agree with the interpreter on every joint move of every state
it can reach. Covers the generated parts of the next-state function: fluents kept
unless a move kills them (frame rules), fluents set by one move (per-move tables, also when one any-of test joins the fluent
and several roles' moves),
fluents always true, rules dispatched on one move among many, rules that test
the state only, and fluents set when any of several fluents at the same distances holds.
"""

from __future__ import annotations

import re

import pytest
from compiled_checks import reachable_states, state_disagreements

from server.gdl.compiled import CompiledEngine
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl, parse_term
from server.gdl.state import State
from server.gdl.terms import to_kif

LAMPS = """
(role p)
(init (on 1)) (init (on 3)) (init armed)
(lamp 1) (lamp 2) (lamp 3) (lamp 4) (lamp 5) (lamp 6)
(<= (legal p (toggle ?x)) (lamp ?x))
(<= (legal p wait) (true armed))
; frame: a lamp stays on unless it is toggled
(<= (next (on ?x)) (true (on ?x)) (not (does p (toggle ?x))))
; set by one move: toggling a lamp that is off turns it on
(<= (next (on ?x)) (does p (toggle ?x)) (not (true (on ?x))))
; one move among many, and the state: toggling lamp 5 while armed fires
(<= (next fired) (does p (toggle 5)) (true armed))
; always true
(<= (next ticking) (role p))
; the state alone: armed while lamp 1 is off or lamp 2 on, or after waiting
(<= (next armed) (not (true (on 1))))
(<= (next armed) (true (on 2)))
(<= (next armed) (does p wait))
(<= terminal (true fired))
(goal p 100)
"""

MEETING = """
(role a) (role b)
(init (at a 1)) (init (at b 3))
(place 1) (place 2) (place 3)
(<= (legal ?r (go ?x)) (role ?r) (place ?x))
(<= (next (at ?r ?x)) (does ?r (go ?x)))
(<= (next met) (does a (go ?x)) (does b (go ?x)))
(<= (next (apart ?x ?y)) (does a (go ?x)) (does b (go ?y)) (distinct ?x ?y))
(<= terminal (true met))
(goal a 50) (goal b 50)
"""

WALLS = """
(role p)
(init (wall 1)) (init (wall 3)) (init (lit 2)) (init (count 0))
(cell 1) (cell 2) (cell 3)
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (dark ?x) (cell ?x) (not (true (lit ?x))))
(<= (legal p (light ?x)) (dark ?x))
(legal p rest)
; walls never change, whatever is played
(<= (next (wall ?x)) (true (wall ?x)))
; a lit cell stays lit while wall 1 stands: no move can put it out
(<= (next (lit ?x)) (true (lit ?x)) (true (wall 1)))
; a move lights a cell the view relation calls dark
(<= (next (lit ?x)) (does p (light ?x)) (dark ?x))
(<= (next (count ?n)) (true (count ?m)) (succ ?m ?n))
(<= terminal (true (count 3)))
(goal p 100)
"""

MARKS = """
(role a) (role b)
(init (turn a))
(cell 1) (cell 2) (cell 3)
(mark x) (mark o)
(<= (taken ?c) (true (at ?c ?m)))
(<= (legal ?r (play ?c ?m)) (true (turn ?r)) (cell ?c) (mark ?m) (not (taken ?c)))
(<= (legal ?r noop) (role ?r) (not (true (turn ?r))))
; a mark stays, and either role's move sets it: one any-of test of the fluent and
; both moves, which the per-move tables take
(<= (next (at ?c ?m)) (true (at ?c ?m)))
(<= (next (at ?c ?m)) (does ?r (play ?c ?m)))
; any mark on the cell or a move on it: other fluents among the bits, left as code
(<= (next (seen ?c)) (true (at ?c ?m)))
(<= (next (seen ?c)) (does ?r (play ?c ?m)))
(<= (next (turn b)) (true (turn a)))
(<= (next (turn a)) (true (turn b)))
(<= terminal (taken 1) (taken 2) (taken 3))
(goal a 50) (goal b 50)
"""

PITS = """
(role p)
(init (pit 1 2)) (init (pit 2 0)) (init (pit 3 1)) (init (pit 4 3)) (init (level 0))
(pit 1) (pit 2) (pit 3) (pit 4)
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
(<= (legal p (sow ?x)) (true (pit ?x ?n)) (distinct ?n 0))
(legal p up)
(legal p down)
; a pit keeps its count unless it is sown, under every move: copied fluents, many of
; them under the same other literals
(<= (next (pit ?x ?n)) (true (pit ?x ?n)) (does p (sow ?y)) (distinct ?x ?y))
(<= (next (pit ?x ?n)) (true (pit ?x ?n)) (does p up))
(<= (next (pit ?x ?n)) (true (pit ?x ?n)) (does p down) (true (level 0)))
(<= (next (pit ?x 0)) (does p (sow ?x)))
; the level goes up or down by one: fluents moved by the same number of bits
(<= (next (level ?n)) (does p up) (true (level ?m)) (succ ?m ?n))
(<= (next (level ?m)) (does p down) (true (level ?n)) (succ ?m ?n))
(<= (next (level 0)) (does p down) (true (level 0)))
(<= (next (level ?n)) (true (level ?n)) (does p (sow ?x)))
(<= terminal (true (level 5)))
(<= terminal (not (true (pit 1 2))) (not (true (pit 4 3))))
(goal p 100)
"""

TRAILS = """
(role a) (role b)
(init (at a 1)) (init (at b 8)) (init (step 0)) (init power)
(adj 1 2) (adj 2 3) (adj 3 4) (adj 4 5) (adj 5 6) (adj 6 7) (adj 7 8)
(<= (adj ?y ?x) (adj ?x ?y))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
(<= (legal ?r (move ?y)) (true (at ?r ?x)) (adj ?x ?y))
(<= (legal ?r stay) (role ?r))
(<= (next (at ?r ?y)) (does ?r (move ?y)))
(<= (next (at ?r ?x)) (true (at ?r ?x)) (does ?r stay))
; a cell stays visited, or is visited when either player is on it: each cell's
; visited fluent is set from any of three fluents, all at the same distances from it
(<= (next (visited ?c)) (true (visited ?c)))
(<= (next (visited ?c)) (true (at ?r ?c)))
; a cell glows while the power is on and a player stands on it: either fluent may be
; copied, the other joining the condition; the cells share the power
(<= (next (glow ?c)) (true power) (true (at ?r ?c)))
(<= (next power) (not (true power)))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= terminal (true (step 6)))
(<= (goal a 100) (true (visited 4)))
(<= (goal a 0) (not (true (visited 4))))
(goal b 50)
"""


def _state(*facts: str) -> State:
    return State(parse_term(fact) for fact in facts)


def _next(text: str, state: State, *moves: str) -> set[str]:
    engine = CompiledEngine.from_rules(parse_gdl(text))
    after = engine.next_state(state, [parse_term(move) for move in moves])
    return {str(fact) for fact in after.fluents}


def test_a_lamp_stays_on_unless_toggled_and_a_toggled_lamp_turns_on() -> None:
    before = _state("(on 1)", "(on 3)", "armed")
    assert _next(LAMPS, before, "(toggle 2)") == {
        "(on 1)", "(on 2)", "(on 3)", "ticking"
    }  # fmt: skip
    assert _next(LAMPS, before, "(toggle 3)") == {"(on 1)", "ticking"}


def test_armed_follows_the_state_before_the_move_and_lamp_five_fires_only_when_armed() -> None:
    assert _next(LAMPS, _state("(on 1)", "armed"), "(toggle 1)") == {"ticking"}
    assert _next(LAMPS, _state("(on 4)"), "(toggle 1)") == {"(on 1)", "(on 4)", "armed", "ticking"}
    assert _next(LAMPS, _state("(on 1)", "(on 2)"), "(toggle 2)") == {"(on 1)", "armed", "ticking"}
    assert _next(LAMPS, _state("(on 1)", "armed"), "(toggle 5)") == {
        "(on 1)", "(on 5)", "fired", "ticking"
    }  # fmt: skip
    assert _next(LAMPS, _state("(on 1)"), "(toggle 5)") == {"(on 1)", "(on 5)", "ticking"}


def test_each_of_six_moves_reaches_its_own_rule() -> None:
    empty = _state("(on 1)")
    for lamp in "23456":
        assert f"(on {lamp})" in _next(LAMPS, empty, f"(toggle {lamp})")
        assert {f"(on {other})" for other in "23456" if other != lamp}.isdisjoint(
            _next(LAMPS, empty, f"(toggle {lamp})")
        )


def test_waiting_keeps_every_lamp_and_arms() -> None:
    before = _state("(on 1)", "(on 4)", "armed")
    assert _next(LAMPS, before, "wait") == {"(on 1)", "(on 4)", "armed", "ticking"}


def test_simultaneous_moves_meet_or_stay_apart() -> None:
    start = _state("(at a 1)", "(at b 3)")
    assert _next(MEETING, start, "(go 2)", "(go 2)") == {"(at a 2)", "(at b 2)", "met"}
    assert _next(MEETING, start, "(go 1)", "(go 3)") == {"(at a 1)", "(at b 3)", "(apart 1 3)"}


def test_walls_persist_lit_cells_stay_lit_and_a_move_lights_a_dark_cell() -> None:
    start = _state("(wall 1)", "(wall 3)", "(lit 2)", "(count 0)")
    assert _next(WALLS, start, "(light 1)") == {
        "(wall 1)", "(wall 3)", "(lit 1)", "(lit 2)", "(count 1)"
    }  # fmt: skip
    assert _next(WALLS, start, "rest") == {"(wall 1)", "(wall 3)", "(lit 2)", "(count 1)"}
    no_wall_one = _state("(wall 3)", "(lit 2)", "(count 1)")
    assert _next(WALLS, no_wall_one, "(light 3)") == {"(wall 3)", "(lit 3)", "(count 2)"}


def test_a_mark_either_role_sets_is_kept_and_set_by_the_per_move_tables() -> None:
    engine = CompiledEngine.from_rules(parse_gdl(MARKS))
    assert engine.plan.next is not None
    in_code = {to_kif(engine.fluents[bit.bit_length() - 1]) for _, bit in engine.plan.next.general}
    assert not any(fluent.startswith("(at ") for fluent in in_code)
    assert {"(seen 1)", "(seen 2)", "(seen 3)"} <= in_code
    start = _state("(turn b)", "(at 1 x)")
    assert _next(MARKS, start, "noop", "(play 2 o)") == {
        "(turn a)", "(at 1 x)", "(at 2 o)", "(seen 1)", "(seen 2)"
    }  # fmt: skip


def test_copied_and_shifted_fluents_are_set_by_one_mask_operation_each() -> None:
    engine = CompiledEngine.from_rules(parse_gdl(PITS))
    assert ") >> 1" in engine.source or ") << 1" in engine.source  # the level, moved
    assert "n |= X & " in engine.source  # the pits kept, copied
    before = _state("(pit 1 2)", "(pit 2 0)", "(pit 3 1)", "(pit 4 3)", "(level 2)")
    assert _next(PITS, before, "up") == {
        "(pit 1 2)", "(pit 2 0)", "(pit 3 1)", "(pit 4 3)", "(level 3)"
    }  # fmt: skip
    assert _next(PITS, before, "down") == {"(level 1)"}
    assert _next(PITS, before, "(sow 3)") == {
        "(pit 1 2)", "(pit 2 0)", "(pit 3 0)", "(pit 4 3)", "(level 2)"
    }  # fmt: skip


def test_fluents_set_from_any_of_several_at_the_same_distances_are_set_by_shifting() -> None:
    engine = CompiledEngine.from_rules(parse_gdl(TRAILS))
    assert re.search(r"n \|= \(X \| X >> \d+ \| X >> \d+\) & \d+", engine.source)
    before = _state("(at a 3)", "(at b 6)", "(visited 1)", "(visited 3)", "(step 2)")
    assert _next(TRAILS, before, "(move 4)", "stay") == {
        "(at a 4)", "(at b 6)", "(visited 1)", "(visited 3)", "(visited 6)", "(step 3)", "power"
    }  # fmt: skip
    assert _next(TRAILS, _state("(at a 2)", "(at b 2)", "power"), "stay", "(move 1)") == {
        "(at a 2)", "(at b 1)", "(visited 2)", "(glow 2)"
    }  # fmt: skip


def test_fluents_copied_under_another_fluent_are_grouped_by_the_one_they_share() -> None:
    source = CompiledEngine.from_rules(parse_gdl(TRAILS)).source
    next_code = source[source.index("def next(") : source.index("def playout(")]
    assert re.findall(r"if X & \d+:\n\s+n \|= \d+\n", next_code) == []  # no cell one by one
    assert len(re.findall(r"n \|= \(X & \d+\) >> \d+", next_code)) == 2  # one shift a player
    before = _state("(at a 3)", "(at b 6)", "power", "(glow 1)")
    assert {"(glow 3)", "(glow 6)"} == {
        fact for fact in _next(TRAILS, before, "stay", "stay") if fact.startswith("(glow")
    }


@pytest.mark.parametrize(
    "text",
    [LAMPS, MEETING, WALLS, MARKS, PITS, TRAILS],
    ids=["lamps", "meeting", "walls", "marks", "pits", "trails"],
)
def test_every_joint_move_of_every_reachable_state_agrees_with_the_interpreter(
    text: str,
) -> None:
    rules = parse_gdl(text)
    compiled, interpreter = CompiledEngine.from_rules(rules), Interpreter(rules)
    states = reachable_states(compiled, limit=80)
    assert len(states) >= 10
    assert state_disagreements(compiled, interpreter, states) == []
