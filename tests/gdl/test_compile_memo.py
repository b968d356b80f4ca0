"""A process compiles the same rules once: later loads with the same limits share the
compiled engine and its race, and threads loading them at once wait for one compile."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

import server.gdl.compiled
import server.gdl.engine_trial
from server.cli import main
from server.gdl import Game
from server.gdl.compile_memo import CompileMemo, memo_key
from server.gdl.compiled import CompiledEngine
from server.gdl.engine_trial import Race
from server.gdl.game import forget_compiled_engines, forget_failed_compiles
from server.gdl.parser import parse_gdl
from server.records.archive import dump_archive_line

PILE = """
(role taker)
(init (pile 4))
(less 4 3 1) (less 3 2 1) (less 2 1 1) (less 1 0 1) (less 4 2 2) (less 3 1 2) (less 2 0 2)
(<= (legal taker (take ?k)) (true (pile ?n)) (less ?n ?m ?k))
(<= (next (pile ?m)) (does taker (take ?k)) (true (pile ?n)) (less ?n ?m ?k))
(<= terminal (true (pile 0)))
(<= (goal taker 100) (true (pile 0)))
(<= (goal taker 0) (not (true (pile 0))))
"""

OTHER_SERVER_LOG = Path(__file__).parent.parent / "replay" / "fixtures" / "ttt-other-server.json"


@pytest.fixture(autouse=True)
def nothing_remembered() -> None:
    forget_failed_compiles()
    forget_compiled_engines()


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every compile of the process, by its count of rules."""
    made: list[int] = []

    def counted(rules: list, **limits: object) -> CompiledEngine:  # type: ignore[type-arg]
        made.append(len(rules))
        return CompiledEngine.from_rules(rules, **limits)  # type: ignore[arg-type]

    monkeypatch.setattr(server.gdl.compiled, "compile_engine", counted)
    return made


def test_loading_the_same_rules_again_shares_the_compiled_engine_and_its_race(
    compiles: list[int],
) -> None:
    first = Game.from_text(PILE)
    again = Game.from_text(PILE)
    assert compiles == [len(first.rules)]
    assert again.engine is first.engine
    assert (first.engine_reused, again.engine_reused) == (False, True)
    assert again.engine_race is first.engine_race is not None
    assert again.failed_compile_seconds == 0.0


def test_rules_written_differently_share_it_but_other_limits_compile_again(
    compiles: list[int],
) -> None:
    first = Game.from_text(PILE)
    laid_out = Game.from_text("; the same rules, laid out anew\n" + PILE.replace(") (", ")\n("))
    assert laid_out.engine is first.engine
    longer = Game.from_text(PILE, compile_time_limit=5.0)
    assert longer.engine is not first.engine
    assert len(compiles) == 2


def test_games_sharing_an_engine_play_as_games_with_their_own(compiles: list[int]) -> None:
    """Two matches of the same rules, their moves interleaved, each against a game
    compiled apart from the memo."""
    first, second = Game.from_text(PILE), Game.from_text(PILE)
    forget_compiled_engines()
    alone = Game.from_text(PILE)
    assert first.engine is second.engine is not alone.engine
    rng = random.Random(7)
    states = [first.initial_state(), second.initial_state()]
    references = [alone.initial_state(), alone.initial_state()]
    for _ in range(40):
        for which, game in enumerate((first, second)):
            state, reference = states[which], references[which]
            if game.is_terminal(state):
                assert alone.is_terminal(reference)
                assert game.goals(state) == alone.goals(reference)
                states[which], references[which] = game.initial_state(), alone.initial_state()
                continue
            moves = game.legal_moves(state, "taker")
            assert [str(move) for move in moves] == [
                str(move) for move in alone.legal_moves(reference, "taker")
            ]
            move = rng.choice(moves)
            states[which] = game.next_state(state, [move])
            references[which] = alone.next_state(reference, [str(move)])
            assert states[which].to_ggp() == references[which].to_ggp()


