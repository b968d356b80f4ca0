"""The match record: the ggp.org match JSON as GGP-Base writes it, plus our own fields.

GGP-Base's ``Match.toJSON()`` writes one flat JSON object; the ggp.org archives and
every GGP tool read that format.  :class:`MatchRecord` mirrors it field by field
(Python names in snake_case, JSON keys exactly as GGP-Base spells them) and adds this
server's own fields under names GGP-Base does not use, so that other tools simply
ignore them.

Reading is liberal: unknown keys are kept (and written back unchanged), every field
that GGP-Base may omit is optional, and numbers given as strings are accepted.
Writing is exact: the keys GGP-Base writes, with the value types it writes; keys
whose value is unknown (``None``) are left out, as GGP-Base's ``JSONObject.put``
does with ``null``.

Conventions (all in role order, the order of the ``(role ...)`` declarations):

- ``states[0]`` is the initial state, then one state per step, printed as GGP-Base
  prints a state: ``( ( cell 1 1 b ) ( control xplayer ) )``.
- ``moves[i]`` is the joint move applied at step ``i + 1``, each move printed as
  GGP-Base prints a term: ``( mark 2 1 )`` or ``noop``.
- ``errors[0]`` is the START phase, ``errors[i]`` is PLAY step ``i``; one code per
  role: ``""``, ``"TO"`` (late), ``"CE"`` (connection error), ``"IL <move>"`` (illegal
  reply, or a START refused with that reply), ``"IL null"`` (unparsable reply).
  ``error_details`` holds the same events with their kind, raw reply and timing.
- ``state_times`` holds epoch milliseconds, one per state.
"""

from __future__ import annotations

import secrets
import string
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

RECORD_FORMAT = "ggp-match/1"
"""Value of ``recordFormat`` in the records this server writes."""


class _CamelModel(BaseModel):
    """JSON keys in camelCase, Python names in snake_case; extra keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="allow",
    )


class ErrorKind(StrEnum):
    """What went wrong with one message to one player."""

    TIMEOUT = "timeout"
    """No complete reply before the deadline (clock plus network slack)."""
    CONNECTION_ERROR = "connection_error"
    """Refused connection, reset, closed without a reply, or not an HTTP reply."""
    UNPARSABLE = "unparsable"
    """A reply that is not one GDL term."""
    ILLEGAL = "illegal"
    """A term that is not a legal move for the role in the current state."""
    REFUSED = "refused"
    """An answer to START other than ``ready`` (for example ``busy``)."""
    TOO_LARGE = "too_large"
    """A reply body larger than the transport accepts."""


class EndReason(StrEnum):
    """Why a match ended."""

    TERMINAL = "terminal"
    """The rules reached a terminal state."""
    STEP_LIMIT = "step_limit"
    """The step limit was reached before a terminal state."""
    ABORTED = "aborted"
    """The match was cancelled; ABORT was sent to every player."""
    START_REFUSED = "start_refused"
    """A player failed START and the match was configured to abort on that."""
    ERROR = "error"
    """The server itself failed (for example the rules raised an error)."""
    RULES_LIMIT = "rules_limit"
    """The rules went past a budget: CPU time, memory, legal moves, or a state too large
    or nested too deeply to keep."""


class SubstitutePolicy(StrEnum):
    """How the server chooses a move for a role whose reply cannot be used."""

    RANDOM = "random"
    """A uniformly random legal move from the match's seeded generator."""
    FIRST = "first"
    """The first legal move in the rules engine's fixed order."""
    FORFEIT = "forfeit"
    """The role forfeits: its goal is recorded as 0 and it plays random moves."""


class ErrorDetail(_CamelModel):
    """One failed message: its kind, what came back, and how long it took."""

    kind: ErrorKind
    message: str = ""
    """A human-readable explanation."""
    raw_reply: str | None = None
    """The reply body as received (trimmed, possibly cut short), if any."""
    response_time_ms: int | None = None
    """Milliseconds from sending the request to the reply or the failure."""
    substitute: str | None = None
    """The move the server applied instead (GGP-Base print form), for PLAY."""


