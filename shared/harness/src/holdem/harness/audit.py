"""The auditor's check of a run: the game's invariants (docs/services-design.md, "Who ends a
round" and "Money") over every record of every topic."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from holdem.core.cards import Card, parse_cards
from holdem.core.contracts import (
    Called,
    DeckSealed,
    Folded,
    Message,
    Settled,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.deck import Deal, DeckError, deal, verify_commitment
from holdem.core.verify import VerificationError, differences, result_of, settled_of
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.headers import Stamp, operator_of_prefix
from holdem.core.wire.topics import ROLES, Topics
from holdem.harness.audit_forced import forced_rounds
from holdem.harness.audit_log import Record, RoundKey, RoundLog, in_log_order, rounds_of
from holdem.harness.audit_money import (
    Balances,
    conservation_violations,
    final_violations,
    round_money_violations,
)
from holdem.harness.audit_protection import closed_violations
from holdem.harness.audit_read import read_topic
from holdem.harness.audit_seamless import seamless_violations
from holdem.harness.audit_watches import WRITTEN_OUTSIDE, EventIdWatch, Watches

OPERATOR_VISIBLE = ("commands", "rounds", "wallet", "rejected")  # everything but the vault
OWN_ROUND = ("rounds", "wallet")  # a parsed record of these names its round as its JSON does
CARD = re.compile(r"^[2-9TJQKA][cdhs]$")
# The dealer's vault opener (a DeckSealed to its card texts), for audits that hold the key.
Unseal = Callable[[DeckSealed], Sequence[str]]


async def read_run(
    bootstrap: KafkaConnection | str, topics: Topics, *, roles: Iterable[str] | None = None
) -> list[Record]:
    """Every committed record of the run's topics (the admin's commands aside); ``roles``:
    only those (e.g. the ones the operator may read)."""
    records: list[Record] = []
    chosen = set(ROLES if roles is None else roles)
    for role in ROLES:
        if role == "admin" or role not in chosen:  # table commands: their answers are audited
            continue
        try:
            found = await read_topic(bootstrap, getattr(topics, role))
        except LookupError:
            if role.startswith("seamless_"):  # a deployment from before ADR 015: no bridge
                continue
            raise
        for r in found:
            raw = r.value or b""
            records.append(Record.of(role, r.partition, r.offset, raw, r.timestamp, r.headers))
    return records


@dataclass(frozen=True)
class AuditReport:
    """What the audit read and what it found; ``ok`` when no invariant is broken."""

    records: int
    rounds: int
    ended: int
    violations: list[str]
    forced: int = 0  # rounds dealt from a forced deck (test mode, ADR 030)

    @property
    def ok(self) -> bool:
        return not self.violations


def check(
    records: Iterable[Record], *, require_ended: bool = True, operator: str | None = None
) -> AuditReport:
    """The audit of a run's records, with the counts a summary prints beside the verdict;
    ``operator``: also check that every record the services wrote carries that operator."""
    records = list(records)
    rounds = rounds_of(records)
    placed = [log for log in rounds.values() if log.bets]
    found = violations(records, require_ended=require_ended)
    if operator is not None:
        found += operator_violations(records, operator)
    ended = sum(1 for log in placed if log.ends)
    return AuditReport(len(records), len(placed), ended, found, forced_rounds(records))


async def audit_run(
    bootstrap: KafkaConnection | str,
    topics: Topics,
    *,
    require_ended: bool = True,
    roles: Iterable[str] | None = None,
) -> AuditReport:
    """Read every committed record of the run's topics (the vault too: run it as ``admin``;
    ``roles`` reads only those) and check the invariants on them, the operator header of the
    topics' tenant included."""
    operator = operator_of_prefix(topics.prefix)
    records = await read_run(bootstrap, topics, roles=roles)
    return check(records, require_ended=require_ended, operator=operator)


def operator_violations(records: Iterable[Record], operator: str) -> list[str]:
    """Every record a service wrote (any topic but those written from outside) that does not
    carry ``operator`` as its operator header, or carries a brand that is not an id (ADR 021)."""
    found = []
    for record in sorted(records, key=lambda r: (r.role, r.partition, r.offset)):
        problem = operator_problem(record, operator)
        if problem is not None:
            found.append(problem)
    return found


def operator_problem(record: Record, operator: str) -> str | None:
    """What is wrong with one record's operator header, if anything."""
    if record.role in WRITTEN_OUTSIDE:
        return None  # an outsider's header is checked by the service that reads it
    stamp = Stamp.of(record.headers)
    where = f"{record.role}[{record.partition}]@{record.offset}"
    if stamp.operator != operator:
        return f"{where}: operator header {stamp.operator!r}, not {operator!r}"
    if stamp.problem() is not None:
        return f"{where}: {stamp.problem()}"
    return None


