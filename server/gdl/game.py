"""The one public door to the rules: :class:`Game`, in the spirit of python-chess."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .compile_budget import CompileBudget
from .compile_memo import COMPILE_MEMO, Compiled, MemoKey, fails_again, memo_key
from .engine import Engine
from .engine_trial import Race
from .errors import (
    GdlError,
    GoalError,
    IllegalMoveError,
    OutsideGroundingError,
    RulesTooLargeError,
)
from .parser import Rule, parse_gdl, parse_term
from .state import State
from .terms import Compound, Constant, RawTerm, Term, to_kif, unwrap, wrap

if TYPE_CHECKING:
    from .compile_aside import AsideCompile
    from .engine_store import StoreEntry

log = logging.getLogger(__name__)

ENGINES = ("auto", "interpreter", "compiled")

DEFAULT_MAX_RULES_BYTES = 2 * 1024 * 1024
"""Rule texts and files larger than this (UTF-8 bytes) are refused before parsing:
fifty times the largest game of the GGP corpora, far below what would take the
parser many seconds and gigabytes."""


RACE_SECONDS = 0.25
RACE_SHARE = 1 / 8
"""CPU time each engine is timed at most in the race of engine ``auto`` (see
:mod:`.engine_trial`): RACE_SECONDS, or this share of the compile time limit if less."""


def forget_failed_compiles() -> None:
    """Forget every remembered failure of this process: the next load of each game tries
    to compile it (unless the engine store, :mod:`.engine_store`, holds the failure)."""
    COMPILE_MEMO.forget_failures()


def forget_compiled_engines() -> None:
    """Forget every kept compiled engine: the next load of each game compiles it again
    (or reads it from the engine store, :mod:`.engine_store`, when that holds it)."""
    COMPILE_MEMO.forget_engines()


def _as_term(move: object) -> RawTerm:
    """Accept a term, or KIF text such as ``"(mark 1 2)"``."""
    if isinstance(move, tuple):
        return unwrap(move)
    if isinstance(move, str):
        text = str.__str__(move)
        if "(" in text or text != text.strip() or " " in text:
            return parse_term(text)
        return text
    raise TypeError(f"a move must be a term or KIF text, not {type(move).__name__}")


def _known_move(move: object) -> bool:
    """Whether ``move`` may be looked up as it is: a term as :meth:`Game.legal_moves`
    hands it out, or a constant's name (not KIF text to read first)."""
    kind = type(move)
    if kind is Compound or kind is tuple:
        return True
    return (kind is Constant or kind is str) and "(" not in move and " " not in move  # type: ignore[operator]


