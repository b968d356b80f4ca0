"""The interpreter's work per state: state relations shared between states that agree on
the fluents they depend on, matched facts reused instead of rebuilt, a successor's facts
handed over grouped by head, and join estimates that count only the facts a literal can
match.
"""

from __future__ import annotations

from server.gdl.interpreter import Interpreter
from server.gdl.interpreter.codegen import Relation, RuleCompiler
from server.gdl.interpreter.engine import NEXT_KEY, TRUE_KEY, move_rule_heads, true_heads
from server.gdl.interpreter.program import FlatRule, analyse, relation_key
from server.gdl.parser import parse_gdl
from server.gdl.state import State
from server.gdl.terms import wrap

MAZE = """
(role walker)
(index 1) (index 2) (index 3)
(init (at 1)) (init (wall 2)) (init (step 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (open ?x) (index ?x) (not (true (wall ?x))))
(<= (reachable ?x) (open ?x))
(<= (legal walker (go ?x)) (reachable ?x) (true (at ?y)) (distinct ?x ?y))
(<= (legal walker stay) (true (at ?y)))
(<= (next (at ?x)) (does walker (go ?x)))
(<= (next (at ?y)) (does walker stay) (true (at ?y)))
(<= (next (wall ?x)) (true (wall ?x)))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= (anything ?x) (true ?x))
(<= (seen ?x) (anything ?x))
(<= terminal (true (step 3)))
(<= (goal walker 100) (true (at 3)))
(<= (goal walker 0) (not (true (at 3))))
"""
"""``open`` and ``reachable`` depend on the walls only; ``anything`` on every fluent."""


def components_of(program_rules: str) -> tuple[Interpreter, dict[str, int]]:
    engine = Interpreter(parse_gdl(program_rules))
    program = engine.program
    index_of = {
        key if isinstance(key, str) else key[0]: index
        for key, index in program.component_of.items()
    }
    return engine, index_of


def state(*fluents: tuple[str, ...]) -> State:
    return State(fluents)


def test_state_relations_are_shared_by_the_heads_they_depend_on() -> None:
    engine, index_of = components_of(MAZE)
    heads = true_heads(engine.program)
    assert heads[index_of["open"]] == ("wall",)
    assert heads[index_of["reachable"]] == ("wall",)
    assert heads[index_of["legal"]] == ("at", "wall")
    assert index_of["anything"] not in heads  # (true ?x): every fluent
    assert index_of["seen"] not in heads  # through ``anything``


def test_states_with_the_same_walls_share_the_relation_and_others_do_not() -> None:
    engine, _ = components_of(MAZE)
    first = state(("at", "1"), ("wall", "2"), ("step", "0"))
    moved = state(("at", "3"), ("wall", "2"), ("step", "1"))
    walled = state(("at", "1"), ("wall", "3"), ("step", "0"))
    assert engine.legal_moves(first, "walker") == ["stay", ("go", "3")]
    assert engine.legal_moves(moved, "walker") == ["stay", ("go", "1")]
    assert engine.legal_moves(walled, "walker") == ["stay", ("go", "2")]
    reachable = ("reachable", 1)
    relation = engine._contexts[first].db[reachable]
    assert engine._contexts[moved].db[reachable] is relation
    assert engine._contexts[walled].db[reachable] is not relation
    assert relation.facts == {("1",), ("3",)}  # type: ignore[union-attr]
    assert engine._contexts[walled].db[reachable].facts == {("1",), ("2",)}  # type: ignore[union-attr]


def test_sharing_stops_where_states_seldom_agree() -> None:
    engine, index_of = components_of(MAZE)
    for number in range(80):
        engine.legal_moves(state(("at", "1"), ("wall", str(number)), ("step", "0")), "walker")
    assert index_of["reachable"] not in engine._state_sharing.heads
    assert index_of["reachable"] not in engine._state_sharing.results
    later = state(("at", "1"), ("wall", "3"), ("step", "0"))
    assert engine.legal_moves(later, "walker") == ["stay", ("go", "2")]


def test_a_playout_with_sharing_answers_as_without() -> None:
    engine, _ = components_of(MAZE)
    plain, _ = components_of(MAZE)
    plain._state_sharing.heads.clear()
    current = engine.initial_state()
    for move in [("go", "3"), "stay", ("go", "1")]:
        assert engine.legal_moves(current, "walker") == plain.legal_moves(current, "walker")
        following = engine.next_state(current, [move])
        assert following == plain.next_state(current, [move])
        current = following
    assert engine.is_terminal(current) and plain.is_terminal(current)
    assert engine.goal_values(current, "walker") == plain.goal_values(current, "walker")


