"""The relay's journal: a message passed on before a restart is never passed on again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from players.answer_journal import AnswerJournal
from players.outbound import AnsweredBeforeRestart, _Answers
from server.protocol.envelope import BotMessage


class Player:
    """Counts the messages it is asked, as the player behind a relay would see them."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def answer(self, text: str) -> str:
        self.asked.append(text)
        return f"reply {len(self.asked)}"


PLAY = BotMessage(id=7, message="( PLAY m1 NIL )")


async def test_an_answered_message_gets_the_same_answer_after_a_restart(tmp_path: Path) -> None:
    player = Player()
    first = _Answers(player.answer, journal=AnswerJournal(tmp_path / "j.jsonl"))
    assert await first.of(PLAY) == "reply 1"
    restarted = _Answers(player.answer, journal=AnswerJournal(tmp_path / "j.jsonl"))
    assert await restarted.of(PLAY) == "reply 1"
    assert player.asked == ["( PLAY m1 NIL )"]
    # the same id with another message (another server run) is a new message
    other = BotMessage(id=7, message="( PLAY m2 NIL )")
    assert await restarted.of(other) == "reply 2"


async def test_a_message_whose_answer_was_lost_is_not_passed_on_again(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def killed_while_thinking(text: str) -> str:
        started.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    first = _Answers(killed_while_thinking, journal=AnswerJournal(tmp_path / "j.jsonl"))
    pending = first.of(PLAY)
    await started.wait()
    pending.cancel()  # the process dies with the message in flight
    player = Player()
    restarted = _Answers(player.answer, journal=AnswerJournal(tmp_path / "j.jsonl"))
    with pytest.raises(AnsweredBeforeRestart):
        await restarted.of(PLAY)
    assert player.asked == []


async def test_only_play_is_journaled_and_the_file_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    player = Player()
    answers = _Answers(player.answer, journal=AnswerJournal(path, keep=10))
    assert await answers.of(BotMessage(id=1, message="( info )")) == "reply 1"
    assert await answers.of(BotMessage(id=2, message="( START m1 r ((role r)) 5 3)")) == "reply 2"
    assert not path.exists()
    # a START whose answer was lost is posted again: a second START only gets busy
    restarted = _Answers(player.answer, journal=AnswerJournal(path, keep=10))
    assert await restarted.of(BotMessage(id=2, message="( START m1 r ((role r)) 5 3)")) == (
        "reply 3"
    )
    for index in range(2, 40):
        await answers.of(BotMessage(id=index, message=f"( PLAY m{index} NIL )"))
    lines = path.read_text().splitlines()
    assert len(lines) <= 2 * 10 + 1
    kept = AnswerJournal(path, keep=10)
    assert kept.lookup(39, "( PLAY m39 NIL )") is not None
    assert kept.lookup(2, "( PLAY m2 NIL )") is None  # the oldest are forgotten
    path.write_text(path.read_text() + '{"key": "cut sho')  # a line cut short by a kill
    assert AnswerJournal(path, keep=10).lookup(39, "( PLAY m39 NIL )") is not None
