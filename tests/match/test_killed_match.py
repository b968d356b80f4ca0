"""A ``ggp match`` killed with SIGKILL at any moment leaves only logs and journals that replay.

The server journals every event and writes the final log without temporary files, so
whatever instant the process dies, each file it leaves is either a finished log or a
journal that replays up to the last event it recorded.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path

from server.records import load_record
from server.records.journal import JOURNAL_SUFFIX, journal_path_for, recover_folder
from server.records.signing import load_or_create_host_key, verify_record_file
from server.replay import replay_file

from .fakes import counting_game
from .hostile import HostilePlayer

RUNS = 6
STEPS = 120


async def _kill_a_match(folder: Path, game: Path, key: Path, delay: float) -> None:
    async with HostilePlayer(delay=0.02) as one, HostilePlayer() as two:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.cli",
            "match",
            str(game),
            one.url,
            two.url,
            "--out",
            str(folder),
            "--key-file",
            str(key),
            "--startclock",
            "30",
            "--playclock",
            "30",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "GGP_ENGINE": "interpreter"},
        )
        try:
            await asyncio.wait_for(process.wait(), delay)
        except TimeoutError:
            try:
                process.kill()
            except ProcessLookupError:  # the match ended on its own as the delay ran out
                pass
            await process.wait()


def _check_what_is_left(folder: Path, key: Path) -> None:
    names = os.listdir(folder) if folder.exists() else []
    for name in names:
        assert name.endswith((".json", JOURNAL_SUFFIX)) and not name.startswith("."), name
    for name in names:
        path = folder / name
        if name.endswith(JOURNAL_SUFFIX):
            if path.stat().st_size == 0:  # killed between creating it and its first line
                continue
            replay = replay_file(path)
            assert replay.ok, (name, replay.problems)
        elif not journal_path_for(path).exists():
            replay = replay_file(path)
            assert replay.ok, (name, replay.problems)
            assert load_record(path).is_completed
            assert verify_record_file(path, load_or_create_host_key(key).public_key()).ok


async def test_a_match_killed_at_random_moments_leaves_readable_logs(tmp_path: Path) -> None:
    game = tmp_path / "counting.kif"
    game.write_text(counting_game(STEPS))
    key = tmp_path / "host_key.pem"
    load_or_create_host_key(key)
    rng = random.Random(2024)
    for run in range(RUNS):
        folder = tmp_path / f"run{run}"
        await _kill_a_match(folder, game, key, rng.uniform(0.5, 5.0))
        _check_what_is_left(folder, key)
        if folder.exists():
            for log in recover_folder(folder):
                assert replay_file(log).ok
            assert not list(folder.glob("*" + JOURNAL_SUFFIX))
