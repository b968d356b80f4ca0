"""How a match is run: clocks, network slack, step limit, substitute policy, scrambling."""

from __future__ import annotations

import re
import threading
import time

from pydantic import BaseModel, ConfigDict, Field

from server.records import SubstitutePolicy

from .rules.budget import DEFAULT_LOAD_CPU, DEFAULT_MEMORY_MB, DEFAULT_STEP_CPU, RulesBudget
from .transport import DEFAULT_MAX_REPLY_BYTES


class MatchConfig(BaseModel):
    """The settings of one match; every field has a sensible default."""

    model_config = ConfigDict(frozen=True)

    start_clock: int = Field(default=10, ge=0)
    """Seconds a player may spend on START (sent in the START message)."""
    play_clock: int = Field(default=5, ge=0)
    """Seconds a player may spend on each PLAY (sent in the START message)."""
    network_slack: float = Field(default=1.0, ge=0)
    """Seconds of grace added to the start and play clocks for every deadline."""
    step_limit: int | None = Field(default=None, ge=1)
    """The most PLAY steps; ``None`` derives a bound from the game (see ``step_limit``)."""
    policy: SubstitutePolicy = SubstitutePolicy.RANDOM
    """How the server moves for a role whose reply cannot be used."""
    seed: int | None = None
    """Seed of the generator of substitute moves; ``None`` draws one (it is logged)."""
    scramble: bool = False
    """Rename the game's symbols on the wire (the log keeps the true symbols)."""
    abort_on_refused_start: bool = False
    """Abort the match when a player fails START, instead of playing on for it."""
    lenient_move_case: bool = False
    """Accept a reply that equals one legal move but for letter case (``NOOP`` for
    ``noop``); by default it is illegal, as GGP-Base and Tiltyard record it."""
    max_reply_bytes: int = Field(default=DEFAULT_MAX_REPLY_BYTES, ge=1)
    """Replies larger than this are errors."""
    abort_timeout: float = Field(default=1.0, gt=0)
    """Seconds to wait for the answer to ABORT."""
    tournament_name: str | None = None
    """Recorded as ``tournamentNameFromHost``."""
    match_id_prefix: str = "local"
    """First part of generated match ids: ``<prefix>.<game>.<milliseconds>``."""
    rules_step_cpu: float = Field(default=DEFAULT_STEP_CPU, gt=0)
    """Seconds of CPU time the rules may spend on one step (next state, legal moves,
    goals); past it the match ends with ``rules_limit``."""
    rules_load_cpu: float = Field(default=DEFAULT_LOAD_CPU, gt=0)
    """Seconds of CPU time to load the game in the rules worker (parse, validate,
    compile, step-limit playouts)."""
    rules_memory_mb: int = Field(default=DEFAULT_MEMORY_MB, ge=256)
    """Megabytes of address space of the rules worker process."""

    @property
    def rules_budget(self) -> RulesBudget:
        """The budget of the match's rules worker; the start clock decides how long
        its rules may take to compile."""
        return RulesBudget.for_start_clock(
            self.start_clock,
            step_cpu=self.rules_step_cpu,
            load_cpu=self.rules_load_cpu,
            memory_mb=self.rules_memory_mb,
        )


_last_stamp = 0
_stamp_lock = threading.Lock()
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]+")


def new_match_id(prefix: str, game_name: str) -> str:
    """A fresh match id in GGP-Base's form ``<prefix>.<game>.<epoch ms>``, unique in this process."""
    global _last_stamp
    with _stamp_lock:
        stamp = max(time.time_ns() // 1_000_000, _last_stamp + 1)
        _last_stamp = stamp
    parts = [_UNSAFE.sub("_", part) or "x" for part in (prefix, game_name)]
    return f"{parts[0]}.{parts[1]}.{stamp}"
