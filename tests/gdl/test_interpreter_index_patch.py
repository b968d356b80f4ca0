"""Indexes of a state's relations patched from those of the state before: the facts that
differ are taken out and put in, and the indexes are the ones a build would give.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

import server.gdl.interpreter.engine as engine_module
from server.gdl.interpreter import Interpreter
from server.gdl.interpreter.codegen import PATCH_MIN_FACTS, IndexSpec, Relation
from server.gdl.interpreter.engine import SMALL_STRIKES
from server.gdl.parser import parse_gdl

WALKER = """
(role walker)
(succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
(init (at 1)) (init (step 1))
(init (blank 2)) (init (blank 3)) (init (blank 4)) (init (blank 5)) (init (blank 6))
(init (blank 7)) (init (blank 8))
(<= (open ?a ?b) (succ ?a ?b))
(<= (open ?a ?b) (succ ?a ?c) (true (blank ?c)) (open ?c ?b))
(<= (reach ?b) (true (at ?a)) (open ?a ?b))
(<= (legal walker (go ?b)) (reach ?b) (true (blank ?b)))
(<= (legal walker wait) (true (at ?a)))
(<= (next (at ?b)) (does walker (go ?b)))
(<= (next (at ?a)) (true (at ?a)) (does walker wait))
(<= (next (blank ?c)) (true (blank ?c)) (not (does walker (go ?c))))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= terminal (true (step 8)))
(<= (goal walker 100) terminal)
"""


def buckets(index: object) -> dict:
    """An index with its buckets as sets (their order is of no account)."""
    assert isinstance(index, dict)
    return {key: set(bucket) for key, bucket in index.items()}


def counting_builds(spec: IndexSpec) -> list[int]:
    """Count the builds of ``spec`` from now on."""
    calls = [0]
    build = spec.build

    def counted(facts: object) -> object:
        calls[0] += 1
        return build(facts)  # type: ignore[arg-type]

    spec.build = counted
    return calls


def test_an_index_is_patched_from_the_base_relation_when_few_facts_differ() -> None:
    spec = IndexSpec((((0,), "cell", 2),), ((0, 1),))
    before: set[tuple] = {(("cell", row, column),) for row in "abcdefgh" for column in "1234"}
    before.add(("other",))
    base = Relation(set(before))
    base.index(spec)
    after = set(before) - {(("cell", "a", "1"),), (("cell", "b", "2"),), ("other",)}
    after |= {(("cell", "z", "1"),), (("cell", "a", "9"),)}
    relation = Relation(set(after))
    relation.follow(base)
    calls = counting_builds(spec)
    index = relation.index(spec)
    assert calls[0] == 0
    assert buckets(index) == buckets(IndexSpec(spec.structure, spec.key_paths).build(after))
    assert buckets(base.index(spec)) == buckets(
        IndexSpec(spec.structure, spec.key_paths).build(before)
    )


def test_an_index_is_built_when_many_facts_differ_or_the_base_has_none() -> None:
    spec = IndexSpec((), ((1,),))
    base = Relation({(str(n), str(n % 3)) for n in range(80)})
    calls = counting_builds(spec)
    far = Relation({(str(n), str(n % 3)) for n in range(40, 120)})
    far.follow(base)
    base.index(spec)
    assert buckets(far.index(spec)) == buckets(IndexSpec((), ((1,),)).build(far.facts))
    unindexed = Relation(set(base.facts))
    unindexed.follow(Relation(set(base.facts)))
    unindexed.index(spec)
    assert calls[0] == 3  # the base, the far one, the one whose base had no index


def test_small_relations_are_given_no_base() -> None:
    engine = Interpreter(parse_gdl(WALKER))
    state = engine.initial_state()
    for _ in range(3):
        state = engine.next_state(state, [engine.legal_moves(state, "walker")[0]])
        assert not engine.is_terminal(state)
    relations = [
        value
        for context in engine._contexts.values()
        for value in context.db.values()
        if isinstance(value, Relation)
    ]
    assert all(len(relation.facts) < PATCH_MIN_FACTS for relation in relations)
    assert all(relation.base is None for relation in relations)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.source_modules
def test_every_index_of_a_playout_equals_a_fresh_build(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    patched = [0]
    plain_index: Callable[[Relation, IndexSpec], object] = Relation.index

    def checked(relation: Relation, spec: IndexSpec) -> object:
        known = spec.name in relation._indexes
        base = relation.base
        from_base = base is not None and spec.name in base._indexes
        index = plain_index(relation, spec)
        if not known:
            fresh = spec.build(relation.facts)
            if isinstance(fresh, dict):
                assert buckets(index) == buckets(fresh)
                patched[0] += from_base
            else:
                assert sorted(map(repr, index)) == sorted(map(repr, fresh))  # type: ignore[call-overload]
        return index

    monkeypatch.setattr(Relation, "index", checked)
    monkeypatch.setattr(engine_module, "PATCH_MIN_FACTS", 0)  # this game's relations are small
    engine = Interpreter(parse_gdl(WALKER))
    rng = random.Random(seed)
    state = engine.initial_state()
    while not engine.is_terminal(state):
        moves = [rng.choice(engine.legal_moves(state, role)) for role in engine.roles]
        state = engine.next_state(state, moves)
    assert engine.goal_values(state, "walker") == ["100"]
    assert patched[0] > 0


def test_components_found_small_in_many_states_are_no_longer_checked() -> None:
    engine = Interpreter(parse_gdl(WALKER), memo=False)  # every playout asks the rules
    engine._state_sharing.heads.clear()  # every state computes its relations
    assert engine._followed
    for _ in range(SMALL_STRIKES):
        state = engine.initial_state()
        while not engine.is_terminal(state):
            state = engine.next_state(state, [engine.legal_moves(state, "walker")[-1]])
        assert engine.goal_values(state, "walker") == ["100"]
        engine._drop_contexts()
    assert not engine._followed


def reference_index(structure: tuple, key_paths: tuple, facts: list[tuple]) -> dict:
    """The index a build must give, worked out term by term."""

    def at(term: object, path: tuple) -> object:
        for step in path:
            if not isinstance(term, tuple) or step >= len(term):
                return None
            term = term[step]
        return term

    index: dict = {}
    for fact in facts:
        matches = True
        for path, functor, arity in structure:
            part = at(fact, path)
            if not (isinstance(part, tuple) and len(part) == arity + 1 and part[0] == functor):
                matches = False
        if not matches:
            continue
        values = [at(fact, path) for path in key_paths]
        key = values[0] if len(values) == 1 else tuple(values)
        index.setdefault(key, []).append(fact)
    return index


@pytest.mark.parametrize(
    ("structure", "key_paths"),
    [
        ((((0,), "cell", 3),), ((0, 1), (0, 2))),  # inside the first argument: read once
        ((((0,), "cell", 3),), ((0,),)),  # the first argument itself
        ((((0,), "cell", 3), ((0, 3), "p", 1)), ((0, 3, 1),)),  # nested, still inside it
        ((((0,), "cell", 3),), ((0, 1), (1,))),  # one key outside the first argument
        ((), ((1,),)),
    ],
)
def test_a_build_indexes_the_facts_its_structure_matches_by_their_keys(
    structure: tuple, key_paths: tuple
) -> None:
    rng = random.Random(5)
    values = ["1", "2", ("p", "x"), ("p", "y"), ("q", "x")]
    facts = list(
        {
            (
                rng.choice(
                    [
                        ("cell", rng.choice(values), rng.choice(values), rng.choice(values)),
                        ("cell", "1", "2"),
                        "cell",
                        ("mark", "1", "2", "3"),
                    ]
                ),
                rng.choice(values),
            )
            for _ in range(200)
        }
    )
    spec = IndexSpec(structure, key_paths)
    built = spec.build(facts)
    assert buckets(built) == buckets(reference_index(structure, key_paths, facts))
    # patched from it: the same as a build of the facts after
    removed, added = facts[:20], [(("cell", "9", "9", "9"), "1"), (("cell", "8", "8", "9"), "2")]
    after = facts[20:] + added
    patched = spec.patcher()(built, removed, added)
    assert buckets(patched) == buckets(spec.build(after))
    assert buckets(built) == buckets(reference_index(structure, key_paths, facts))  # untouched
