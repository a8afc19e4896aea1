"""A round's result recomputed from its public record: the revealed deck, checked against the
commitment in Dealt, and the bets, decision and pay table, through ``settle``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple, Protocol

from holdem.core.cards import CardError, parse_cards
from holdem.core.contracts import Called, Folded, Mode, Settled
from holdem.core.deck import Deal, DeckError, deal, verify_commitment
from holdem.core.errors import RoundError
from holdem.core.rules import STANDARD, PayTable, settle


class VerificationError(ValueError):
    """The record does not allow a result to be computed: a deck that does not verify, a bet
    the rules refuse."""


def expected_settled(
    *,
    deck: Sequence[str],
    salt: str,
    commitment: str,
    currency: str,
    mode: Mode,
    ante: int,
    aa_bonus: int,
    decision: Literal["call", "fold"],
    tables: PayTable = STANDARD,
) -> dict[str, object]:
    """The fields (all but the envelope) of the one Settled the rules give this round.

    Raises ``VerificationError`` unless ``sha256(salt || deck)`` is ``commitment``.
    """
    try:
        codes = parse_cards(deck)
        salt_bytes = bytes.fromhex(salt)
    except (CardError, ValueError):
        raise VerificationError("the revealed deck or salt cannot be read") from None
    if not verify_commitment(codes, salt_bytes, commitment):
        raise VerificationError("the revealed deck does not verify against the Dealt commitment")
    try:
        cards = deal(codes)
    except (DeckError, RoundError) as error:
        raise VerificationError(f"the round cannot be settled: {error}") from None
    return settled_of(cards, Stakes(currency, mode, ante, aa_bonus), decision, tables)


def settled_of(
    cards: Deal, bets: Bets, decision: Literal["call", "fold"], tables: PayTable = STANDARD
) -> dict[str, object]:
    """``expected_settled`` of a deck already verified and dealt (the audit's deck check did
    both: once a round is enough)."""
    ante, aa_bonus = bets.ante, bets.aa_bonus
    try:
        outcome = settle(cards.player, cards.dealer, cards.board, ante, aa_bonus, decision, tables)
    except (DeckError, RoundError) as error:
        raise VerificationError(f"the round cannot be settled: {error}") from None
    return {
        **outcome.to_wire(),
        "decision": decision,
        "currency": bets.currency,
        "mode": bets.mode,
        "ante": ante,
        "aa_bonus": aa_bonus,
        "call": tables.call_multiple * ante if decision == "call" else 0,
        "pay_table": tables.version,
    }


class Bets(Protocol):
    """The stakes of a round, as BetPlaced, or the wallet's record of them, carries them."""

    @property
    def currency(self) -> str: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def ante(self) -> int: ...
    @property
    def aa_bonus(self) -> int: ...


class Stakes(NamedTuple):
    """A round's stakes as values (``Bets``)."""

    currency: str
    mode: Mode
    ante: int
    aa_bonus: int


def result_of(bets: Bets, commitment: str, reveal: Called | Folded) -> dict[str, object]:
    """``expected_settled`` of a round from its bets, Dealt commitment and decision event."""
    return expected_settled(
        deck=reveal.deck,
        salt=reveal.salt,
        commitment=commitment,
        currency=bets.currency,
        mode=bets.mode,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        decision="call" if isinstance(reveal, Called) else "fold",
    )


def differences(
    settled: Settled, expected: Mapping[str, object]
) -> dict[str, tuple[object, object]]:
    """{field: (in the Settled, expected)} for every field where ``settled`` is not ``expected``.

    A Settled without ``pay_table`` (written before the field existed) was paid by the standard
    tables, the only ones there were.
    """
    found = {}
    for name, value in expected.items():
        got = getattr(settled, name)
        if got != value and not (name == "pay_table" and got is None and value == STANDARD.version):
            found[name] = (got, value)
    return found