def test_frame_rules_take_their_facts_from_an_earlier_state_with_the_same_fluents() -> None:
    engine, _ = components_of(MAZE)
    next_component = engine.program.component_of[NEXT_KEY]
    rules = engine.program.components[next_component].rules
    heads = move_rule_heads(engine.program)
    by_head = {str(rules[number].head): found for (_, number), found in heads.items()}
    assert by_head == {"('next', ('wall', '?x'))": ("wall",), "('next', ('step', '?n'))": ("step",)}
    first = state(("at", "1"), ("wall", "2"), ("step", "0"))
    moved = state(("at", "3"), ("wall", "2"), ("step", "1"))
    assert engine.next_state(first, [("go", "3")]) == state(
        ("at", "3"), ("wall", "2"), ("step", "1")
    )
    assert engine.next_state(moved, ["stay"]) == state(("at", "3"), ("wall", "2"), ("step", "2"))
    wall_rule = next(rule for rule in heads if "wall" in str(rules[rule[1]].head))
    assert engine._rule_sharing.counts[wall_rule] == [2, 1]  # the second state took the first's
    walled = state(("at", "1"), ("wall", "3"), ("step", "0"))
    assert engine.next_state(walled, ["stay"]) == state(("at", "1"), ("wall", "3"), ("step", "1"))
    assert engine._rule_sharing.counts[wall_rule] == [3, 1]


def test_a_rule_adds_the_matched_fact_itself_when_its_head_repeats_it() -> None:
    rules = analyse(
        parse_gdl(
            "(<= (next (cell ?x ?y)) (true (cell ?x ?y)))"
            "(<= (pair ?x ?y) (both ?x ?y))"
            "(<= (mark ?x (cell ?x ?y)) (true (cell ?x ?y)))"
        )
    ).rules
    compiler = RuleCompiler(lambda key, spec, constants: 1.0)
    cell = ("cell", "1", "2")
    fact = (cell,)
    both = ("1", "2")
    db = {TRUE_KEY: Relation({fact}), ("both", 2): Relation({both})}
    for rule, expected in zip(rules, [fact, both, None], strict=True):
        added: list[tuple] = []
        compiler.compile(rule, frozenset()).naive(db, added.append)
        assert len(added) == 1
        if expected is not None:
            assert added[0] is expected  # the fact itself, not an equal copy
        else:
            assert added[0] == ("1", cell) and added[0][1] is cell


def test_the_estimate_of_a_true_literal_counts_only_the_facts_it_can_match() -> None:
    cells = " ".join(f"(init (cell {i}))" for i in range(30))
    engine = Interpreter(
        parse_gdl(
            f"(role a) (role b) {cells} (init (location a 1)) (init (location b 2))"
            "(<= (legal ?r wait) (role ?r)) (<= terminal (true (location a 3)))"
        )
    )
    rule = FlatRule(("near", "?x"), (("true", ("location", "a", "?x")),), None)  # type: ignore[arg-type]
    compiler = engine._compiler
    atom = rule.body[0]
    assert relation_key(atom) == TRUE_KEY
    # two location facts under two keys: one each (not 32 facts over 2 keys)
    assert compiler._cost(atom, set()) == 1.0


def test_legal_moves_keep_their_public_terms_and_order_from_state_to_state() -> None:
    """A move legal in two states with different legal moves is the same public term in
    both (built once), and the moves come in the order of ``sort_key`` as before."""
    from server.gdl.terms import sort_key

    engine = Interpreter(parse_gdl(MAZE))
    first = engine.initial_state()
    second = engine.next_state(first, [("go", "3")])
    moves_first = engine.legal_moves(first, "walker")
    moves_second = engine.legal_moves(second, "walker")
    assert moves_first != moves_second  # not one legal relation shared by both states
    assert moves_first == sorted(moves_first, key=sort_key)
    assert moves_second == sorted(moves_second, key=sort_key)
    common = [move for move in moves_first if move in moves_second]
    assert common == ["stay"]
    assert all(any(move is other for other in moves_second) for move in common)


