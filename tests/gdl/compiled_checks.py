"""Checks of the compiled engine shared by its tests: against a reference trace,
between its fast paths and its single-state calls, and against the interpreter."""

from __future__ import annotations

import random
from itertools import product

from server.gdl import Game
from server.gdl.compiled import CompiledEngine
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_term
from server.gdl.state import State
from server.gdl.terms import to_ggp


def trace_differences(engine: CompiledEngine, trace: dict) -> list[str]:
    """Every way the engine disagrees with a reference trace (empty when it agrees)."""
    problems: list[str] = []
    roles = trace["roles"]
    if engine.roles != roles:
        return [f"roles {engine.roles} != {roles}"]
    initial = engine.initial_state()
    if _printed(initial.facts) != set(trace["init"]):
        problems.append("initial state differs")
    for p, playout in enumerate(trace["playouts"]):
        state = initial
        for k, step in enumerate(playout["steps"]):
            where = f"playout {p} step {k}"
            if _printed(state.facts) != set(step["state"]):
                problems.append(f"{where}: state differs")
                break
            legal = {role: engine.legal_moves(state, role) for role in roles}
            for role in roles:
                if _printed(legal[role]) != set(step["legal"][role]):
                    problems.append(f"{where}: legal moves of {role} differ")
            if engine.is_terminal(state) != step["terminal"]:
                problems.append(f"{where}: terminal flag differs")
            defined = {}
            for role in roles:
                values = engine.goal_values(state, role)
                if len(values) == 1 and isinstance(values[0], str) and values[0].isdigit():
                    defined[role] = int(values[0])
            if "goals" in step:
                if defined != step["goals"]:
                    problems.append(f"{where}: goals {defined} != {step['goals']}")
                undefined = set(roles) - set(defined)
                if undefined != set(step.get("goals_undefined", [])):
                    problems.append(f"{where}: undefined goals differ")
            elif len(defined) == len(roles):
                problems.append(f"{where}: goals defined where the reference has none")
            if "joint" in step:
                state = engine.next_state(state, [parse_term(move) for move in step["joint"]])
    for probe in trace.get("probes", []):
        steps = trace["playouts"][probe["playout"]]["steps"]
        state = State(parse_term(fluent) for fluent in steps[probe["step"]]["state"])
        role = probe["illegal_role"]
        move = parse_term(probe["joint"][roles.index(role)])
        if move in engine.legal_moves(state, role):
            problems.append(f"probe at {probe['playout']}/{probe['step']}: {to_ggp(move)} legal")
    return problems


