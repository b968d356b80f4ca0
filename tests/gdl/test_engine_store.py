"""The engine store: a game compiled by one process (at set-up, aside, or by
``ggp games compile``) is loaded compiled by the next, with the same answers as the
interpreter; a compile that failed for good fails at once in the next; an entry that
cannot be read costs a compile, never a wrong answer."""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

import server.gdl.engine_store as engine_store_module
from server.gdl import Game, parse_gdl
from server.gdl.compile_budget import CompileBudget
from server.gdl.compile_memo import fails_again
from server.gdl.compiled import GroundingTooLarge, GroundingTooSlow
from server.gdl.compiled import errors as compile_errors
from server.gdl.compiled.errors import CompileError, SlowerThanInterpreter
from server.gdl.engine_store import EngineStore, engine_store, rules_digest
from server.gdl.game import forget_compiled_engines, forget_failed_compiles

ROOT = Path(__file__).resolve().parents[2]
NINE_BOARD = ROOT / "server" / "games" / "nineBoardTicTacToe.kif"
TIC_TAC_HEAVEN = ROOT / "server" / "games" / "ticTacHeaven.kif"
SET_UP_RULES = 100
"""A rule cap nine-board tic-tac-toe is far over: set-up falls back at once."""
WAIT = 120.0
"""Seconds a test waits for another process at most (a few on a quiet machine)."""


@pytest.fixture(autouse=True)
def nothing_remembered() -> None:
    forget_failed_compiles()
    forget_compiled_engines()


