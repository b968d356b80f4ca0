"""The interpreter's per-state work on relations computed on demand and on rules that read
no fluent: what is looked up once per state instead of once per call, what is derived
once per game instead of once per state, and the order of costly tests.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable

import pytest

import server.gdl.interpreter.engine as engine_module
from server.gdl.interpreter import Interpreter
from server.gdl.interpreter.codegen import IndexSpec, Relation, RuleCompiler
from server.gdl.interpreter.engine import (
    CACHED_STATES,
    EAGER_DEPTH,
    MATERIALISE_BUDGET,
    TOP_DOWN_DEPTH,
    TOP_DOWN_STRIKES,
    DemandCall,
    DemandTable,
    fixed_rules,
    release_tables,
)
from server.gdl.interpreter.program import analyse
from server.gdl.parser import parse_gdl
from server.gdl.state import State

LINE = """
(role shooter)
(succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
(target 4) (target 6)
(init (at 1)) (init (blank 2)) (init (blank 3)) (init (blank 5))
(<= (clear ?a ?b) (succ ?a ?b))
(<= (clear ?a ?b) (succ ?a ?c) (true (blank ?c)) (clear ?c ?b))
(<= (legal shooter (shoot ?b)) (true (at ?a)) (target ?b) (clear ?a ?b))
(<= (legal shooter wait) (true (at ?a)))
(<= (next (at ?a)) (true (at ?a)))
(<= (next (blank ?c)) (true (blank ?c)) (not (does shooter (shoot ?c))))
(<= terminal (not (true (blank 2))))
(<= (goal shooter 100) (true (at 1)))
"""
"""``clear`` (a recursive state relation) is asked with both arguments known; its first
rule reads no fluent."""

CLEAR = ("clear", 2)


def on_demand(text: str, *keys: tuple[str, int]) -> Interpreter:
    """An interpreter that computes ``keys`` on demand from the start."""
    engine = Interpreter(parse_gdl(text))
    engine._may_try_budgets = False
    engine._demand.update(keys)
    return engine


def line_state(*blanks: int) -> State:
    return State([("at", "1"), *(("blank", str(cell)) for cell in blanks)])


@pytest.mark.source_modules
def test_a_table_looks_up_what_its_rules_read_once_per_set_of_known_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = on_demand(LINE, CLEAR)
    state = line_state(2, 3, 4, 5)
    assert engine.legal_moves(state, "shooter") == ["wait", ("shoot", "4"), ("shoot", "6")]
    table = engine._contexts[state].db[CLEAR]
    assert isinstance(table, DemandTable)
    call = table.call_for((0, 1))
    assert call.derivers() is call.derivers()

    def no_index(relation: Relation, spec: IndexSpec) -> object:
        raise AssertionError("an index looked up again for another call")

    monkeypatch.setattr(Relation, "index", no_index)
    assert table.lookup((0, 1), ("2", "6")) == (("2", "6"),)
    assert table.lookup((0, 1), ("3", "5")) == (("3", "5"),)
    assert table.lookup((0, 1), ("5", "4")) == ()


def test_answers_and_index_buckets_are_tuples() -> None:
    """Tuples of plain terms are left alone by Python's cyclic garbage collector, where
    lists kept for a state were scanned by every collection until the state was dropped."""
    engine = on_demand(LINE, CLEAR)
    state = line_state(2, 3, 5)  # 4 taken: 6 is out of reach
    assert engine.legal_moves(state, "shooter") == ["wait", ("shoot", "4")]
    table = engine._contexts[state].db[CLEAR]
    assert isinstance(table, DemandTable)
    assert table.call_for((0, 1)).memo[("1", "6")] == ()
    memos = [call.memo for call in table.calls.values()]
    assert all(type(answers) is tuple for memo in memos for answers in memo.values())
    relation = Relation({("a", "1"), ("a", "2"), ("b", "3")})
    index = relation.index(IndexSpec((), ((0,),)))
    assert isinstance(index, dict)
    assert {key: set(bucket) for key, bucket in index.items()} == {
        "a": {("a", "1"), ("a", "2")},
        "b": {("b", "3")},
    }
    assert all(type(bucket) is tuple for bucket in index.values())


def test_rules_that_read_no_fluent_are_found_in_state_components() -> None:
    program = analyse(parse_gdl(LINE))
    clear = program.component_of[CLEAR]
    legal = program.component_of[("legal", 2)]
    found = fixed_rules(program)
    assert (clear, 0) in found
    assert (clear, 1) not in found
    assert not any(component == legal for component, _ in found)
    assert all(program.components[component].layer != "static" for component, _ in found)


def test_a_rule_that_reads_no_fluent_is_derived_once_for_every_state() -> None:
    engine = Interpreter(parse_gdl(LINE))
    engine._may_try_budgets = False
    clear = engine.program.component_of[CLEAR]
    compiled = engine._rules_of(engine.program.components[clear])[0]
    calls = []
    naive = compiled.naive

    def counted(db: dict, add: object) -> None:
        calls.append(1)
        naive(db, add)

    compiled.naive = counted
    expected = {
        (2, 3, 4, 5): ["wait", ("shoot", "4"), ("shoot", "6")],
        (2, 3, 5): ["wait", ("shoot", "4")],
        (2, 5): ["wait"],
    }
    for blanks, moves in expected.items():
        assert engine.legal_moves(line_state(*blanks), "shooter") == moves
    assert len(calls) == 1
    assert engine._fixed_facts[(clear, 0)][0] == {(str(a), str(a + 1)) for a in range(1, 6)}


PAIRS = f"""
(role picker)
{" ".join(f"(index {i})" for i in range(20))}
(init (mark 3)) (init (mark 30))
(<= (pair ?x ?y) (index ?x) (index ?y))
(<= (pair ?x ?x) (true (mark ?x)))
(<= (legal picker (pick ?x)) (true (mark ?x)) (pair ?x 7))
(<= (next (mark ?x)) (true (mark ?x)))
(<= terminal (true (mark 9)))
(<= (goal picker 100) (true (mark 3)))
"""
"""``pair`` depends on the state, and its rule that reads no fluent alone derives 400
facts: past the small budget. (Two marks, so that ``legal`` does not ask ``pair`` about
one mark alone: see :mod:`server.gdl.interpreter.asked`.)"""


def test_a_rule_that_reads_no_fluent_still_spends_the_budget() -> None:
    engine = Interpreter(parse_gdl(PAIRS))
    engine._may_try_budgets = False
    for _ in range(2):
        assert engine.legal_moves(engine.initial_state(), "picker") == [("pick", "3")]
        engine._contexts.clear()
    assert ("pair", 2) in engine._demand
    assert not engine._fixed_facts  # given up at the budget, not kept


def test_a_negated_question_waits_for_the_cheap_filters_bound_before_it() -> None:
    rule = analyse(parse_gdl("(<= (safe ?x) (cell ?x) (not (threatened ?x)) (blank ?x))")).rules[0]
    threatened = ("threatened", 1)
    asked = RuleCompiler(lambda key, spec, constants: 4.0, lambda key: key == threatened)
    assert asked._plan(rule, None) == [0, 2, 1]
    materialised = RuleCompiler(lambda key, spec, constants: 4.0)
    assert materialised._plan(rule, None) == [0, 1, 2]


def failing(env: tuple) -> tuple:
    """``env`` with a function that fails if asked."""

    def ask(*arguments: object) -> None:
        raise AssertionError("a rule asked after the one answer was found")

    return (ask, *env[1:])


def test_a_call_that_knows_every_argument_stops_at_its_answer() -> None:
    engine = on_demand(LINE, CLEAR)
    state = line_state(2, 3, 4, 5)
    engine.legal_moves(state, "shooter")
    table = engine._contexts[state].db[CLEAR]
    assert isinstance(table, DemandTable) and table.solver is not None  # recursive
    call = table.call_for((0, 1))
    first, second = call.derivers()
    call.functions = (first, failing(second))
    assert table.lookup((0, 1), ("4", "5"), True) == (("4", "5"),)
    with pytest.raises(AssertionError, match="asked after"):
        table.lookup((0, 1), ("2", "5"), True)  # not by the first rule: the second is asked


NEAR = """
(role r)
(adjacent 1 2) (adjacent 2 3)
(init (at 1))
(<= (near ?x ?y) (adjacent ?x ?y) (true (at ?x)))
(<= (near ?x ?y) (adjacent ?y ?x) (true (at ?x)))
(<= (legal r (go ?y)) (true (at ?x)) (near ?x ?y))
(<= (next (at ?y)) (does r (go ?y)))
(<= terminal (true (at 3)))
(<= (goal r 100) (true (at 3)))
"""


def test_a_call_without_recursion_that_knows_every_argument_stops_at_its_answer() -> None:
    near = ("near", 2)
    engine = on_demand(NEAR, near)
    state = State([("at", "2")])
    assert engine.legal_moves(state, "r") == [("go", "1"), ("go", "3")]
    table = engine._contexts[state].db[near]
    assert isinstance(table, DemandTable) and table.solver is None
    call = table.call_for((0, 1))
    first, second = call.derivers()
    call.functions = (first, failing(second))
    assert table.lookup((0, 1), ("2", "3"), True) == (("2", "3"),)
    with pytest.raises(AssertionError, match="asked after"):
        table.lookup((0, 1), ("2", "1"), True)


EDGES = """
(role r)
(seed 0 7)
(init (edge 1 7))
(<= (link ?x ?y) (seed ?x ?y))
(<= (link ?x ?y) (true (edge ?x ?y)))
(<= (legal r (from ?x)) (link ?x 7))
(<= (next (edge ?x ?y)) (true (edge ?x ?y)))
(<= terminal (true (edge 0 0)))
(<= (goal r 100) (true (edge 1 7)))
"""
"""``link``'s first rule reads no fluent; its second grows past the small budget in a
state with many edges."""


def test_the_facts_of_a_rule_that_reads_no_fluent_go_when_its_relation_goes_on_demand() -> None:
    engine = Interpreter(parse_gdl(EDGES))
    engine._may_try_budgets = False
    link = engine.program.component_of[("link", 2)]
    small = State([("edge", "1", "7")])
    assert engine.legal_moves(small, "r") == [("from", "0"), ("from", "1")]
    assert (link, 0) in engine._fixed_facts
    large = State([("edge", str(x), str(y)) for x in range(20) for y in range(20)])
    assert len(engine.legal_moves(large, "r")) == 20  # 0 to 19, 0 from both rules
    assert ("link", 2) in engine._demand
    assert (link, 0) not in engine._fixed_facts
    assert engine.legal_moves(small, "r") == [("from", "0"), ("from", "1")]


def test_a_trial_copy_keeps_its_own_facts_of_rules_that_read_no_fluent() -> None:
    engine = Interpreter(parse_gdl(LINE))
    engine.legal_moves(line_state(2, 3), "shooter")
    assert engine._fixed_facts
    other = engine._with_state_budget(MATERIALISE_BUDGET)
    assert other._fixed_facts == {}
    other.legal_moves(line_state(2, 3), "shooter")
    assert other._fixed_facts and other._fixed_facts is not engine._fixed_facts


def _cyclic_garbage(play: Callable[[], None]) -> list[object]:
    """What ``play`` leaves that only the cyclic garbage collector would free."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        play()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def unshared(text: str, *keys: tuple[str, int]) -> Interpreter:
    """As :func:`on_demand`, with no state relation shared between states."""
    engine = on_demand(text, *keys)
    engine._state_sharing.heads.clear()
    return engine


def every_line_state() -> list[State]:
    """The states of LINE with the shooter anywhere and any cells blank."""
    return [
        State([("at", str(at)), *(("blank", str(cell)) for cell in blanks)])
        for at in range(1, 6)
        for count in range(5)
        for blanks in itertools.combinations((2, 3, 4, 5), count)
    ]


def test_the_tables_of_a_state_dropped_from_the_cache_leave_no_cycle() -> None:
    """A table refers to the relations of its state, which hold the table: once the state
    leaves the cache, the table lets go of them, and the state is freed at once (chess
    spent a fifth of its time in full collections freeing such states)."""
    engine = unshared(LINE, CLEAR)
    states = every_line_state()
    assert len(states) > 2 * CACHED_STATES

    def play() -> None:
        for state in states:
            engine.legal_moves(state, "shooter")
            engine.next_state(state, ["wait"])

    garbage = _cyclic_garbage(play)
    assert not [item for item in garbage if isinstance(item, DemandTable)]
    held: list[object] = [value for c in engine._contexts.values() for value in c.db.values()]
    kept = [table for table in held if isinstance(table, DemandTable)]
    assert kept
    assert all(table.lookup((0, 1), ("1", "2")) == (("1", "2"),) for table in kept)


def test_a_released_table_refuses_questions_rather_than_answer_from_nothing() -> None:
    engine = unshared(LINE, CLEAR)
    state = line_state(2, 3, 4, 5)
    engine.legal_moves(state, "shooter")
    table = engine._contexts[state].db[CLEAR]
    assert isinstance(table, DemandTable)
    assert not table.shared
    release_tables(engine._contexts[state].db, [CLEAR])
    with pytest.raises(KeyError):
        table.lookup((0, 1), ("1", "4"))


def test_a_table_shared_with_other_states_is_not_released() -> None:
    engine = on_demand(LINE, CLEAR)
    state = line_state(2, 3, 4, 5)
    engine.legal_moves(state, "shooter")
    db = engine._contexts[state].db
    table = db[CLEAR]
    assert isinstance(table, DemandTable)
    assert table.shared  # its component is shared between states with the same blanks
    release_tables(db, [CLEAR])
    assert table.db is db
    assert table.lookup((0, 1), ("1", "4")) == (("1", "4"),)


GRAPH = """
(role walker)
(init (edge a b)) (init (edge b c)) (init (edge c a)) (init (edge c d)) (init (edge d e))
(init (at a))
(<= (reach ?x ?y) (true (edge ?x ?y)))
(<= (reach ?x ?y) (true (edge ?x ?z)) (reach ?z ?y))
(<= (legal walker (go ?y)) (true (at ?x)) (reach ?x ?y))
(<= (next (at ?y)) (does walker (go ?y)))
(<= (next (edge ?x ?y)) (true (edge ?x ?y)))
(<= terminal (true (at e)))
(<= (goal walker 100) (true (at e)))
"""
"""``reach`` runs through a cycle (a, b, c): a call's answers come back to it."""

REACH = ("reach", 2)


def count_evaluations(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The calls whose rules run from now on, top-down or in a fixpoint, as (positions,
    values), once per run."""
    evaluated: list[tuple] = []
    derive = DemandCall.derive

    def counted(self: DemandCall, values: tuple, facts: set) -> None:
        evaluated.append((self.positions, values))
        derive(self, values, facts)

    monkeypatch.setattr(DemandCall, "derive", counted)
    return evaluated


def forget_answers(table: DemandTable) -> None:
    """Empty a table's memos in place (the generated rules read these dictionaries)."""
    for call in table.calls.values():
        call.memo.clear()


@pytest.mark.source_modules
def test_a_chain_of_calls_evaluates_each_call_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call along ``clear 1 6``, ``clear 2 6``, ... is evaluated once, top-down: the
    answer of the next one is found before the call goes on."""
    engine = unshared(LINE, CLEAR)
    state = line_state(2, 3, 4, 5)
    engine.legal_moves(state, "shooter")
    table = engine._contexts[state].db[CLEAR]
    assert isinstance(table, DemandTable)
    evaluated = count_evaluations(monkeypatch)
    forget_answers(table)
    assert table.lookup((0, 1), ("1", "6")) == (("1", "6"),)
    asked = list(table.call_for((0, 1)).memo)
    assert asked == [("5", "6"), ("4", "6"), ("3", "6"), ("2", "6"), ("1", "6")]
    assert sorted(evaluated) == sorted(((0, 1), values) for values in asked)
    assert engine._cyclic_strikes == {}


@pytest.mark.source_modules
def test_a_call_that_asks_itself_is_answered_by_the_fixpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``reach b ?`` asks ``reach c ?``, which asks ``reach b ?`` again: the top-down
    evaluation stops there, and the fixpoint finds every answer. Calls answered top-down
    before the cycle stay answered; once a relation has been found cyclic
    TOP_DOWN_STRIKES times, its calls go straight to the fixpoint."""
    engine = on_demand(GRAPH, REACH)
    state = engine.initial_state()
    engine.legal_moves(state, "walker")
    table = engine._contexts[state].db[REACH]
    assert isinstance(table, DemandTable)
    strikes = engine._cyclic_strikes[REACH]
    assert strikes >= 1  # the legal moves asked reach a ?, through the cycle
    evaluated = count_evaluations(monkeypatch)
    forget_answers(table)
    assert sorted(table.lookup((0,), ("d",))) == [("d", "e")]  # no cycle from d
    assert evaluated == [((0,), ("d",)), ((0,), ("e",))]
    assert engine._cyclic_strikes[REACH] == strikes
    assert sorted(table.lookup((0,), ("b",))) == [("b", end) for end in "abcde"]
    assert engine._cyclic_strikes[REACH] == strikes + 1
    assert ((0,), ("d",)) not in evaluated[2:]  # kept from the first call
    for _ in range(TOP_DOWN_STRIKES):
        forget_answers(table)
        assert sorted(table.lookup((0,), ("c",))) == [("c", end) for end in "abcde"]
    assert engine._cyclic_strikes[REACH] == TOP_DOWN_STRIKES
    evaluated.clear()
    forget_answers(table)
    assert sorted(table.lookup((0,), ("d",))) == [("d", "e")]
    assert evaluated == [((0,), ("d",)), ((0,), ("e",))]  # by the fixpoint now
    assert engine._cyclic_strikes[REACH] == TOP_DOWN_STRIKES


def long_line(cells: int) -> str:
    """LINE with ``cells`` cells, every cell but the first blank."""
    succ = " ".join(f"(succ {k} {k + 1})" for k in range(1, cells))
    blanks = " ".join(f"(init (blank {k}))" for k in range(2, cells))
    return (
        LINE.replace("(succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)", succ)
        .replace("(init (blank 2)) (init (blank 3)) (init (blank 5))", blanks)
        .replace("(target 4) (target 6)", f"(target {cells})")
    )


def test_a_chain_deeper_than_the_top_down_limit_is_answered_by_the_fixpoint() -> None:
    """A chain of calls nested past TOP_DOWN_DEPTH is not followed top-down (Python's
    stack stays short): the fixpoint answers it, the same answers."""
    cells = TOP_DOWN_DEPTH + 10
    engine = on_demand(long_line(cells), CLEAR)
    state = engine.initial_state()
    assert engine.legal_moves(state, "shooter") == ["wait", ("shoot", str(cells))]
    assert engine._cyclic_strikes[CLEAR] >= 1
    short = on_demand(long_line(TOP_DOWN_DEPTH - 1), CLEAR)
    short_state = short.initial_state()
    assert short.legal_moves(short_state, "shooter") == [
        "wait",
        ("shoot", str(TOP_DOWN_DEPTH - 1)),
    ]
    assert short._cyclic_strikes == {}


@pytest.mark.parametrize("depth", [0, 1, 2, EAGER_DEPTH])
def test_calls_through_a_cycle_find_every_answer_at_any_depth_evaluated_at_once(
    monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    monkeypatch.setattr(engine_module, "EAGER_DEPTH", depth)
    engine = on_demand(GRAPH, REACH)
    state = engine.initial_state()
    moves = engine.legal_moves(state, "walker")
    assert moves == [("go", "a"), ("go", "b"), ("go", "c"), ("go", "d"), ("go", "e")]
    table = engine._contexts[state].db[REACH]
    assert isinstance(table, DemandTable)
    for start, reached in (("b", "abcde"), ("d", "e"), ("e", "")):
        assert sorted(table.lookup((0,), (start,))) == [(start, end) for end in reached]
    assert table.lookup((0, 1), ("c", "b"), True) == (("c", "b"),)
    assert table.lookup((0, 1), ("d", "a"), True) == ()


@pytest.mark.source_modules
def test_the_rules_read_known_answers_without_calling_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call asked again is answered from the table's memo by the generated rule itself:
    most lookups repeat (four_way_battle: 99 % of 850 a transition), and a call of
    ``lookup`` for each cost a fifth of the time. Here two legal rules ask the same
    questions of ``clear``: the second finds the answers without calling the table."""
    aiming = LINE + "(<= (legal shooter (aim ?b)) (true (at ?a)) (target ?b) (clear ?a ?b))"
    engine = on_demand(aiming, CLEAR)
    asked: list[tuple] = []
    ask = DemandCall.ask

    def counted(self: DemandCall, values: tuple, first: bool = False) -> tuple:
        asked.append((self.positions, values))
        return ask(self, values, first)

    monkeypatch.setattr(DemandCall, "ask", counted)
    state = line_state(2, 3, 4, 5)
    assert engine.legal_moves(state, "shooter") == [
        "wait",
        ("aim", "4"),
        ("aim", "6"),
        ("shoot", "4"),
        ("shoot", "6"),
    ]
    assert asked.count(((0, 1), ("1", "6"))) == 1
    assert asked.count(((0, 1), ("1", "4"))) == 1
    table = engine._contexts[state].db[CLEAR]
    assert table.call_for((0, 1)).memo[("1", "6")] == (("1", "6"),)


def triples_game(values: int) -> str:
    """A static relation of ``values`` cubed facts, asked with its first argument known
    and the others free."""
    numbers = " ".join(f"(n {k})" for k in range(values))
    return f"""
    (role mover) {numbers}
    (init (at 0))
    (<= (triple ?a ?b ?c) (n ?a) (n ?b) (n ?c))
    (<= (legal mover (go ?b ?c)) (true (at ?a)) (triple ?a ?b ?c) (small ?b) (small ?c))
    (small 0) (small 1)
    (<= (next (at ?c)) (does mover (go ?b ?c)))
    (<= terminal (true (at 1)))
    (goal mover 100)
    """


def test_a_static_relation_is_materialised_up_to_its_own_larger_budget() -> None:
    """Static relations are computed once per game, so they are materialised up to
    STATIC_MATERIALISE_BUDGET (and read through indexes whatever their callers know)
    rather than the 30,000 facts of the other layers' relations."""
    assert MATERIALISE_BUDGET < 40**3 < engine_module.STATIC_MATERIALISE_BUDGET < 50**3
    moves = [("go", "0", "0"), ("go", "0", "1"), ("go", "1", "0"), ("go", "1", "1")]
    materialised = Interpreter(parse_gdl(triples_game(40)))
    assert ("triple", 3) not in materialised._static_demand
    assert len(materialised._static[("triple", 3)].facts) == 40**3
    on_demand = Interpreter(parse_gdl(triples_game(50)))
    assert ("triple", 3) in on_demand._static_demand
    for engine in (materialised, on_demand):
        assert engine.legal_moves(engine.initial_state(), "mover") == moves
