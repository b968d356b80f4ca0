"""The rules workers a game's matches share: few processes, states that move between them."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from server.games import game_text
from server.gdl import Game, GdlError
from server.match.rules import RulesBudget, RulesPool, RulesSession, RulesWorkerDied
from server.match.rules import pool as pool_module


async def test_many_matches_of_a_game_share_a_few_worker_processes() -> None:
    rules = game_text("tictactoex9")
    game = Game.from_text(rules)
    pool = RulesPool()
    try:
        sessions = [
            await RulesSession.open(rules, "auto", RulesBudget(), pool=pool) for _ in range(60)
        ]
        positions = await asyncio.gather(*(session.initial() for session in sessions))
        states = [game.initial_state() for _ in sessions]
        for step in range(6):
            joints = [
                [moves[(index + step) % len(moves)] for moves in position.legal or []]
                for index, position in enumerate(positions)
            ]
            positions = await asyncio.gather(
                *(
                    session.step(position, joint)
                    for session, position, joint in zip(sessions, positions, joints, strict=True)
                )
            )
            states = [
                game.next_state(state, joint) for state, joint in zip(states, joints, strict=True)
            ]
            assert [position.text for position in positions] == [state.to_ggp() for state in states]
        assert pool.process_count <= 1 + pool_module.MAX_WORKERS_PER_GAME
        assert len({session.pid for session in sessions}) <= pool_module.MAX_WORKERS_PER_GAME
        for session in sessions:
            await session.close()
    finally:
        await pool.close()


async def test_a_match_whose_worker_died_under_another_goes_on_in_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pool_module, "MAX_WORKERS_PER_GAME", 1)
    rules = game_text("tictactoex9")
    game = Game.from_text(rules)
    pool = RulesPool()
    try:
        first = await RulesSession.open(rules, "auto", RulesBudget(), pool=pool)
        second = await RulesSession.open(rules, "auto", RulesBudget(), pool=pool)
        assert first.pid == second.pid
        one, two = await first.initial(), await second.initial()
        joint = [moves[0] for moves in two.legal or []]
        os.kill(first.pid, signal.SIGKILL)
        with pytest.raises(RulesWorkerDied, match="killed"):
            await first.step(one, [moves[0] for moves in one.legal or []])
        # the second match's state lived in that worker: it is stepped from its text
        moved = await second.step(two, joint)
        assert second.pid != first.pid
        expected = game.next_state(game.initial_state(), joint)
        assert moved.text == expected.to_ggp()
        again = await second.step(moved, [moves[-1] for moves in moved.legal or []])
        assert not again.terminal and again.legal
        await first.close()
        await second.close()
    finally:
        await pool.close()


async def test_a_match_that_ends_drops_its_states_without_waiting_for_its_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pool_module, "MAX_WORKERS_PER_GAME", 1)
    rules = game_text("tictactoex9")
    pool = RulesPool()
    try:
        ending = await RulesSession.open(rules, "auto", RulesBudget(), pool=pool)
        other = await RulesSession.open(rules, "auto", RulesBudget(), pool=pool)
        position = await ending.initial()
        position = await ending.step(position, [moves[0] for moves in position.legal or []])
        held = ending._lease.worker._held[position.handle]
        worker = held.worker
        async with worker.connection.lock:  # the worker busy with another match's request
            await asyncio.wait_for(ending.close(), timeout=5)
        # the worker dropped the state; requests sent after still get their own answers
        with pytest.raises(GdlError, match="KeyError"):
            await worker.call(("goals", held.handle), 1.0, "for the goals")
        assert (await other.initial()).legal
        await other.close()
    finally:
        await pool.close()