def violations(
    records: Iterable[Record],
    balances: Balances | None = None,
    *,
    require_ended: bool = True,
    unseal: Unseal | None = None,
) -> list[str]:
    """Every broken invariant of the run, as sentences; empty when the run is sound.

    ``balances``: the wallet's final (available, held) per (player, currency, mode), if known.
    ``require_ended=False`` allows rounds still open (a run stopped mid-round).
    ``unseal``: the dealer's vault opener, to also check the cards of rounds never revealed.
    """
    records = in_log_order(records)
    found = round_violations(records, require_ended=require_ended, unseal=unseal)
    watches = Watches()
    for record in records:
        watches.feed(record)
    found += watches.finish()
    found += conservation_violations(watches.money.books())
    if balances is not None:
        found += final_violations(watches.money.accounts, balances)
    return found


def round_violations(
    records: list[Record],
    *,
    require_ended: bool = True,
    unseal: Unseal | None = None,
    seamless: bool | None = None,
    rounds: Mapping[RoundKey, RoundLog] | None = None,
) -> list[str]:
    """The checks that judge each round on its own records (``records``: sorted by role,
    partition and offset; those of one round judge that round, as the streaming audit does):
    its log, its secrecy, its money, its closing and its transactions with the operator.
    ``seamless``: whether the deployment runs the bridge (None: whether ``records`` show it);
    ``rounds``: ``rounds_of(records)``, if the caller has it."""
    rounds = rounds_of(records, ordered=True) if rounds is None else rounds
    found: list[str] = []
    for key, log in sorted(rounds.items()):
        name = "/".join(key)
        found += [f"{name}: {v}" for v in _round_violations(log, require_ended)]
    found += _secrecy_violations(records, rounds, unseal)
    wallet = [r for r in records if r.role == "wallet" and isinstance(r.message, WalletEvent)]
    found += round_money_violations([r.message for r in wallet], rounds)
    found += closed_violations([r for r in records if r.message is not None])
    if seamless is None:
        seamless = any(
            r.message is not None and r.message.type == "seamless.debit_requested" for r in records
        )
    if seamless:
        # A player's messages only: a table's records (a seamless deployment's tables) have no
        # player or round, and no bridge.
        players = [r for r in records if isinstance(r.message, Message)]
        published = [r.message for r in players if r.role != "seamless_replies"]
        replies = [r.message for r in players if r.role == "seamless_replies"]
        found += seamless_violations(published, replies, require_closed=require_ended)
    return found


def event_id_violations(records: Iterable[Record]) -> list[str]:
    """Every ``event_id`` that two records the services wrote share, on any topics: an operator
    that de-duplicates on it would drop one of them."""
    watch = EventIdWatch()
    for record in sorted(records, key=lambda r: (r.role, r.partition, r.offset)):
        watch.feed(record)
    return watch.found


def assert_invariants(
    records: Iterable[Record], balances: Balances | None = None, *, require_ended: bool = True
) -> None:
    found = violations(records, balances, require_ended=require_ended)
    assert not found, "invariants broken:\n  " + "\n  ".join(found)


def _round_violations(log: RoundLog, require_ended: bool) -> Iterator[str]:
    if len(log.bets) > 1:
        yield f"BetPlaced {len(log.bets)} times"
    ends = [end.type for end in log.ends]
    if log.ends and not log.bets:
        yield f"ended ({', '.join(ends)}) without a BetPlaced"
    if log.bets and len(log.ends) > 1:
        yield f"ended {len(log.ends)} times: {', '.join(ends)}"
    if log.bets and not log.ends and require_ended:
        yield "accepted bet never ended (no Settled, no RoundVoided)"
    if len(log.decisions) > 1:
        yield f"decided {len(log.decisions)} times"
    cards = None  # the first decision's deck, verified and dealt: what its Settled is judged by
    for _, decision in log.decisions[:1]:
        cards = yield from _deck_violations(log, decision)
    for end in log.ends:
        if isinstance(end, Settled):
            yield from _settled_violations(log, end, cards)


def _deck_violations(log: RoundLog, decision: Called | Folded) -> Generator[str, None, Deal | None]:
    """The deck's findings; returns its deal when the deck verifies against the commitment and
    deals (its cards shown or not as dealt: a finding of its own)."""
    if not log.dealt:
        yield f"{decision.type} without a Dealt commitment"
        return None
    dealt = log.dealt[0]
    deck = list(parse_cards(decision.deck))  # Card.parse of each, the canonical ones looked up
    if not verify_commitment(deck, bytes.fromhex(decision.salt), dealt.commitment):
        yield "revealed deck does not verify against the Dealt commitment"
        return None
    # The vault is sealed (the audit holds no dealer key): its record must name the commitment.
    for sealed in log.sealed:
        if sealed.commitment != dealt.commitment:
            yield "the vault's sealed deck is not the deck committed to and revealed"
    try:
        cards = deal(deck)
    except DeckError as error:
        yield f"revealed deck cannot be dealt: {error}"
        return None
    shown = (*dealt.player_cards, *dealt.flop, *decision.dealer_cards, decision.turn)
    due = (*cards.player, *cards.flop, *cards.dealer, cards.turn)
    if (*shown, decision.river) != tuple(map(str, (*due, cards.river))):
        yield "revealed cards are not the deck's deal order"
    return cards


