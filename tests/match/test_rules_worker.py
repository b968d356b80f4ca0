"""The rules run in a worker process with budgets: heavy games end with
``rules_limit``, never stall other matches, and leave consistent logs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.games import load_game
from server.gdl import Game, RulesTooLargeError
from server.match import LogWriter, MatchConfig, MatchEvent, MatchRunner, Player, StepPlayed
from server.match.rules import RulesBudget, RulesPool, RulesSession
from server.records import EndReason
from server.records.signing import sign_record_file, verify_record_file
from server.replay import Outcome, replay_file

from .fakes import counting_game


def _nested(depth: int) -> str:
    term = "z"
    for _ in range(depth):
        term = f"(s {term})"
    return term


EXPLODING = f"""
(role p)
(init (c z))
(init (top z))
(<= (next (c (s ?x))) (true (top ?x)))
(<= (next (top (s ?x))) (true (top ?x)))
(<= (next (c ?x)) (true (c ?x)))
(<= (legal p (m ?a ?b ?c ?d)) (true (c ?a)) (true (c ?b)) (true (c ?c)) (true (c ?d)))
(<= terminal (true (c {_nested(60)})))
(goal p 50)
"""
"""Every step adds a counter; the legal moves are every 4-tuple of counters."""

DOUBLING = f"""
(role p)
(init (f z))
(legal p go)
(<= (next (f (l ?x))) (true (f ?x)))
(<= (next (f (r ?x))) (true (f ?x)))
(<= terminal (true (f {_nested(60)})))
(goal p 70)
"""
"""The state doubles every step."""


def _slow_counting(steps: int, tokens: int) -> str:
    """A game of exactly ``steps`` steps whose every step costs about ``tokens**4`` (the
    legal moves read the count, so that no two states share them)."""
    lines = ["(role p)", "(init (count 0))"]
    lines += [f"(init (tok t{i}))" for i in range(tokens)]
    lines += [f"(succ {n} {n + 1})" for n in range(steps)]
    lines += [
        "(<= (next (count ?y)) (true (count ?x)) (succ ?x ?y))",
        "(<= (next (tok ?t)) (true (tok ?t)))",
        "(<= (legal p (m ?a)) (true (count ?n)) (true (tok ?a)) (true (tok ?b)) (true (tok ?c))"
        " (true (tok ?d)) (distinct ?b ?d) (distinct ?c ?a))",
        f"(<= terminal (true (count {steps})))",
        "(goal p 50)",
    ]
    return "\n".join(lines)


def _config(**changes: object) -> MatchConfig:
    base = MatchConfig(
        start_clock=2, play_clock=1, network_slack=0.5, seed=3, step_limit=100, rules_step_cpu=1.0
    )
    return base.model_copy(update=changes)


@dataclass
class SlowPlayer:
    """An aiohttp GGP player that answers ``noop`` to PLAY after ``delay`` seconds."""

    delay: float = 0.2
    received: list[str] = field(default_factory=list)
    url: str = ""

    async def _handle(self, request: web.Request) -> web.Response:
        kind = (await request.text()).strip().lstrip("(").split()[0].lower()
        self.received.append(kind)
        if kind == "play":
            await asyncio.sleep(self.delay)
            return web.Response(text="noop")
        return web.Response(text="ready" if kind == "start" else "done")


@contextlib.asynccontextmanager
async def slow_player(delay: float = 0.2) -> AsyncIterator[SlowPlayer]:
    player = SlowPlayer(delay)
    app = web.Application()
    app.router.add_post("/", player._handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    player.url = f"http://127.0.0.1:{port}/"
    try:
        yield player
    finally:
        await runner.cleanup()


def _check_log(path: Path) -> None:
    """The log is signed, verifies, and replays without a problem."""
    key = Ed25519PrivateKey.generate()
    sign_record_file(path, key)
    assert verify_record_file(path, key.public_key()).ok
    replay = replay_file(path)
    assert replay.ok, replay.problems
    assert replay.outcome is Outcome.ABORTED


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    # The games here grow function terms without end: no grounding (the compiled
    # engine) can hold them, so the replay goes straight to the interpreter.
    monkeypatch.setenv("GGP_ENGINE", "interpreter")


@pytest.mark.parametrize(
    ("rules", "because"),
    [(EXPLODING, "s of CPU time in one step"), (DOUBLING, "")],
    ids=["exploding-legal-moves", "doubling-state"],
)
async def test_a_game_past_its_budget_ends_with_rules_limit_and_a_consistent_log(
    tmp_path: Path, rules: str, because: str
) -> None:
    writer = LogWriter(tmp_path, durable=False)
    game = Game.from_text(rules, engine="interpreter")

    record = await MatchRunner(game, [None], _config(), observers=[writer]).run()

    assert record.end_reason is EndReason.RULES_LIMIT
    assert because in (record.end_message or "")
    assert record.is_aborted and not record.is_completed
    assert len(record.moves) >= 3
    assert len(record.states) == len(record.moves) + 1
    assert record.goal_values == [50 if rules is EXPLODING else 70]
    _check_log(writer.path_for(record.match_id))


async def test_a_heavy_game_does_not_stall_a_light_match_beside_it(tmp_path: Path) -> None:
    heavy = MatchRunner(
        Game.from_text(EXPLODING, engine="interpreter"), [None], _config(rules_step_cpu=3.0)
    )
    light_game = Game.from_text(counting_game(12), engine="interpreter")
    async with slow_player() as left, slow_player() as right:
        light = MatchRunner(
            light_game,
            [Player("Left", left.url), Player("Right", right.url)],
            _config(play_clock=1, network_slack=0.25),
        )
        heavy_record, light_record = await asyncio.gather(heavy.run(), light.run())

    assert heavy_record.end_reason is EndReason.RULES_LIMIT
    assert light_record.end_reason is EndReason.TERMINAL
    assert len(light_record.moves) == 12
    assert light_record.errors == [["", ""]] * 13
    assert heavy.stats.steps >= 9  # the heavy steps overlapped the light match


async def test_a_killed_worker_ends_the_match_with_a_clear_reason_and_a_consistent_log(
    tmp_path: Path,
) -> None:
    writer = LogWriter(tmp_path, durable=False)
    game = Game.from_text(counting_game(20), engine="interpreter")
    async with slow_player(0.05) as left, slow_player(0.05) as right:
        runner = MatchRunner(
            game,
            [Player("Left", left.url), Player("Right", right.url)],
            _config(),
            observers=[writer],
        )

        def kill_at_step_3(event: MatchEvent) -> None:
            if isinstance(event, StepPlayed) and event.step == 3:
                assert runner.rules_worker_pid is not None
                os.kill(runner.rules_worker_pid, signal.SIGKILL)

        runner.subscribe(kill_at_step_3)
        record = await runner.run()

    assert record.end_reason is EndReason.ERROR
    assert "rules worker was killed (SIGKILL)" in (record.end_message or "")
    assert len(record.moves) == 3 and len(record.states) == 4
    assert record.goal_values == [50, 50]
    assert left.received[-1] == "abort" and right.received[-1] == "abort"
    _check_log(writer.path_for(record.match_id))


async def test_the_step_limit_counts_playouts_and_is_the_same_under_cpu_load() -> None:
    # Eight playouts of 100 steps take seconds here: a limit by elapsed time would cut
    # them (1000); counting them gives four times the longest playout.
    rules = _slow_counting(100, 11)
    budget = RulesBudget(step_cpu=5.0, load_cpu=60.0)

    async def step_limit() -> int | None:
        pool = RulesPool()
        try:
            session = await RulesSession.open(
                rules, "interpreter", budget, want_step_limit=True, pool=pool
            )
            await session.close()
            return session.step_limit
        finally:
            await pool.close()

    quiet = await step_limit()
    burners = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        loaded = await step_limit()
    finally:
        for burner in burners:
            burner.kill()
            await burner.wait()
    assert quiet == loaded == 400


async def test_the_goals_of_a_recorded_state_wait_as_long_as_the_load_budget_allows() -> None:
    # Reading a recorded state runs under the load budget in the worker; a starved
    # worker (a busy machine, here one stopped for a while) is not given up on after
    # the wall time of one step (10 x step_cpu + 10 s) while its budget still holds.
    budget = RulesBudget(step_cpu=0.01, load_cpu=5.0)
    pool = RulesPool()
    try:
        session = await RulesSession.open(DOUBLING, "interpreter", budget, pool=pool)
        try:
            os.kill(session.pid, signal.SIGSTOP)
            asyncio.get_running_loop().call_later(10.5, os.kill, session.pid, signal.SIGCONT)
            goals, _ = await session.goals_at("( ( f ( l z ) ) ( f ( r z ) ) )")
        finally:
            await session.close()
    finally:
        await pool.close()
    assert goals == {"p": 70}


async def test_rules_past_the_load_budget_end_the_match_before_start(tmp_path: Path) -> None:
    writer = LogWriter(tmp_path, durable=False)
    game = Game.from_text(_slow_counting(100, 12), engine="interpreter")
    async with slow_player() as player:
        record = await MatchRunner(
            game,
            [Player("P", player.url)],
            _config(step_limit=None, rules_load_cpu=0.5),
            observers=[writer],
        ).run()

    assert record.end_reason is EndReason.RULES_LIMIT
    assert record.end_message == "the rules used more than 0.5 s of CPU time to load the game"
    assert record.states == [] and record.moves == []
    assert player.received == ["abort"]
    _check_log(writer.path_for(record.match_id))


def test_rules_over_the_size_cap_are_refused_with_one_line(tmp_path: Path) -> None:
    rules = counting_game(3) + "\n" + ";" + "x" * 3_000_000 + "\n"
    path = tmp_path / "huge.kif"
    path.write_text(rules, encoding="utf-8")

    with pytest.raises(RulesTooLargeError) as from_file:
        load_game(path)
    with pytest.raises(RulesTooLargeError) as from_text:
        Game.from_text(rules)

    assert str(from_file.value) == f"the rules file {path} is 2.9 MB, over the limit of 2 MB"
    assert str(from_text.value) == "the rules are 2.9 MB, over the limit of 2 MB"
    assert Game.from_text(rules, max_bytes=4_000_000).roles == ["left", "right"]
