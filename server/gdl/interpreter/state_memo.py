"""Answers the interpreter gave for states met before, kept while states recur.

A game's rules are a pure function of the state and the joint move, so the legal moves,
the terminal test and the goals of a state, and the successor of a state under a joint
move, are the same each time they are asked. Where play keeps coming back to the same
states (a maze's few hundred squares, a one-shot game whose every playout starts from its
only state, the moves near the root that a tree search walks down again on every
iteration), asking the rules again is most of the work: the memo answers instead.

Where states seldom recur, the memo would only hold states alive, and a heap grown by
thousands of states slows the rest of the engine (the collector scans them over and over:
racer4 ran 30 % slower while it held them). So the memo starts with a trial that keeps
only the hashes of the transitions it is asked for, and is switched on once at least one
in :data:`MIN_HIT_RATE` of them was met before (looked at every :data:`TRIAL_STRIDE`
transitions), or off for good when that has not happened after :data:`TRIAL_ASKS`. On,
it looks again after every :data:`TRIAL_ASKS` transitions, and switches off for good
(emptied) when fewer than one in :data:`MIN_HIT_RATE` of them were kept.
"""

from __future__ import annotations

from ..state import State
from ..terms import RawTerm

STATES_KEPT = 16_384
"""States whose answers are kept. Past it, or past :data:`FLUENTS_KEPT`, everything kept
is dropped at once: cheaper than dropping the oldest one by one, and the states that
recur are soon kept again."""

SUCCESSORS_KEPT = 32_768
"""Transitions (a state and a joint move) whose successor is kept."""

FLUENTS_KEPT = 400_000
"""The fluents of the states kept, counted once per entry of either table: what bounds
the memory the memo holds whatever the size of a state. Play keeps most states in both
tables (a successor, then its answers), so this is about 200,000 fluents held, some
20 MB; 45 MB at most. mummymaze1p's 1,080 states of 64 fluents and their 4,000
transitions fit."""

TRIAL_ASKS = 4096
"""Transitions after which a trial that has not switched the memo on switches it off;
and, once on, the transitions of each window over which it must stay worth keeping."""

TRIAL_STRIDE = 512
"""Transitions between two looks of the trial at its count."""

MIN_HIT_RATE = 8
"""The memo is switched on once at least one transition in this many of the trial's was
met before. Met again, a transition and the answers of the state it leads to cost a
look-up instead of the rules' tens of microseconds or more."""


class StateAnswers:
    """What the rules said of one state, each filled in when first asked."""

    __slots__ = ("legal", "legal_facts", "terminal", "goals")

    def __init__(self) -> None:
        self.legal: dict[str, list[RawTerm]] | None = None
        """Each role's legal moves in the public order."""
        self.legal_facts: set[tuple] | frozenset[tuple] = frozenset()
        """The ``legal`` facts (role, move), once :attr:`legal` is known."""
        self.terminal: bool | None = None
        self.goals: dict[str, list[RawTerm]] = {}
        """Per role asked: its goal values, sorted."""


class StateMemo:
    """The answers of recent states and the successors of recent transitions, kept
    while transitions recur (see :data:`MIN_HIT_RATE`)."""

    def __init__(self, *, enabled: bool = True) -> None:
        """``enabled`` false: no trial, and never on."""
        self.enabled = enabled
        self.on = False
        """Whether states are kept (only after a trial that found them recurring)."""
        self._trial: set[int] | None = set() if enabled else None
        """While the trial runs: the hashes of the transitions asked for so far."""
        self._answers: dict[State, StateAnswers] = {}
        self._successors: dict[tuple[State, tuple], State] = {}
        self._fluents = 0
        """The fluents of the states kept, one count per entry of either table."""
        self._asks = 0
        self._finds = 0
        self._last_state: State | None = None
        self._last_answers: StateAnswers | None = None
        """The state asked last and its answers: one step asks the same state several
        times in a row (each role's moves, their check, the terminal test)."""

    def answers(self, state: State) -> StateAnswers | None:
        """The answers kept for ``state`` (a new, empty record when none were), or None
        when the memo is off."""
        if state is self._last_state:
            return self._last_answers
        if not self.on:
            return None
        found = self._answers.get(state)
        if found is None:
            self._hold(len(state), len(self._answers) >= STATES_KEPT)
            found = self._answers[state] = StateAnswers()
        self._last_state, self._last_answers = state, found
        return found

    def successor(self, state: State, joint: tuple) -> State | None:
        """The successor kept for ``state`` under ``joint`` (moves in role order, as
        plain values), or None."""
        if self.on:
            found = self._successors.get((state, joint))
            if found is not None:
                self._finds += 1
            self._asks += 1
            if self._asks >= TRIAL_ASKS:  # a window of the memo on: still worth it?
                if self._finds * MIN_HIT_RATE < self._asks:
                    self.switch_off()
                self._asks = self._finds = 0
            return found
        trial = self._trial
        if trial is not None:
            key = hash((state, joint))
            if key in trial:
                self._finds += 1
            else:
                trial.add(key)
            self._asks += 1
            if not self._asks % TRIAL_STRIDE:
                self._look()
        return None

    def _look(self) -> None:
        """Switch the memo on when the trial found transitions recurring often enough,
        or off for good when it has run its course without."""
        if self._finds * MIN_HIT_RATE >= self._asks:
            self.on = True
        elif self._asks < TRIAL_ASKS:
            return
        self._trial = None
        self._asks = self._finds = 0

    def keep_successor(self, state: State, joint: tuple, successor: State) -> None:
        if self.on:
            self._hold(len(successor), len(self._successors) >= SUCCESSORS_KEPT)
            self._successors[(state, joint)] = successor

    def _hold(self, fluents: int, full: bool) -> None:
        """Count an entry of ``fluents`` about to be kept; drop everything first when a
        table is ``full`` or the fluents would pass :data:`FLUENTS_KEPT`."""
        if full or self._fluents + fluents > FLUENTS_KEPT:
            self._drop()
        self._fluents += fluents

    def switch_off(self) -> None:
        """Keep nothing from now on (and let go of what was kept)."""
        self.on = False
        self._trial = None
        self._drop()

    def _drop(self) -> None:
        """Let go of everything kept."""
        self._answers.clear()
        self._successors.clear()
        self._fluents = 0
        self._last_state = self._last_answers = None


__all__ = [
    "FLUENTS_KEPT",
    "MIN_HIT_RATE",
    "STATES_KEPT",
    "SUCCESSORS_KEPT",
    "TRIAL_ASKS",
    "TRIAL_STRIDE",
    "StateAnswers",
    "StateMemo",
]
