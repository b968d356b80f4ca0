"""Ground a GDL game with clingo: every rule instantiated over every reachable state.

The result is a propositional program: numbered atoms, those of the GDL keyword
relations named by their sentence, and rules ``head :- body`` whose body literals are
atom numbers (negative for ``not``). Facts that clingo proved are reported separately; clingo has already
folded them out of the rule bodies.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import clingo

from ..parser import Rule
from ..terms import RawTerm
from .asp import KEYWORD_PREDICATES, RelationKey, Translator, decode_arguments, decode_symbol
from .demand import drop_demand
from .errors import (
    CompileError,
    GroundingOverBudget,
    GroundingPastStretch,
    GroundingTooLarge,
    GroundingTooSlow,
    check_deadline,
)
from .estimate import EstimateFloor, check_estimate
from .rule_observer import floor_counter, register_rule_observer

SHOW_KEYWORDS = "".join(
    f"#show {predicate}/{arity}.\n" for (_, arity), predicate in KEYWORD_PREDICATES.items()
)
"""Only the atoms of the GDL keyword relations are reported back with their names: the
others' names are never read, and fetching them all took a quarter of the grounding time
of a large program (the ground rules are the same)."""


@dataclass
class GroundProgram:
    """What clingo produced: named atoms (of the keyword relations), facts, open inputs
    and rules.

    The names and facts are decoded from the atoms clingo printed (``symbols``, by
    ``predicates``) only when :meth:`read_names` is called: on a program with tens of
    thousands of named atoms that takes longer than grounding it, and the cost estimate
    (:func:`server.gdl.compiled.network.build_network`) can refuse the program from its
    counts and the roles of the ``does`` atoms alone (:meth:`does_roles`).
    """

    names: dict[int, tuple[RelationKey, tuple[RawTerm, ...]]] = field(default_factory=dict)
    facts: list[tuple[RelationKey, tuple[RawTerm, ...]]] = field(default_factory=list)
    choices: set[int] = field(default_factory=set)
    rules: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    symbols: list[tuple[clingo.Symbol, int]] = field(default_factory=list)
    """The printed atoms not yet decoded into ``names`` and ``facts``."""
    predicates: dict[str, RelationKey] = field(default_factory=dict)
    estimate_floor: int = 0
    """The lower bound of the cost estimate counted while grounding (0 when not); past
    :data:`FLOOR_SAMPLED_FROM` rules, maybe from a sample of the batches."""
    opened_by: dict[int, int] = field(default_factory=dict)
    """The input each choice rule on one atom opens, by that atom: the ``true`` atom of
    each ``next`` atom that is not a fact, the ``does`` atom of each ``legal`` atom."""

    def read_names(self, deadline: float = float("inf")) -> None:
        """Decode the printed atoms into ``names`` and ``facts`` (once)."""
        keys = self.predicates
        for count, (symbol, atom) in enumerate(self.symbols):
            # decoding takes seconds on programs with tens of thousands of named atoms
            if not count & 1023:
                check_deadline(deadline, "reading the ground program")
            key = keys[symbol.name]
            args = decode_arguments(str(symbol))
            if atom == 0:
                self.facts.append((key, args))
            else:
                self.names[atom] = (key, args)
        self.symbols = []

    def does_roles(self) -> dict[int, RawTerm]:
        """The role of every ``does`` atom (not a fact), read without decoding the
        moves: the names of the other atoms are not needed to count the program."""
        does = KEYWORD_PREDICATES[("does", 2)]
        roles: dict[int, RawTerm] = {}
        for symbol, atom in self.symbols:
            if atom and symbol.name == does:
                roles[atom] = decode_symbol(symbol.arguments[0])
        for atom, (key, args) in self.names.items():
            if key == ("does", 2, True):
                roles[atom] = args[0]
        return roles


class NothingToFactor(CompileError):
    """Grounding with factoring was asked for, but no rule of the game factors."""


class NothingToComplement(CompileError):
    """Grounding with the move tests on the state complemented was asked for, but the
    game has none (the program would be the one grounded as written)."""


FLOOR_SAMPLED_FROM = 16_384
"""The ground rules counted into the floor one by one before it is sampled."""
FLOOR_SAMPLE_EVERY = 4
"""Past :data:`FLOOR_SAMPLED_FROM`, one batch of 1,024 rules in this many is counted into
the floor, the others only noted (:meth:`EstimateFloor.note`), while the floor
extrapolated from the batches counted stays under :data:`FLOOR_CATCH_UP_SHARE` of the
budget: most attempts that fail stop at the rule cap, with the floor far below the budget,
and counting it was a quarter of their time (kalaha6x2x4, alexChess)."""
FLOOR_CATCH_UP_SHARE = 0.5
"""The share of the work budget past which the floor extrapolated from its sample has the
batches left out counted, and every batch after (when it may reach the budget at all:
:data:`FLOOR_REACH_SHARE`)."""
FLOOR_REACH_SHARE = 0.8
"""The share of the work budget the floor extrapolated to the rule cap must pass for the
batches left out to be counted: below it, the rule cap stops grounding before the floor
could (most failed attempts: the checkers games' floors come to two thirds of the budget
at the cap), and counting them would be for nothing."""


STRETCH_SHARE = 0.75
"""The share of the work budget within which the bound of the estimate, extrapolated to
the rules past the budget an attempt may stretch to, lets grounding go on
(:meth:`_Collector.stretch`). The bound is 0.79 to 1.0 of the estimate, so a program
it puts within three quarters of the budget likely compiles in time: at the default 2 s,
chineseCheckers6 came to 0.24 and chineseCheckers4 to 0.69, while the programs that
ground slowest and then fail, the checkers family, chess, alexChess and laikLee_hex,
came to 0.81 to 0.95 and stop at the budget as before."""


class _Collector:
    """A clingo observer that records the ground program and enforces the caps.

    Grounding stops at the first rule past ``max_rules`` or past ``budget`` (the
    rules the time limit allows), whichever is lower, at the deadline, and, when a
    ``work_budget`` is given, as soon as a lower bound of the cost estimate
    (:class:`EstimateFloor`) passes it. Past :data:`FLOOR_SAMPLED_FROM` rules that bound
    counts a sample of the batches until it nears the budget and could reach it before the
    rule cap (a lower bound still).

    With ``stretch_to``, grounding that reaches ``budget`` goes on up to that many rules
    (at most ``max_rules``) when the bound, counted in full and extrapolated to them,
    stays within :data:`STRETCH_SHARE` of ``work_budget`` (see :meth:`stretch`).
    """

    def __init__(
        self,
        max_rules: int,
        deadline: float,
        budget: int | None = None,
        work_budget: float = float("inf"),
        stretch_to: int | None = None,
    ) -> None:
        self.max_rules = max_rules
        self.stretch_to: int | None = None
        """The rules grounding may go on to past ``budget`` (None: it may not, or did)."""
        self.hard_cap = max_rules
        if budget is not None and budget < max_rules:
            self.max_rules = budget
            self.too_many: CompileError = GroundingOverBudget(
                f"more than {budget} ground rules, more than the time limit allows"
            )
            if stretch_to is not None and stretch_to > budget and work_budget < float("inf"):
                self.stretch_to = min(stretch_to, max_rules)
        else:
            self.too_many = GroundingTooLarge(f"more than {max_rules} ground rules")
        self.deadline = deadline
        self.choices: set[int] = set()
        self.opened_by: dict[int, int] = {}
        self.work_budget = work_budget
        self.floor = (
            EstimateFloor(self.choices, floor_counter()) if work_budget < float("inf") else None
        )
        self.floored = 0
        """The rules counted into the floor, or noted, so far."""
        self.counted = 0
        """The rules counted into the floor so far."""
        self.left_out: list[tuple[int, int]] = []
        """The batches (first and end rule) only noted, while the floor is sampled."""
        self.sampling = True
        """Whether the floor may still be sampled (until it nears the budget)."""
        self.rules: list[tuple[int, tuple[int, ...]]] = []
        self.next_look = min(1024, self.max_rules + 1)
        """The count of rules at which :meth:`look` is called next."""
        self.symbols: list[tuple[clingo.Symbol, int]] = []
        self.demand_predicates: set[str] = set()
        """The predicate names of demand atoms (:mod:`.demand`), kept out of ``symbols``."""
        self.demand_atoms: set[int] = set()
        self.error: CompileError | None = None

    @property
    def plain_rules(self) -> list[tuple[int, tuple[int, ...]]]:
        """``rules``, for the C callback to append the plain rules to itself
        (:class:`~server.gdl.compiled.rule_observer.PlainRuleSink`)."""
        return self.rules

    def rule(self, choice: bool, head: list[int], body: list[int]) -> None:
        if choice:
            self.choices.update(head)
            if len(body) == 1 and len(head) == 1:
                self.opened_by[body[0]] = head[0]
            return
        if len(head) != 1:
            self.stop(CompileError("the ground program has a rule without a single head"))
        rules = self.rules
        rules.append((head[0], tuple(body)))
        if len(rules) >= self.next_look:
            self.look()

    def look(self) -> None:
        """Stop past the rule cap, and look at the clock and the floor every 1,024
        rules (one comparison a rule in :meth:`rule` instead of two)."""
        count = len(self.rules)
        if count > self.max_rules and not self.stretch(count):
            self.stop(self.too_many)
        self.next_look = min(count + 1024 - count % 1024, self.max_rules + 1)
        if count % 1024:
            return
        if time.thread_time() > self.deadline:
            self.stop(GroundingTooSlow("grounding took longer than the time limit"))
        if self.floor is not None:
            try:
                check_estimate(self.count_floor(), self.work_budget)
            except CompileError as error:
                self.stop(error)

    def stretch(self, count: int) -> bool:
        """Past the rule budget: whether grounding goes on to :attr:`stretch_to` rules,
        decided once. It does when the bound of the estimate, every batch counted,
        extrapolated from the ``count`` rules so far to that many stays within
        :data:`STRETCH_SHARE` of the work budget: a program whose estimate would fit the
        time limit is not refused for its count of rules alone (chineseCheckers6,
        102,891 ground rules estimated at 1.3 s, compiles in 0.7 s), while one whose
        bound nears the limit stops at the budget, as before."""
        stretch_to, self.stretch_to = self.stretch_to, None
        floor = self.floor
        if stretch_to is None or floor is None:
            return False
        self.count_floor()
        rules = self.rules
        for first, end in self.left_out:
            floor.add(rules[first:end])
            self.counted += end - first
        self.left_out = []
        if floor.extrapolated(stretch_to, self.counted) > STRETCH_SHARE * self.work_budget:
            return False
        self.max_rules = stretch_to
        if stretch_to >= self.hard_cap:
            self.too_many = GroundingTooLarge(f"more than {stretch_to} ground rules")
        else:
            self.too_many = GroundingPastStretch(
                f"more than {stretch_to} ground rules, more than the time limit allows"
            )
        return True

    def count_floor(self, last: bool = False) -> int:
        """The bound of the rules so far (counted since the last look, in one batch:
        cheaper than rule by rule, and the same). Past :data:`FLOOR_SAMPLED_FROM` rules,
        batches are left out but one in :data:`FLOOR_SAMPLE_EVERY` until the floor
        extrapolated from those counted nears the budget, and extrapolated to the rule
        cap comes near it too; they are then counted, and every batch after. ``last``:
        the batch that ends the program, counted."""
        floor = self.floor
        assert floor is not None
        rules = self.rules
        count = len(rules)
        start = self.floored
        self.floored = count
        if (
            not last
            and self.sampling
            and start >= FLOOR_SAMPLED_FROM
            and (start // 1024) % FLOOR_SAMPLE_EVERY
        ):
            floor.note(rules[start:count])
            self.left_out.append((start, count))
        else:
            floor.add(rules[start:count])
            self.counted += count - start
        if (
            self.left_out
            and floor.extrapolated(count, self.counted) > FLOOR_CATCH_UP_SHARE * self.work_budget
            and floor.extrapolated(self.max_rules, self.counted)
            > FLOOR_REACH_SHARE * self.work_budget
        ):
            for first, end in self.left_out:
                floor.add(rules[first:end])
                self.counted += end - first
            self.left_out = []
            self.sampling = False
        return floor.estimate(count)

    def weight_rule(self, choice: bool, head: list[int], lower: int, body: list) -> None:
        self.stop(CompileError("the ground program has a weight rule"))

    def stop(self, error: CompileError) -> None:
        """Abort grounding; clingo re-raises a copy, so the original is kept here."""
        self.error = error
        raise error

    def output_atom(self, symbol: clingo.Symbol, atom: int) -> None:
        if self.demand_predicates and symbol.name in self.demand_predicates:
            if atom:
                self.demand_atoms.add(atom)
            return
        self.symbols.append((symbol, atom))


class _Messages:
    """clingo's messages while grounding. A method, not a function nested in
    :func:`ground`: compiled by mypyc, a nested function and the locals of the function
    around it hold each other, and the collector and the control with them, until the
    cyclic collector runs (a failed compile of chess_200 left 65,000 objects to it)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, _code: clingo.MessageCode, message: str) -> None:
        self.lines.append(message.strip())


