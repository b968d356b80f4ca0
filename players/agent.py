"""The player's side of the GGP protocol over HTTP, as an aiohttp application.

:class:`PlayerAgent` speaks the protocol for one :class:`~players.base.Player`:
it keeps matches by id, builds each match's game from the START rules, applies
every joint move before asking for the next move, and answers INFO at any time,
also while the player is thinking. It replies exactly as GGP-Base's players do
(``200``, ``text/acl``, CORS headers); a request it cannot read gets ``400``
with the reason, instead of GGP-Base's silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import os
import random
import time
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote_plus

from aiohttp import web

from server.gdl import Game, GdlError, State
from server.gdl.compile_aside import ASIDE_VARIABLE, wanted
from server.gdl.compile_budget import CompileBudget
from server.gdl.terms import Term, wrap_all
from server.protocol import (
    ABORTED,
    BUSY,
    DONE,
    READY,
    Abort,
    Info,
    InfoReply,
    Message,
    Play,
    Preview,
    ProtocolError,
    Start,
    Stop,
    match_legal_move,
    parse_message,
    render_info_reply,
    render_move,
    render_moves,
)
from server.protocol.http import CORS_HEADERS, response_headers

from .base import Player
from .game_pool import GamePool
from .match import PlayerMatch
from .threads import in_thread

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest request body accepted (a START carries the whole game)."""

ABORT_BUDGET = 0.5
"""Seconds the ``abort`` hook may take before ``aborted`` is sent anyway."""

SILENCE_MARGIN = 10.0
"""Seconds past a match's clock that the server may stay silent before the match is forgotten."""

LOAD_WAIT_SHARE = 0.5
"""The share of its play clock a PLAY waits for rules that START is still loading."""

SWEEP_INTERVAL = 0.5
"""Seconds between two looks for matches whose server has gone silent."""


class RequestRejected(Exception):
    """A well-formed message the agent cannot act on, such as rules that are not valid GDL."""


@dataclass(eq=False)
class _Loan:
    """A match's game, lent by the pool: it goes back once the match has ended and
    nothing of the match (a request in hand, a thread) uses it any more."""

    match: PlayerMatch
    key: Hashable
    busy: int = 0
    ended: bool = False


