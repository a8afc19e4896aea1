"""Player protection through the in-memory wallet service (ADR 028): the wallet reads the
dealer's session events off the rounds topic, so a reality check is due after its period of
session and lifted by the player's acknowledgement; a block refuses the next bet until the
unblock, with the wallet's own block and unblock on the rounds topic, where it reads them back."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from support.tables import bet_at, create_table
from support.wallet import deposit, round_events, verified_settled
from support.wallet_app import Wallet, wallet

from holdem.core.contracts import (
    AcknowledgeRealityCheck,
    BlockPlayer,
    Message,
    ProtectionRefusal,
    SessionStarted,
    SetLimits,
    UnblockPlayer,
    dump,
)
from holdem.core.contracts.protection import Limits
from holdem.core.wire.headers import TYPE_HEADER

ANTE = 500


def now() -> datetime:
    return datetime.now(UTC)


def command(model: type[Any], **fields: Any) -> Any:
    ids = {"event_id": uuid.uuid4().hex, "command_id": uuid.uuid4().hex}
    return model(**ids, player_id="p1", occurred_at=now(), **fields)


async def as_the_dealer(w: Wallet, event: Message) -> None:
    """A rounds record with the type header the dealer's records carry (the wallet skips, by
    that header, the types it does not read)."""
    headers = ((TYPE_HEADER, event.type.encode()),)  # type: ignore[attr-defined]
    await w.log.publish("rounds", dump(event), event.player_id.encode(), headers=headers)


def bet(round_id: str) -> Any:
    return bet_at("t1", round_id, ANTE).model_copy(update={"occurred_at": now()})


async def test_a_reality_check_is_due_after_its_period_of_session_and_lifted_by_an_ack() -> None:
    async with wallet() as w:
        await w.send("admin", create_table())
        await w.send("commands", deposit(100_000).model_copy(update={"occurred_at": now()}))
        limits = Limits(currency="EUR", reality_check_s=1_800)
        await w.send("commands", command(SetLimits, limits=limits))
        await w.send("commands", bet("r1"))
        # The dealer started the session 40 minutes ago (its clock, on the rounds topic).
        started = SessionStarted(
            event_id="s-start",
            player_id="p1",
            occurred_at=now() - timedelta(minutes=40),
            session_id="s1",
            table_id="t1",
            round_id="r1",
            command_id="c-r1",
            idle_timeout_s=3_600,
        )
        game = round_events("r1")
        settled = verified_settled("r1", ante=ANTE, aa_bonus=0, decision="fold")
        for event in (started, game.dealt(), game.folded(), settled):
            await as_the_dealer(w, event)
        await w.send("commands", bet("r2"))
        await w.send("commands", command(AcknowledgeRealityCheck, table_id="t1"))
        await w.send("commands", bet("r3"))

    rounds = w.messages("rounds")
    [check] = [m for m in rounds if m.type == "round.bet_rejected"]
    assert check.round_id == "r2" and check.reason is ProtectionRefusal.REALITY_CHECK
    assert check.reality_check.session_id == "s1" and check.reality_check.rounds == 1
    assert check.reality_check.elapsed_s >= 40 * 60 and check.reality_check.net == -ANTE
    placed = [m.round_id for m in rounds if m.type == "round.bet_placed"]
    assert placed == ["r1", "r3"]
    assert "wallet.reality_check_acknowledged" in w.types("wallet")


async def test_a_block_refuses_bets_until_the_unblock_whose_records_it_reads_back() -> None:
    async with wallet() as w:
        await w.send("admin", create_table())
        await w.send("commands", deposit(100_000).model_copy(update={"occurred_at": now()}))
        # Sent back to back, without waiting for their answers to be read back.
        transport, topic = w.log.transport, w.log.topic("commands")
        for cmd in (command(BlockPlayer), bet("r1"), command(UnblockPlayer)):
            await transport.publish(topic, dump(cmd), key=b"p1")
        await transport.settle()
        await w.send("commands", bet("r2"))

    rounds = w.messages("rounds")
    assert [m.type for m in rounds if m.type.startswith("round.player_")] == [
        "round.player_blocked",
        "round.player_unblocked",
    ]
    assert [(m.type, m.round_id) for m in rounds if m.type.startswith("round.bet_")] == [
        ("round.bet_rejected", "r1"),
        ("round.bet_placed", "r2"),
    ]
    assert w.service.processor.state_for("p1").protection.blocked == {}