def _refusal(messages: list[str], translator: Translator) -> str:
    """Clingo's complaint, told in terms of the GDL rule it is about."""
    if not messages:
        return "the grounder refused the rules"
    first = messages[0].splitlines()[0]
    found = re.match(r"<block>:(\d+):[^ ]* (?:error: )?(.*)", first)
    if found is None:
        return "the grounder refused the rules: " + first
    problem = found.group(2).rstrip(":").replace("unsafe variables in", "unsafe variables")
    rule = translator.source_of.get(int(found.group(1)))
    if rule is None:
        return "the grounder refused the rules: " + problem
    return f"the grounder refused the rule at {rule.where} ({problem}): {rule}"


def ground(
    rules: list[Rule],
    *,
    max_rules: int,
    deadline: float,
    budget: int | None = None,
    work_budget: float = float("inf"),
    stretch_to: int | None = None,
    read_names: bool = True,
    factoring: bool = False,
    state_tests: bool | None = None,
) -> GroundProgram:
    """Ground the rules, or raise :class:`CompileError` with the reason.

    ``budget``, when given, is the number of ground rules the time limit allows:
    past it grounding stops with :class:`GroundingOverBudget`. ``work_budget``, when
    given, is the estimate (microseconds) the time limit allows: grounding stops with
    :class:`NetworkOverBudget` as soon as a lower bound of the estimate passes it
    (:class:`EstimateFloor`). ``stretch_to``: the rules grounding may go on to past
    ``budget`` while that bound, extrapolated, stays within ``work_budget``
    (:meth:`_Collector.stretch`). With ``read_names`` false, the printed atoms are left for
    :meth:`GroundProgram.read_names`. With ``factoring``, rules are factored into
    smaller joins (:mod:`.factor`), and :class:`NothingToFactor` is raised before
    grounding when none is. With ``state_tests`` (by default: with ``factoring``), the
    move tests that read the state are complemented as well (:mod:`.complement`);
    without ``factoring``, :class:`NothingToComplement` is raised before grounding when
    there are none.
    """
    translator = Translator(factoring=factoring, state_tests=state_tests)
    text = translator.program(rules) + "\n" + SHOW_KEYWORDS
    if factoring and not translator.factored:
        raise NothingToFactor("no rule is worth factoring")
    if state_tests and not factoring and not translator.state_tests_complemented:
        raise NothingToComplement("no move test on the state to complement")
    demand = translator.demand_predicates()
    text += "".join(f"#show {predicate}/{arity}.\n" for predicate, arity in demand.items())
    messages = _Messages()
    collector = _Collector(max_rules, deadline, budget, work_budget, stretch_to)
    collector.demand_predicates = set(demand)
    control = clingo.Control(["--warn=none"], logger=messages.log, message_limit=5)
    # the program goes to the collector only, not to the solver as well (nothing is
    # solved; feeding the solver cost a quarter of the grounding time)
    registration = register_rule_observer(control, collector)
    if registration is None:
        control.register_observer(collector, replace=True)  # type: ignore[arg-type]
    try:
        control.add("base", [], text)
        control.ground([("base", [])])
        if registration is not None:
            registration.finish()
    except Exception as error:
        if collector.error is not None:
            raise collector.error from None
        if registration is not None and registration.failure is not None:
            raise registration.failure from None
        if not isinstance(error, RuntimeError):
            raise
        raise CompileError(_refusal(messages.lines, translator)) from error
    if time.thread_time() > deadline:
        raise GroundingTooSlow("grounding took longer than the time limit")

    program = GroundProgram(
        choices=collector.choices,
        rules=drop_demand(collector.rules, collector.demand_atoms),
        symbols=collector.symbols,
        predicates=translator.keys_by_predicate,
        opened_by=collector.opened_by,
    )
    if collector.floor is not None:
        program.estimate_floor = collector.count_floor(last=True)
    if read_names:
        program.read_names(deadline)
    return program