class PlayerAgent:
    """Serves one player over the GGP protocol.

    ``max_matches`` is how many matches the player takes at once (a START beyond
    that is answered ``busy``); ``reply_margin`` is how many seconds before the end
    of a clock the agent answers, to leave time for the reply to travel.

    ``compile_aside`` has a game the start clock's budget could not compile played on
    the interpreter while another process compiles it (see
    :mod:`server.gdl.compile_aside`; ``None``: as ``GGP_COMPILE_ASIDE`` says, and
    without it as the player wants, :attr:`Player.compiles_aside`).

    A match whose server sends nothing for longer than the clock of its last message
    (the start clock after START, the play clock after PLAY; or, if the answer took
    longer, from the answer) plus ``silence_margin`` seconds is forgotten, with a warning in the log, so that a server that vanished
    without STOP or ABORT does not leave the player ``busy`` forever.
    """

    def __init__(
        self,
        player: Player,
        *,
        max_matches: int = 1,
        reply_margin: float = 0.25,
        silence_margin: float = SILENCE_MARGIN,
        compile_aside: bool | None = None,
    ) -> None:
        render_info_reply(InfoReply(name=player.name, species=player.species))  # checks the names
        self.player = player
        self.max_matches = max_matches
        self.reply_margin = reply_margin
        self.silence_margin = silence_margin
        self.compile_aside = compile_aside
        if compile_aside is None:
            wanted(None)  # a GGP_COMPILE_ASIDE it cannot read is refused now, not at START
        self.matches: dict[str, PlayerMatch] = {}
        self._silent_after: dict[str, float] = {}
        self._clock_ends: dict[str, float] = {}
        self._starting: dict[str, tuple[asyncio.Event, int]] = {}
        """Matches whose rules are loading: set when loaded, and the play clock."""
        self._ended_while_starting: set[str] = set()
        self._fallback_rng = random.Random(player.seed)
        self._background: set[asyncio.Future[None]] = set()
        self.games = GamePool()
        """Loaded games kept for later matches of the same rules."""
        self._loans: dict[int, _Loan] = {}
        """The pool's games in use, by the id of their match."""

    def _compile_aside(self) -> bool | None:
        """Whether games are compiled aside: as the agent was told, else as
        ``GGP_COMPILE_ASIDE`` says when set, else as the player wants."""
        if self.compile_aside is not None:
            return self.compile_aside
        if os.environ.get(ASIDE_VARIABLE, "").strip():
            return None  # the environment decides
        return self.player.compiles_aside

    # -- the HTTP side ------------------------------------------------------------

    def app(self) -> web.Application:
        """An aiohttp application answering the protocol on every path."""
        app = web.Application(client_max_size=MAX_MESSAGE_BYTES)
        app[AGENT_KEY] = self
        app.router.add_route("*", "/{path:.*}", self.handle)
        app.cleanup_ctx.append(self._sweeping)
        return app

    async def _sweeping(self, app: web.Application) -> AsyncIterator[None]:
        """Look for silent matches in the background while the application runs."""

        async def sweep() -> None:
            while True:
                await asyncio.sleep(SWEEP_INTERVAL)
                self.forget_silent_matches()

        task = asyncio.create_task(sweep())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def handle(self, request: web.Request) -> web.Response:
        """Answer one HTTP request: a POST body or a URL-encoded GET path is a message."""
        if request.method == "POST":
            text = (await request.read()).decode("utf-8", errors="replace")
        elif request.method == "GET":
            text = unquote_plus(request.raw_path[1:])
        else:  # OPTIONS (CORS preflight) and anything else: an empty answer, as GGP-Base gives
            return _reply("")
        received = time.monotonic()
        try:
            message = parse_message(text)
            answer = await self.answer(message, received)
        except (ProtocolError, RequestRejected) as error:
            log.warning("rejected %s: %s", _excerpt(text), error)
            return _error(400, str(error))
        except Exception as error:
            log.exception("failed to answer %s", _excerpt(text))
            return _error(500, f"the player failed: {type(error).__name__}: {error}")
        return _reply(answer)

    # -- the protocol -------------------------------------------------------------

    @property
    def in_match(self) -> bool:
        """True while the player is in (or starting) a match."""
        return bool(self.matches or self._starting)

    def _heard(self, match: PlayerMatch, received: float, clock: float) -> None:
        """The server spoke about ``match`` at ``received``; after the answer, it must speak
        again within ``clock`` (counted from ``received``) plus the margin."""
        self._silent_after[match.match_id] = math.inf  # never while the answer is being made
        self._clock_ends[match.match_id] = received + clock

    def _answered(self, match: PlayerMatch) -> None:
        """The answer is out: the server's silence counts from the end of its clock or now."""
        ends = self._clock_ends.pop(match.match_id, time.monotonic())
        self._silent_after[match.match_id] = max(ends, time.monotonic()) + self.silence_margin

    def forget_silent_matches(self, now: float | None = None) -> list[str]:
        """Forget every match whose server has been silent too long; their ids."""
        now = time.monotonic() if now is None else now
        forgotten = []
        for match_id, limit in list(self._silent_after.items()):
            match = self.matches.get(match_id)
            if match is None:
                del self._silent_after[match_id]
                self._clock_ends.pop(match_id, None)
            elif now > limit:
                del self.matches[match_id], self._silent_after[match_id]
                forgotten.append(match_id)
                log.warning(
                    "match %s: no message from the server for longer than its clocks allow "
                    "(start %d s, play %d s, margin %g s); forgetting the match",
                    match_id,
                    match.start_clock,
                    match.play_clock,
                    self.silence_margin,
                )
                match.deadline = now + ABORT_BUDGET
                task = asyncio.ensure_future(self._finish(match, self.player.abort))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
                task.add_done_callback(functools.partial(_then, self._ended, match))
        return forgotten

    async def answer(self, message: Message, received: float) -> str:
        """The reply to one message, received at ``received`` (monotonic seconds)."""
        self.forget_silent_matches(received)
        match message:
            case Info():
                status = "busy" if self.in_match else "available"
                info = InfoReply(name=self.player.name, status=status, species=self.player.species)
                return render_info_reply(info)
            case Start():
                return await self._start(message, received)
            case Play():
                return await self._play(message, received)
            case Stop():
                return await self._stop(message, received)
            case Abort():
                return await self._abort(message, received)
            case Preview():
                return READY
        raise ProtocolError(f"unexpected message {message!r}")

    async def _start(self, message: Start, received: float) -> str:
        if (
            len(self.matches) + len(self._starting) >= self.max_matches
            or message.match_id in self.matches
            or message.match_id in self._starting
        ):
            return BUSY
        loaded = asyncio.Event()
        self._starting[message.match_id] = (loaded, message.play_clock)
        beginning = asyncio.ensure_future(self._begin(message, received, loaded))
        left = received + message.start_clock - self.reply_margin - time.monotonic()
        try:
            await asyncio.wait_for(asyncio.shield(beginning), timeout=max(0.0, left))
        except TimeoutError:  # a machine too busy to load the rules within the start clock
            log.warning(
                "match %s: the rules are still loading at the start clock; answering ready",
                message.match_id,
            )
            self._background.add(beginning)
            beginning.add_done_callback(self._background.discard)
            beginning.add_done_callback(_log_late_start_failure)
        return READY

    async def _begin(self, message: Start, received: float, loaded: asyncio.Event) -> None:
        """Load the rules and run the player's start hook (until the start clock)."""
        key = _pool_key(message)
        pooled = self.games.take(key)
        try:
            game, state = await in_thread(
                _load_game, message, pooled, self._compile_aside(), name="player-load"
            )
        except BaseException:
            self._ended_while_starting.discard(message.match_id)
            if pooled is not None:
                self.games.give_back(key, pooled)
            raise
        finally:
            del self._starting[message.match_id]
            loaded.set()
        if message.match_id in self._ended_while_starting:  # STOP or ABORT came first
            self._ended_while_starting.discard(message.match_id)
            self.games.give_back(key, game)
            return
        match = PlayerMatch(
            match_id=message.match_id,
            role=message.role,
            game=game,
            start_clock=message.start_clock,
            play_clock=message.play_clock,
            state=state,
            deadline=received + message.start_clock - self.reply_margin,
        )
        self.matches[match.match_id] = match
        self._loans[id(match)] = _Loan(match, key)
        self._heard(match, received, message.start_clock)
        try:
            await self._run_hook(match, self.player.start)
        except TimeoutError:
            log.warning("match %s: start() still thinking at the start clock", match.match_id)
        except Exception:
            pass  # logged by _run_hook; the match goes on
        finally:
            self._answered(match)

    async def _loaded(self, match_id: str, received: float) -> PlayerMatch | None:
        """The match, once its rules are loaded if START is still loading them (a machine
        too busy to load them within the start clock); None if they are not loaded within
        half the play clock (the other half is for the move, or the answer is late)."""
        starting = self._starting.get(match_id)
        if starting is not None:
            loaded, play_clock = starting
            with contextlib.suppress(TimeoutError):
                left = received + LOAD_WAIT_SHARE * play_clock - time.monotonic()
                await asyncio.wait_for(loaded.wait(), timeout=max(0.0, left))
        return self.matches.get(match_id)

    async def _play(self, message: Play, received: float) -> str:
        match = await self._loaded(message.match_id, received)
        if match is None:
            return BUSY
        self._heard(match, received, match.play_clock)
        try:
            with self._using(match):
                match.deadline = received + match.play_clock - self.reply_margin
                if message.moves is not None:
                    legal = await self._advance(match, message.moves, legal=True)
                else:
                    legal = await self._in_thread(
                        match, match.game.legal_moves, match.state, match.role
                    )
                if not legal:
                    raise RequestRejected(
                        f"role {match.role} has no legal move in the current state"
                    )
                return render_move(await self._choose(match, legal))
        finally:
            self._answered(match)

    async def _stop(self, message: Stop, received: float) -> str:
        if message.match_id in self._starting:
            self._ended_while_starting.add(message.match_id)
            return DONE
        match = self.matches.pop(message.match_id, None)
        if match is None:
            return BUSY
        match.deadline = received + match.play_clock - self.reply_margin
        with self._using(match):
            if message.moves is not None:
                try:
                    await self._advance(match, message.moves)
                except RequestRejected as error:
                    log.warning("match %s: %s", match.match_id, error)
            await self._finish(match, self.player.stop)
        self._ended(match)
        return DONE

    async def _abort(self, message: Abort, received: float) -> str:
        if message.match_id in self._starting:
            self._ended_while_starting.add(message.match_id)
            return ABORTED
        match = self.matches.pop(message.match_id, None)
        if match is None:
            return BUSY
        match.deadline = received + ABORT_BUDGET
        await self._finish(match, self.player.abort)
        self._ended(match)
        return ABORTED

    # -- helpers ------------------------------------------------------------------

    def _in_thread(
        self, match: PlayerMatch, function: Callable[..., T], *args: Any, name: str = "player-work"
    ) -> asyncio.Future[T]:
        """``function(*args)`` in a thread of its own, counted as a use of the match's game."""
        loan = self._loans.get(id(match))
        if loan is None:
            return in_thread(function, *args, name=name)
        loan.busy += 1
        return in_thread(function, *args, name=name, finished=lambda: self._done_with(loan))

    @contextlib.contextmanager
    def _using(self, match: PlayerMatch) -> Iterator[None]:
        """A request about ``match`` is in hand: its game is not given back meanwhile."""
        loan = self._loans.get(id(match))
        if loan is not None:
            loan.busy += 1
        try:
            yield
        finally:
            if loan is not None:
                self._done_with(loan)

    def _done_with(self, loan: _Loan) -> None:
        loan.busy -= 1
        self._give_back_if_free(loan)

    def _ended(self, match: PlayerMatch) -> None:
        """The match is over: its game goes back to the pool once nothing uses it."""
        loan = self._loans.get(id(match))
        if loan is not None:
            loan.ended = True
            self._give_back_if_free(loan)

    def _give_back_if_free(self, loan: _Loan) -> None:
        if loan.ended and loan.busy == 0 and self._loans.pop(id(loan.match), None) is not None:
            self.games.give_back(loan.key, loan.match.game)

    async def _advance(
        self, match: PlayerMatch, moves: list[Any], *, legal: bool = False
    ) -> list[Term]:
        """Apply a joint move from the server to the match's state; with ``legal``, the
        player's legal moves there (found in the same thread's work), else ``[]``."""
        try:
            state, found, failure = await self._in_thread(
                match, _step, match.game, match.state, moves, match.role if legal else None
            )
        except GdlError as error:
            raise RequestRejected(
                f"cannot apply the joint move {render_moves(moves)} in match "
                f"{match.match_id}: {error}"
            ) from None
        match.state = state
        match.history.append(wrap_all(moves))
        match.step += 1
        if failure is not None:
            raise failure
        return found

    async def _choose(self, match: PlayerMatch, legal: list[Term]) -> Term:
        """The player's move, or a random legal move if it fails or runs out of time."""
        try:
            chosen = await self._run_hook(match, self.player.play, match.state)
        except TimeoutError:
            log.warning("match %s: no move by the deadline; sending a random one", match.match_id)
            return self._fallback_rng.choice(legal)
        except Exception:
            log.warning("match %s: play() failed; sending a random move", match.match_id)
            return self._fallback_rng.choice(legal)
        move = match_legal_move(chosen, legal, ignore_case=True) if _is_term(chosen) else None
        if move is None:
            log.error(
                "match %s: play() returned %r, which is not a legal move; sending a random one",
                match.match_id,
                chosen,
            )
            return self._fallback_rng.choice(legal)
        return move

    async def _finish(self, match: PlayerMatch, hook: Any) -> None:
        try:
            await self._run_hook(match, hook)
        except TimeoutError:
            log.warning("match %s: %s() still running", match.match_id, hook.__name__)
        except Exception:
            pass  # logged by _run_hook

    async def _run_hook(self, match: PlayerMatch, hook: Any, *args: Any) -> Any:
        """Run a player hook in a thread, one per match at a time, until the match's deadline.

        Raises :class:`TimeoutError` at the deadline; the hook itself runs on.
        """

        async def run() -> Any:
            async with match.lock:
                return await self._in_thread(
                    match, hook, match, *args, name=f"player-{hook.__name__}"
                )

        task = asyncio.ensure_future(run())
        task.add_done_callback(lambda done: _log_failure(match, hook, done))
        return await asyncio.wait_for(asyncio.shield(task), timeout=match.time_left())


