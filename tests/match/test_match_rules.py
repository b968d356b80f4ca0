"""How a match is run: substitute policies, the step limit, the random role, abort, scrambling."""

from __future__ import annotations

import asyncio

import pytest

from server.gdl import Game
from server.match import (
    MatchConfig,
    MatchEnded,
    MatchEvent,
    MatchRunner,
    MatchStarted,
    Player,
    PlayersStarted,
    StepPlayed,
    default_step_limit,
)
from server.match.events import MatchClosed
from server.protocol import Play, Start
from server.records import EndReason, SubstitutePolicy

from .fakes import FakePlayer, counting_game

QUICK = MatchConfig(start_clock=1, play_clock=1, network_slack=0.25, seed=11)

ENDLESS = """
(role waiter)
(init on)
(legal waiter wait)
(legal waiter (shout 1))
(<= (next on) (true on))
(<= terminal (true off))
(<= (goal waiter 30) (true on))
"""


def quick(**changes: object) -> MatchConfig:
    return QUICK.model_copy(update=changes)


async def test_forfeit_records_zero_for_the_role_and_stops_asking_it() -> None:
    game = Game.from_text(counting_game(4))
    config = quick(policy=SubstitutePolicy.FORFEIT)
    async with FakePlayer(faults={2: "garbage"}) as faulty, FakePlayer() as honest:
        record = await MatchRunner(
            game, [Player("Faulty", faulty.url), Player("Honest", honest.url)], config
        ).run()
        asked = [type(message).__name__ for message in faulty.messages]
    assert record.errors == [["", ""], ["", ""], ["IL null", ""], ["", ""], ["", ""]]
    assert record.forfeited == [True, False]
    assert record.rule_goal_values == [50, 50]
    assert record.goal_values == [0, 50]
    assert asked == ["Start", "Play", "Play", "Stop"]
    assert record.response_times is not None and record.response_times[3][0] is None


async def test_the_first_policy_substitutes_the_first_legal_move() -> None:
    game = Game.from_text(counting_game(2))
    async with FakePlayer(faults={1: "illegal"}) as faulty, FakePlayer() as honest:
        record = await MatchRunner(
            game,
            [Player("Faulty", faulty.url), Player("Honest", honest.url)],
            quick(policy=SubstitutePolicy.FIRST),
        ).run()
    assert record.moves[0] == ["noop", "noop"]
    assert record.substitute_policy is SubstitutePolicy.FIRST


async def test_random_substitutes_come_from_the_logged_seed() -> None:
    game = Game.from_text(counting_game(6))

    async def substitutes(seed: int) -> list[str]:
        faults = dict.fromkeys(range(1, 7), "garbage")
        async with FakePlayer(faults=faults) as faulty, FakePlayer() as honest:
            record = await MatchRunner(
                game,
                [Player("Faulty", faulty.url), Player("Honest", honest.url)],
                quick(seed=seed),
            ).run()
        assert record.substitute_seed == seed
        return [joint[0] for joint in record.moves]

    first = await substitutes(5)
    assert first == await substitutes(5)
    assert len(set(first)) > 1


async def test_the_step_limit_ends_an_endless_game_with_the_goals_of_that_state() -> None:
    game = Game.from_text(ENDLESS)
    async with FakePlayer() as waiter:
        record = await MatchRunner(game, [Player("Waiter", waiter.url)], quick(step_limit=3)).run()
        last = waiter.messages[-1]
    assert record.end_reason is EndReason.STEP_LIMIT and record.step_limit == 3
    assert record.is_completed and not record.is_aborted
    assert len(record.moves) == 3 and record.goal_values == [30]
    assert type(last).__name__ == "Stop"


async def test_at_the_step_limit_an_undefined_goal_is_recorded_as_zero() -> None:
    game = Game.from_text(
        ENDLESS.replace("(true on))", "(true off))", 1).replace(
            "(<= (goal waiter 30) (true on))", "(<= (goal waiter 30) (true off))"
        )
    )
    async with FakePlayer() as waiter:
        record = await MatchRunner(game, [Player("Waiter", waiter.url)], quick(step_limit=2)).run()
    assert record.goal_values == [0] and record.rule_goal_values == [None]
    assert "waiter" in (record.end_message or "")


