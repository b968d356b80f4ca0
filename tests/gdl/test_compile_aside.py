"""Compiling aside: a game that set-up could not compile within its budget plays on the
interpreter while another process compiles it within a larger one, then switches to
the compiled engine between two calls, with the same answers as before."""

from __future__ import annotations

import gc
import os
import random
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import server.gdl.compile_aside as compile_aside
from server.gdl import Game, State
from server.gdl.compile_budget import CompileBudget
from server.gdl.game import forget_compiled_engines, forget_failed_compiles

ROOT = Path(__file__).resolve().parents[2]
NINE_BOARD = ROOT / "server" / "games" / "nineBoardTicTacToe.kif"
SET_UP_RULES = 100
"""A rule cap nine-board tic-tac-toe is far over: set-up falls back at once."""
WAIT = 120.0
"""Seconds a test waits for the other process at most (a few on a quiet machine)."""

WIDE = """
(role p)
(init (at 1))
(index 1) (index 2) (index 3) (index 4) (index 5) (index 6) (index 7) (index 8)
(index 9) (index 10) (index 11) (index 12) (index 13) (index 14) (index 15) (index 16)
(index 17) (index 18) (index 19) (index 20) (index 21) (index 22) (index 23) (index 24)
(index 25) (index 26) (index 27) (index 28) (index 29) (index 30)
(<= (legal p (go ?b ?c ?d)) (true (at ?a)) (index ?b) (index ?c) (index ?d))
(<= (next (at ?b)) (does p (go ?b ?c ?d)))
(<= terminal (true (at 30)))
(<= (goal p 100) (true (at 30)))
(<= (goal p 0) (not (true (at 30))))
"""
"""A game of 27,000 moves a state whose compile aside grounds for seconds before it
passes the rule cap: long enough to be stopped while under way."""


@pytest.fixture(autouse=True)
def nothing_remembered() -> None:
    forget_failed_compiles()
    forget_compiled_engines()


def playthrough(game: Game, seed: int, steps: int) -> list[tuple[State, list[object]]]:
    """Random steps from the initial state: each state and the joint move played there."""
    rng = random.Random(seed)
    state, played = game.initial_state(), []
    for _ in range(steps):
        if game.is_terminal(state):
            break
        joint: list[object] = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
        played.append((state, joint))
        state = game.next_state(state, joint)
    return played


def test_a_game_over_its_budget_switches_to_the_engine_compiled_aside() -> None:
    game = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    assert game.engine.name == "interpreter"
    assert f"more than {SET_UP_RULES} ground rules" in (game.fallback_reason or "")
    assert game.compile_aside is not None
    reference = Game.from_file(NINE_BOARD, engine="interpreter")
    before = playthrough(game, seed=1, steps=12)  # on the interpreter, most likely

    assert game.compile_aside.wait(WAIT), "the compile aside did not end"
    assert game.compile_aside.status == "compiled", game.compile_aside.reason
    assert game.engine.name == "compiled"
    assert game.compile_aside.cpu_seconds > 0 and not game.compile_aside.reused
    # states the interpreter made go on as they would have
    for state, joint in before:
        assert game.next_state(state, joint) == reference.next_state(state, joint)
        for role in game.roles:
            assert game.legal_moves(state, role) == reference.legal_moves(state, role)
    for seed in range(3):
        for state, joint in playthrough(game, seed, steps=90):
            assert game.is_terminal(state) == reference.is_terminal(state)
            for role in game.roles:
                assert game.legal_moves(state, role) == reference.legal_moves(state, role)
            following = game.next_state(state, joint)
            assert following == reference.next_state(state, joint)
            if game.is_terminal(following):
                assert game.goals(following) == reference.goals(following)


def test_a_second_load_takes_the_engine_compiled_aside_at_once() -> None:
    first = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    assert first.compile_aside is not None and first.compile_aside.wait(WAIT)
    assert first.engine.name == "compiled"

    again = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    assert again.engine is first.engine  # shared, no second process
    assert again.compile_aside is not None and again.compile_aside.reused
    assert again.fallback_reason is not None  # set-up itself still fell back


