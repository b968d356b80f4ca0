"""`ggp check-player` against sound bundled players and players with one fault each."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from server.bots.checker import CheckerError, check_player
from server.bots.items import ITEMS
from server.bots.report import CheckReport
from server.match.local_players import local_player

from .faulty_players import faulty_player

GGP = Path(sys.executable).with_name("ggp")


def failed(report: CheckReport) -> set[str]:
    return {item.name for item in report.items if not item.passed}


@pytest.mark.parametrize("name", ["random", "legal"])
async def test_the_bundled_players_pass_every_item(name: str) -> None:
    async with local_player(name) as url:
        report = await check_player(url, start_clock=5, play_clock=2, seed=1)
    assert [item.name for item in report.items] == list(ITEMS)
    assert failed(report) == set(), report.render()
    assert report.passed and report.latency_ms is not None


EXPECTED_FAILURES = {
    "illegal-moves": {"first-play", "legal-moves", "scrambled"},
    "upper-case-only": {"keyword-case"},
    "silent-abort": {"abort"},
    "known-roles-only": {"scrambled"},
    "second-start-ok": {"second-start"},
    "stuck-after-abort": {"start-after-abort"},
    "info-garbage": {"info", "keyword-case"},
}


EXPECTED_SUMMARIES = {
    ("illegal-moves", "legal-moves"): "step 2: '( teleport 9 9 )' is not a legal move",
    ("second-start-ok", "second-start"): "expected 'busy', got 'ok'",
    ("stuck-after-abort", "start-after-abort"): "the new match's first PLAY got 'busy'",
    ("info-garbage", "info"): "the reply is not an INFO reply: ",
    ("info-garbage", "keyword-case"): "(info) got 'hello there'",
}
"""How a failed item says what went wrong (the start of its summary), where it is fixed."""


@pytest.mark.parametrize("fault", sorted(EXPECTED_FAILURES))
async def test_a_player_with_one_fault_fails_exactly_the_items_about_it(fault: str) -> None:
    async with faulty_player(fault) as url:
        report = await check_player(url, start_clock=2, play_clock=1, seed=2)
    assert failed(report) == EXPECTED_FAILURES[fault], report.render()
    for item in report.items:
        if not item.passed:
            assert item.evidence, f"{item.name} failed without evidence"
            summary = EXPECTED_SUMMARIES.get((fault, item.name))
            assert summary is None or item.summary.startswith(summary), item.summary


async def test_a_move_after_the_play_clock_fails_only_the_play_clock() -> None:
    items = ["first-play", "legal-moves", "stop", "play-clock"]
    async with faulty_player("slow") as url:
        report = await check_player(url, play_clock=1, items=items, seed=3)
    assert [item.name for item in report.items] == items
    assert failed(report) == {"play-clock"}, report.render()
    late = report.items[-1]
    assert "after the play clock of 1 s" in late.summary
    assert all(exchange.elapsed_ms > 1000 for exchange in late.evidence)


async def test_the_evidence_shows_what_was_sent_and_what_came_back() -> None:
    async with faulty_player("illegal-moves") as url:
        report = await check_player(url, items=["first-play"], seed=4)
    (item,) = [item for item in report.items if item.name == "first-play"]
    (exchange,) = item.evidence
    assert exchange.sent.startswith("( PLAY check.s4.1 NIL )")
    assert exchange.received == "( teleport 9 9 )"
    assert item.summary == "'( teleport 9 9 )' is not a legal move"
    assert "FAIL  first-play" in report.render()


async def run_ggp(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(GGP), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


@pytest.fixture(autouse=True)
def _needs_ggp() -> None:
    if not GGP.exists():
        pytest.skip("the ggp command is not installed next to this Python")


async def test_the_command_exits_1_with_a_json_report_when_an_item_fails() -> None:
    async with faulty_player("silent-abort") as url:
        code, stdout, stderr = await run_ggp(
            "check-player", url, "--json", "--items", "abort,stop", "--seed", "5"
        )
    assert code == 1, stderr
    report = CheckReport.model_validate_json(stdout)
    assert [(item.name, item.passed) for item in report.items] == [("stop", True), ("abort", False)]
    assert "expected 'aborted', got no reply (timeout" in report.items[1].summary


async def test_the_command_exits_0_and_prints_a_report_card_when_all_pass() -> None:
    async with local_player("legal") as url:
        code, stdout, _ = await run_ggp("check-player", url, "--items", "info,start,stop")
    assert code == 0
    header, *rows, total = stdout.splitlines()
    assert header.startswith(f"{url}/: start clock 5 s, play clock 2 s, latency ")
    assert [row.split()[:2] for row in rows] == [
        ["PASS", "info"],
        ["PASS", "start"],
        ["PASS", "stop"],
    ]
    assert total == "3 passed, 0 failed"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["http://127.0.0.1:1"], "nobody is listening at http://127.0.0.1:1/"),
        (["ftp://example.org"], "not an http:// player address"),
        (["127.0.0.1:1", "--items", "nonsense"], "unknown item(s) nonsense"),
        (["127.0.0.1:1", "--playclock", "0"], "the clocks must be at least 1 second"),
    ],
)
async def test_bad_input_is_one_line_and_exit_status_2(args: list[str], message: str) -> None:
    code, stdout, stderr = await run_ggp("check-player", *args)
    assert code == 2 and stdout == ""
    assert stderr.count("\n") == 1 and message in stderr, stderr


async def test_clocks_of_one_second_are_the_shortest_allowed() -> None:
    async with local_player("random") as url:
        report = await check_player(
            url, start_clock=1, play_clock=1, items=["start", "first-play"], seed=4
        )
        assert failed(report) == set(), report.render()
        with pytest.raises(CheckerError, match="clock"):
            await check_player(url, start_clock=0, play_clock=1)
