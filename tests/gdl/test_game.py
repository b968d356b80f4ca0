"""The public rules API, ``server.gdl.Game``, shown on small games.

The first part walks through the API on tic-tac-toe: loading, roles, states, legal
moves, transitions, terminal states and goals. The second part checks the reasoning
on tiny games, one GDL feature each (recursion, negation, disjunction, distinct,
function terms, stratified negation, very large relations, very long rule bodies).
Those run on the reference interpreter and on the engine ``Game`` picks by default.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from server.gdl import (
    Compound,
    Constant,
    Game,
    GdlError,
    GdlValidationError,
    GoalError,
    IllegalMoveError,
    State,
    parse_gdl,
)
from server.gdl.parser import parse_term

TIC_TAC_TOE = """
; Tic-tac-toe with mixed-case role names, which must be kept as written.
(role xPlayer)
(role oPlayer)

(init (cell 1 1 b)) (init (cell 1 2 b)) (init (cell 1 3 b))
(init (cell 2 1 b)) (init (cell 2 2 b)) (init (cell 2 3 b))
(init (cell 3 1 b)) (init (cell 3 2 b)) (init (cell 3 3 b))
(init (control xPlayer))

(<= (legal ?player (mark ?x ?y)) (true (cell ?x ?y b)) (true (control ?player)))
(<= (legal xPlayer noop) (true (control oPlayer)))
(<= (legal oPlayer noop) (true (control xPlayer)))

(<= (next (cell ?x ?y x)) (does xPlayer (mark ?x ?y)))
(<= (next (cell ?x ?y o)) (does oPlayer (mark ?x ?y)))
(<= (next (cell ?x ?y ?mark)) (true (cell ?x ?y ?mark)) (distinct ?mark b))
(<= (next (cell ?x ?y b))
    (true (cell ?x ?y b))
    (does ?player (mark ?m ?n))
    (or (distinct ?x ?m) (distinct ?y ?n)))
(<= (next (control xPlayer)) (true (control oPlayer)))
(<= (next (control oPlayer)) (true (control xPlayer)))

(<= (row ?x ?mark) (true (cell ?x 1 ?mark)) (true (cell ?x 2 ?mark)) (true (cell ?x 3 ?mark)))
(<= (column ?y ?mark) (true (cell 1 ?y ?mark)) (true (cell 2 ?y ?mark)) (true (cell 3 ?y ?mark)))
(<= (diagonal ?mark) (true (cell 1 1 ?mark)) (true (cell 2 2 ?mark)) (true (cell 3 3 ?mark)))
(<= (diagonal ?mark) (true (cell 1 3 ?mark)) (true (cell 2 2 ?mark)) (true (cell 3 1 ?mark)))
(<= (line ?mark) (row ?x ?mark))
(<= (line ?mark) (column ?y ?mark))
(<= (line ?mark) (diagonal ?mark))
(<= open (true (cell ?x ?y b)))

(<= (goal xPlayer 100) (line x))
(<= (goal xPlayer 50) (not (line x)) (not (line o)) (not open))
(<= (goal xPlayer 0) (line o))
(<= (goal oPlayer 100) (line o))
(<= (goal oPlayer 50) (not (line x)) (not (line o)) (not open))
(<= (goal oPlayer 0) (line x))

