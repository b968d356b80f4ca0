"""One match as one coroutine: START, PLAY until the end, STOP; or ABORT when cancelled.

>>> runner = MatchRunner(game, [Player("a", url_a), Player("b", url_b)])  # doctest: +SKIP
>>> record = await runner.run()                                          # doctest: +SKIP

The runner keeps the ggp.org match record up to date and emits typed events
(:mod:`server.match.events`) after every phase; observers such as the log writer
subscribe to them.  It knows nothing of storage or the web.

Rules of play:

- START goes to every player at once with the start clock; then every step, PLAY goes
  to every player at once (the previous joint move, in role order) and the runner
  waits for all replies or the deadline (clock plus network slack, a total deadline
  per message).  STOP carries the last joint move.
- A reply that is late (``TO``), failed (``CE``), unparsable (``IL null``) or illegal
  (``IL <move>``) is replaced by a substitute move chosen by the policy; the player
  keeps receiving every later message, which carries the move actually applied.
  An answer to START other than ``ready`` is recorded as ``IL <reply>``.
- Under the ``forfeit`` policy a role that fails once forfeits: from then on the server
  plays random moves for it without asking, it gets STOP at the end, and its goal is
  recorded as 0 (``ruleGoalValues`` keeps what the rules gave).
- A role named ``random`` is never contacted; the server plays uniformly random moves.
- The match ends in a terminal state, or at the step limit with the goals the rules
  define in that state (0 where undefined); either way ``isCompleted`` is true.
- :meth:`MatchRunner.abort` (or cancelling the task) sends ABORT to every player and
  records the match as aborted; a step in flight is dropped.
- The rules run in a worker process (:mod:`server.match.rules`), one round trip per
  step; past its CPU-time or memory budget the match ends with ``rules_limit``, and a
  worker that dies ends it with ``error``; either way players get ABORT and the log
  keeps every step up to the last state the rules gave.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from server.gdl import Game, GdlError
from server.gdl.terms import RawTerm, to_ggp
from server.protocol import (
    Abort,
    Message,
    Play,
    ProtocolError,
    Scrambler,
    Start,
    Stop,
    match_legal_move,
    parse_move_reply,
    quote_move,
    render,
    render_rule,
)
from server.records import (
    RECORD_FORMAT,
    EndReason,
    ErrorDetail,
    ErrorKind,
    MatchRecord,
    SubstitutePolicy,
    new_random_token,
)

from .channel import HttpChannel, PlayerChannel
from .config import MatchConfig, new_match_id
from .events import (
    MatchClosed,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    Observer,
    PlayersStarted,
    StepPlayed,
)
from .rules import Position, RulesFailure, RulesSession
from .rules.session import engine_for, goals_in_fresh_worker
from .substitution import MoveChooser
from .transport import PlayerAddress, Reply

log = logging.getLogger(__name__)

RANDOM_ROLE = "random"
"""A role with this name is played by the server with uniformly random legal moves."""

RAW_REPLY_LIMIT = 2000
"""Raw replies longer than this many characters are cut short in the record."""


@dataclass(frozen=True, slots=True)
class Player:
    """A remote player: the name the host uses for it and the URL it listens on."""

    name: str
    url: str
    channel: PlayerChannel | None = field(default=None, compare=False)
    """How to reach it; ``None``: HTTP POSTs to ``url``."""
    keep_alive: bool = False
    """Whether the HTTP POSTs ask it to keep one connection open for the whole match
    (only for players known to support HTTP keep-alive; GGP-Base's players do not)."""


@dataclass
class MatchStats:
    """Where the time of a match went: the server's own work versus waiting for players."""

    steps: int = 0
    total_seconds: float = 0.0
    waiting_seconds: float = 0.0

    @property
    def server_seconds(self) -> float:
        """Time not spent waiting for players: rules, checking, records, observers."""
        return max(0.0, self.total_seconds - self.waiting_seconds)


@dataclass
class _Outcome:
    """One role's result in one phase."""

    code: str = ""
    detail: ErrorDetail | None = None
    response_ms: int | None = None
    raw: str | None = None


@dataclass
class _Phase:
    outcomes: list[_Outcome] = field(default_factory=list)

    @property
    def codes(self) -> list[str]:
        return [outcome.code for outcome in self.outcomes]

    @property
    def details(self) -> list[ErrorDetail | None]:
        return [outcome.detail for outcome in self.outcomes]

    @property
    def times(self) -> list[int | None]:
        return [outcome.response_ms for outcome in self.outcomes]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= RAW_REPLY_LIMIT:
        return text
    return text[:RAW_REPLY_LIMIT] + f"... [{len(text) - RAW_REPLY_LIMIT} more characters]"


def _joint_text(moves: list[str]) -> str:
    """A joint move as :func:`server.protocol.render` prints it, from the printed moves."""
    return "(" + "".join(move + " " for move in moves) + ")"


def _failure_code(kind: ErrorKind) -> str:
    return "TO" if kind is ErrorKind.TIMEOUT else "CE"


class MatchRunner:
    """Runs one match between remote players and keeps its record."""

    def __init__(
        self,
        game: Game,
        players: Sequence[Player | None],
        config: MatchConfig | None = None,
        *,
        game_name: str | None = None,
        match_id: str | None = None,
        observers: Iterable[Observer] = (),
    ) -> None:
        """``players`` has one entry per role in role order; ``None`` (or any entry for a
        role named ``random``) means the server plays that role itself."""
        self.game = game
        self.config = config or MatchConfig()
        self.roles: list[str] = list(game.roles)
        if len(players) != len(self.roles):
            raise ValueError(
                f"{len(self.roles)} roles ({', '.join(self.roles)}) but {len(players)} players"
            )
        self.players: list[Player | None] = [
            None if role == RANDOM_ROLE else player
            for role, player in zip(self.roles, players, strict=True)
        ]
        self._own_channels: list[HttpChannel] = []
        """The channels this runner opened itself (and closes at the end)."""
        self._channels: list[PlayerChannel | None] = [
            None if player is None else player.channel or self._open_channel(player)
            for player in self.players
        ]
        self.match_id = match_id or new_match_id(self.config.match_id_prefix, game_name or "game")
        seed = self.config.seed if self.config.seed is not None else secrets.randbits(48)
        self.chooser = MoveChooser(self.config.policy, seed)
        self.scrambler = Scrambler(game.rules, seed) if self.config.scramble else None
        self.step_limit: int = self.config.step_limit or 0
        """The most steps; a default one is derived when the rules are loaded."""
        self._rules: RulesSession | None = None
        self.stats = MatchStats()
        self._observers: list[Observer] = list(observers)
        self._forfeited = [False] * len(self.roles)
        self._task: asyncio.Task[MatchRecord] | None = None
        self._abort_requested = False
        self._ended = False
        self.record = MatchRecord(
            match_id=self.match_id,
            random_token=new_random_token(),
            start_time=_now_ms(),
            is_completed=False,
            is_aborted=False,
            preview_clock=-1,
            start_clock=self.config.start_clock,
            play_clock=self.config.play_clock,
            player_names_from_host=[
                RANDOM_ROLE if player is None else player.name for player in self.players
            ],
            player_transports=[
                None if channel is None else channel.transport for channel in self._channels
            ],
            tournament_name_from_host=self.config.tournament_name,
            scrambled=self.config.scramble,
            record_format=RECORD_FORMAT,
            game_name=game_name,
            game_rulesheet="\n".join(render_rule(rule) for rule in game.rules) + "\n",
            game_role_names=list(self.roles),
            step_limit=self.config.step_limit,
            network_slack_ms=round(self.config.network_slack * 1000),
            substitute_policy=self.config.policy,
            substitute_seed=seed,
            forfeited=list(self._forfeited),
            response_times=[],
            raw_replies=[],
            error_details=[],
        )

    # -- observers ----------------------------------------------------------------------

    def subscribe(self, observer: Observer) -> None:
        """Call ``observer`` with every later event of this match."""
        self._observers.append(observer)

    async def _emit(self, event: MatchEvent) -> None:
        for observer in list(self._observers):
            try:
                result = observer(event)
                if result is not None and inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("observer %r failed on %s", observer, type(event).__name__)

    # -- running ------------------------------------------------------------------------

    async def run(self) -> MatchRecord:
        """Play the match to its end and return its record.

        After :meth:`abort` the record comes back marked aborted.  If the task is
        cancelled from outside, ABORT is still sent and recorded, then the
        cancellation goes on.  An error of the rules (such as a role without a
        legal move) aborts the match with the reason ``error``; an unexpected
        exception does too, and is then raised.
        """
        self._task = asyncio.current_task()
        started = time.monotonic()
        try:
            await self._play()
        except asyncio.CancelledError:
            if not self._ended:
                await self._abort_players(EndReason.ABORTED, "the match was cancelled")
            if not self._abort_requested:
                raise
            if self._task is not None:
                self._task.uncancel()
        except Exception as error:
            if not self._ended:
                log.exception("match %s failed", self.match_id)
                await self._abort_players(EndReason.ERROR, f"the server failed: {error!r}")
            raise
        finally:
            self.stats.total_seconds = time.monotonic() - started
            for channel in self._own_channels:
                channel.close()
            if self._rules is not None:
                await self._rules.close()
        return self.record

    def _open_channel(self, player: Player) -> HttpChannel:
        channel = HttpChannel(PlayerAddress.parse(player.url), player.name, player.keep_alive)
        self._own_channels.append(channel)
        return channel

    def abort(self) -> None:
        """Cancel the match: ABORT goes to every player and the record is marked aborted."""
        if self._ended or self._abort_requested:
            return
        self._abort_requested = True
        if self._task is not None:
            self._task.cancel()

    async def _play(self) -> None:
        failure = await self._open_rules()
        await self._emit(
            MatchStarted.of(
                match_id=self.match_id,
                record=self.record,
                game_name=self.record.game_name,
                roles=list(self.roles),
                players=list(self.record.player_names_from_host or []),
                start_clock=self.config.start_clock,
                play_clock=self.config.play_clock,
                step_limit=self.step_limit,
            )
        )
        if failure is not None:
            await self._rules_failed(failure, None)
            return
        start_phase = await self._start_players()
        self._append_phase(start_phase)
        try:
            state = await self._session().initial()
        except RulesFailure as error:
            await self._rules_failed(error, None)
            return
        except GdlError as error:
            log.error("match %s: the rules failed: %s", self.match_id, error)
            await self._abort_players(EndReason.ERROR, f"the rules failed: {error}")
            return
        self.record.states.append(state.text)
        self.record.state_times.append(_now_ms())
        await self._emit(
            PlayersStarted.of(
                match_id=self.match_id,
                record=self.record,
                errors=start_phase.codes,
                details=start_phase.details,
                response_times=start_phase.times,
            )
        )
        if self.config.abort_on_refused_start and any(start_phase.codes):
            failed = [
                role for role, code in zip(self.roles, start_phase.codes, strict=True) if code
            ]
            await self._abort_players(
                EndReason.START_REFUSED, f"START failed for {', '.join(failed)}"
            )
            return

        previous: list[RawTerm] | None = None
        try:
            terminal = state.terminal
            while True:
                if terminal:
                    reason = EndReason.TERMINAL
                    break
                if self.stats.steps >= self.step_limit:
                    reason = EndReason.STEP_LIMIT
                    break
                state, previous, terminal = await self._play_step(state, previous)
            goals = await self._session().goals(state)
        except RulesFailure as error:
            await self._rules_failed(error, state)
            return
        except GdlError as error:
            log.error("match %s: the rules failed: %s", self.match_id, error)
            await self._abort_players(EndReason.ERROR, f"the rules failed: {error}")
            return
        await self._finish(goals, reason, previous)

    # -- the rules, in a worker process -------------------------------------------------

    @property
    def is_ended(self) -> bool:
        """Whether the match has ended (its record final), even while STOP or ABORT is
        still on its way to the players."""
        return self._ended

    @property
    def rules_worker_pid(self) -> int | None:
        """The process id of the worker that runs this match's rules, once leased."""
        return None if self._rules is None else self._rules.pid

    @property
    def rules_engine(self) -> str | None:
        """The engine the rules worker answers with, once leased: ``compiled`` when it
        compiled the game within the budget the start clock buys, else ``interpreter``."""
        return None if self._rules is None else self._rules.engine

    def _session(self) -> RulesSession:
        assert self._rules is not None
        return self._rules

    async def _open_rules(self) -> RulesFailure | GdlError | None:
        """Lease a rules worker with the game loaded; the failure, if loading failed."""
        try:
            self._rules = await RulesSession.open(
                self.record.game_rulesheet or "",
                engine_for(self.game, self.config.rules_budget),
                self.config.rules_budget,
                want_step_limit=self.config.step_limit is None,
            )
        except (RulesFailure, GdlError) as error:
            return error
        if not self.step_limit:
            self.step_limit = self._rules.step_limit or 0
            self.record.step_limit = self.step_limit
        return None

    async def _rules_failed(self, error: RulesFailure | GdlError, state: Position | None) -> None:
        """End the match when the rules cannot go on: the goals the rules define in the
        last recorded state (from a fresh worker, when one can tell), then ABORT."""
        log.error("match %s: the rules stopped: %s", self.match_id, error)
        if state is not None:
            defined = await goals_in_fresh_worker(
                self.record.game_rulesheet or "",
                engine_for(self.game, self.config.rules_budget),
                self.config.rules_budget,
                state.text,
            )
            if defined is not None:
                rule_goals = [defined.get(role) for role in self.roles]
                self.record.rule_goal_values = rule_goals
                self.record.goal_values = [
                    0 if forfeited or value is None else value
                    for value, forfeited in zip(rule_goals, self._forfeited, strict=True)
                ]
        if isinstance(error, RulesFailure):
            await self._abort_players(error.reason, str(error))
        else:
            await self._abort_players(EndReason.ERROR, f"the rules failed: {error}")

    # -- START --------------------------------------------------------------------------

    async def _start_players(self) -> _Phase:
        messages: list[Message | None] = [
            None
            if player is None
            else Start(
                match_id=self.match_id,
                role=role,
                rules=self.game.rules,
                start_clock=self.config.start_clock,
                play_clock=self.config.play_clock,
            )
            for role, player in zip(self.roles, self.players, strict=True)
        ]
        replies = await self._exchange(
            messages, self.config.start_clock + self.config.network_slack
        )
        phase = _Phase()
        for index, reply in enumerate(replies):
            outcome = _Outcome()
            if reply is not None:
                outcome.response_ms = reply.elapsed_ms
                outcome.raw = _cut(reply.body)
                if not reply.ok:
                    assert reply.error is not None
                    outcome.code = _failure_code(reply.error)
                    outcome.detail = ErrorDetail(
                        kind=reply.error, message=reply.message, response_time_ms=reply.elapsed_ms
                    )
                elif (reply.body or "").lower() != "ready":
                    outcome.code = "IL " + self._reply_as_ggp(reply.body or "")
                    outcome.detail = ErrorDetail(
                        kind=ErrorKind.REFUSED,
                        message="the player did not answer ready to START",
                        raw_reply=outcome.raw,
                        response_time_ms=reply.elapsed_ms,
                    )
                if outcome.code and self.config.policy is SubstitutePolicy.FORFEIT:
                    self._forfeit(index)
            phase.outcomes.append(outcome)
        return phase

    def _reply_as_ggp(self, text: str) -> str:
        """A reply as GGP-Base records it after ``IL``: the term it reads, else ``null``."""
        try:
            term = parse_move_reply(text)
        except ProtocolError:
            return "null"
        if self.scrambler is not None:
            term = self.scrambler.unscramble_term(term)
        return quote_move(term)

    # -- PLAY ---------------------------------------------------------------------------

    async def _play_step(
        self, state: Position, previous: list[RawTerm] | None
    ) -> tuple[Position, list[RawTerm], bool]:
        legal = state.legal or [[] for _ in self.roles]
        # The moves are the rules' own legal moves, already raw terms: no re-validation.
        play = Play.model_construct(match_id=self.match_id, moves=previous)
        messages: list[Message | None] = [
            None if player is None or self._forfeited[index] else play
            for index, player in enumerate(self.players)
        ]
        text = None
        if self.scrambler is None:  # render(play), from the moves printed for the record
            moves = self.record.moves[-1] if previous is not None else None
            text = f"( PLAY {self.match_id} {'NIL' if moves is None else _joint_text(moves)} )"
        replies = await self._exchange(
            messages, self.config.play_clock + self.config.network_slack, text
        )
        phase = _Phase()
        joint: list[RawTerm] = []
        for index, reply in enumerate(replies):
            move, outcome = self._judge_move(index, reply, legal[index])
            joint.append(move)
            phase.outcomes.append(outcome)
        next_state = await self._session().step(state, joint)
        terminal = next_state.terminal
        self.stats.steps += 1
        moves_text = [to_ggp(move) for move in joint]
        self.record.moves.append(moves_text)
        self.record.states.append(next_state.text)
        self.record.state_times.append(_now_ms())
        self._append_phase(phase)
        await self._emit(
            StepPlayed.of(
                match_id=self.match_id,
                record=self.record,
                step=self.stats.steps,
                moves=moves_text,
                errors=phase.codes,
                details=phase.details,
                response_times=phase.times,
                state=self.record.states[-1],
                terminal=terminal,
            )
        )
        return next_state, joint, terminal

    def _judge_move(
        self, index: int, reply: Reply | None, legal: Sequence[RawTerm]
    ) -> tuple[RawTerm, _Outcome]:
        """The move applied for one role, and what to record about its reply."""
        if not legal:
            raise GdlError(f"role {self.roles[index]} has no legal move in a non-terminal state")
        outcome = _Outcome()
        if reply is None:
            return self.chooser.random_move(legal), outcome
        outcome.response_ms = reply.elapsed_ms
        outcome.raw = _cut(reply.body)
        if not reply.ok:
            assert reply.error is not None
            kind, message, code = reply.error, reply.message, _failure_code(reply.error)
        else:
            try:
                term = parse_move_reply(reply.body or "")
            except ProtocolError as error:
                kind, message, code = ErrorKind.UNPARSABLE, str(error), "IL null"
            else:
                if self.scrambler is not None:
                    term = self.scrambler.unscramble_term(term)
                move = match_legal_move(term, legal, ignore_case=self.config.lenient_move_case)
                if move is not None:
                    return move, outcome
                kind, code = ErrorKind.ILLEGAL, "IL " + quote_move(term)
                message = f"{quote_move(term)} is not a legal move for {self.roles[index]}"
        substitute = self.chooser.substitute(legal)
        if self.config.policy is SubstitutePolicy.FORFEIT:
            self._forfeit(index)
        outcome.code = code
        outcome.detail = ErrorDetail(
            kind=kind,
            message=message,
            raw_reply=outcome.raw,
            response_time_ms=reply.elapsed_ms,
            substitute=to_ggp(substitute),
        )
        return substitute, outcome

    def _forfeit(self, index: int) -> None:
        self._forfeited[index] = True
        self.record.forfeited = list(self._forfeited)

    # -- the end ------------------------------------------------------------------------

    async def _finish(
        self,
        goals_found: tuple[dict[str, int], str | None],
        reason: EndReason,
        last_moves: list[RawTerm] | None,
    ) -> None:
        defined, goal_error = goals_found
        missing = [role for role in self.roles if role not in defined]
        if reason is EndReason.TERMINAL and missing:
            self.record.end_message = goal_error
        elif missing:
            self.record.end_message = (
                f"no goal defined for {', '.join(missing)} when the step limit was reached"
            )
        rule_goals: list[int | None] = [defined.get(role) for role in self.roles]
        goals = [
            0 if forfeited or value is None else value
            for value, forfeited in zip(rule_goals, self._forfeited, strict=True)
        ]
        self.record.rule_goal_values = rule_goals
        self.record.goal_values = goals
        self.record.is_completed = True
        self.record.end_reason = reason
        self._ended = True
        await self._emit(
            MatchEnded.of(match_id=self.match_id, record=self.record, reason=reason, goals=goals)
        )
        stop = Stop(match_id=self.match_id, moves=last_moves)
        messages: list[Message | None] = [
            None if player is None else stop for player in self.players
        ]
        replies = await self._exchange(messages, self.config.play_clock + self.config.network_slack)
        await self._close(replies)

    async def _abort_players(self, reason: EndReason, message: str) -> None:
        self._ended = True
        self.record.is_aborted = True
        self.record.is_completed = False
        self.record.end_reason = reason
        self.record.end_message = message
        await self._emit(
            MatchEnded.of(match_id=self.match_id, record=self.record, reason=reason, goals=None)
        )
        abort = Abort(match_id=self.match_id)
        messages: list[Message | None] = [
            None if player is None else abort for player in self.players
        ]
        replies = await self._exchange(messages, self.config.abort_timeout)
        await self._close(replies)

    async def _close(self, replies: list[Reply | None]) -> None:
        self.record.stop_errors = [
            None
            if reply is None or reply.ok
            else ErrorDetail(
                kind=reply.error or ErrorKind.CONNECTION_ERROR,
                message=reply.message,
                response_time_ms=reply.elapsed_ms,
            )
            for reply in replies
        ]
        await self._emit(
            MatchClosed.of(
                match_id=self.match_id, record=self.record, stop_errors=self.record.stop_errors
            )
        )

    # -- helpers ------------------------------------------------------------------------

    def _append_phase(self, phase: _Phase) -> None:
        if self.record.errors is None:  # GGP-Base writes no errors key before the first phase
            self.record.errors = []
        self.record.errors.append(phase.codes)
        assert self.record.error_details is not None
        self.record.error_details.append(phase.details)
        assert self.record.response_times is not None
        self.record.response_times.append(phase.times)
        assert self.record.raw_replies is not None
        self.record.raw_replies.append([outcome.raw for outcome in phase.outcomes])

    async def _exchange(
        self, messages: Sequence[Message | None], time_limit: float, text: str | None = None
    ) -> list[Reply | None]:
        """Send each player its message (``None``: nobody to ask) at once; wait for all.

        ``text``: every message as already rendered (the same for all, not scrambled).
        """
        started = time.monotonic()
        jobs: list[asyncio.Future[Reply]] = []
        rendered: dict[int, str] = {}  # the same message to several players is rendered once
        try:
            for channel, message in zip(self._channels, messages, strict=True):
                if channel is None or message is None:
                    continue
                wire_text = text or rendered.get(id(message))
                if wire_text is None:
                    wire = (
                        message
                        if self.scrambler is None
                        else self.scrambler.scramble_message(message)
                    )
                    wire_text = rendered[id(message)] = render(wire)
                limit = self.config.max_reply_bytes
                if isinstance(channel, HttpChannel):
                    jobs.append(channel.start(wire_text, time_limit=time_limit, max_bytes=limit))
                else:
                    jobs.append(
                        asyncio.ensure_future(
                            channel.send(wire_text, time_limit=time_limit, max_bytes=limit)
                        )
                    )
            replies = iter([await job for job in jobs])
        finally:
            for job in jobs:
                job.cancel()  # only those still waiting: a match cancelled mid-exchange
            self.stats.waiting_seconds += time.monotonic() - started
        return [
            None if channel is None or message is None else next(replies)
            for channel, message in zip(self._channels, messages, strict=True)
        ]


async def run_match(
    game: Game,
    players: Sequence[Player | None],
    config: MatchConfig | None = None,
    *,
    game_name: str | None = None,
    match_id: str | None = None,
    observers: Iterable[Observer] = (),
) -> MatchRecord:
    """Run one match to its end and return its record (see :class:`MatchRunner`)."""
    runner = MatchRunner(
        game, players, config, game_name=game_name, match_id=match_id, observers=observers
    )
    return await runner.run()