def fast_path_differences(engine: CompiledEngine, seed: int = 1) -> list[str]:
    """Disagreements of the generated playout loop and of a batch (its evaluation and its
    next states) with the calls on single compact states, along a few random playouts."""
    problems: list[str] = []
    rng = random.Random(seed)
    visited = [engine.initial_compact]
    transitions: list[tuple[int, tuple[int, ...], int]] = []
    for playout in range(3):
        joints: list[tuple[int, ...]] = []
        result = engine.playout(engine.initial_compact, rng, limit=40, record=joints)
        state = engine.initial_compact
        for step, joint in enumerate(joints):
            legal = engine.legal_indices(state)
            if engine.terminal_compact(state) or any(
                move not in moves for move, moves in zip(joint, legal, strict=True)
            ):
                problems.append(f"playout loop {playout}: illegal step {step}")
                break
            after = engine.next_compact(state, joint)
            transitions.append((state, tuple(joint), after))
            state = after
            visited.append(state)
        else:
            if state != result.state or result.terminal != engine.terminal_compact(state):
                problems.append(f"playout loop {playout}: end state differs")
    # status_compact works each state out from the gate values of the state asked
    # before it: in an order unrelated to play it must still agree with the single
    # calls, and so must the State API (which may use it)
    for compact in rng.sample(visited, len(visited)):
        legal = engine.legal_indices(compact)
        if engine.status_compact(compact) != (engine.terminal_compact(compact), legal):
            problems.append("status_compact: a state out of order differs")
            break
        state = engine.decode(compact)
        if engine.is_terminal(state) != engine.terminal_compact(compact) or any(
            engine.legal_moves(state, role) != [engine.moves[r][j] for j in legal[r]]
            for r, role in enumerate(engine.roles)
        ):
            problems.append("state API: a state out of order differs")
            break
    runner = engine.batch(8 * ((len(visited) + 7) // 8))
    slices = runner.pack(visited)
    terminal, legal, goals = runner.evaluate(slices)
    goal_terms = engine.network.goals
    for i, state in enumerate(visited):
        found = [[j for j, where in enumerate(role) if where >> i & 1] for role in legal]
        values = [
            [goal_terms[r][k][0] for k, where in enumerate(role) if where >> i & 1]
            for r, role in enumerate(goals)
        ]
        if (
            found != list(engine.legal_indices(state))
            or bool(terminal >> i & 1) != engine.terminal_compact(state)
            or values != engine.goals_compact(state)
        ):
            problems.append(f"batch: state {i} differs")
            break
    before = runner.pack([state for state, _, _ in transitions])
    moves = [
        sum(1 << i for i, (_, joint, _) in enumerate(transitions) if joint[r] == j)
        for r, role_moves in enumerate(engine.moves)
        for j in range(len(role_moves))
    ]
    following = runner.unpack(runner.advance(before, moves))
    for i, (_, _, after) in enumerate(transitions):
        if following[i] != after:
            problems.append(f"batch: the state after state {i} differs")
            break
    return problems


def engine_disagreements(
    compiled: CompiledEngine,
    interpreter: Interpreter,
    name: str,
    playouts: int = 2,
    steps: int = 40,
    seed: int = 7,
) -> list[str]:
    """Where the two engines differ along random games (empty when they agree)."""
    roles = compiled.roles
    if interpreter.roles != roles:
        return [f"roles differ: {roles} / {interpreter.roles}"]
    rng = random.Random(seed)
    problems: list[str] = []
    for playout in range(playouts):
        state = compiled.initial_state()
        if state != interpreter.initial_state():
            return ["initial states differ"]
        for step in range(steps):
            where = f"{name} playout {playout} step {step}"
            legal = {role: compiled.legal_moves(state, role) for role in roles}
            for role in roles:
                if set(legal[role]) != set(interpreter.legal_moves(state, role)):
                    problems.append(f"{where}: legal moves of {role} differ")
                if sorted(compiled.goal_values(state, role)) != sorted(
                    interpreter.goal_values(state, role)
                ):
                    problems.append(f"{where}: goals of {role} differ")
            terminal = compiled.is_terminal(state)
            if terminal != interpreter.is_terminal(state):
                problems.append(f"{where}: terminal flag differs")
            if problems or terminal or not all(legal.values()):
                break
            joint = [rng.choice(legal[role]) for role in roles]
            after = compiled.next_state(state, joint)
            if after != interpreter.next_state(state, joint):
                problems.append(f"{where}: next states differ")
                break
            state = after
        if problems:
            break
    return problems


def state_disagreements(
    compiled: CompiledEngine, interpreter: Interpreter, states: list[State]
) -> list[str]:
    """Where the two engines differ on the given states: terminal flag, goals, legal
    moves and the next state of every joint move (empty when they agree)."""
    problems: list[str] = []
    for state in states:
        if compiled.is_terminal(state) != interpreter.is_terminal(state):
            problems.append(f"{state}: terminal flag differs")
        moves: list[list] = []
        for role in compiled.roles:
            if sorted(compiled.goal_values(state, role)) != sorted(
                interpreter.goal_values(state, role)
            ):
                problems.append(f"{state}: goals of {role} differ")
            legal = compiled.legal_moves(state, role)
            if set(legal) != set(interpreter.legal_moves(state, role)):
                problems.append(f"{state}: legal moves of {role} differ")
            moves.append(legal)
        if compiled.is_terminal(state):
            continue
        for joint in product(*moves):
            if compiled.next_state(state, list(joint)) != interpreter.next_state(
                state, list(joint)
            ):
                problems.append(f"{state}: the next state after {joint} differs")
    return problems


def _printed(terms) -> set[str]:
    return {to_ggp(term) for term in terms}


def reachable_states(engine: CompiledEngine, limit: int) -> list[State]:
    """The states reachable from the initial one, breadth first, at most ``limit``."""
    seen, frontier = [engine.initial_state()], [engine.initial_state()]
    while frontier and len(seen) < limit:
        state = frontier.pop(0)
        if engine.is_terminal(state):
            continue
        for joint in product(*(engine.legal_moves(state, role) for role in engine.roles)):
            after = engine.next_state(state, list(joint))
            if after not in seen:
                seen.append(after)
                frontier.append(after)
    return seen


def assert_same_answers(first: Game, second: Game, states: list[State]) -> list[State]:
    """Assert that two games give the same terminal flags and goals on every state of
    ``states``, and on each state that is not terminal the same legal moves of each role
    and the same successor under every joint move; the terminal states among them."""
    ends = []
    for state in states:
        terminal = second.is_terminal(state)
        assert first.is_terminal(state) == terminal
        if terminal:
            ends.append(state)
            assert first.goals(state) == second.goals(state)
            continue
        moves = [second.legal_moves(state, role) for role in second.roles]
        assert [first.legal_moves(state, role) for role in second.roles] == moves
        for joint in product(*moves):
            assert first.next_state(state, list(joint)) == second.next_state(state, list(joint))
    return ends