def test_games_loaded_while_it_compiles_share_the_one_compile() -> None:
    first = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    second = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    assert first.compile_aside is second.compile_aside
    assert first.compile_aside is not None and first.compile_aside.wait(WAIT)
    assert first.engine is second.engine and first.engine.name == "compiled"


def test_a_compile_aside_that_fails_leaves_the_game_on_the_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compile_aside, "aside_budget", lambda: CompileBudget(3.0, 150))
    game = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    assert game.compile_aside is not None and game.compile_aside.wait(WAIT)
    assert game.compile_aside.status == "failed"
    assert "more than 150 ground rules" in (game.compile_aside.reason or "")
    assert game.engine.name == "interpreter"
    assert len(playthrough(game, seed=2, steps=5)) == 5  # plays on

    # a failure that would fail again is remembered: no second process
    again = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    assert again.compile_aside is not None and again.compile_aside.status == "failed"
    assert again.compile_aside.started is None
    assert again.compile_aside.reason == game.compile_aside.reason


def test_no_compile_aside_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compile_aside.ASIDE_VARIABLE, raising=False)
    assert Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES).compile_aside is None
    # nor for a game that compiled, nor on the interpreter asked for
    assert Game.from_file(NINE_BOARD, compile_aside=True).compile_aside is None
    assert (
        Game.from_file(NINE_BOARD, engine="interpreter", compile_aside=True).compile_aside is None
    )
    # the environment asks for it too
    monkeypatch.setenv(compile_aside.ASIDE_VARIABLE, "1")
    game = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES)
    assert game.compile_aside is not None and game.compile_aside.wait(WAIT)


def test_a_compile_whose_games_were_all_dropped_stops() -> None:
    game = Game.from_text(WIDE, compile_aside=True)
    aside = game.compile_aside
    assert aside is not None and game.engine.name == "interpreter"
    deadline = time.monotonic() + WAIT
    while aside.status == "waiting" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert aside.status == "compiling"
    del game
    gc.collect()
    assert aside.wait(WAIT)
    assert aside.status == "failed"
    assert aside.reason == "stopped: no game waits for it any more"


def test_the_other_process_ends_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A program that exits while its compile aside is under way leaves no process, and
    no file."""
    marker = uuid.uuid4().hex
    script = tmp_path / "load_and_exit.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from server.gdl import Game\n"
        f"game = Game.from_text({WIDE!r}, compile_aside=True)\n"
        "while game.compile_aside.status == 'waiting':\n"
        "    time.sleep(0.05)\n"
        "print(game.compile_aside.status, flush=True)\n"
    )
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    environment = {**os.environ, "COMPILE_ASIDE_TEST": marker, "TMPDIR": str(temporary)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script)], env=environment, capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "compiling"
    assert time.monotonic() - started < WAIT
    assert not _processes_with(marker), "the compiling process outlived its parent"
    assert not list(temporary.iterdir()), "the answer's file outlived the program"


def _processes_with(marker: str) -> list[int]:
    """The processes whose environment holds ``marker`` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_forked_child_starts_its_own_compiles_aside() -> None:
    """A process forked while a compile aside was under way (a worker of a pool) does
    not wait for the parent's, and compiles aside on its own."""
    game = Game.from_text(WIDE, compile_aside=True)
    assert game.compile_aside is not None
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        outcome = b"?"
        try:
            inherited = game.compile_aside.status == "failed"
            forget_compiled_engines()
            mine = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
            switched = mine.compile_aside is not None and mine.compile_aside.wait(WAIT)
            outcome = b"ok" if inherited and switched and mine.engine.name == "compiled" else b"no"
        finally:
            os.write(writer, outcome)
            os._exit(0)
    os.close(writer)
    readable, _, _ = select.select([reader], [], [], WAIT + 30)
    said = os.read(reader, 16) if readable else b"(no answer)"
    os.close(reader)
    if not readable:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert said == b"ok"


def test_a_compile_aside_setting_it_cannot_read_is_refused_with_what_it_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(compile_aside.ASIDE_VARIABLE, "maybe")
    with pytest.raises(ValueError, match="GGP_COMPILE_ASIDE is 'maybe'; use 1, true"):
        Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES)
    monkeypatch.setenv(compile_aside.ASIDE_VARIABLE, " Off ")
    assert Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES).compile_aside is None