def test_the_default_step_limit_is_generous_and_bounds_endless_games() -> None:
    assert default_step_limit(Game.from_text(counting_game(30))) == 120
    assert default_step_limit(Game.from_text(counting_game(3))) == 100
    assert default_step_limit(Game.from_text(ENDLESS)) == 1000


async def test_a_role_named_random_is_played_by_the_server() -> None:
    game = Game.from_text(counting_game(3, roles=("player", "random")))
    async with FakePlayer() as player:
        record = await MatchRunner(game, [Player("P", player.url), None], QUICK).run()
    assert record.player_names_from_host == ["P", "random"]
    assert record.errors == [["", ""]] * 4
    assert record.response_times is not None
    assert all(times[1] is None for times in record.response_times)
    assert record.is_completed


async def test_abort_sends_abort_and_records_an_aborted_match() -> None:
    game = Game.from_text(counting_game(5))
    events: list[MatchEvent] = []
    ended_when_told: list[bool] = []

    def observe(event: MatchEvent) -> None:
        events.append(event)
        if isinstance(event, MatchEnded):  # ABORT is still on its way to the players
            ended_when_told.append(runner.is_ended)

    async with FakePlayer(faults={2: "sleep"}, delay=3) as one, FakePlayer() as two:
        runner = MatchRunner(
            game, [Player("One", one.url), Player("Two", two.url)], QUICK, observers=[observe]
        )
        task = asyncio.create_task(runner.run())
        await one.received(3)
        assert not runner.is_ended
        runner.abort()
        record = await task
        await two.received(4)
    assert ended_when_told == [True] and runner.is_ended
    assert record.is_aborted and not record.is_completed
    assert record.end_reason is EndReason.ABORTED
    assert len(record.moves) == 1 and len(record.states) == 2
    assert record.goal_values is None
    assert [type(message).__name__ for message in two.messages][-1] == "Abort"
    assert [type(event) for event in events] == [
        MatchStarted, PlayersStarted, StepPlayed, MatchEnded, MatchClosed,
    ]  # fmt: skip


async def test_cancelling_the_task_from_outside_still_sends_abort() -> None:
    game = Game.from_text(counting_game(5))
    async with FakePlayer(faults={1: "sleep"}, delay=3) as one, FakePlayer() as two:
        runner = MatchRunner(game, [Player("One", one.url), Player("Two", two.url)], QUICK)
        task = asyncio.create_task(runner.run())
        await two.received(2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert runner.record.is_aborted
    assert type(two.messages[-1]).__name__ == "Abort"


async def test_scrambling_hides_the_symbols_on_the_wire_and_the_log_keeps_the_true_ones() -> None:
    game = Game.from_text(counting_game(3))
    async with FakePlayer() as one, FakePlayer() as two:
        record = await MatchRunner(
            game, [Player("One", one.url), Player("Two", two.url)], quick(scramble=True)
        ).run()
        start = one.messages[0]
        plays = [message for message in one.messages if isinstance(message, Play)]
        wire = b"".join(one.requests)
    assert isinstance(start, Start)
    assert start.role != "left" and b"left" not in wire and b"count" not in wire
    assert record.scrambled is True
    assert record.errors == [["", ""]] * 4
    assert record.moves == [["noop", "noop"]] * 3
    assert record.states[-1] == "( ( count 3 ) )"
    assert plays[1].moves is not None and plays[1].moves[0] != "noop"


async def test_rules_that_leave_a_role_without_a_move_abort_the_match_with_an_error() -> None:
    game = Game.from_text(
        "(role stuck) (init on) (<= (legal stuck go) (true off)) (<= (next on) (true on))"
        " (<= terminal (true off)) (goal stuck 0)"
    )
    async with FakePlayer() as stuck:
        record = await MatchRunner(game, [Player("Stuck", stuck.url)], QUICK).run()
        last = stuck.messages[-1]
    assert record.is_aborted and record.end_reason is EndReason.ERROR
    assert "no legal move" in (record.end_message or "")
    assert type(last).__name__ == "Abort"
