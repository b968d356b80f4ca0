"""The ground program handed to Python through clingo's C interface, without its wrapper.

clingo's Python observer turns every ground rule's head and body into lists element by
element before calling ``rule``; on a program of 100,000 rules that wrapper is about a
fifth of the grounding time. :func:`register_rule_observer` registers an observer's
``rule`` and ``output_atom`` directly as C callbacks instead, the literals unpacked in
one call: the same calls with the same arguments, about 1 us less each. An observer
that keeps the plain rules (one head, no choice) in a list (:class:`PlainRuleSink`) has
them appended there without a call of its own. When the package was installed with a C
compiler, ``rule`` is a C function (``_rule_buffer.c``) that copies each plain rule into
a buffer without running Python at all, and appends the buffered rules to the list as
tuples in one go every ``next_look`` rules and at the end (:meth:`Registration.finish`):
a failed compile attempt, which grounds 100,000 rules or more, took a third less time so.
Without the C module, a Python callback appends each rule itself. Where clingo's C
interface cannot be reached this way it returns ``None`` and the caller registers the
observer as usual.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import clingo

from ..native import PURE_VARIABLE

try:
    from clingo._internal import _ffi, _lib
except ImportError:  # another build of clingo: the wrapper is used instead
    _ffi = _lib = None

RULE_BUFFER_VERSION = 2
"""The version of ``_rule_buffer.c`` this module speaks to: a module built from another
(an install older than its source) is not used."""


def _rule_buffer_module() -> Any:
    """The C rule buffer, or None when it was not built, is stale, or plain Python is asked
    for (``GGP_PURE_PYTHON``)."""
    if os.environ.get(PURE_VARIABLE):
        return None
    try:
        from . import _rule_buffer  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _rule_buffer if getattr(_rule_buffer, "VERSION", None) == RULE_BUFFER_VERSION else None


RULE_BUFFER = _rule_buffer_module()
"""The C module that buffers the plain rules (``_rule_buffer.c``), None without it."""


def floor_counter() -> Any:
    """A new count of the compile estimate's floor in C (``FloorCount`` of
    ``_estimate_floor.c``, built into the rule buffer's module), or None without it."""
    return None if RULE_BUFFER is None else RULE_BUFFER.FloorCount()


RULE_SIGNATURE = (
    "bool(bool, clingo_atom_t const *, size_t, clingo_literal_t const *, size_t, void *)"
)
RULE_POINTER = (
    "bool(*)(bool, clingo_atom_t const *, size_t, clingo_literal_t const *, size_t, void *)"
)
OUTPUT_ATOM_SIGNATURE = "bool(clingo_symbol_t, clingo_atom_t, void *)"


class RuleObserver(Protocol):
    """What is observed: the rules and the printed atoms."""

    def rule(self, choice: bool, head: list[int], body: list[int]) -> None: ...

    def output_atom(self, symbol: clingo.Symbol, atom: int) -> None: ...


@runtime_checkable
class PlainRuleSink(Protocol):
    """An observer that takes the plain rules (one head, not a choice) as
    ``(head, body literals)`` appended to ``plain_rules``, and wants :meth:`look` called
    once that list holds ``next_look`` rules; the other rules still go to ``rule``."""

    next_look: int

    @property
    def plain_rules(self) -> list[tuple[int, tuple[int, ...]]]: ...

    def look(self) -> None: ...


class _Failure:
    """The exception that stopped grounding, if any: a callback cannot raise into clingo,
    so it keeps the exception here and tells clingo to stop."""

    def __init__(self) -> None:
        self.error: BaseException | None = None

    def stop(self, error: BaseException) -> bool:
        """Keep ``error`` and have clingo stop grounding (the answer to the callback)."""
        self.error = error
        _lib.clingo_set_error(_lib.clingo_error_runtime, str(error).encode())
        return False