def _settled_violations(log: RoundLog, settled: Settled, cards: Deal | None) -> Iterator[str]:
    """``cards``: the deal of the round's first decision's deck, verified against its first
    Dealt (``_deck_violations``): the rules' settlement needs no second parse, hash and deal."""
    if not log.bets or not log.dealt or not log.decisions:
        yield "Settled without a bet, a deal and a decision"
        return
    bet, dealt, (_, decision) = log.bets[0], log.dealt[0], log.decisions[0]
    try:
        if cards is None:  # the deck did not verify or deal: the rules' own words for why
            expected = result_of(bet, dealt.commitment, decision)
        else:
            expected = settled_of(cards, bet, "call" if isinstance(decision, Called) else "fold")
    except VerificationError as error:
        yield f"Settled a round the rules cannot settle: {error}"
        return
    wrong = differences(settled, expected)
    if wrong:
        yield f"Settled differs from the rules' settlement (got, expected): {wrong}"


def _secrecy_violations(
    records: list[Record], rounds: Mapping[RoundKey, RoundLog], unseal: Unseal | None
) -> list[str]:
    """No dealer card, turn or river on an operator-visible topic before the round's decision."""
    secrets = {key: _secret_cards(log, unseal) for key, log in rounds.items()}
    spelled: dict[RoundKey, tuple[bytes, ...]] = {}  # a round's hidden cards as bytes, once
    found = []
    for record in records:  # in log order (round_violations')
        role = record.role
        if role not in OPERATOR_VISIBLE:
            continue
        value = None
        m = record.message
        # The round of a rounds or wallet record that parsed (its JSON names the same one),
        # worked out here and not by a call: this runs for every record of a round.
        if role in OWN_ROUND and isinstance(m, Message) and m.round_id:
            key: RoundKey | None = (m.player_id, m.round_id)
        else:  # named in what it carries (a rejection's raw): read its JSON
            value = json_of(record.raw)
            key = round_key_of(value)
        if key is None:
            continue
        hidden = secrets.get(key)
        if not hidden or _after_decision(record, rounds[key]):
            continue
        if value is None:
            texts = spelled.get(key)
            if texts is None:
                texts = spelled[key] = tuple(card.encode() for card in hidden)
            if not _could_hold(record.raw, texts):
                continue  # no hidden card's text in its bytes: decoding it would find none
        value = json_of(record.raw) if value is None else value
        leaked = hidden & set(_cards_in(value))
        if leaked:
            where = f"{record.role}[{record.partition}]@{record.offset}"
            found.append(f"{'/'.join(key)}: {sorted(leaked)} visible at {where} before decision")
    return found


def could_hold(raw: bytes | str, cards: Iterable[str]) -> bool:
    """Whether a record's JSON can hold one of ``cards`` as text: one of them is in its bytes,
    or it has a ``\\u`` escape (``"\\u0041h"`` is "Ah"). No other JSON escape can spell a card's
    characters, and JSON nested in a string keeps them as they are."""
    return _could_hold(raw, tuple(card.encode() for card in cards))


def _could_hold(raw: bytes | str, cards: tuple[bytes, ...]) -> bool:
    """``could_hold`` with the cards' text already encoded (a round's, once for its records)."""
    data = raw.encode() if isinstance(raw, str) else raw
    return b"\\u" in data or any(map(data.__contains__, cards))  # no generator: most records


def _secret_cards(log: RoundLog, unseal: Unseal | None) -> set[str]:
    if log.decisions:
        _, decision = log.decisions[0]
        return {*decision.dealer_cards, decision.turn, decision.river}
    if log.sealed and unseal is not None:  # without the dealer's key the vault tells nothing
        cards = deal([Card.parse(text) for text in unseal(log.sealed[0])])
        return {str(card) for card in (*cards.dealer, cards.turn, cards.river)}
    return set()


def _after_decision(record: Record, log: RoundLog) -> bool:
    if not log.decisions:
        return False
    decided, _ = log.decisions[0]
    if record.role == "rounds":
        return record.offset >= decided.offset
    return record.timestamp >= decided.timestamp


def json_of(raw: bytes | str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def round_key_of(value: Any) -> RoundKey | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("raw"), str):  # a rejection names the round of what it rejected
        inner = round_key_of(json_of(value["raw"]))
        if inner:
            return inner
    player, round_id = value.get("player_id"), value.get("round_id")
    return (player, round_id) if isinstance(player, str) and isinstance(round_id, str) else None


def _cards_in(value: Any) -> Iterator[str]:
    """Every card text anywhere in a JSON value, including JSON nested in strings."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _cards_in(item)
    elif isinstance(value, str):
        if CARD.match(value):
            yield value
        elif value.startswith(("{", "[")):
            yield from _cards_in(json_of(value))
