"""The envelope every message carries, the money and id types, and the rejection reasons."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    StringConstraints,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import CoreSchema, core_schema

from holdem.core.wire.ids import ID_ALPHABET, ID_MAX_LENGTH

# One stake, payout or balance change. Minor units (cents); 10^12 rejects absurd amounts while
# leaving room for any real table. Negative amounts never validate.
MAX_AMOUNT = 10**12
Amount = Annotated[int, Field(strict=True, ge=0, le=MAX_AMOUNT)]
PositiveAmount = Annotated[int, Field(strict=True, gt=0, le=MAX_AMOUNT)]
Balance = Annotated[int, Field(strict=True, ge=-(10**15), le=10**15)]
Id = Annotated[
    str, StringConstraints(min_length=1, max_length=ID_MAX_LENGTH, pattern=rf"^{ID_ALPHABET}+$")
]
Currency = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")]
CardText = Annotated[str, StringConstraints(pattern=r"^[2-9TJQKA][cdhs]$")]

# RFC 3339's date-time (section 5.6), which JSON Schema's ``format: date-time`` names: a full
# date, "T", a time and an offset, "Z" or "+hh:mm". A time without one is not a time on the
# wire (issue 29): it is refused ``invalid``, never compared with an aware one downstream.
_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)

_NOT_RFC3339 = "not an RFC 3339 date-time with an offset (Z or +hh:mm)"


def _rfc3339(value: object) -> object:
    """A wire time (text) as the datetime it names, if it is an RFC 3339 date-time; anything
    else is left for the aware-datetime check to refuse (a datetime built in Python passes)."""
    if not isinstance(value, str):
        return value
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise ValueError(_NOT_RFC3339)
    if value[10] == "T" and value[-1] != "z" and match.end(3) - match.start(3) <= 7:
        text = value  # as every record writes it: the text below would be the same characters
    else:
        date, time, fraction, offset = match.groups()
        fraction = (fraction or "")[:7]  # a datetime holds microseconds: finer digits dropped
        text = f"{date}T{time}{fraction}{offset.upper()}"
    try:
        return datetime.fromisoformat(text)
    except ValueError as error:
        raise ValueError(f"not a date-time: {error}") from None


# The same shape for pydantic-core's own regex engine: ``[0-9]``, not ``\d`` (Rust's is any
# Unicode digit; the Python one above is ASCII).
_RFC3339_JSON = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


class _WireTime:
    """A time read from a record's bytes is checked and built inside pydantic-core: the shape as a
    regex, then ``str.upper`` (``t`` and ``z``) and ``datetime.fromisoformat`` (which keeps six
    digits of a finer fraction, as ``_rfc3339`` does): C calls, no Python function per record (a
    ``BeforeValidator`` was 13% of the streaming audit). From Python (a datetime built by a
    service, a test's text) it goes through ``_rfc3339`` as before. Both refuse and accept the same
    texts with the same instant (tests/unit/contracts/test_timestamp_fast_path.py)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        aware = handler(source)
        from_json = core_schema.chain_schema(
            [
                core_schema.custom_error_schema(
                    core_schema.str_schema(pattern=_RFC3339_JSON),
                    custom_error_type="rfc3339",
                    custom_error_message=_NOT_RFC3339,
                ),
                core_schema.no_info_plain_validator_function(str.upper),
                core_schema.no_info_plain_validator_function(datetime.fromisoformat),
            ]
        )
        from_python = core_schema.no_info_before_validator_function(_rfc3339, aware)
        return core_schema.json_or_python_schema(json_schema=from_json, python_schema=from_python)


# Every time a message carries (its JSON Schema: ``type: string, format: date-time``).
Timestamp = Annotated[
    AwareDatetime, _WireTime, WithJsonSchema({"type": "string", "format": "date-time"})
]


class Envelope(BaseModel):
    """What every record's body carries first: its identity. ``key`` is the record key the body
    must arrive under (a player's messages: ``player_id``; a table's: ``table_id``)."""

    model_config = ConfigDict(frozen=True, extra="ignore", strict=False)
    TOPIC: ClassVar[str] = ""

    event_id: Id

    @property
    def key(self) -> str:  # pragma: no cover - every concrete envelope defines it
        raise NotImplementedError

    @field_validator("version", mode="before", check_fields=False)
    @classmethod
    def _version_is_an_integer(cls, value: object) -> object:
        # A Literal[1] takes 1.0 even in strict mode; the wire contract says integer.
        if type(value) is not int:
            raise ValueError("version must be an integer")
        return value


class Message(Envelope):
    """Common envelope of a player's commands and events: identity, routing key, causality."""

    player_id: Id
    occurred_at: Timestamp
    round_id: Id | None = None
    causation_id: Id | None = None
    correlation_id: Id | None = None

    @property
    def key(self) -> str:
        return self.player_id


# What an operator sends us (commands, admin commands, queries) refuses a field its version does
# not declare (ADR 038): a misspelled ``aa_bonsu`` is refused ``invalid`` naming the field, never
# played without the side bet. What we publish (events, replies) keeps ignoring unknown fields: our
# own log is re-read by mixed releases (ADR 032), and operators' consumers survive our additions.
INPUT = ConfigDict(extra="forbid")


class Command(Message):
    """Operator → us. ``command_id`` is the client's idempotency key."""

    model_config = INPUT

    TOPIC: ClassVar[str] = "commands"
    OWNER: ClassVar[str] = ""  # the service that answers it, and its command ids' scope
    command_id: Id


class Mode(StrEnum):
    REAL = "real"
    FUN = "fun"


class Reason(StrEnum):
    """Why an input was refused; stable codes an operator can branch on."""

    MALFORMED = "malformed"  # not JSON, or not an object
    UNKNOWN_TYPE = "unknown_type"
    INVALID = "invalid"  # a field is missing, of the wrong type, negative or absurd
    UNKNOWN_ROUND = "unknown_round"
    NOT_YOUR_ROUND = "not_your_round"
    OUT_OF_ORDER = "out_of_order"  # e.g. Call before Dealt
    ALREADY_DECIDED = "already_decided"  # second Call, Call after Fold
    ROUND_CLOSED = "round_closed"  # settled or voided
    ROUND_EXISTS = "round_exists"  # PlaceBet reusing a round_id
    ROUND_IN_PROGRESS = "round_in_progress"  # PlaceBet while the player's round is open
    BELOW_MINIMUM = "below_minimum"
    INSUFFICIENT_FUNDS = "insufficient_funds"
    UNSUPPORTED_CURRENCY = "unsupported_currency"
    DUPLICATE = "duplicate"  # same command_id with a different body
    PROCESSING_FAILED = "processing_failed"  # poison: retries exhausted
    # v2 of the messages that carry a Reason (tables, chips, rebet, fun mode: ADR 018)
    UNKNOWN_TABLE = "unknown_table"
    TABLE_CLOSED = "table_closed"
    TABLE_EXISTS = "table_exists"  # CreateTable for an id already used
    STALE_VERSION = "stale_version"  # ChangeTable/CloseTable against another table version
    NOT_CHIPS = "not_chips"  # a bet that is not a sum of the table's chip denominations
    NOTHING_TO_REBET = "nothing_to_rebet"
    WRONG_MODE = "wrong_mode"  # real money at a fun table, fun money at a real one


class OperatorRefusal(StrEnum):
    """Why the operator's wallet refused a bet's debit (seamless mode, ADR 015): the codes
    ``round.bet_rejected`` v3 adds to ``Reason``, one for each ``seamless.debit_rejected``
    reason (its ``insufficient_funds`` is ``Reason.INSUFFICIENT_FUNDS``, ``other`` is
    ``operator_rejected``). Only BetRejected carries them: ``wallet.rejected`` v2 keeps
    ``insufficient_funds`` / ``invalid`` for them."""

    LIMIT_EXCEEDED = "limit_exceeded"  # a responsible-gaming or loss limit of the operator's
    SESSION_EXPIRED = "session_expired"  # the player's session at the operator has ended
    PLAYER_BLOCKED = "player_blocked"
    OPERATOR_REJECTED = "operator_rejected"  # another refusal of the operator's wallet


class LimitKind(StrEnum):
    """Which of the player's limits refused a bet (``round.bet_rejected`` v4 ``limit``)."""

    WAGER_PER_DAY = "wager_per_day"
    LOSS_PER_DAY = "loss_per_day"
    SESSION_LENGTH = "session_length"


class ProtectionRefusal(StrEnum):
    """The player-protection codes ``round.bet_rejected`` v4 adds (a blocked player's bet is
    refused ``player_blocked``, the code the operator's wallet uses for the same fact)."""

    LIMIT_REACHED = "limit_reached"  # ``limit`` says which
    REALITY_CHECK = "reality_check"  # ``reality_check`` says what the player is reminded of


class RealityCheck(BaseModel):
    """What a reality check tells the player of his session at the table: how long it has
    lasted, how many rounds he bet in it and his net result (returns minus stakes)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    session_id: Id
    table_id: Id
    elapsed_s: int = Field(strict=True, ge=0)
    rounds: int = Field(strict=True, ge=0)
    net: Balance
    currency: Currency


class RecordReason(StrEnum):
    """Why a Kafka record was refused before its body was looked at as a message: what the
    record claims (its key, its partition) does not match what it carries."""

    KEY_MISMATCH = "key_mismatch"  # no key, or a key other than the body's player_id
    WRONG_PARTITION = "wrong_partition"  # not where Kafka's murmur2 partitioner puts its key
    # v4 of rejected.message (ADR 021): the record's operator and brand headers
    WRONG_OPERATOR = "wrong_operator"  # its operator header names another operator
    BAD_HEADER = "bad_header"  # an operator or brand header that is not text, or not a brand id
