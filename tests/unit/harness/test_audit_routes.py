"""The audit's per-type shortcuts (issue 31, speed) give what the ``isinstance`` chains they
replace give: ``Watches.feed`` hands a message only to the watches whose ``READS`` it is, and
every other watch fed it does nothing; ``Pending``'s flags, a round log's parts and a closing's
parts are worked out once per type, each equal to its chain for every message type there is;
``Record.of`` builds the same frozen record as the dataclass's own constructor."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest
from test_audit_fold import history

from holdem.core.contracts import (
    ALL_MODELS,
    BetPlaced,
    Called,
    Dealt,
    DeckSealed,
    Folded,
    Malfunction,
    Message,
    RoundClosed,
    RoundVoided,
    Settled,
    StakeTaken,
    WalletRejected,
)
from holdem.core.contracts.promotions import FreeStakeTaken
from holdem.core.contracts.seamless import DebitRequested, RoundClosedNotice, SeamlessRolledBack
from holdem.core.contracts.wallet import WalletEvent
from holdem.harness.audit_fold import kind_of
from holdem.harness.audit_forced import ForcedWatch
from holdem.harness.audit_log import Record, part_of
from holdem.harness.audit_money import MoneyWatch
from holdem.harness.audit_protection import BlockWatch, closing_part
from holdem.harness.audit_sessions import SessionWatch
from holdem.harness.audit_tables import TableWatch
from holdem.harness.audit_watches import EventIdWatch, Watches, route

ROLES = sorted({m.TOPIC for m in ALL_MODELS} | {"tables", "wallet", "rounds"})
WATCHES = {
    "money": MoneyWatch,
    "forced": ForcedWatch,
    "blocks": BlockWatch,
    "sessions": SessionWatch,
    "tables": TableWatch,
}


def blank(model: type) -> Any:
    """A message of type ``model`` with no field set: a watch that reads any of it fails."""
    return model.model_construct()


def fed(watch: Any, name: str, role: str, message: Any) -> Any:
    if name == "tables":
        watch.feed(role, message)
    else:
        watch.feed(message)
    return watch


@pytest.mark.parametrize("name", sorted(set(WATCHES) - {"money"}))
def test_a_watch_fed_a_type_it_does_not_read_does_nothing(name: str) -> None:
    """(Money's ``READS`` is the wallet-event condition the old feed already had.)"""
    watch_class = WATCHES[name]
    skipped = [m for m in ALL_MODELS if not issubclass(m, watch_class.READS)]
    assert skipped
    for model in skipped:
        for role in ("rounds", "tables", "wallet"):
            watch = watch_class()
            before = pickle.dumps(watch)
            assert pickle.dumps(fed(watch, name, role, blank(model))) == before, model


def test_the_routes_are_the_old_feeds_conditions() -> None:
    """The old ``Watches.feed``: money for a wallet event read from wallet; forced, blocks and
    sessions for anything read from rounds; tables for anything read from rounds or tables.
    The route keeps those, less the watches that would do nothing (above)."""
    for role in ROLES:
        for model in ALL_MODELS:
            old = []
            if role == "wallet" and issubclass(model, WalletEvent):
                old.append("money")
            elif role == "rounds":
                old += ["forced", "blocks", "sessions"]
            if role in ("rounds", "tables"):
                old.append("tables")
            kept = [n for n in old if n == "money" or issubclass(model, WATCHES[n].READS)]
            assert route(role, model) == tuple(kept), (role, model)


def old_kind(m: Any) -> str:
    """``Pending.add``'s chain before the shortcut."""
    if isinstance(m, BetPlaced):
        return "bet"
    if isinstance(m, Settled | RoundVoided):
        return "ended"
    if isinstance(m, RoundClosed):
        return "closed"
    if isinstance(m, StakeTaken | FreeStakeTaken):
        return "staked"
    if isinstance(m, DebitRequested):
        return "seamless"
    if isinstance(m, RoundClosedNotice | WalletRejected | SeamlessRolledBack):
        return "answered"
    return ""


def old_part(m: Any) -> str:
    """``rounds_of``'s chain before the shortcut."""
    for part, classes in (
        ("bets", BetPlaced),
        ("dealt", Dealt),
        ("decisions", Called | Folded),
        ("ends", Settled | RoundVoided),
        ("sealed", DeckSealed),
        ("malfunction", Malfunction),
    ):
        if isinstance(m, classes):
            return part
    return ""


def old_closing(m: Any) -> str:
    """``closed_violations``' chain before the shortcut."""
    if not isinstance(m, Message):
        return ""
    if isinstance(m, RoundClosed):
        return "closed"
    if isinstance(m, RoundClosedNotice):
        return "notice"
    return "move" if isinstance(m, WalletEvent) else "other"


def test_the_per_type_answers_are_the_chains_answers_for_every_type() -> None:
    for model in ALL_MODELS:
        m = blank(model)
        assert kind_of(model) == old_kind(m), model
        assert part_of(model) == old_part(m), model
        assert closing_part(model) == old_closing(m), model
    assert kind_of(type(None)) == part_of(type(None)) == closing_part(type(None)) == ""


def test_record_of_builds_the_dataclass_record() -> None:
    for r in history(3):
        again = Record.of(r.role, r.partition, r.offset, r.raw, r.timestamp, r.headers)
        built = Record(r.role, r.partition, r.offset, r.raw, r.timestamp, again.message, r.headers)
        assert again == built and hash(again) == hash(built)
        assert vars(again) == vars(built)
        with pytest.raises(dataclasses.FrozenInstanceError):
            again.offset = 1  # type: ignore[misc]


def test_the_event_id_finding_reads_as_before() -> None:
    watch = EventIdWatch()
    first = history(1)[0]
    watch.feed(first)
    watch.feed(dataclasses.replace(first, role="wallet", partition=2, offset=9))
    watch.feed(first)  # the same record again: not a duplicate
    event_id = first.message.event_id
    where = f"{first.role}[{first.partition}]@{first.offset}"
    assert watch.found == [f"event_id {event_id} on {where} and again on wallet[2]@9"]


def test_watches_fed_a_history_find_what_each_watch_fed_everything_finds() -> None:
    """The routed feed against each watch fed every record the old way."""
    records = history(40)
    routed, every = Watches(), {name: cls() for name, cls in WATCHES.items()}
    for record in records:
        routed.feed(record)
        m, role = record.message, record.role
        if m is None:
            continue
        if role == "wallet" and isinstance(m, WalletEvent):
            every["money"].feed(m)
        elif role == "rounds":
            for name in ("forced", "blocks", "sessions"):
                every[name].feed(m)
        if role in ("rounds", "tables"):
            every["tables"].feed(role, m)
    for name, watch in every.items():
        assert pickle.dumps(getattr(routed, name)) == pickle.dumps(watch), name