def grouped_afresh(relation: Relation, head: str) -> set[tuple]:
    """The group of ``head`` as a relation without prebuilt groups finds it."""
    return set(Relation(set(relation.facts)).group(head))


def test_a_successor_s_true_facts_come_grouped_by_the_rules_that_made_them() -> None:
    engine, _ = components_of(MAZE)
    first = engine.initial_state()
    following = engine.next_state(first, [("go", "3")])
    assert engine.legal_moves(following, "walker") == ["stay", ("go", "1")]
    true = engine._contexts[following].db[TRUE_KEY]
    assert true._groups is not None  # handed over, not grouped afresh
    assert set(true._groups) == {"at", "wall", "step"}
    for head in ("at", "wall", "step", "none"):
        assert set(true.group(head)) == grouped_afresh(true, head)


def test_the_walls_an_earlier_state_made_are_the_very_set_its_successor_is_keyed_by() -> None:
    engine, _ = components_of(MAZE)
    first = engine.initial_state()
    second = engine.next_state(first, ["stay"])
    third = engine.next_state(second, ["stay"])
    walls = engine._contexts[second].db[TRUE_KEY].group("wall")
    assert isinstance(walls, frozenset)
    context = engine._context(third)
    assert context.db[TRUE_KEY].group("wall") is walls  # taken from the second, not rebuilt
    assert context.facts_of(("wall",))[0] is walls


def test_two_rules_of_one_head_make_one_group_and_a_kept_set_is_never_changed() -> None:
    rules = parse_gdl("""
        (role mover)
        (init (cell a)) (init (cell b)) (init (mark x)) (init (keep k))
        (<= (legal mover (add ?c)) (true (mark ?c)))
        (<= (legal mover wait) (true (mark x)))
        (<= (next (cell ?c)) (true (cell ?c)))
        (<= (next (cell ?k)) (true (keep ?k)))
        (<= (next (keep ?k)) (true (keep ?k)))
        (<= (next (cell ?c)) (does mover (add ?c)))
        (<= (next (cell z)) (does mover wait))
        (<= (next (mark ?c)) (true (mark ?c)))
        (<= terminal (true (cell z)))
        (goal mover 100)
    """)
    engine = Interpreter(rules)
    current = engine.initial_state()
    for move in [("add", "x"), "wait", ("add", "x")]:
        following = engine.next_state(current, [move])
        assert following == Interpreter(rules).next_state(current, [move])
        true = engine._context(following).db[TRUE_KEY]
        for head in ("cell", "mark", "keep"):
            assert set(true.group(head)) == grouped_afresh(true, head)
        current = following
    kept = [
        found for entries in engine._rule_sharing.results.values() for found in entries.values()
    ]
    assert kept and all(isinstance(found, frozenset) for found in kept)  # grown by copy only
    assert {fact for fact in current.facts if fact[0] == "cell"} == {
        ("cell", "a"),
        ("cell", "b"),
        ("cell", "k"),
        ("cell", "x"),
        ("cell", "z"),
    }


def test_a_next_rule_of_a_variable_fluent_leaves_the_successor_to_group_its_facts() -> None:
    rules = parse_gdl("""
        (role mover)
        (init (cell a)) (init (mark x))
        (<= (legal mover wait) (true (mark x)))
        (<= (next ?f) (true ?f))
        (<= terminal (true (cell z)))
        (goal mover 100)
    """)
    engine = Interpreter(rules)
    following = engine.next_state(engine.initial_state(), ["wait"])
    assert following == engine.initial_state()
    context = engine._context(following)
    assert context.db[TRUE_KEY]._groups is None
    assert set(context.db[TRUE_KEY].group("cell")) == {(("cell", "a"),)}


def test_public_moves_are_played_as_the_plain_moves_met_before() -> None:
    engine, _ = components_of(MAZE)
    first = engine.initial_state()
    public = engine.legal_moves(first, "walker")[1]  # (go 3), as a public term
    assert public == ("go", "3") and public.__class__ is not tuple
    following = engine.next_state(first, [public])
    assert following == engine.next_state(first, [("go", "3")])
    plain = engine._plain_moves[public]
    assert plain.__class__ is tuple and plain == ("go", "3")
    assert engine._plain_move(wrap(("go", "3"))) is plain  # met before: not rebuilt
    assert engine.legal_move(first, "walker", wrap(("go", "3"))) is plain
    assert engine._plain_move(wrap("stay")).__class__ is str