@pytest.fixture
def store_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty engine store that every load of the test (and its child processes) uses,
    storing every engine however quickly it compiled."""
    folder = tmp_path / "engines"
    monkeypatch.setenv("GGP_ENGINE_STORE", str(folder))
    monkeypatch.setattr(engine_store_module, "MIN_COMPILE_SECONDS", 0.0)
    return folder


def forget_this_process() -> None:
    """What a fresh process would not know: only the store remembers."""
    forget_failed_compiles()
    forget_compiled_engines()


def playthrough(game: Game, seed: int, steps: int = 40) -> list[object]:
    """What a seeded random playthrough asks and is told: legal moves, states, goals."""
    rng = random.Random(seed)
    state, seen = game.initial_state(), []
    for _ in range(steps):
        if game.is_terminal(state):
            break
        legal = [sorted(map(str, game.legal_moves(state, role))) for role in game.roles]
        joint = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
        state = game.next_state(state, joint)
        seen.append((legal, sorted(map(str, state.facts))))
    seen.append([game.goals(state) if game.is_terminal(state) else None])
    return seen


def stored_engine_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.engine"))


def loaded_and_stored(path: Path, **options: object) -> Game:
    """Load a game and wait until its engine is in the store (when it is handed there)."""
    game = Game.from_file(path, **options)
    if game.engine_storing is not None:
        game.engine_storing.join(WAIT)
    return game


def test_an_engine_compiled_by_one_load_is_read_by_the_next_with_the_same_answers(
    store_dir: Path,
) -> None:
    first = loaded_and_stored(NINE_BOARD)
    assert first.engine.name == "compiled" and not first.engine_stored
    assert len(stored_engine_files(store_dir)) == 1

    forget_this_process()
    second = Game.from_file(NINE_BOARD)
    assert second.engine.name == "compiled"
    assert second.engine_stored and not second.engine_reused
    assert second.engine_race == first.engine_race  # the race is stored with it
    reference = Game.from_file(NINE_BOARD, engine="interpreter")
    for seed in range(4):
        assert playthrough(second, seed) == playthrough(reference, seed)


def test_an_engine_that_compiles_quickly_is_not_stored(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_store_module, "MIN_COMPILE_SECONDS", 1e9)
    game = Game.from_file(NINE_BOARD)
    assert game.engine.name == "compiled" and game.engine_storing is None
    assert stored_engine_files(store_dir) == []


def test_a_failure_that_would_fail_again_is_not_tried_again_by_the_next_load(
    store_dir: Path,
) -> None:
    first = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES)
    assert first.engine.name == "interpreter"
    assert first.failed_compile_seconds > 0

    forget_this_process()
    second = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES)
    assert second.engine.name == "interpreter"
    assert second.failed_compile_seconds == 0.0  # no attempt: the store said so
    assert second.fallback_reason == first.fallback_reason
    # the same kind of failure, so that a compile aside would start as it did
    assert isinstance(second._fallback_error, GroundingTooLarge)

    forget_this_process()
    larger = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES * 2)
    assert larger.failed_compile_seconds > 0  # another budget: tried afresh


def test_a_game_compiled_aside_plays_compiled_from_the_start_in_the_next_process(
    store_dir: Path,
) -> None:
    game = Game.from_file(NINE_BOARD, max_ground_rules=SET_UP_RULES, compile_aside=True)
    assert game.engine.name == "interpreter" and game.compile_aside is not None
    assert game.compile_aside.wait(WAIT), "the compile aside did not end"
    assert game.engine.name == "compiled", game.compile_aside.reason
    deadline = time.monotonic() + WAIT  # the other process stores it after answering
    while not stored_engine_files(store_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(stored_engine_files(store_dir)) == 1

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys; from server.gdl import Game; "
            f"game = Game.from_file(sys.argv[1], max_ground_rules={SET_UP_RULES}); "
            "print(json.dumps([game.engine.name, game.engine_stored, game.fallback_reason]))",
            str(NINE_BOARD),
        ],
        capture_output=True,
        text=True,
        timeout=WAIT,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(loaded.stdout) == ["compiled", True, None]


def test_an_unreadable_entry_is_removed_and_the_game_compiled_as_if_it_were_not_there(
    store_dir: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded_and_stored(NINE_BOARD)
    (entry,) = stored_engine_files(store_dir)
    entry.write_bytes(b"not a pickle at all")

    forget_this_process()
    with monkeypatch.context() as quick:
        quick.setattr(engine_store_module, "MIN_COMPILE_SECONDS", 1e9)  # not stored anew
        with caplog.at_level(logging.WARNING, logger="server.gdl.engine_store"):
            game = loaded_and_stored(NINE_BOARD)
    assert game.engine.name == "compiled" and not game.engine_stored
    assert "removed" in caplog.text
    assert not entry.exists()
    reference = Game.from_file(NINE_BOARD, engine="interpreter")
    assert playthrough(game, seed=7) == playthrough(reference, seed=7)
    # the next compile is stored whole, and read
    forget_this_process()
    loaded_and_stored(NINE_BOARD)
    forget_this_process()
    assert Game.from_file(NINE_BOARD).engine_stored


def test_an_entry_made_by_other_code_is_not_read(store_dir: Path) -> None:
    loaded_and_stored(NINE_BOARD)
    (entry,) = stored_engine_files(store_dir)
    rules = parse_gdl(NINE_BOARD.read_text(encoding="utf-8"))
    other = store_dir / f"{rules_digest(rules)}.engine"
    assert other == entry  # named by this code's digest of the rules...
    engine_store_module.code_fingerprint.cache_clear()
    try:
        original = engine_store_module.FORMAT
        engine_store_module.FORMAT = original + 1  # ...which another layout changes
        assert rules_digest(rules) != entry.name.removesuffix(".engine")
        forget_this_process()
        assert not Game.from_file(NINE_BOARD).engine_stored
    finally:
        engine_store_module.FORMAT = original
        engine_store_module.code_fingerprint.cache_clear()


def test_a_store_that_others_may_write_to_is_neither_written_nor_read(
    store_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store_dir.mkdir()
    store_dir.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger="server.gdl.engine_store"):
        game = loaded_and_stored(NINE_BOARD)
    assert game.engine.name == "compiled"
    assert list(store_dir.iterdir()) == []
    assert "others may write to it" in caplog.text

    store_dir.chmod(0o700)  # an engine stored while it was private...
    forget_this_process()
    loaded_and_stored(NINE_BOARD)
    assert len(stored_engine_files(store_dir)) == 1
    store_dir.chmod(0o777)  # ...is not read once others may have replaced it
    forget_this_process()
    again = loaded_and_stored(NINE_BOARD)
    assert again.engine.name == "compiled" and not again.engine_stored


def test_the_store_removes_the_engines_loaded_longest_ago_past_its_size_limit(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "engines"
    nine = Game.from_file(NINE_BOARD, engine="compiled")
    heaven = Game.from_file(TIC_TAC_HEAVEN, engine="compiled")
    budget = CompileBudget(2.0, 80_000)
    unlimited = EngineStore(folder, 2**40)
    assert unlimited.entry(nine.rules).keep_engine(nine.engine.portable(), None, budget)
    one_entry = stored_engine_files(folder)[0].stat().st_size
    old = time.time() - 3600
    os.utime(stored_engine_files(folder)[0], (old, old))

    elsewhere = EngineStore(tmp_path / "elsewhere", 2**40)
    assert elsewhere.entry(heaven.rules).keep_engine(heaven.engine.portable(), None, budget)
    other_entry = stored_engine_files(elsewhere.directory)[0].stat().st_size

    store = EngineStore(folder, one_entry + other_entry - 1)  # not room for both
    assert store.entry(heaven.rules).keep_engine(heaven.engine.portable(), None, budget)
    assert store.entry(nine.rules).engine() is None  # the older one made room
    kept = store.entry(heaven.rules).engine()
    assert kept is not None and kept.budget == budget


def test_entries_are_named_by_the_rules_not_by_their_layout() -> None:
    text = NINE_BOARD.read_text(encoding="utf-8")
    relaid = "; the same rules, laid out otherwise\n" + text.replace("(<= ", "(<=\n    ")
    assert rules_digest(parse_gdl(relaid)) == rules_digest(parse_gdl(text))
    assert rules_digest(parse_gdl(text + "\n(extra fact)")) != rules_digest(parse_gdl(text))


def test_the_store_is_off_when_the_environment_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for said in ("off", "0", "no", ""):
        monkeypatch.setenv("GGP_ENGINE_STORE", said)
        assert engine_store() is None
    monkeypatch.delenv("GGP_ENGINE_STORE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    default = engine_store()
    assert default is not None and default.directory == tmp_path / "ggp" / "engines"
    assert default.max_bytes == 2048 * 2**20
    monkeypatch.setenv("GGP_ENGINE_STORE_MB", "lots")
    with pytest.raises(ValueError, match="GGP_ENGINE_STORE_MB is 'lots'; give a whole number"):
        engine_store()


def test_a_failure_read_back_is_the_failure_kept(tmp_path: Path) -> None:
    rules = parse_gdl(NINE_BOARD.read_text(encoding="utf-8"))
    entry = EngineStore(tmp_path / "engines", 2**30).entry(rules)
    budget = CompileBudget(2.0, SET_UP_RULES)
    assert entry.failure(budget) is None
    assert entry.keep_failure(budget, GroundingTooLarge("too many rules"))
    failure = entry.failure(budget)
    assert isinstance(failure, GroundingTooLarge) and failure.reason == "too many rules"
    # a larger budget may compile it; a smaller one would meet the same cap
    assert entry.failure(CompileBudget(10.0, SET_UP_RULES)) is None
    assert entry.failure(CompileBudget(2.0, SET_UP_RULES * 2)) is None
    smaller = entry.failure(CompileBudget(1.0, SET_UP_RULES // 2))
    assert isinstance(smaller, GroundingTooLarge) and smaller.reason == "too many rules"


def test_every_failure_that_would_fail_again_is_kept_as_what_it_was(tmp_path: Path) -> None:
    """Each kind of compile failure that would fail again whatever the load (a count past
    a cap or a stretch, an estimate, rules refused) is kept and read back as that kind,
    so a kind added later is not silently tried again by every process."""
    rules = parse_gdl(NINE_BOARD.read_text(encoding="utf-8"))
    entry = EngineStore(tmp_path / "engines", 2**30).entry(rules)
    kinds = [
        kind
        for kind in vars(compile_errors).values()
        if isinstance(kind, type) and issubclass(kind, CompileError)
    ]
    assert "GroundingPastStretch" in {kind.__name__ for kind in kinds}
    for number, kind in enumerate(kinds):
        failure = kind(f"reason {number}")
        budget = CompileBudget(2.0 + number, SET_UP_RULES)
        assert entry.keep_failure(budget, failure) == fails_again(failure), kind.__name__
        read = entry.failure(budget)
        if fails_again(failure):
            assert type(read) is kind and read.reason == f"reason {number}"
        else:
            assert read is None


def test_a_lost_race_is_kept_for_its_own_budget_only(tmp_path: Path) -> None:
    rules = parse_gdl(NINE_BOARD.read_text(encoding="utf-8"))
    entry = EngineStore(tmp_path / "engines", 2**30).entry(rules)
    budget = CompileBudget(10.0, 480_000)
    assert entry.keep_failure(budget, SlowerThanInterpreter("the interpreter ran faster"))
    assert isinstance(entry.failure(budget), SlowerThanInterpreter)
    assert entry.failure(CompileBudget(2.0, 80_000)) is None  # another form may win


def test_a_failure_made_by_the_clock_is_not_kept(tmp_path: Path) -> None:
    rules = parse_gdl(NINE_BOARD.read_text(encoding="utf-8"))
    entry = EngineStore(tmp_path / "engines", 2**30).entry(rules)
    budget = CompileBudget(2.0, 80_000)
    assert not entry.keep_failure(budget, GroundingTooSlow("took longer than the limit"))
    assert entry.failure(budget) is None