(<= terminal (line x))
(<= terminal (line o))
(<= terminal (not open))
"""

X_WINS = ["(mark 1 1)", "(mark 2 2)", "(mark 1 2)", "(mark 3 3)", "(mark 1 3)"]
"""X takes the top row while O plays the diagonal."""

DRAW = [
    "(mark 1 1)",
    "(mark 2 2)",
    "(mark 3 3)",
    "(mark 1 2)",
    "(mark 3 2)",
    "(mark 3 1)",
    "(mark 1 3)",
    "(mark 2 3)",
    "(mark 2 1)",
]


def fluents(*texts: str) -> set:
    return {parse_term(text) for text in texts}


def play(game: Game, marks: list[str], state: State | None = None) -> State:
    """Play tic-tac-toe marks in turn, X first; the other player answers noop."""
    state = game.initial_state() if state is None else state
    for number, mark in enumerate(marks):
        state = game.next_state(state, [mark, "noop"] if number % 2 == 0 else ["noop", mark])
    return state


@pytest.fixture(scope="module")
def tictactoe() -> Game:
    return Game.from_text(TIC_TAC_TOE)


# --- loading -----------------------------------------------------------------------------


def test_roles_come_in_declaration_order_and_keep_their_case() -> None:
    game = Game.from_text(
        """
        (role zeta) (role alpha) (ROLE Mid)
        (legal zeta go) (legal alpha go) (legal Mid go)
        (<= terminal (true done)) (goal zeta 0) (goal alpha 0) (goal Mid 0)
        """
    )
    assert game.roles == ["zeta", "alpha", "Mid"]


def test_from_file_reads_the_same_game_as_from_text(tmp_path: Path) -> None:
    path = tmp_path / "ticTacToe.kif"
    path.write_text("; Tic-tac-toe — «morpion», read as UTF-8\n" + TIC_TAC_TOE, encoding="utf-8")
    for source in (path, str(path)):
        game = Game.from_file(source)
        assert game.roles == ["xPlayer", "oPlayer"]
        assert game.initial_state() == Game.from_text(TIC_TAC_TOE).initial_state()


def test_a_game_can_be_built_from_parsed_rules() -> None:
    game = Game(parse_gdl(TIC_TAC_TOE))
    assert game.roles == ["xPlayer", "oPlayer"]
    assert len(game.rules) == len(parse_gdl(TIC_TAC_TOE))


def test_malformed_text_is_refused_when_loading() -> None:
    with pytest.raises(GdlError, match="line 2, column 1"):
        Game.from_text("(role r)\n(legal r go")


def test_invalid_gdl_is_refused_when_loading_naming_the_rule() -> None:
    with pytest.raises(GdlValidationError) as caught:
        Game.from_text(
            """(role r)
            (<= (legal r (move ?x)) (true on))
            (<= terminal (true on))
            (goal r 100)"""
        )
    [problem] = caught.value.problems
    assert problem.startswith("line 2, column 13:")
    assert "?x" in problem


# --- states ------------------------------------------------------------------------------


def test_the_initial_state_holds_the_init_fluents(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    cells = [f"(cell {x} {y} b)" for x in (1, 2, 3) for y in (1, 2, 3)]
    assert state.fluents == fluents(*cells, "(control xPlayer)")
    assert len(state) == 10
    assert ("control", "xPlayer") in state
    assert all(isinstance(fluent, Compound) for fluent in state.fluents)
    assert "(control xPlayer)" in {str(fluent) for fluent in state.fluents}


def test_states_are_equal_when_their_fluents_are_equal(tictactoe: Game) -> None:
    initial = tictactoe.initial_state()
    cells = [f"(cell {x} {y} b)" for x in (3, 2, 1) for y in (3, 2, 1)]
    rebuilt = State(parse_term(text) for text in ["(control xPlayer)", *cells])
    assert rebuilt == initial
    assert hash(rebuilt) == hash(initial)
    assert State(initial.facts - {("control", "xPlayer")}) != initial
    assert initial != initial.facts  # a state is not a set of fluents


def test_the_same_position_reached_in_another_order_is_the_same_state(
    tictactoe: Game,
) -> None:
    one_way = play(tictactoe, ["(mark 1 1)", "(mark 2 2)", "(mark 3 3)"])
    other_way = play(tictactoe, ["(mark 3 3)", "(mark 2 2)", "(mark 1 1)"])
    assert one_way == other_way
    assert len({one_way, other_way, tictactoe.initial_state()}) == 2
    assert {one_way: "seen"}[other_way] == "seen"


def test_states_cannot_be_changed(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    assert isinstance(state.fluents, frozenset)
    with pytest.raises(AttributeError):
        state.fluents = frozenset()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.facts = frozenset()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.turn = 1  # type: ignore[attr-defined]
    tictactoe.next_state(state, ["(mark 1 1)", "noop"])
    assert state == tictactoe.initial_state()
    assert ("cell", "1", "1", "b") in state


def test_a_state_prints_as_ggp_base_does_in_a_fixed_order() -> None:
    texts = ["(control xPlayer)", "(cell 1 2 b)", "(cell 1 10 x)", "(step 3)"]
    state = State(parse_term(text) for text in texts)
    printed = state.to_ggp()
    assert printed.startswith("( ( ") and printed.endswith(" ) )")
    for fluent in ["( control xPlayer )", "( cell 1 2 b )", "( cell 1 10 x )", "( step 3 )"]:
        assert f" {fluent} " in printed
    assert State(parse_term(text) for text in reversed(texts)).to_ggp() == printed
    assert printed.index("( cell 1 2 b )") < printed.index("( cell 1 10 x )")


# --- legal moves ---------------------------------------------------------------------------


def test_legal_moves_are_terms_in_a_deterministic_order(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    moves = tictactoe.legal_moves(state, "xPlayer")
    assert [str(move) for move in moves] == [
        f"(mark {x} {y})" for x in (1, 2, 3) for y in (1, 2, 3)
    ]
    assert all(isinstance(move, Compound) for move in moves)
    assert moves[5].name == "mark"
    assert moves[5].args == ("2", "3")
    assert tictactoe.legal_moves(state, "oPlayer") == ["noop"]
    assert isinstance(tictactoe.legal_moves(state, "oPlayer")[0], Constant)


def test_numbers_in_legal_moves_come_in_numeric_order() -> None:
    text = """
        (role r)
        (legal r (pick 10)) (legal r (pick 9)) (legal r (pick 100)) (legal r (pick 1))
        (legal r (pick 2))
        (<= terminal (true done)) (goal r 0)
    """
    game = Game.from_text(text)
    state = game.initial_state()
    picks = ["(pick 1)", "(pick 2)", "(pick 9)", "(pick 10)", "(pick 100)"]
    assert [str(move) for move in game.legal_moves(state, "r")] == picks
    reversed_rules = Game(list(reversed(parse_gdl(text))))
    assert [str(move) for move in reversed_rules.legal_moves(state, "r")] == picks


def test_only_ascii_digits_make_a_number() -> None:
    # "²" is a digit to Python's str.isdigit, but not a number: it is an ordinary name.
    game = Game.from_text(
        "(role r) (legal r (pick ²)) (legal r (pick 2)) (<= terminal (true done)) (goal r 0)"
    )
    moves = game.legal_moves(game.initial_state(), "r")
    assert [str(move) for move in moves] == ["(pick 2)", "(pick ²)"]


def test_a_goal_value_that_is_not_an_integer_is_refused_when_loading() -> None:
    for value in ("high", "²", "101"):
        with pytest.raises(GdlValidationError, match="is not an integer from 0 to 100"):
            Game.from_text(f"(role r) (legal r go) (<= terminal (true done)) (goal r {value})")


def test_legal_moves_of_an_unknown_role_is_an_error(tictactoe: Game) -> None:
    with pytest.raises(GdlError, match="unknown role 'xplayer'"):
        tictactoe.legal_moves(tictactoe.initial_state(), "xplayer")


def test_is_legal_takes_terms_or_kif(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    assert tictactoe.is_legal(state, "xPlayer", "(mark 2 3)")
    assert tictactoe.is_legal(state, "xPlayer", ("mark", "2", "3"))
    assert not tictactoe.is_legal(state, "xPlayer", "noop")
    assert tictactoe.is_legal(state, "oPlayer", "noop")


# --- transitions ---------------------------------------------------------------------------


def test_next_state_applies_one_move_per_role(tictactoe: Game) -> None:
    state = tictactoe.next_state(tictactoe.initial_state(), ["(mark 2 2)", "noop"])
    assert ("cell", "2", "2", "x") in state
    assert ("cell", "2", "2", "b") not in state
    assert ("control", "oPlayer") in state
    assert len(state) == 10
    assert [str(move) for move in tictactoe.legal_moves(state, "xPlayer")] == ["noop"]
    assert len(tictactoe.legal_moves(state, "oPlayer")) == 8


def test_next_state_takes_terms_kif_text_or_plain_tuples(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    mark = tictactoe.legal_moves(state, "xPlayer")[0]
    noop = tictactoe.legal_moves(state, "oPlayer")[0]
    expected = tictactoe.next_state(state, [mark, noop])
    assert tictactoe.next_state(state, ["(mark 1 1)", "noop"]) == expected
    assert tictactoe.next_state(state, ["( mark 1 1 )", " noop "]) == expected
    assert tictactoe.next_state(state, [("mark", "1", "1"), "noop"]) == expected
    assert tictactoe.next_state(state, (tictactoe.parse_term("(mark 1 1)"), noop)) == expected


def test_an_illegal_move_is_refused_naming_the_role_and_the_move(tictactoe: Game) -> None:
    state = play(tictactoe, ["(mark 1 1)"])
    with pytest.raises(IllegalMoveError) as caught:
        tictactoe.next_state(state, ["noop", "(mark 1 1)"])
    error = caught.value
    assert (error.role, error.move) == ("oPlayer", "(mark 1 1)")
    assert "illegal move (mark 1 1) for role oPlayer" in str(error)
    assert "(mark 1 2)" in str(error)  # the message lists legal moves as a hint
    assert isinstance(error, GdlError)


@pytest.mark.parametrize(
    ("joint", "role", "move"),
    [
        (["noop", "noop"], "xPlayer", "noop"),  # X must mark
        (["(mark 1 1)", "(mark 2 2)"], "oPlayer", "(mark 2 2)"),  # not O's turn
        (["(mark 1 4)", "noop"], "xPlayer", "(mark 1 4)"),  # off the board
        (["(probe_not_a_move 1)", "noop"], "xPlayer", "(probe_not_a_move 1)"),
        (["(mark 1 1 x)", "noop"], "xPlayer", "(mark 1 1 x)"),
    ],
)
def test_moves_that_the_rules_do_not_allow_are_refused(
    tictactoe: Game, joint: list[str], role: str, move: str
) -> None:
    with pytest.raises(IllegalMoveError) as caught:
        tictactoe.next_state(tictactoe.initial_state(), joint)
    assert (caught.value.role, caught.value.move) == (role, move)


@pytest.mark.parametrize("joint", [[], ["(mark 1 1)"], ["(mark 1 1)", "noop", "noop"]])
def test_a_joint_move_needs_exactly_one_move_per_role(tictactoe: Game, joint: list[str]) -> None:
    with pytest.raises(GdlError, match="expected 2 moves") as caught:
        tictactoe.next_state(tictactoe.initial_state(), joint)
    assert not isinstance(caught.value, IllegalMoveError)


# --- terminal states and goals -------------------------------------------------------------


def test_a_won_game_is_terminal_with_goals_for_every_role(tictactoe: Game) -> None:
    state = play(tictactoe, X_WINS[:-1])
    assert not tictactoe.is_terminal(state)
    state = play(tictactoe, X_WINS[-1:], state)
    assert tictactoe.is_terminal(state)
    assert tictactoe.goals(state) == {"xPlayer": 100, "oPlayer": 0}
    assert tictactoe.defined_goals(state) == {"xPlayer": 100, "oPlayer": 0}


def test_a_full_board_without_a_line_is_a_draw(tictactoe: Game) -> None:
    state = play(tictactoe, DRAW)
    assert tictactoe.is_terminal(state)
    assert tictactoe.goals(state) == {"xPlayer": 50, "oPlayer": 50}


def test_goals_raise_when_a_role_has_no_goal_value(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    assert not tictactoe.is_terminal(state)
    with pytest.raises(GoalError, match="role xPlayer has no unique goal .*no goal value"):
        tictactoe.goals(state)
    assert tictactoe.defined_goals(state) == {}


def test_goals_raise_when_a_role_has_two_goal_values() -> None:
    game = Game.from_text(
        """
        (role winner) (role loser)
        (init start)
        (legal winner finish) (legal loser wait)
        (<= (next done) (true start))
        (<= terminal (true done))
        (goal winner 0)
        (<= (goal winner 100) (true done))
        (<= (goal loser 0) (true done))
        """
    )
    start = game.initial_state()
    assert game.defined_goals(start) == {"winner": 0}
    done = game.next_state(start, ["finish", "wait"])
    with pytest.raises(GoalError, match="role winner has no unique goal .*goal values 0, 100"):
        game.goals(done)
    assert game.defined_goals(done) == {"loser": 0}
    assert game.goal(done, "winner") is None
    assert game.goal(done, "loser") == 0


def test_a_goal_value_can_come_from_the_state() -> None:
    game = Game.from_text(
        """
        (role r)
        (init (score 35))
        (legal r wait)
        (<= (goal r ?value) (true (score ?value)))
        (<= terminal (true (score 35)))
        """
    )
    assert game.goals(game.initial_state()) == {"r": 35}


def test_parse_term_reads_moves_and_fluents(tictactoe: Game) -> None:
    move = tictactoe.parse_term("(mark 1 2)")
    assert isinstance(move, Compound)
    assert move == ("mark", "1", "2")
    assert str(move) == "(mark 1 2)"
    assert move in tictactoe.legal_moves(tictactoe.initial_state(), "xPlayer")
    assert tictactoe.parse_term("(control xPlayer)") in tictactoe.initial_state().fluents
    assert tictactoe.parse_term("noop") == Constant("noop")


# --- reasoning, one feature per game -------------------------------------------------------

ENGINES = ["interpreter", "auto"]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


def moves_of(game: Game, state: State, role: str = "r") -> list[str]:
    return [str(move) for move in game.legal_moves(state, role)]


REACHABILITY = """
; A walker on a graph whose edges are part of the state; reach is recursive.
(role r)
(init (at a))
(init (edge a b)) (init (edge b c)) (init (edge c a)) (init (edge c d)) (init (edge e f))
(<= (edge ?x ?y) (true (edge ?x ?y)))
(<= (reach ?x ?y) (edge ?x ?y))
(<= (reach ?x ?z) (reach ?x ?y) (edge ?y ?z))
(<= (legal r (go ?y)) (true (at ?x)) (reach ?x ?y))
(<= (next (at ?y)) (does r (go ?y)))
(<= (next (edge ?x ?y)) (true (edge ?x ?y)) (distinct ?x ?y) (not (does r (go ?x))))
(<= terminal (true (at d)))
(goal r 100)
"""


def test_recursion_follows_paths_through_cycles(engine: str) -> None:
    game = Game.from_text(REACHABILITY, engine=engine)
    state = game.initial_state()
    assert moves_of(game, state) == ["(go a)", "(go b)", "(go c)", "(go d)"]
    # Leaving b removes b's outgoing edge: from there, b reaches nothing.
    state = game.next_state(state, ["(go b)"])
    assert state.fluents == fluents(
        "(at b)", "(edge a b)", "(edge c a)", "(edge c d)", "(edge e f)"
    )
    assert moves_of(game, state) == []
    assert not game.is_terminal(state)


NEGATION = """
(role r)
(cell 1) (cell 2) (cell 3)
(init (taken 2))
(<= (legal r (claim ?c)) (cell ?c) (not (true (taken ?c))))
(<= (next (taken ?c)) (does r (claim ?c)))
(<= (next (taken ?c)) (true (taken ?c)))
(<= free (cell ?c) (not (true (taken ?c))))
(<= terminal (not free))
(goal r 100)
"""


def test_negation_as_failure(engine: str) -> None:
    game = Game.from_text(NEGATION, engine=engine)
    state = game.initial_state()
    assert moves_of(game, state) == ["(claim 1)", "(claim 3)"]
    state = game.next_state(state, ["(claim 3)"])
    assert moves_of(game, state) == ["(claim 1)"]
    assert not game.is_terminal(state)
    state = game.next_state(state, ["(claim 1)"])
    assert game.is_terminal(state)
    assert moves_of(game, state) == []


DISJUNCTION = """
(role r)
(init (light red))
(<= (legal r go) (or (true (light green)) (true (light amber))))
(legal r wait)
(<= (next (light green)) (true (light red)))
(<= (next (light amber)) (true (light green)))
(<= (next (light red)) (true (light amber)))
(<= (colour ?c) (or (true (light ?c)) (spare ?c)))
(spare blue)
(<= (legal r (paint ?c)) (colour ?c))
(<= terminal (true (light amber)))
(goal r 100)
"""


def test_disjunction_holds_when_any_branch_holds(engine: str) -> None:
    game = Game.from_text(DISJUNCTION, engine=engine)
    red = game.initial_state()
    assert moves_of(game, red) == ["wait", "(paint blue)", "(paint red)"]
    green = game.next_state(red, ["wait"])
    assert moves_of(game, green) == ["go", "wait", "(paint blue)", "(paint green)"]
    amber = game.next_state(green, ["go"])
    assert "go" in moves_of(game, amber)
    assert game.is_terminal(amber)


DISTINCT = """
(role r)
(item a) (item b) (item c)
(init (holding a))
(<= (legal r (swap ?x ?y)) (item ?x) (item ?y) (distinct ?x ?y) (true (holding ?x)))
(<= (legal r (keep ?x)) (true (holding ?x)) (not (distinct ?x a)))
(<= (next (holding ?y)) (does r (swap ?x ?y)))
(<= (next (holding ?x)) (does r (keep ?x)))
(<= terminal (true (holding c)))
(goal r 100)
"""


def test_distinct_and_not_distinct(engine: str) -> None:
    game = Game.from_text(DISTINCT, engine=engine)
    state = game.initial_state()
    assert moves_of(game, state) == ["(keep a)", "(swap a b)", "(swap a c)"]
    state = game.next_state(state, ["(swap a b)"])
    assert moves_of(game, state) == ["(swap b a)", "(swap b c)"]


FUNCTION_TERMS = """
(role r)
(init (at (pos 1 1)))
(succ 1 2) (succ 2 3)
(<= (legal r (move (pos ?x ?y) (pos ?x2 ?y)))
    (true (at (pos ?x ?y))) (succ ?x ?x2))
