"""The bot kit: a bot written as start/play/stop, served as a player, in real matches."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import ClassVar

import pytest

from players.agent import PlayerAgent
from players.bot import Bot, BotPlayer, Clocks
from players.serve import running
from server.bots.checker import check_player
from server.games import load_game
from server.gdl import Game, State
from server.match import MatchConfig, MatchRunner, Player
from server.match.local_players import local_player

ROOT = Path(__file__).resolve().parents[2]
GGP = Path(sys.executable).with_name("ggp")
QUICK = MatchConfig(start_clock=5, play_clock=3, network_slack=1.0, seed=3)

PICK = """
(role me) (role you)
(init (round 0))
(<= (legal me (pick ?n)) (number ?n)) (<= (legal you wait) (true (round 0)))
(number 1) (number 2) (number 3)
(<= (next (picked ?n)) (does me (pick ?n)))
(next (round 1))
(<= terminal (true (round 1)))
(<= (goal me 100) (true (picked 2))) (<= (goal me 0) (not (true (picked 2))))
(<= (goal you 0) (true (picked 2))) (<= (goal you 100) (not (true (picked 2))))
"""
"""One move: ``me`` wins by picking 2."""


def readme_bot() -> str:
    """The example bot of the README's "Write a bot" section, exactly as printed there."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Write a bot\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "the README's Write a bot section has no python example"
    return found.group(1)


def test_the_readme_example_is_the_example_file_and_under_30_lines() -> None:
    example = readme_bot()
    assert example == (ROOT / "players" / "examples" / "greedy_bot.py").read_text()
    assert len(example.splitlines()) < 30


@asynccontextmanager
async def bot_process(
    cwd: Path, spec: str
) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """``ggp player --bot SPEC --port 0`` run in ``cwd``; yields its URL and the process."""
    process = await asyncio.create_subprocess_exec(
        str(GGP),
        "player",
        "--bot",
        spec,
        "--port",
        "0",
        "--seed",
        "1",
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield line.split()[-1], process
    finally:
        if process.returncode is None:
            process.terminate()
        await asyncio.wait_for(process.wait(), 30)


async def test_the_readme_bot_plays_a_real_match_and_passes_the_checker(tmp_path: Path) -> None:
    if not GGP.exists():
        pytest.skip("the ggp command is not installed next to this Python")
    (tmp_path / "greedy_bot.py").write_text(readme_bot())
    game = load_game("nineBoardTicTacToe")
    async with (
        bot_process(tmp_path, "greedy_bot:GreedyBot") as (url, process),
        local_player("random", seed=2) as random_url,
    ):
        players = [Player("greedy", url), Player("random", random_url)]
        record = await MatchRunner(game, players, QUICK, game_name="nineBoardTicTacToe").run()
        report = await check_player(url, play_clock=3, seed=6)
        process.terminate()
        assert process.stdout is not None
        said = (await asyncio.wait_for(process.stdout.read(), 30)).decode()

    assert record.is_completed and record.goal_values is not None
    assert record.errors == [["", ""]] * (len(record.moves) + 1), record.error_details
    goal, moves = record.goal_values[0], len(record.moves)
    assert f"{game.roles[0]} scored {goal} in {moves} moves" in said
    assert report.passed, report.render()


async def test_the_greedy_bot_takes_the_winning_move() -> None:
    from players.examples.greedy_bot import GreedyBot

    async with running(PlayerAgent(BotPlayer(GreedyBot, seed=1))) as url:
        record = await MatchRunner(Game.from_text(PICK), [Player("g", url), None], QUICK).run()
    assert record.moves == [["( pick 2 )", "wait"]]
    assert record.goal_values == [100, 0]


class Recorder(Bot):
    """Remembers everything the kit tells it."""

    name = "Recorder"
    seen: ClassVar[list[tuple[str, object]]] = []

    def start(self, game: Game, role: str, clocks: Clocks) -> None:
        self.seen.append(("start", (role, clocks, self.roles, self.game is game)))

    def play(self, state: State) -> object:
        self.seen.append(("play", state))
        return self.legal_moves(state)[-1]

    def stop(self, state: State, goals: dict[str, int]) -> None:
        self.seen.append(("stop", (state, goals)))

    def abort(self) -> None:
        self.seen.append(("abort", self))


async def test_play_gets_the_current_state_and_stop_the_final_state_and_goals() -> None:
    game = load_game("nineBoardTicTacToe")
    Recorder.seen.clear()
    async with running(PlayerAgent(BotPlayer(Recorder))) as url:
        record = await MatchRunner(game, [None, Player("recorder", url)], QUICK).run()

    states = [game.initial_state()]
    for joint in record.moves:
        states.append(game.next_state(states[-1], [game.parse_term(move) for move in joint]))
    role = game.roles[1]
    assert Recorder.seen[0] == ("start", (role, Clocks(start=5, play=3), game.roles, True))
    assert [state for kind, state in Recorder.seen if kind == "play"] == states[:-1]
    assert Recorder.seen[-1] == ("stop", (states[-1], game.goals(states[-1])))
    assert record.goal_values == [game.goals(states[-1])[r] for r in game.roles]


async def test_abort_reaches_the_bot_and_each_match_gets_a_new_bot() -> None:
    Recorder.seen.clear()
    async with running(PlayerAgent(BotPlayer(Recorder))) as url:
        report = await check_player(url, items=["abort", "start-after-abort"], seed=8)
    assert report.passed, report.render()
    kinds = [kind for kind, _ in Recorder.seen]
    assert kinds == ["start", "play", "abort", "start", "play", "abort"]
    first_bot, second_bot = (bot for kind, bot in Recorder.seen if kind == "abort")
    assert first_bot is not second_bot


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bot", "no_such_module:Bot"], "cannot import 'no_such_module': ModuleNotFoundError"),
        (["--bot", "players.examples.greedy_bot"], "is not MODULE:CLASS"),
        (["--bot", "players.examples.greedy_bot:Missing"], "has no class 'Missing'"),
        (["--bot", "players.bot:Clocks"], "is neither a Bot nor a Player subclass"),
        (["random", "--bot", "players.examples.greedy_bot:GreedyBot"], "not both"),
        ([], "name a player to serve"),
    ],
)
async def test_a_bot_that_cannot_be_served_is_one_line_and_exit_status_2(
    args: list[str], message: str
) -> None:
    if not GGP.exists():
        pytest.skip("the ggp command is not installed next to this Python")
    process = await asyncio.create_subprocess_exec(
        str(GGP),
        "player",
        *args,
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2 and stdout == b""
    assert stderr.decode().count("\n") == 1 and message in stderr.decode(), stderr
