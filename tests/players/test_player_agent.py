"""A player agent speaks the GGP protocol over real loopback HTTP."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from player_http import TICKING, TICKING_RULES, send, send_raw, start_message

from players.agent import PlayerAgent
from players.base import Player
from players.legal_player import LegalPlayer
from players.match import PlayerMatch
from players.random_player import RandomPlayer
from players.serve import running
from server.gdl import Game, State
from server.gdl.terms import Term
from server.protocol import parse_info_reply, parse_move_reply, render_moves


async def test_a_whole_match_from_start_to_stop():
    game = Game.from_text(TICKING)
    agents = [PlayerAgent(RandomPlayer(seed=1)), PlayerAgent(RandomPlayer(seed=2))]
    async with running(agents[0]) as left, running(agents[1]) as right:
        urls = {"left": left, "right": right}
        for role, url in urls.items():
            assert (await send(url, start_message("m.1", role))).body == "ready"
            assert parse_info_reply((await send(url, "( INFO )")).body).status == "busy"
        state, previous = game.initial_state(), None
        while not game.is_terminal(state):
            replies = await asyncio.gather(
                *(send(url, f"( PLAY m.1 {render_moves(previous)} )") for url in urls.values())
            )
            previous = [parse_move_reply(reply.body) for reply in replies]
            for role, move in zip(game.roles, previous, strict=True):
                assert move in game.legal_moves(state, role)
            state = game.next_state(state, previous)
        for url in urls.values():
            assert (await send(url, f"( STOP m.1 {render_moves(previous)} )")).body == "done"
            assert parse_info_reply((await send(url, "( INFO )")).body).available
    for agent in agents:
        assert agent.matches == {}


async def test_the_agent_applies_each_joint_move_before_asking_for_a_move():
    seen: list[tuple[int, State]] = []

    class Recorder(LegalPlayer):
        def play(self, match: PlayerMatch, state: State) -> Term:
            seen.append((match.step, state))
            return super().play(match, state)

    game = Game.from_text(TICKING)
    async with running(PlayerAgent(Recorder())) as url:
        await send(url, start_message("m.2", "right"))
        assert (await send(url, "( PLAY m.2 NIL )")).body == "noop"
        assert (await send(url, "( PLAY m.2 (tock noop ) )")).body == "tick"
    first = game.initial_state()
    assert seen == [(0, first), (1, game.next_state(first, ["tock", "noop"]))]


async def test_the_legal_player_plays_the_first_legal_move():
    async with running(PlayerAgent(LegalPlayer())) as url:
        await send(url, start_message("m.3", "left"))
        assert (await send(url, "( PLAY m.3 NIL )")).body == "tick"


async def test_info_is_answered_while_the_player_is_thinking():
    class Thinker(Player):
        name = "Thinker"

        def __init__(self) -> None:
            super().__init__()
            self.thinking = threading.Event()
            self.release = threading.Event()

        def play(self, match: PlayerMatch, state: State) -> Term:
            self.thinking.set()
            self.release.wait(30)
            return match.legal_moves(state)[-1]

    player = Thinker()
    async with running(PlayerAgent(player)) as url:
        await send(url, start_message("m.4", "left", play_clock=60))
        play = asyncio.create_task(send(url, "( PLAY m.4 NIL )"))
        assert await asyncio.to_thread(player.thinking.wait, 30)
        info = parse_info_reply((await send(url, "( INFO )")).body)
        assert (info.name, info.status) == ("Thinker", "busy")
        assert not play.done()
        player.release.set()
        assert (await play).body == "tock"


async def test_a_second_start_is_answered_busy_until_the_match_ends():
    async with running(PlayerAgent(RandomPlayer())) as url:
        assert (await send(url, start_message("m.5", "left"))).body == "ready"
        assert (await send(url, start_message("m.6", "left"))).body == "busy"
        assert (await send(url, start_message("m.5", "right"))).body == "busy"
        assert (await send(url, "( ABORT m.5 )")).body == "aborted"
        assert parse_info_reply((await send(url, "( INFO )")).body).available
        assert (await send(url, "( STOP m.5 NIL )")).body == "busy"
        assert (await send(url, start_message("m.6", "left"))).body == "ready"


async def test_messages_for_an_unknown_match_are_answered_busy():
    async with running(PlayerAgent(RandomPlayer())) as url:
        for message in (
            "( PLAY nosuchmatch NIL )",
            "( STOP nosuchmatch NIL )",
            "( ABORT nosuchmatch )",
        ):
            reply = await send(url, message)
            assert (reply.status, reply.body) == (200, "busy")
        await send(url, start_message("m.7", "left"))
        assert (await send(url, "( PLAY M.7 NIL )")).body == "busy"


async def test_keywords_are_read_in_any_case():
    async with running(PlayerAgent(LegalPlayer())) as url:
        assert (
            await send(url, start_message("m.8", "left").replace("START", "start"))
        ).body == "ready"
        assert parse_info_reply((await send(url, "\n\t(  Info \r\n )  ")).body).status == "busy"
        assert (await send(url, "(play m.8 nil)")).body == "tick"
        assert (await send(url, "(Play m.8 ((TICK) NOOP))")).body != "busy"
        assert (await send(url, "(sToP m.8 (noop tick))")).body == "done"


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("", "empty message"),
        ("( INFO ", "never closed"),
        ("INFO", "must be a non-empty list"),
        ("( PING )", "unknown message type"),
        ("( PLAY m NIL extra )", "PLAY takes 2 argument(s), got 3"),
        ("( START bad.1 left ( ( <= ) ( role ) ) 10 5 )", "invalid rules"),
        (f"( START bad.2 left {TICKING_RULES} ten 5 )", "start clock must be a whole number"),
        ("( START bad.3 a ((role a) (<= (goal a 100) (does a x))) 10 5 )", "not valid GDL"),
        (f"( START bad.4 nosuchrole {TICKING_RULES} 10 5 )", "nosuchrole is not a role"),
    ],
)
async def test_a_malformed_request_gets_400_with_the_reason_and_the_player_goes_on(message, reason):
    async with running(PlayerAgent(RandomPlayer())) as url:
        reply = await send(url, message)
        assert reply.status == 400
        assert reason in reply.body
        assert reply.header("Access-Control-Allow-Origin") == "*"
        assert parse_info_reply((await send(url, "( INFO )")).body).available


async def test_a_joint_move_that_does_not_fit_the_game_is_rejected_and_the_match_goes_on():
    async with running(PlayerAgent(LegalPlayer())) as url:
        await send(url, start_message("m.9", "right"))
        assert (await send(url, "( PLAY m.9 NIL )")).body == "noop"
        wrong_size = await send(url, "( PLAY m.9 (tick) )")
        assert wrong_size.status == 400 and "expected 2 moves" in wrong_size.body
        illegal = await send(url, "( PLAY m.9 (noop tick) )")
        assert illegal.status == 400 and "illegal move noop for role left" in illegal.body
        assert (await send(url, "( PLAY m.9 (tick noop) )")).body == "tick"


async def test_messages_also_arrive_by_get_and_options_gets_an_empty_answer():
    async with running(PlayerAgent(RandomPlayer())) as url:
        info = await send_raw(url, b"GET /%28INFO%29 HTTP/1.0\r\nHost: localhost\r\n\r\n")
        assert info.body == "( ( name Random ) ( status available ) )"
        spaced = await send_raw(url, b"GET /(%20INFO+) HTTP/1.0\r\n\r\n")
        assert spaced.body == info.body
        options = await send_raw(url, b"OPTIONS / HTTP/1.0\r\nHost: localhost\r\n\r\n")
        assert (options.status, options.body) == (200, "")
        assert options.header("Access-Control-Allow-Methods") == "POST, GET, OPTIONS"


async def test_replies_are_framed_like_ggp_base_players():
    async with running(PlayerAgent(RandomPlayer(name="Alice"))) as url:
        reply = await send(url, "( INFO )")
    assert reply.status == 200
    assert reply.body == "( ( name Alice ) ( status available ) )"
    assert reply.headers[:6] == [
        ("Content-type", "text/acl"),
        ("Content-length", "39"),
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
        ("Access-Control-Allow-Headers", "Content-Type"),
        ("Access-Control-Allow-Age", "86400"),
    ]


async def test_a_curl_style_post_is_read_too():
    request = (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n"
        b"Content-Length: 6\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Connection: close\r\n\r\n(INFO)"
    )
    async with running(PlayerAgent(RandomPlayer())) as url:
        reply = await send_raw(url, request)
    assert parse_info_reply(reply.body).available


async def test_a_huge_start_is_accepted():
    facts = " ".join(f"(extra {index})" for index in range(80_000))
    big = start_message("big.1", "left", 5, 60)
    big = big.replace("(role left)", f"(role left) {facts}", 1)
    assert len(big.encode()) > 1_000_000
    async with running(PlayerAgent(LegalPlayer())) as url:
        assert (await send(url, big)).body == "ready"  # by the start clock, loaded or not
        assert (await send(url, "( PLAY big.1 NIL )")).body == "tick"  # waits for the rules


@pytest.fixture
def slow_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules that take 1.5 s to load, as on a machine too busy to load them in time."""
    import players.agent

    real = players.agent._load_game

    def slow(message: object, pooled: object = None, compile_aside: object = None) -> object:
        time.sleep(1.5)
        return real(message, pooled, compile_aside)  # type: ignore[arg-type]

    monkeypatch.setattr(players.agent, "_load_game", slow)