(<= (legal r (move (pos ?x ?y) (pos ?x ?y2)))
    (true (at (pos ?x ?y))) (succ ?y ?y2))
(<= (next (at ?to)) (does r (move ?from ?to)))
(<= (next (trail ?from)) (does r (move ?from ?to)))
(<= (next (trail ?p)) (true (trail ?p)))
(<= terminal (true (at (pos 3 3))))
(<= (goal r 100) (true (at (pos 3 3))))
(<= (goal r 0) (not (true (at (pos 3 3)))))
"""


def test_function_terms_nest_in_moves_and_fluents(engine: str) -> None:
    game = Game.from_text(FUNCTION_TERMS, engine=engine)
    state = game.initial_state()
    assert moves_of(game, state) == [
        "(move (pos 1 1) (pos 1 2))",
        "(move (pos 1 1) (pos 2 1))",
    ]
    state = game.next_state(state, ["(move (pos 1 1) (pos 2 1))"])
    state = game.next_state(state, [("move", ("pos", "2", "1"), ("pos", "2", "2"))])
    assert state.fluents == fluents("(at (pos 2 2))", "(trail (pos 1 1))", "(trail (pos 2 1))")
    assert game.goals(state) == {"r": 0}
    move = game.legal_moves(state, "r")[0]
    assert move.args[1].args == ("2", "3")


def test_a_proposition_and_a_zero_argument_relation_are_different(engine: str) -> None:
    game = Game.from_text(
        """
        (role r)
        (init on)
        (<= (p) (true on))
        (<= (legal r bare) p)
        (<= (legal r wrapped) (p))
        (<= terminal (true on))
        (goal r 100)
        """,
        engine=engine,
    )
    assert moves_of(game, game.initial_state()) == ["wrapped"]


def test_init_and_legal_may_come_from_rules_over_static_facts(engine: str) -> None:
    game = Game.from_text(
        """
        (role r)
        (index 1) (index 2)
        (<= (init (cell ?x ?y)) (index ?x) (index ?y))
        (<= (legal r (clear ?x ?y)) (true (cell ?x ?y)))
        (<= (next (cell ?x ?y)) (true (cell ?x ?y)) (not (does r (clear ?x ?y))))
        (<= terminal (not (true (cell 1 1))))
        (goal r 100)
        """,
        engine=engine,
    )
    state = game.initial_state()
    assert state.fluents == fluents("(cell 1 1)", "(cell 1 2)", "(cell 2 1)", "(cell 2 2)")
    state = game.next_state(state, ["(clear 1 1)"])
    assert state.fluents == fluents("(cell 1 2)", "(cell 2 1)", "(cell 2 2)")
    assert game.is_terminal(state)


SIMULTANEOUS = """
; Both players pick at once; the higher pick scores.
(role left) (role right)
(init (round 1))
(<= (legal ?p (pick ?n)) (role ?p) (number ?n))
(number 1) (number 2) (number 3)
(greater 2 1) (greater 3 1) (greater 3 2)
(<= (next (won ?p)) (does ?p (pick ?a)) (does ?q (pick ?b)) (greater ?a ?b))
(<= (next (round 2)) (true (round 1)))
(<= terminal (true (round 2)))
(<= (goal ?p 100) (role ?p) (true (won ?p)))
(<= (goal ?p 0) (role ?p) (not (true (won ?p))))
"""


def test_simultaneous_moves_see_each_other(engine: str) -> None:
    game = Game.from_text(SIMULTANEOUS, engine=engine)
    start = game.initial_state()
    assert moves_of(game, start, "right") == ["(pick 1)", "(pick 2)", "(pick 3)"]
    state = game.next_state(start, ["(pick 1)", "(pick 3)"])
    assert state.fluents == fluents("(round 2)", "(won right)")
    assert game.goals(state) == {"left": 0, "right": 100}
    tie = game.next_state(start, ["(pick 2)", "(pick 2)"])
    assert game.goals(tie) == {"left": 0, "right": 0}


STRATIFIED_GOALS = """
; The goal relation negates itself: fine, because goal 0 never depends on goal 100.
(role r)
(init playing)
(legal r lose) (legal r win)
(<= (next lost) (does r lose))
(<= (next over) (does r ?any))
(<= (goal r 0) (true lost))
(<= (goal r 100) (not (goal r 0)))
(<= terminal (true over))
"""


def test_negation_of_the_same_relation_in_another_rule_stratum(engine: str) -> None:
    game = Game.from_text(STRATIFIED_GOALS, engine=engine)
    start = game.initial_state()
    assert game.goals(start) == {"r": 100}
    assert game.goals(game.next_state(start, ["win"])) == {"r": 100}
    assert game.goals(game.next_state(start, ["lose"])) == {"r": 0}


def _numbers(count: int) -> str:
    return "\n".join(
        [" ".join(f"(num {n})" for n in range(count))]
        + [" ".join(f"(succ {n} {n + 1})" for n in range(count - 1))]
    )


HUGE_RELATIONS = f"""
; between has 34,220 facts and outside 181,780: too many to list for every state,
; but the rules only ever ask about them with the outer numbers known.
(role r)
{_numbers(60)}
(<= (less ?a ?b) (succ ?a ?b))
(<= (less ?a ?c) (succ ?a ?b) (less ?b ?c))
(<= (between ?a ?b ?c) (less ?a ?b) (less ?b ?c))
(<= (outside ?a ?b ?c) (num ?a) (num ?b) (num ?c) (not (between ?a ?b ?c)))
(init (low 10))
(init (high 15))
(<= (legal r (pick ?b)) (true (low ?a)) (true (high ?c)) (between ?a ?b ?c))
(<= (legal r (jump ?b)) (true (low ?a)) (true (high ?c)) (outside ?a ?b ?c))
(<= (next (low ?b)) (does r (pick ?b)))
(<= (next (low ?a)) (true (low ?a)) (does r (jump ?b)))
(<= (next (high ?c)) (true (high ?c)))
(<= gap (true (low ?a)) (true (high ?c)) (between ?a ?b ?c))
(<= terminal (not gap))
(goal r 100)
"""


def test_huge_static_relations_queried_with_known_arguments() -> None:
    # The interpreter only: the compiled engine grounds every relation in full first.
    game = Game.from_text(HUGE_RELATIONS, engine="interpreter")
    state = game.initial_state()
    moves = moves_of(game, state)
    assert [move for move in moves if move.startswith("(pick")] == [
        "(pick 11)",
        "(pick 12)",
        "(pick 13)",
        "(pick 14)",
    ]
    jumps = [f"(jump {n})" for n in range(60) if not 10 < n < 15]
    assert [move for move in moves if move.startswith("(jump")] == jumps
    assert not game.is_terminal(state)
    state = game.next_state(state, ["(pick 14)"])
    assert state.fluents == fluents("(low 14)", "(high 15)")
    assert game.is_terminal(state)
    assert len(moves_of(game, state)) == 60
    state = game.next_state(game.initial_state(), ["(jump 40)"])
    assert state == game.initial_state()


LINKS = [(n, n + 1) for n in range(30)] + [(3, 5), (10, 12)]
PATH_LENGTH = 25
DEEP_JOIN = f"""
; legal (reach ?v25) joins 25 literals, one nested loop each if compiled naively.
(role r)
{" ".join(f"(init (link {a} {b}))" for a, b in LINKS)}
(<= (legal r (reach ?v{PATH_LENGTH}))
    {" ".join(f"(true (link {'0' if i == 0 else f'?v{i}'} ?v{i + 1}))" for i in range(PATH_LENGTH))})