AGENT_KEY = web.AppKey("agent", PlayerAgent)
"""Where an agent's application keeps the agent."""


def _step(
    game: Game, state: State, moves: list[Any], role: str | None
) -> tuple[State, list[Term], BaseException | None]:
    """The state after ``moves`` (a :class:`GdlError` when they do not apply) and the
    legal moves of ``role`` there (none asked for: ``[]``), or why they could not be found."""
    following = game.next_state(state, moves)
    if role is None:
        return following, [], None
    try:
        return following, game.legal_moves(following, role), None
    except Exception as error:  # not the joint move's fault: raised as it is
        return following, [], error


def _then(call: Callable[[PlayerMatch], None], match: PlayerMatch, _: object) -> None:
    """A done callback that calls ``call(match)``."""
    call(match)


def _pool_key(message: Start) -> Hashable:
    """What a loaded game is kept by: its rules (where the START wrote them aside) and the
    compile budget of the start clock."""
    rules = tuple((rule.head, rule.body) for rule in message.rules)
    return rules, CompileBudget.for_start_clock(message.start_clock)


def _load_game(
    message: Start, pooled: Game | None = None, compile_aside: bool | None = None
) -> tuple[Game, State]:
    """The game of a START message (``pooled``: the same rules, loaded for an earlier
    match) and its initial state (runs in a worker thread); the start clock decides how
    long compiling the rules may take, and ``compile_aside`` whether a game it could not
    compile is compiled in another process meanwhile."""
    try:
        budget = CompileBudget.for_start_clock(message.start_clock)
        game = pooled or Game(
            message.rules,
            compile_time_limit=budget.time_limit,
            max_ground_rules=budget.max_ground_rules,
            compile_aside=compile_aside,
        )
    except GdlError as error:
        raise RequestRejected(f"the rules are not valid GDL: {error}") from None
    if message.role not in game.roles:
        raise RequestRejected(
            f"{message.role} is not a role of this game (roles: {', '.join(game.roles)})"
        )
    return game, game.initial_state()


def _is_term(value: object) -> bool:
    if isinstance(value, str):
        return bool(value) and not any(char.isspace() or char in "()" for char in value)
    return isinstance(value, tuple) and bool(value) and all(_is_term(part) for part in value)


def _log_late_start_failure(task: asyncio.Future[None]) -> None:
    """Log why rules that were still loading when START was answered failed to load."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("loading the rules after answering START failed: %s", error)


def _log_failure(match: PlayerMatch, hook: Any, task: asyncio.Future[Any]) -> None:
    """Log a hook that raised, whether or not anyone still waits for it."""
    if task.cancelled():
        return
    error = task.exception()
    if error is not None:
        log.error("match %s: %s() failed", match.match_id, hook.__name__, exc_info=error)


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def _reply(body: str) -> web.Response:
    """A 200 reply framed as GGP-Base's players frame it."""
    return web.Response(body=body.encode("utf-8"), headers=response_headers(body))


def _error(status: int, reason: str) -> web.Response:
    """An error reply with the reason as plain text."""
    headers = [("Content-Type", "text/plain; charset=utf-8"), *CORS_HEADERS]
    return web.Response(status=status, body=reason.encode("utf-8"), headers=headers)