def test_threads_loading_the_same_rules_at_once_compile_them_once(compiles: list[int]) -> None:
    start = threading.Barrier(4)
    games: list[Game] = []

    def load() -> None:
        start.wait()
        games.append(Game.from_text(PILE))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(compiles) == 1
    assert len(games) == 4 and len({id(game.engine) for game in games}) == 1
    assert sum(game.engine_reused for game in games) == 3


def test_an_engine_asked_for_by_name_is_raced_once_auto_asks_for_it(compiles: list[int]) -> None:
    named = Game.from_text(PILE, engine="compiled")
    assert named.engine_race is None
    auto = Game.from_text(PILE)
    assert len(compiles) == 1  # the kept engine raced, not compiled again
    assert auto.engine is named.engine and auto.engine_race is not None
    assert Game.from_text(PILE, engine="compiled").engine is named.engine


def test_an_engine_that_lost_its_race_is_not_kept(
    compiles: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interpreter_wins(compiled: object, make: object, seconds: float) -> tuple:  # type: ignore[type-arg]
        return Race(compiled_rate=100.0, interpreter_rate=1_000.0), make()  # type: ignore[operator]

    monkeypatch.setattr(server.gdl.engine_trial, "race", interpreter_wins)
    lost = Game.from_text(PILE)
    assert lost.engine.name == "interpreter" and lost.fallback_reason is not None
    again = Game.from_text(PILE)
    assert again.engine.name == "interpreter" and again.fallback_reason == lost.fallback_reason
    assert len(compiles) == 1  # the lost race is remembered
    named = Game.from_text(PILE, engine="compiled")  # the loser was dropped: compiled anew
    assert named.engine.name == "compiled" and not named.engine_reused
    assert len(compiles) == 2


def test_the_memo_keeps_the_engines_loaded_last() -> None:
    memo = CompileMemo(engines=2)
    rules = parse_gdl(PILE)
    keys = [memo_key(rules, max_ground_rules=1_000, time_limit=limit) for limit in (1, 2, 3)]
    engines = [CompiledEngine.from_rules(rules) for _ in keys]
    memo.keep_compiled(keys[0], engines[0], None)
    memo.keep_compiled(keys[1], engines[1], None)
    assert memo.compiled(keys[0]) is not None  # used last now: kept over keys[1]
    memo.keep_compiled(keys[2], engines[2], None)
    assert memo.compiled(keys[1]) is None
    assert [memo.compiled(key).engine for key in (keys[0], keys[2])] == [  # type: ignore[union-attr]
        engines[0],
        engines[2],
    ]


def test_an_archive_of_matches_of_one_game_is_replayed_with_one_compile(
    tmp_path: Path, compiles: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(OTHER_SERVER_LOG.read_text(encoding="utf-8"))
    lines = []
    for number in range(5):
        copy = {**record, "matchId": f"remote.ticTacToe.{number}"}
        lines.append(dump_archive_line(f"http://matches.example.org/{number}/", copy))
    archive = tmp_path / "archive.jsonl"
    archive.write_text("\n".join(lines) + "\n", encoding="utf-8")
    database = f"sqlite:///{tmp_path / 'ggp.db'}"
    assert main(["db", "upgrade", "--database", database]) == 0
    assert main(["import", str(archive), "--database", database]) == 0
    output = capsys.readouterr().out
    assert output.count("replay ok") == 5, output
    assert len(compiles) == 1


def test_a_lint_of_rules_compiled_before_reports_what_compiling_them_costs(
    compiles: list[int],
) -> None:
    from server.games.lint import lint_game

    first = lint_game(PILE)
    again = lint_game(PILE)
    assert len(compiles) == 1
    kept = Game.from_text(PILE, engine="compiled")
    assert kept.engine_reused
    assert again.setup_seconds == round(kept.engine.setup_seconds, 3) > 0  # type: ignore[attr-defined]
    assert first.setup_seconds is not None and first.setup_seconds >= again.setup_seconds