class Game:
    """A game loaded from GDL: roles, states, legal moves, transitions and goals.

    >>> game = Game.from_text(rules_text)            # doctest: +SKIP
    >>> state = game.initial_state()                 # doctest: +SKIP
    >>> game.legal_moves(state, game.roles[0])       # doctest: +SKIP
    """

    def __init__(
        self,
        rules: Iterable[Rule],
        *,
        validate: bool = True,
        engine: str | None = None,
        max_ground_rules: int | None = None,
        compile_time_limit: float | None = None,
        compile_aside: bool | None = None,
    ) -> None:
        """Load ``rules``; ``engine`` is ``auto`` (default), ``interpreter`` or ``compiled``.

        ``auto`` compiles the game when grounding stays within ``max_ground_rules``
        ground rules and ``compile_time_limit`` seconds, and otherwise falls back to
        the interpreter with a logged reason; a game that compiles but runs slower than
        the interpreter in a timed trial (:mod:`.engine_trial`) falls back too. The
        defaults come from the environment variables ``GGP_ENGINE``,
        ``GGP_COMPILE_TIME_LIMIT`` and ``GGP_COMPILE_MAX_RULES``
        (without them 2 s, and a rule cap that grows with the time limit: see
        :mod:`.compile_budget`, which also gives the budget a start clock buys).

        With ``compile_aside`` (default: the environment variable ``GGP_COMPILE_ASIDE``),
        a game that ``auto`` could not compile within its budget is compiled in another
        process within a larger one while the interpreter plays, and the game switches
        to the compiled engine when it is ready (:mod:`.compile_aside`).
        """
        self.rules: list[Rule] = list(rules)
        if validate:
            from .validator import check

            check(self.rules)
        chosen = engine or os.environ.get("GGP_ENGINE") or "auto"
        self.fallback_reason: str | None = None
        """Why ``auto`` chose the interpreter (None when it did not fall back)."""
        self.compile_budget: CompileBudget | None = None
        """The limits the compile attempt had (None when the interpreter was asked for)."""
        self.engine_race: Race | None = None
        """The timed trial of ``auto`` between the engines, when the game compiled."""
        self.failed_compile_seconds = 0.0
        """CPU time the failed compile attempt took before the fallback, or the compile
        and the race when the interpreter won it (0.0 when the same rules already failed
        or lost with the same limits in this process for a reason that does not depend
        on the load: the fallback is then immediate)."""
        self.engine_reused = False
        """Whether the compiled engine was kept from an earlier load of the same rules with
        the same limits in this process (see :mod:`.compile_memo`): no compile, no race."""
        self.engine_stored = False
        """Whether the compiled engine was read from the engine store (compiled by an
        earlier process, maybe within a larger budget; see :mod:`.engine_store`): no
        compile, no race."""
        self.engine_storing: threading.Thread | None = None
        """The thread handing the engine compiled now to the engine store, if any (the
        process waits for it at exit)."""
        self._entry: StoreEntry | None = None
        """The engine store's entry of these rules, once looked up (:meth:`_store_entry`)."""
        self._entry_looked_up = False
        self.compile_aside: AsideCompile | None = None
        """The compile in another process this game waits for or switched after (see
        :mod:`.compile_aside`), when ``auto`` fell back for want of budget and
        ``compile_aside`` was asked for."""
        self._fallback_error: GdlError | None = None
        """What made ``auto`` fall back, when it did."""
        self.engine: Engine = self._choose_engine(chosen, max_ground_rules, compile_time_limit)
        self.roles: list[str] = list(self.engine.roles)
        self._interpreter: Engine | None = None
        self._next_if_legal = getattr(self.engine, "next_if_legal", None)
        """The engine's one-call path for moves as :meth:`legal_moves` hands them out."""
        if self._fallback_error is not None and chosen == "auto":
            from .compile_aside import wanted

            if wanted(compile_aside):
                self._compile_aside(self._fallback_error)

    def _choose_engine(
        self, engine: str, max_ground_rules: int | None, time_limit: float | None
    ) -> Engine:
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        from .interpreter import Interpreter

        if engine == "interpreter":
            return Interpreter(self.rules)
        from .compile_budget import max_ground_rules_for, time_limit_for

        if time_limit is None:
            time_limit = time_limit_for(None)
        if max_ground_rules is None:
            max_ground_rules = max_ground_rules_for(time_limit)
        self.compile_budget = CompileBudget(time_limit, max_ground_rules)
        key = memo_key(self.rules, max_ground_rules=max_ground_rules, time_limit=time_limit)
        with COMPILE_MEMO.loading(key):  # the same rules loading in another thread: wait
            return self._compiled_or_interpreter(engine, key)

    def _compiled_or_interpreter(self, engine: str, key: MemoKey) -> Engine:
        """The compiled engine of ``key`` (kept from an earlier load of the same rules with
        the same limits, read from the engine store, or compiled now), or with ``auto``
        the interpreter when compiling fails or the compiled engine loses the race."""
        from .compiled import compile_engine

        _, max_ground_rules, time_limit = key
        if engine == "auto":
            known = COMPILE_MEMO.failure(key)
            if known is not None:  # failed before with these limits: no second attempt
                return self._interpreter_instead(known)
        kept = COMPILE_MEMO.compiled(key) or self._stored_engine(key)
        if kept is not None and (engine == "compiled" or kept.race is not None):
            self.engine_reused = not self.engine_stored
            self.engine_race = kept.race
            return kept.engine
        if engine == "auto" and kept is None:
            stored_failure = self._stored_failure()
            if stored_failure is not None:  # failed before with these limits, elsewhere
                COMPILE_MEMO.keep_failure(key, stored_failure)
                return self._interpreter_instead(stored_failure)
        started = time.thread_time()
        if kept is not None:  # compiled before for engine ``compiled``: not raced yet
            self.engine_reused = True
            compiled = kept.engine
        else:
            try:
                compiled = compile_engine(
                    self.rules, max_ground_rules=max_ground_rules, time_limit=time_limit
                )
            except GdlError as reason:
                if engine == "compiled":
                    raise
                self.failed_compile_seconds = time.thread_time() - started
                if fails_again(reason):
                    self._remember_failure(key, reason)
                return self._interpreter_instead(reason)
        if engine == "compiled":
            COMPILE_MEMO.keep_compiled(key, compiled, None)
            return compiled
        return self._faster_of(compiled, key, started)

    def _store_entry(self) -> StoreEntry | None:
        """The engine store's entry of these rules (looked up once a load), None when the
        store is off or the interpreter was asked for."""
        if not self._entry_looked_up:
            from .engine_store import store_entry

            self._entry_looked_up = True
            self._entry = store_entry(self.rules) if self.compile_budget is not None else None
        return self._entry

    def _stored_engine(self, key: MemoKey) -> Compiled | None:
        """The engine the engine store holds for these rules (compiled within any budget,
        in any process), kept in this process's memo too; None when it holds none."""
        entry = self._store_entry()
        stored = entry.engine() if entry is not None else None
        if stored is None:
            return None
        self.engine_stored = True
        COMPILE_MEMO.keep_compiled(key, stored.engine, stored.race)
        return Compiled(stored.engine, stored.race)

    def _stored_failure(self) -> GdlError | None:
        """Why compiling these rules within this budget failed in a process before, when
        the engine store says so."""
        entry, budget = self._store_entry(), self.compile_budget
        return entry.failure(budget) if entry is not None and budget is not None else None

    def _remember_failure(self, key: MemoKey, reason: GdlError) -> None:
        """Remember a failure that would fail again with this budget: in this process's
        memo, and in the engine store for other processes."""
        COMPILE_MEMO.keep_failure(key, reason)
        entry = self._store_entry()
        if entry is not None and self.compile_budget is not None:
            entry.keep_failure(self.compile_budget, reason)

    def _store_engine(self, compiled: Engine, race: Race | None, seconds: float) -> None:
        """Hand an engine that took ``seconds`` of CPU time to compile and race to the
        engine store, pickled in a thread of its own (a large one takes a few tenths of
        a second); cheap ones are not stored (:data:`.engine_store.MIN_COMPILE_SECONDS`)."""
        from .engine_store import MIN_COMPILE_SECONDS

        entry, budget = self._store_entry(), self.compile_budget
        portable = getattr(compiled, "portable", None)
        if entry is None or budget is None or portable is None or seconds < MIN_COMPILE_SECONDS:
            return
        self.engine_storing = threading.Thread(
            target=lambda: entry.keep_engine(portable(), race, budget), name="ggp-engine-store"
        )
        self.engine_storing.start()

    def _faster_of(self, compiled: Engine, key: MemoKey, started: float) -> Engine:
        """``compiled``, unless a timed trial finds the interpreter faster on this game
        (see :mod:`.engine_trial`); the engine that wins is kept for later loads with its
        race (in the engine store too when it took long to compile), and a lost race is
        remembered like a failed compile (the engine that lost is dropped: a long start
        clock may have compiled a large one for nothing)."""
        from .compiled.errors import SlowerThanInterpreter
        from .engine_trial import race
        from .interpreter import Interpreter

        seconds = min(RACE_SECONDS, key[2] * RACE_SHARE)
        outcome, interpreter = race(compiled, lambda: Interpreter(self.rules), seconds=seconds)
        self.engine_race = outcome
        if interpreter is None or not outcome.interpreter_wins:
            COMPILE_MEMO.keep_compiled(key, compiled, outcome)
            spent = time.thread_time() - started
            if not self.engine_reused:
                self._store_engine(compiled, outcome, spent)
            return compiled
        self.failed_compile_seconds = time.thread_time() - started
        self._remember_failure(key, SlowerThanInterpreter(outcome.reason))
        self.fallback_reason = outcome.reason
        log.info("using the interpreter: %s", outcome.reason)
        return interpreter

    def _interpreter_instead(self, reason: GdlError) -> Engine:
        """The interpreter, with the reason the compiled engine was not used."""
        from .interpreter import Interpreter

        self._fallback_error = reason
        self.fallback_reason = getattr(reason, "reason", str(reason))
        log.info("using the interpreter: %s", reason)
        return Interpreter(self.rules)

    def _compile_aside(self, error: GdlError) -> None:
        """Compile the rules in another process within the larger budget of
        :func:`.compile_aside.aside_budget`, when compiling failed for want of budget (not
        for rules the compiler refuses, nor for a lost race)."""
        from .compile_aside import RUNNER, aside_budget
        from .compiled import GroundingTooLarge, GroundingTooSlow

        if not isinstance(error, (GroundingTooLarge, GroundingTooSlow)):
            return
        budget, tried = aside_budget(), self.compile_budget
        if tried is not None and (
            budget.time_limit <= tried.time_limit
            and budget.max_ground_rules <= tried.max_ground_rules
        ):
            return  # no larger than the budget that failed
        race_seconds = min(RACE_SECONDS, budget.time_limit * RACE_SHARE)
        self.compile_aside = RUNNER.submit(self.rules, budget, self, race_seconds)

    def _switch_to(self, engine: Engine) -> None:
        """Play on ``engine`` from the next call on (a compile aside ended)."""
        if list(engine.roles) != self.roles:  # pragma: no cover - the same rules
            log.warning("not switching engines: the roles differ")
            return
        self._next_if_legal = getattr(engine, "next_if_legal", None)
        self.engine = engine
        log.info("switched to the engine compiled aside")

    def _fallback(self) -> Engine:
        """The interpreter, for states or moves outside what the compiled engine grounded."""
        if self._interpreter is None:
            from .interpreter import Interpreter

            self._interpreter = Interpreter(self.rules)
        return self._interpreter

    def _legal(self, state: State, role: str) -> list[RawTerm]:
        try:
            return self.engine.legal_moves(state, role)
        except OutsideGroundingError:
            return self._fallback().legal_moves(state, role)

    def _legal_move(self, state: State, role: str, move: RawTerm) -> RawTerm | None:
        """The engine's copy of ``move`` when it is legal (a hashable term), else None."""
        try:
            return self.engine.legal_move(state, role, move)
        except OutsideGroundingError:
            return self._fallback().legal_move(state, role, move)

    def _goal_values(self, state: State, role: str) -> list[RawTerm]:
        try:
            return self.engine.goal_values(state, role)
        except OutsideGroundingError:
            return self._fallback().goal_values(state, role)

    # -- loading ----------------------------------------------------------------------

    @classmethod
    def from_text(
        cls, text: str, *, max_bytes: int = DEFAULT_MAX_RULES_BYTES, **options: object
    ) -> Game:
        """Load a game from GDL text; raises :class:`RulesTooLargeError` past ``max_bytes``."""
        if len(text) > max_bytes:
            raise RulesTooLargeError(len(text), max_bytes)
        size = len(text.encode("utf-8"))
        if size > max_bytes:
            raise RulesTooLargeError(size, max_bytes)
        return cls(parse_gdl(text), **options)  # type: ignore[arg-type]

    @classmethod
    def from_file(
        cls, path: str | Path, *, max_bytes: int = DEFAULT_MAX_RULES_BYTES, **options: object
    ) -> Game:
        """Load a game from a ``.kif`` file; one over ``max_bytes`` is refused unread."""
        size = Path(path).stat().st_size
        if size > max_bytes:
            raise RulesTooLargeError(size, max_bytes, str(path))
        return cls.from_text(Path(path).read_text(encoding="utf-8"), max_bytes=max_bytes, **options)

    # -- playing ----------------------------------------------------------------------

    def initial_state(self) -> State:
        """The state the game starts in."""
        return self.engine.initial_state()

    def legal_moves(self, state: State, role: str) -> list[Term]:
        """The role's legal moves in ``state``, in a deterministic order."""
        if role not in self.roles:
            self._check_role(role)
        moves: list[Term] = self._legal(state, role)  # type: ignore[assignment]
        return moves  # a new list of public terms (no cast(): a call on the hot path)

    def is_legal(self, state: State, role: str, move: object) -> bool:
        """Whether ``move`` (a term or KIF text) is legal for ``role`` in ``state``."""
        self._check_role(role)
        return self._legal_move(state, role, _as_term(move)) is not None

    def next_state(self, state: State, moves: Sequence[object]) -> State:
        """The state after every role plays its move (in role order).

        Raises :class:`IllegalMoveError` when a move is not legal.
        """
        if len(moves) != len(self.roles):
            raise GdlError(
                f"expected {len(self.roles)} moves (one per role: {', '.join(self.roles)}), "
                f"got {len(moves)}"
            )
        if self._next_if_legal is not None:
            try:  # the common case: terms as legal_moves handed them out
                found_state = self._next_if_legal(state, moves)
            except (TypeError, OutsideGroundingError):  # the slow path says what is wrong
                found_state = None
            if found_state is not None:
                return found_state
        joint: list[RawTerm] = []
        legal_move = self.engine.legal_move
        for role, move in zip(self.roles, moves, strict=True):
            try:  # the common case: a term as legal_moves handed it out
                found = legal_move(state, role, move) if _known_move(move) else None  # type: ignore[arg-type]
            except (TypeError, OutsideGroundingError):  # the slow path says what is wrong
                found = None
            if found is None:
                term = _as_term(move)
                found = self._legal_move(state, role, term)
                if found is None:
                    legal = self._legal(state, role)
                    raise IllegalMoveError(role, to_kif(term), [to_kif(m) for m in legal])
            joint.append(found)
        try:
            return self.engine.next_state(state, joint)
        except OutsideGroundingError:
            return self._fallback().next_state(state, joint)

    def is_terminal(self, state: State) -> bool:
        """Whether the game is over in ``state``."""
        try:
            return self.engine.is_terminal(state)
        except OutsideGroundingError:
            return self._fallback().is_terminal(state)

    def goal(self, state: State, role: str) -> int | None:
        """The role's goal value, or None when it has no unique integer goal."""
        self._check_role(role)
        values = self._goal_values(state, role)
        if len(values) != 1 or not isinstance(values[0], str):
            return None
        try:
            return int(values[0])
        except ValueError:
            return None

    def goals(self, state: State) -> dict[str, int]:
        """Every role's goal value; raises :class:`GoalError` if one is not unique."""
        result: dict[str, int] = {}
        for role in self.roles:
            value = self.goal(state, role)
            if value is None:
                found = [to_kif(v) for v in self._goal_values(state, role)]
                detail = "no goal value" if not found else f"goal values {', '.join(found)}"
                raise GoalError(f"role {role} has no unique goal in this state ({detail})")
            result[role] = value
        return result

    def defined_goals(self, state: State) -> dict[str, int]:
        """The goal values of the roles whose goal is uniquely defined."""
        result: dict[str, int] = {}
        for role in self.roles:
            value = self.goal(state, role)
            if value is not None:
                result[role] = value
        return result

    def parse_term(self, text: str) -> Term:
        """Read a move or fluent written in KIF, e.g. ``(mark 1 2)``."""
        return wrap(parse_term(text))

    def _check_role(self, role: str) -> None:
        if role not in self.roles:
            raise GdlError(f"unknown role {role!r}; roles are {', '.join(self.roles)}")

    def __repr__(self) -> str:
        return f"<Game roles={self.roles} engine={self.engine.name}>"