class MatchRecord(_CamelModel):
    """One match in the ggp.org match format, with this server's additions.

    The first group of fields is GGP-Base's (``Match.toJSON``); the second group is
    ours.  ``model_dump_json`` / :func:`server.records.dump_record` write it.
    """

    # -- GGP-Base / ggp.org fields ------------------------------------------------
    match_id: str
    random_token: str | None = None
    start_time: int | None = None
    """Epoch milliseconds when the match was created."""
    game_meta_url: str | None = Field(default=None, alias="gameMetaURL")
    """The game's repository URL, when the game came from a repository."""
    is_completed: bool = False
    is_aborted: bool = False
    states: list[str] = Field(default_factory=list)
    moves: list[list[str]] = Field(default_factory=list)
    state_times: list[int] = Field(default_factory=list)
    errors: list[list[str]] | None = None
    goal_values: list[int] | None = None
    preview_clock: int = -1
    start_clock: int | None = None
    play_clock: int | None = None
    player_names_from_host: list[str] | None = None
    is_player_human: list[bool] | None = None
    tournament_name_from_host: str | None = None
    scrambled: bool = False
    match_host_pk: str | None = Field(default=None, alias="matchHostPK")
    match_host_signature: str | None = None

    # -- this server's additions ----------------------------------------------------
    record_format: str | None = None
    """``"ggp-match/1"`` in records written by this server."""
    game_name: str | None = None
    """The bundled game's name, or the stem of the rules file."""
    game_rulesheet: str | None = None
    """The complete rules as KIF text, so that the record is self-contained."""
    game_role_names: list[str] | None = None
    """The roles in declaration order (the order of every per-role list)."""
    end_reason: EndReason | None = None
    """Why the match ended; absent while it is running."""
    end_message: str | None = None
    """Details when the end was not clean: goals the rules leave undefined, an engine error."""
    step_limit: int | None = None
    """The most PLAY steps the match may take."""
    network_slack_ms: int | None = None
    """Grace added to the start and play clocks for every deadline."""
    substitute_policy: SubstitutePolicy | None = None
    substitute_seed: int | None = None
    """Seed of the generator of random substitute moves (and server-played roles)."""
    forfeited: list[bool] | None = None
    """Per role: whether the role forfeited under the ``forfeit`` policy."""
    rule_goal_values: list[int | None] | None = None
    """The goals the rules give in the last state (``None`` where undefined), before
    forfeits; ``goal_values`` holds the recorded result."""
    player_transports: list[str | None] | None = None
    """Per role: what carried the messages (``http``, ``websocket`` for an outbound bot);
    ``None`` for a role the server played itself."""
    response_times: list[list[int | None]] | None = None
    """Milliseconds per phase (START, then each step) per role; ``None`` for a role
    the server played itself."""
    raw_replies: list[list[str | None]] | None = None
    """The trimmed reply bodies per phase per role (long ones cut short)."""
    error_details: list[list[ErrorDetail | None]] | None = None
    """Per phase per role: the error behind each non-empty code of ``errors``."""
    stop_errors: list[ErrorDetail | None] | None = None
    """Per role: what went wrong with STOP or ABORT, if anything."""
    host_public_key: str | None = None
    """The signing host's Ed25519 public key (see :mod:`server.records.signing`)."""
    host_signature: str | None = None
    """The host's Ed25519 signature over the rest of the record."""


_TOKEN_ALPHABET = string.ascii_letters + string.digits


_TOKEN_BYTES_USED = 256 - 256 % len(_TOKEN_ALPHABET)
"""Random bytes at or above this are skipped, so that every character is equally likely."""


def new_random_token() -> str:
    """32 random ``[a-zA-Z0-9]`` characters, as GGP-Base's ``randomToken``.

    From one read of the system's randomness (``secrets.choice`` per character made 32).
    """
    chars: list[str] = []
    while len(chars) < 32:
        chars.extend(
            _TOKEN_ALPHABET[byte % len(_TOKEN_ALPHABET)]
            for byte in secrets.token_bytes(40)
            if byte < _TOKEN_BYTES_USED
        )
    return "".join(chars[:32])
