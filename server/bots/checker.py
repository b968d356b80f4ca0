"""The player checker: sends a player the edge cases real game servers send, item by item.

>>> report = await check_player("http://127.0.0.1:9147/")   # doctest: +SKIP
>>> print(report.render())                                 # doctest: +SKIP
>>> report = await check_channel(hub.channel("mybot"), "outbound bot mybot")  # doctest: +SKIP

The player plays small games it has never seen (:mod:`server.bots.game_maker`),
run by :mod:`server.bots.driver`, which substitutes a random legal move for a bad
reply as a real server does, so one fault does not hide the next item. Moves are
compared exactly: symbols keep their case.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Iterable

from server.match import HttpChannel, PlayerAddress, PlayerChannel
from server.protocol import (
    Info,
    Play,
    ProtocolError,
    Scrambler,
    parse_info_reply,
    parse_move_reply,
    render,
)

from .driver import ABORT_TIME_LIMIT, NETWORK_SLACK, CheckMatch, Session
from .game_maker import make_game
from .items import ITEMS
from .report import CheckItem, CheckReport, Exchange

_INFO_TIME_LIMIT = 3.0
_CONNECT_TIME_LIMIT = 5.0


class CheckerError(Exception):
    """The check cannot run: a bad address, nobody listening, an unknown item."""


def _item(
    name: str, problem: str | None, passed_summary: str, evidence: Iterable[Exchange]
) -> CheckItem:
    shown = list(evidence)
    return CheckItem(
        name=name,
        passed=problem is None,
        summary=passed_summary if problem is None else problem,
        evidence=shown,
        duration_ms=sum(exchange.elapsed_ms for exchange in shown),
    )


def _not_checked(names: Iterable[str], reason: str, evidence: list[Exchange]) -> list[CheckItem]:
    return [_item(name, f"not checked: {reason}", "", evidence) for name in names]


def _expect(exchange: Exchange, wanted: str, within: float | None = None) -> str | None:
    """What is wrong with a reply that should be ``wanted`` (within ``within`` seconds)."""
    if exchange.received is None:
        return f"expected {wanted!r}, got no reply ({exchange.error})"
    if exchange.received.strip().lower() != wanted:
        return f"expected {wanted!r}, got {exchange.received!r}"
    if within is not None and exchange.elapsed_ms > within * 1000:
        return f"{wanted!r} came after {exchange.elapsed_ms} ms, past the clock of {within:g} s"
    return None


# -- the phases: each runs part of a match and judges some items ----------------------


async def _info(session: Session) -> tuple[list[CheckItem], int | None]:
    exchange = await session.send(render(Info()), _INFO_TIME_LIMIT)
    if exchange.received is None:
        return [_item("info", f"no reply to INFO ({exchange.error})", "", [exchange])], None
    try:
        info = parse_info_reply(exchange.received)
    except ProtocolError as error:
        return [_item("info", f"the reply is not an INFO reply: {error}", "", [exchange])], None
    problem = None if info.status == "available" else f"status {info.status!r}, not available"
    summary = f"name {info.name!r}, status {info.status!r} in {exchange.elapsed_ms} ms"
    return [_item("info", problem, summary, [exchange])], exchange.elapsed_ms


async def _main_match(session: Session) -> list[CheckItem]:
    made = make_game(session.rng.getrandbits(32))
    match = CheckMatch(session, made, session.rng.choice(made.game.roles), session.new_match_id())
    started = await match.start()
    problem = _expect(started, "ready", session.start_clock)
    items = [_item("start", problem, f"ready in {started.elapsed_ms} ms", [started])]
    if started.received is None or started.received.strip().lower() != "ready":
        rest = ("first-play", "second-start", "unknown-match", "legal-moves", "stop")
        await match.abort()
        return items + _not_checked(rest, "START was not answered ready", [started])

    first, problem = await match.play()
    items.append(_item("first-play", problem, f"{first.received} is legal", [first]))

    other = CheckMatch(session, made, made.game.roles[0], session.new_match_id())
    second = await other.start()
    if second.received is not None and second.received.strip().lower() == "ready":
        cleanup = await other.abort()  # a player that takes several matches at once
        items.append(
            _item("second-start", None, "ready: the player takes a second match", [second, cleanup])
        )
    else:
        problem = _expect(second, "busy")
        items.append(_item("second-start", problem, "busy", [second]))

    ghost = await session.send(
        render(Play(match_id=f"check.{session.token}.unknown", moves=None)),
        session.play_clock + NETWORK_SLACK,
    )
    items.append(_item("unknown-match", _expect(ghost, "busy"), "busy", [ghost]))

    plays, problems = [], []
    while not match.over:
        exchange, problem = await match.play()
        plays.append(exchange)
        if problem is not None:
            problems.append(f"step {len(plays) + 1}: {problem}")
    summary = f"{len(plays)} more moves, all legal"
    items.append(_item("legal-moves", problems[0] if problems else None, summary, plays))

    stopped = await match.stop()
    items.append(_item("stop", _expect(stopped, "done"), "done", [stopped]))
    return items


async def _scrambled_match(session: Session) -> list[CheckItem]:
    made = make_game(session.rng.getrandbits(32), fresh=False)
    scrambler = Scrambler(made.rules, seed=session.rng.getrandbits(32))
    role = session.rng.choice(made.game.roles)
    match = CheckMatch(session, made, role, session.new_match_id(), scrambler)
    evidence = [await match.start()]
    problem = _expect(evidence[0], "ready", session.start_clock)
    if problem is not None:
        await match.abort()
        return [_item("scrambled", problem, "", evidence)]
    while not match.over:
        exchange, move_problem = await match.play()
        evidence.append(exchange)
        problem = problem or move_problem
    evidence.append(await match.stop())
    problem = problem or _expect(evidence[-1], "done")
    summary = f"role {role} played as {scrambler.scramble_symbol(role)}, every move legal"
    return [_item("scrambled", problem, summary, evidence)]


async def _abort_match(session: Session) -> list[CheckItem]:
    made = make_game(session.rng.getrandbits(32))
    match = CheckMatch(session, made, session.rng.choice(made.game.roles), session.new_match_id())
    started = await match.start()
    if _expect(started, "ready") is not None:
        await match.abort()
        reason = "START was not answered ready"
        return _not_checked(("abort", "start-after-abort"), reason, [started])
    first, _ = await match.play()
    aborted = await match.abort()
    items = [
        _item("abort", _expect(aborted, "aborted", ABORT_TIME_LIMIT), "aborted", [first, aborted])
    ]

    again = CheckMatch(session, made, match.role, session.new_match_id())
    restarted = await again.start()
    evidence = [aborted, restarted]
    problem = _expect(restarted, "ready", session.start_clock)
    if problem is None:
        played, _ = await again.play()
        evidence.append(played)
        if played.received is None or played.received.strip().lower() in ("busy", "nil", ""):
            problem = f"the new match's first PLAY got {played.received or played.error!r}"
    evidence.append(await again.abort())
    items.append(
        _item("start-after-abort", problem, f"new match {again.match_id} played", evidence)
    )
    return items


async def _keyword_case_match(session: Session) -> list[CheckItem]:
    made = make_game(session.rng.getrandbits(32))
    match = CheckMatch(session, made, session.rng.choice(made.game.roles), session.new_match_id())
    evidence: list[Exchange] = []
    problem: str | None = None

    def judge(exchange: Exchange, wanted: str | None) -> None:
        nonlocal problem
        evidence.append(exchange)
        if problem is not None:
            return
        if wanted is not None:
            problem = _expect(exchange, wanted)
        elif exchange.received is None or exchange.received.strip().lower() in ("busy", "nil", ""):
            problem = f"{exchange.sent!r} got {exchange.received or exchange.error!r}, not a move"
        else:
            try:
                parse_move_reply(exchange.received)
            except ProtocolError as error:
                problem = f"{exchange.sent!r} got an unreadable move: {error}"

    info = await session.send("(info)", _INFO_TIME_LIMIT)
    evidence.append(info)
    if info.received is None or _is_not_info(info.received):
        problem = f"(info) got {info.received or info.error!r}"
    judge(await match.start("start"), "ready")
    if evidence[-1].received is not None and evidence[-1].received.strip().lower() == "ready":
        judge((await match.play("Play", nil="nil"))[0], None)
        keywords = ("play", "PlAy", "PLAY")
        step = 0
        while not match.over:
            judge((await match.play(keywords[step % len(keywords)]))[0], None)
            step += 1
        judge(await match.stop("Stop"), "done")
    else:
        await match.abort()
    return [_item("keyword-case", problem, "every message understood", evidence)]


def _is_not_info(text: str) -> bool:
    try:
        parse_info_reply(text)
    except ProtocolError:
        return True
    return False


def _play_clock_item(session: Session, latency_ms: int | None) -> CheckItem:
    answered = [exchange for exchange in session.plays if exchange.received is not None]
    if not answered:
        return _item("play-clock", "no PLAY was answered", "", session.plays[-3:])
    slowest = max(answered, key=lambda exchange: exchange.elapsed_ms)
    budget = session.play_clock * 1000
    network = "" if latency_ms is None else f", about {latency_ms} ms of it network"
    late = [exchange for exchange in answered if exchange.elapsed_ms > budget]
    if late:
        problem = (
            f"{len(late)} of {len(answered)} moves came after the play clock of "
            f"{session.play_clock} s (slowest {slowest.elapsed_ms} ms{network})"
        )
        return _item("play-clock", problem, "", late)
    summary = f"slowest of {len(answered)} moves took {slowest.elapsed_ms} ms{network}"
    return _item("play-clock", None, summary, [slowest])


# -- the whole check -------------------------------------------------------------------


def parse_items(text: str | None) -> list[str]:
    """The items named in a comma-separated list (all when ``None``); unknown names raise."""
    if text is None:
        return list(ITEMS)
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in ITEMS]
    if unknown or not names:
        raise CheckerError(
            f"unknown item(s) {', '.join(unknown) or '(none given)'}; items: {', '.join(ITEMS)}"
        )
    return names


async def _reachable(address: PlayerAddress) -> None:
    try:
        async with asyncio.timeout(_CONNECT_TIME_LIMIT):
            _, writer = await asyncio.open_connection(address.host, address.port)
    except TimeoutError:
        raise CheckerError(f"cannot connect to {address.url}: no answer within 5 s") from None
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise CheckerError(f"nobody is listening at {address.url}: {reason}") from None
    writer.transport.abort()


_MAIN = {"start", "first-play", "second-start", "unknown-match", "legal-moves", "stop"}


async def check_player(
    url: str,
    *,
    start_clock: int = 5,
    play_clock: int = 2,
    items: Iterable[str] | None = None,
    seed: int | None = None,
) -> CheckReport:
    """Check the player at ``url``; raises :class:`CheckerError` when it cannot be checked."""
    try:
        address = PlayerAddress.parse(url)
    except ValueError as error:
        raise CheckerError(str(error)) from None
    _check_clocks(start_clock, play_clock)
    await _reachable(address)
    return await check_channel(
        HttpChannel(address, receiver="checker"),
        address.url,
        start_clock=start_clock,
        play_clock=play_clock,
        items=items,
        seed=seed,
    )


def _check_clocks(start_clock: int, play_clock: int) -> None:
    if start_clock < 1 or play_clock < 1:
        raise CheckerError("the clocks must be at least 1 second")


async def check_channel(
    channel: PlayerChannel,
    label: str,
    *,
    start_clock: int = 5,
    play_clock: int = 2,
    items: Iterable[str] | None = None,
    seed: int | None = None,
) -> CheckReport:
    """Check the player behind ``channel`` (named ``label`` in the report).

    Any :class:`~server.match.PlayerChannel` will do: an HTTP player's, or an outbound
    bot's socket, where the same messages go as JSON frames.
    """
    _check_clocks(start_clock, play_clock)
    wanted = list(ITEMS) if items is None else list(items)
    session = Session(
        channel,
        start_clock,
        play_clock,
        random.Random(seed),
        secrets.token_hex(3) if seed is None else f"s{seed}",
    )
    found: list[CheckItem] = []
    latency: int | None = None
    info_items, latency = await _info(session)
    found += info_items
    if _MAIN & set(wanted) or "play-clock" in wanted:
        found += await _main_match(session)
    if "scrambled" in wanted:
        found += await _scrambled_match(session)
    if {"abort", "start-after-abort"} & set(wanted):
        found += await _abort_match(session)
    if "keyword-case" in wanted:
        found += await _keyword_case_match(session)
    if "play-clock" in wanted:
        found.append(_play_clock_item(session, latency))
    by_name = {item.name: item for item in found}
    return CheckReport(
        url=label,
        start_clock=start_clock,
        play_clock=play_clock,
        latency_ms=latency,
        items=[by_name[name] for name in ITEMS if name in wanted],
    )