@pytest.mark.usefixtures("slow_loading")
async def test_a_play_that_comes_while_the_rules_still_load_waits_for_them():
    async with running(PlayerAgent(LegalPlayer())) as url:
        start = asyncio.ensure_future(send(url, start_message("m.slow", "left", 1, 20)))
        await asyncio.sleep(0.3)  # the server gave up on START and plays on
        assert (await send(url, "( PLAY m.slow NIL )")).body == "tick"
        assert (await start).body == "ready"


@pytest.mark.usefixtures("slow_loading")
async def test_a_match_aborted_while_its_rules_load_is_not_kept():
    agent = PlayerAgent(LegalPlayer())
    async with running(agent) as url:
        start = asyncio.ensure_future(send(url, start_message("m.gone", "left", 1, 5)))
        await asyncio.sleep(0.3)
        assert (await send(url, "( ABORT m.gone )")).body == "aborted"
        assert (await start).body == "ready"
        async with asyncio.timeout(10):  # available once the rules it was loading are dropped
            while not parse_info_reply((await send(url, "( INFO )")).body).available:  # noqa: ASYNC110
                await asyncio.sleep(0.1)
    assert agent.matches == {}


@pytest.mark.usefixtures("slow_loading")
async def test_a_play_waits_for_loading_rules_only_half_its_clock():
    async with running(PlayerAgent(LegalPlayer())) as url:
        start = asyncio.ensure_future(send(url, start_message("m.late", "left", 1, 1)))
        await asyncio.sleep(0.3)
        sent = time.monotonic()
        assert (await send(url, "( PLAY m.late NIL )")).body == "busy"
        assert time.monotonic() - sent < 1.0  # answered within the play clock
        await start
        assert (await send(url, "( ABORT m.late )")).body == "aborted"


@pytest.mark.usefixtures("slow_loading")
async def test_start_is_answered_within_its_clock_while_the_rules_still_load():
    async with running(PlayerAgent(LegalPlayer())) as url:
        sent = time.monotonic()
        assert (await send(url, start_message("m.ready", "left", 1, 20))).body == "ready"
        assert time.monotonic() - sent < 1.0  # the start clock, not the 1.5 s of loading
        assert (await send(url, "( PLAY m.ready NIL )")).body == "tick"
        assert (await send(url, "( STOP m.ready NIL )")).body == "done"