class Registration:
    """The C callbacks of one observer (kept alive as long as the control grounds) and
    the exception that stopped grounding, if any.

    The callbacks hold the observer and the holder of the failure, never the
    registration itself: a cycle through them would keep the observer, and with it the
    whole ground program, until the cyclic collector ran (brawl: 260,000 objects; the
    collections once its compile ended took 0.15 s with them, 0.08 s without)."""

    def __init__(self, observer: RuleObserver, buffered: bool = True) -> None:
        self._failure = failure = _Failure()
        self.c_observer: Any = None
        self.buffer: Any = None
        """The C buffer of the plain rules (``_rule_buffer.c``), when one is used."""
        stop = failure.stop
        unpack = _ffi.unpack
        observe_rule = observer.rule
        observe_atom = observer.output_atom

        def observed(choice: bool, head: list[int], body: list[int]) -> bool:
            """The rule given to the observer: whether grounding goes on."""
            try:
                observe_rule(choice, head, body)
            except BaseException as error:
                return stop(error)
            return True

        def rule(
            choice: bool, head: Any, head_size: int, body: Any, body_size: int, _: Any
        ) -> bool:
            # an empty list comes as a null pointer, which cannot be unpacked
            return observed(
                choice,
                unpack(head, head_size) if head_size else [],
                unpack(body, body_size) if body_size else [],
            )

        on_rule: Any
        if isinstance(observer, PlainRuleSink) and buffered and RULE_BUFFER is not None:
            sink = observer

            def look() -> int:
                try:
                    sink.look()
                except BaseException as error:
                    stop(error)
                    return 0
                return sink.next_look

            self.buffer = RULE_BUFFER.RuleBuffer(sink.plain_rules, look, observed, sink.next_look)
            on_rule = _ffi.cast(RULE_POINTER, RULE_BUFFER.RULE_CALLBACK)
        elif isinstance(observer, PlainRuleSink):
            sink = observer
            plain_rules = sink.plain_rules
            append = plain_rules.append

            def plain_rule(
                choice: bool, head: Any, head_size: int, body: Any, body_size: int, _: Any
            ) -> bool:
                if choice or head_size != 1:
                    return rule(choice, head, head_size, body, body_size, _)
                try:
                    append((head[0], tuple(unpack(body, body_size)) if body_size else ()))
                    if len(plain_rules) >= sink.next_look:
                        sink.look()
                except BaseException as error:
                    return stop(error)
                return True

            on_rule = _ffi.callback(RULE_SIGNATURE, plain_rule)
        else:
            on_rule = _ffi.callback(RULE_SIGNATURE, rule)

        def output_atom(symbol: int, atom: int, _: Any) -> bool:
            try:
                observe_atom(clingo.Symbol(symbol), atom)
            except BaseException as error:
                return stop(error)
            return True

        self.callbacks: list[Callable[..., bool]] = [
            on_rule,
            _ffi.callback(OUTPUT_ATOM_SIGNATURE, output_atom),
        ]

    @property
    def failure(self) -> BaseException | None:
        """The exception that stopped grounding, if any."""
        if self._failure.error is not None:
            return self._failure.error
        return self.buffer.error if self.buffer is not None else None

    def finish(self) -> None:
        """Once grounding has ended: the plain rules still in the C buffer appended to the
        observer's list (nothing to do without a buffer)."""
        if self.buffer is not None:
            self.buffer.flush()


def register_rule_observer(
    control: clingo.Control, observer: RuleObserver, buffered: bool = True
) -> Registration | None:
    """Register ``observer`` so that the program goes to it only (not to the solver),
    through C callbacks; ``None`` (nothing registered) where that is not possible.
    ``buffered`` false: no C buffer even when there is one (to compare the two). The caller
    calls :meth:`Registration.finish` once grounding has ended."""
    if _ffi is None or _lib is None:
        return None
    try:
        registration = Registration(observer, buffered)
        c_observer = _ffi.new("clingo_ground_program_observer_t*")
        c_observer.rule, c_observer.output_atom = registration.callbacks
        replace = True
        buffer = registration.buffer
        # clingo hands this to the callbacks: the C one reads its buffer there
        data = _ffi.NULL if buffer is None else _ffi.cast("void *", buffer.address)
        registered = _lib.clingo_control_register_observer(control._rep, c_observer, replace, data)
    except Exception:  # no C callbacks here, or another layout of clingo's internals
        return None
    if not registered:
        return None
    registration.c_observer = c_observer  # kept alive as long as the callbacks
    return registration
