"""Playthroughs: one seeded random game per bundled game, written out step by step.

A playthrough file pins the behaviour of a game's rules: at every step it records the
state, whether it is terminal, the goals defined there, every role's legal moves and
the joint move played.  The test replays the recorded moves and must reproduce the file
line for line; any change in the rules or in the engine shows up as the first line that
differs.  The files were written by our own engine, so they pin its behaviour rather
than check it independently (see ``playthroughs/README.md``).  Rewrite the files only
when a change is intended::

    python -m tests.games.regenerate [NAME ...]
"""

from __future__ import annotations

import random
from pathlib import Path

from server.games import load_game
from server.gdl import GdlError
from server.gdl.parser import parse_term
from server.gdl.terms import RawTerm, to_kif

DIRECTORY = Path(__file__).resolve().parent / "playthroughs"

SETTINGS: dict[str, tuple[int, int]] = {
    "ticTacHeaven": (2000, 500),
    "tictactoex9": (2001, 200),
    "nineBoardTicTacToe": (2002, 200),
    "nineBoardTicTacToePie": (2006, 200),
    "double_tictactoe_dengji": (2004, 200),
}
"""For each game: the random seed and the step limit."""

MOVE_SEPARATOR = " | "


def path_of(name: str) -> Path:
    return DIRECTORY / f"{name}.txt"


def record(name: str) -> str:
    """Play a seeded random game and render it: each role picks uniformly among its moves."""
    seed, limit = SETTINGS[name]
    game = load_game(name)
    rng = random.Random(seed)
    state = game.initial_state()
    moves: list[list[RawTerm]] = []
    while not game.is_terminal(state) and len(moves) < limit:
        joint = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
        moves.append(joint)
        state = game.next_state(state, joint)
    return render(name, seed, limit, moves)


def render(name: str, seed: int, limit: int, moves: list[list[RawTerm]]) -> str:
    """The playthrough text of ``moves`` played from the start of the game."""
    game = load_game(name)
    lines = [
        f"# Playthrough of {name}: a seeded random game, step by step.",
        "# Regenerate only on purpose: python -m tests.games.regenerate " + name,
        f"game: {name}",
        f"seed: {seed}",
        f"step limit: {limit}",
        f"roles: {' '.join(game.roles)}",
    ]
    state = game.initial_state()
    for step in range(len(moves) + 1):
        goals = game.defined_goals(state)
        lines += [
            "",
            f"step {step}",
            f"state: {state.to_kif()}",
            f"terminal: {'yes' if game.is_terminal(state) else 'no'}",
            "goals: " + (" ".join(f"{role}={value}" for role, value in goals.items()) or "none"),
        ]
        if step == len(moves):
            break
        for role in game.roles:
            legal = game.legal_moves(state, role)
            lines.append(f"legal {role} ({len(legal)}): {MOVE_SEPARATOR.join(map(str, legal))}")
        joint = moves[step]
        lines.append("moves: " + MOVE_SEPARATOR.join(to_kif(move) for move in joint))
        try:
            state = game.next_state(state, joint)
        except GdlError as error:
            lines.append(f"error: {error}")
            break
    ended = "terminal" if game.is_terminal(state) else f"step limit {limit}"
    lines += ["", f"end: {ended} after {len(moves)} steps", ""]
    return "\n".join(lines)


def read(text: str) -> tuple[str, int, int, list[list[RawTerm]]]:
    """The game name, seed, step limit and joint moves recorded in a playthrough."""
    fields: dict[str, str] = {}
    moves: list[list[RawTerm]] = []
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        if key == "moves":
            moves.append([parse_term(move) for move in value.split(MOVE_SEPARATOR)])
        elif key in ("game", "seed", "step limit"):
            fields[key] = value
    return fields["game"], int(fields["seed"]), int(fields["step limit"]), moves