(<= (legal r (cut ?a)) (true (link ?a ?b)))
(<= (next (link ?a ?b)) (true (link ?a ?b)) (not (does r (cut ?a))))
(<= terminal (not (true (link 0 1))))
(goal r 100)
"""


def test_a_rule_body_longer_than_pythons_nesting_limit(engine: str) -> None:
    game = Game.from_text(DEEP_JOIN, engine=engine)
    state = game.initial_state()
    reach = [move for move in moves_of(game, state) if move.startswith("(reach")]
    # Paths of 25 links from 0: straight on, or with one or both shortcuts.
    assert reach == ["(reach 25)", "(reach 26)", "(reach 27)"]
    state = game.next_state(state, ["(cut 10)"])
    assert [move for move in moves_of(game, state) if move.startswith("(reach")] == []


def _random_graph(nodes: int, extra: int, seed: int) -> set[tuple[int, int]]:
    rng = random.Random(seed)
    edges = {(n, n + 1) for n in range(nodes - 1)}
    while len(edges) < nodes - 1 + extra:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        if a != b:
            edges.add((a, b))
    return edges


def _reachable(edges: set[tuple[int, int]], start: int) -> set[int]:
    """Every node at the end of a path of one or more edges from ``start``."""
    successors: dict[int, list[int]] = {}
    for a, b in edges:
        successors.setdefault(a, []).append(b)
    found: set[int] = set()
    frontier = [start]
    while frontier:
        for following in successors.get(frontier.pop(), []):
            if following not in found:
                found.add(following)
                frontier.append(following)
    return found


GRAPH = _random_graph(260, 60, seed=5)
"""A path through 260 nodes plus 60 random edges: its closure has 65,548 pairs."""

LARGE_RECURSIVE_RELATION = f"""
; reach, the transitive closure of a 260-node graph with cycles, is too large to
; list; the rules ask about it with one or both ends known, and through not.
(role r)
{" ".join(f"(edge n{a} n{b})" for a, b in sorted(GRAPH))}
(<= (reach ?x ?y) (edge ?x ?y))
(<= (reach ?x ?z) (reach ?x ?y) (edge ?y ?z))
(init (at n0)) (init (target n1)) (init (marked n2))
(<= (legal r win) (true (at ?x)) (true (target ?y)) (reach ?x ?y))
(<= (legal r lose) (true (at ?x)) (true (target ?y)) (not (reach ?x ?y)))
(<= (legal r (hop ?y)) (true (at ?x)) (reach ?x ?y) (true (marked ?y)))
(<= (legal r (loop ?x)) (true (marked ?x)) (true (target ?y)) (reach ?x ?y) (reach ?y ?x))
(<= (next (at ?x)) (true (at ?x)))
(<= terminal (true (at n0)))
(goal r 100)
"""


def test_a_large_recursive_relation_answers_bound_queries_exactly() -> None:
    game = Game.from_text(LARGE_RECURSIVE_RELATION, engine="interpreter")
    rng = random.Random(1)
    for _ in range(20):
        at, target, marked = (rng.randrange(260) for _ in range(3))
        reach = {node: _reachable(GRAPH, node) for node in (at, target, marked)}
        state = State([("at", f"n{at}"), ("target", f"n{target}"), ("marked", f"n{marked}")])
        expected = {"win" if target in reach[at] else "lose"}
        if marked in reach[at]:
            expected.add(f"(hop n{marked})")
        if target in reach[marked] and marked in reach[target]:
            expected.add(f"(loop n{marked})")
        assert set(moves_of(game, state)) == expected, (at, target, marked)
