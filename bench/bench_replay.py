"""Replay speed on a real broker: replay + fold of round and wallet events, beside a bare read
and beside the same replay with each record parsed and not folded (the ceiling of a replay that
validates what it folds)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from aiokafka import AIOKafkaProducer
from prometheus_client import CollectorRegistry

from holdem.core import heap
from holdem.core.contracts import (
    BetPlaced,
    CallCaptured,
    Called,
    CallHeld,
    CallReleased,
    Dealt,
    DeckSealed,
    Folded,
    FundsDeposited,
    Message,
    PayoutCredited,
    RoundClosed,
    Settled,
    StakeTaken,
    dump,
    parse,
)
from holdem.core.deck import deal, seal
from holdem.core.rules import Decision, settle
from holdem.core.strategy import Decide, always_call
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.headers import TYPE_HEADER
from holdem.core.wire.topics import Topics
from holdem.dealer.app import dealer_spec
from holdem.dealer.settings import DealerSettings
from holdem.dealer.vault import Vault
from holdem.ops.launcher import LocalBroker
from holdem.runtime.metrics import Metrics
from holdem.runtime.processor import Processor
from holdem.runtime.replay import Apply, Wanted, replay
from holdem.runtime.topic_setup import ensure_topics
from holdem.settlement.app import settlement_spec
from holdem.settlement.settings import SettlementSettings
from holdem.wallet.app import wallet_spec
from holdem.wallet.settings import WalletSettings

PARTITIONS = 3
PLAYERS = 100
NOW = datetime(2026, 1, 1, tzinfo=UTC)
ANTE, BONUS = 500, 250
VAULT = Vault({"bench": bytes(32)}, "bench")  # a throwaway key: the bench's own vault
SEND_WINDOW = 20_000  # records in flight while filling
HISTORY_BACK_MS = 6 * 3600 * 1000


def _env(player: str, round_id: str | None, name: str) -> dict[str, Any]:
    return {
        "event_id": f"{round_id or player}.{name}",
        "player_id": player,
        "round_id": round_id,
        "occurred_at": NOW,
    }


def round_events(
    player: str,
    round_id: str,
    decide: Decide = always_call,
    bonus: int = BONUS,
    vault: Vault = VAULT,
) -> list[Message]:
    """DeckSealed (``vault``), then BetPlaced, Dealt, Called or Folded (``decide`` on the hole
    and flop) and Settled of one round dealt from a fresh CSPRNG deck."""
    sealed = seal()
    text = tuple(str(card) for card in sealed.deck)
    money = {"currency": "EUR", "ante": ANTE, "aa_bonus": bonus}
    hold = {"call_hold": 2 * ANTE, "requested_ante": ANTE, "requested_aa_bonus": bonus}
    shown = {"player_cards": tuple(text[:2]), "flop": tuple(text[4:7])}
    reveal = {"turn": text[7], "river": text[8], "dealer_cards": tuple(text[2:4]), "deck": text}
    decision = decide(sealed.deck[:2], sealed.deck[4:7])
    decided = Called if decision == "call" else Folded
    return [
        DeckSealed(
            **_env(player, round_id, "sealed"),
            **vault.seal(round_id, player, sealed.deck, sealed.salt),
        ),
        BetPlaced(**_env(player, round_id, "bet"), command_id=f"{round_id}.c", **hold, **money),
        Dealt(**_env(player, round_id, "dealt"), commitment=sealed.commitment, **shown, **money),
        decided(**_env(player, round_id, decision), salt=sealed.salt.hex(), **reveal),
        settled(player, round_id, sealed.deck, money, decision),
    ]


def settled(
    player: str,
    round_id: str,
    deck: Sequence[int],
    money: dict[str, Any],
    decision: Decision = "call",
) -> Settled:
    """The rules' settlement of a round dealt from ``deck`` and decided ``decision``."""
    cards = deal(deck)
    bonus = money["aa_bonus"]
    outcome = settle(cards.player, cards.dealer, cards.board, ANTE, bonus, decision).to_wire()
    call = 2 * ANTE if decision == "call" else 0
    return Settled(
        **_env(player, round_id, "settled"), decision=decision, call=call, **money, **outcome
    )


def wallet_events(
    player: str,
    round_id: str,
    total: int,
    balance: int,
    decision: Decision = "call",
    bonus: int = BONUS,
) -> list[Message]:
    """The round's money: stake, hold, capture (a call) or release (a fold), payout, each with
    the balances after it."""
    settle_call = (CallCaptured, "capture", 2 * ANTE, 0, -1)
    if decision == "fold":
        settle_call = (CallReleased, "release", 2 * ANTE, 1, -1)
    moves = [
        (StakeTaken, "stake", ANTE + bonus, -1, 0),
        (CallHeld, "hold", 2 * ANTE, -1, 1),
        settle_call,
        (PayoutCredited, "payout", total, 1, 0),
    ]
    events: list[Message] = []
    held = 0
    for model, key, amount, d_available, d_held in moves:
        balance, held = balance + d_available * amount, held + d_held * amount
        extra = {"ante": ANTE, "aa_bonus": bonus} if model is StakeTaken else {}
        events.append(
            model(
                **_env(player, round_id, key),
                idempotency_key=f"{key}:{round_id}",
                currency="EUR",
                amount=amount,
                available=balance,
                held=held,
                **extra,
            )
        )
    return events


def deposit(player: str, amount: int) -> FundsDeposited:
    return FundsDeposited(
        **_env(player, None, "deposit"),
        idempotency_key=f"deposit:{player}",
        currency="EUR",
        amount=amount,
        available=amount,
        held=0,
    )


def generate(
    rounds: int,
    players: int = PLAYERS,
    plays: Sequence[tuple[Decide, int]] = ((always_call, BONUS),),
    vault: Vault = VAULT,
    balances: dict[str, int] | None = None,
) -> Iterator[tuple[str, Message]]:
    """(role, event) for ``rounds`` rounds dealt in turn to ``players`` players, deposits first;
    player n plays ``plays[n % len(plays)]`` (a strategy and an AA Bonus stake). ``balances``
    (player -> available) is kept up to date as the rounds are generated."""
    width = len(str(players - 1))
    names = [f"p{n:0{width}d}" for n in range(players)]
    balances = balances if balances is not None else {}
    balances.update(dict.fromkeys(names, 10**9))
    for player, balance in balances.items():
        yield "wallet", deposit(player, balance)
    for n in range(rounds):
        player, round_id = names[n % players], f"r{n:07d}"
        decide, bonus = plays[n % players % len(plays)]
        played = round_events(player, round_id, decide, bonus, vault)
        yield from ((event.TOPIC, event) for event in played)
        end: Any = played[-1]
        money = wallet_events(
            player, round_id, end.total_return, balances[player], end.decision, bonus
        )
        balances[player] = money[-1].available  # type: ignore[attr-defined]
        yield from (("wallet", event) for event in money)
        yield "rounds", closed(player, round_id, end.total_return, end.decision, bonus)


def closed(
    player: str, round_id: str, total: int, decision: Decision, bonus: int = BONUS
) -> RoundClosed:
    """The wallet's round.closed after the round's last movement (ADR 028): it took the ante,
    the bonus and a captured call, and gave back the payout."""
    call = 2 * ANTE if decision == "call" else 0
    return RoundClosed(
        **_env(player, round_id, "closed"),
        outcome="settled",
        currency="EUR",
        staked=ANTE + bonus + call,
        returned=total,
        net=total - (ANTE + bonus + call),
    )


async def fill(
    admin: KafkaConnection, topics: Topics, events: Iterable[tuple[str, Message]]
) -> Counter[str]:
    """Produce ``events`` (role, event) in bulk as the services would have (keyed by player,
    with the type header); the number of records per role."""
    producer = AIOKafkaProducer(
        **admin.kwargs(), acks="all", linger_ms=50, max_batch_size=1024 * 1024
    )
    await producer.start()
    counts: Counter[str] = Counter()
    # A millisecond per record, in the order generated: the order the services would have
    # written them in, which a replay follows across topics. Hours back: within retention.
    stamp = int(time.time() * 1000) - HISTORY_BACK_MS
    try:
        sent = []
        for role, event in events:
            headers = [(TYPE_HEADER, event.type.encode())]  # type: ignore[attr-defined]
            key, topic, stamp = event.player_id.encode(), getattr(topics, role), stamp + 1
            sent.append(
                await producer.send(
                    topic, dump(event), key=key, headers=headers, timestamp_ms=stamp
                )
            )
            counts[role] += 1
            if len(sent) >= SEND_WINDOW:  # bounded: a million rounds is nine million records
                await asyncio.gather(*sent)
                sent.clear()
        await asyncio.gather(*sent)
        return counts
    finally:
        await producer.stop()


def processor(spec: Any, topics: Topics) -> Processor[Any]:
    return Processor(spec, topics, outbox=None, metrics=Metrics(CollectorRegistry()))  # type: ignore[arg-type]


async def timed(
    bootstrap: KafkaConnection,
    topics: list[str],
    apply: Apply,
    wanted: Wanted | None = None,
) -> tuple[int, float, float, float, int]:
    """Records read, seconds in all (wall; and this process's CPU, which a shared machine's
    load disturbs less: the broker is another process), seconds inside ``apply`` (the fold
    alone), records applied (the others skipped unparsed by ``wanted``)."""
    inside = 0.0
    applied = 0

    def counted(topic: str, raw: bytes, key: bytes | None, partition: int, headers: Any) -> None:
        nonlocal inside, applied
        began = time.perf_counter()
        apply(topic, raw, key, partition, headers)
        inside += time.perf_counter() - began
        applied += 1

    started, cpu = time.perf_counter(), time.process_time()
    count = await replay(bootstrap, topics, range(PARTITIONS), counted, wanted=wanted)
    return count, time.perf_counter() - started, time.process_time() - cpu, inside, applied


def rebuild_wanted(proc: Processor[Any], topics: Topics) -> Wanted:
    """What a service's rebuild skips unparsed (``holdem.runtime.rebuild``): a record of an input
    topic whose type header names a type the service does not read; a topic only it writes is
    folded whole."""
    inputs = {topics.name(role) for role in proc.spec.inputs}

    def wanted(topic: str, kind: bytes | None) -> bool:
        return topic not in inputs or proc.wants(topic, kind)

    return wanted


def nothing(topic: str, raw: bytes, key: bytes | None, partition: int, headers: Any) -> None:
    """A bare read's apply: the record is dropped."""


def parsed_only(topics: Topics) -> Apply:
    """An apply that parses each record as its topic's contract (``parse``), as a fold's first
    step does, and keeps nothing."""
    role_of = {topics.name(role): role for role in ("rounds", "vault", "wallet")}

    def apply(topic: str, raw: bytes, key: bytes | None, partition: int, headers: Any) -> None:
        parse(role_of[topic], raw)

    return apply


GOAL = 0.5  # issue 28 item 5: a replay at least half the rate of a bare read of the same records


def open_rounds(name: str, proc: Processor[Any]) -> int:
    """The rounds ``proc``'s states still hold open: none once every round is closed."""
    count = proc.spec.open_rounds
    if count is None:
        raise RuntimeError(f"{name}'s spec counts no open rounds")
    return sum(count(state) for state in proc.states.values())


async def measure(bootstrap: KafkaConnection, rounds: int) -> None:
    """As admin: the bench writes every topic, as the three services would."""
    topics = Topics.unique("bench")
    await ensure_topics(bootstrap, topics, PARTITIONS)
    started = time.perf_counter()
    total = (await fill(bootstrap, topics, generate(rounds))).total()
    print(f"filled {total:,} events ({rounds:,} rounds) in {time.perf_counter() - started:.1f}s")
    specs = {
        "dealer": (lambda: dealer_spec(DealerSettings().table, VAULT), ["rounds", "vault"]),
        "settlement": (lambda: settlement_spec(SettlementSettings()), ["rounds"]),
        "wallet": (lambda: wallet_spec(WalletSettings().table), ["wallet"]),
    }
    bare: dict[tuple[str, ...], tuple[int, float, float]] = {}
    rebuilt: dict[str, Processor[Any]] = {}
    print(f"goal: a replay + fold at least {GOAL} of a bare read of the same records")
    for name, (spec, roles) in specs.items():
        read = [topics.name(role) for role in roles]
        if tuple(roles) not in bare:
            count, seconds, cpu, _, _ = await timed(bootstrap, read, nothing)
            bare[tuple(roles)] = count, seconds, cpu
            print(
                f"  bare read {'+'.join(roles):12} {count / seconds:>9,.0f} records/s "
                f"({count:,} in {seconds:.2f} s, {1e6 * seconds / count:.1f} us a record; "
                f"CPU {1e6 * cpu / count:.1f} us a record)"
            )
        read_count, read_seconds, read_cpu = bare[tuple(roles)]
        # Each record parsed (what this bench measured before), then as the rebuild replays,
        # then the rebuild's records parsed and not folded: the ceiling of any replay that
        # validates what it folds.
        for how in ("every record", "as rebuilt", "parsed, not folded"):
            proc = processor(spec(), topics)
            wanted = rebuild_wanted(proc, topics) if how != "every record" else None
            apply = parsed_only(topics) if how == "parsed, not folded" else proc.fold
            count, seconds, cpu, inside, applied = await timed(bootstrap, read, apply, wanted)
            if count != read_count:
                raise RuntimeError(f"{name} replayed {count} records, the bare read {read_count}")
            ratio = (count / seconds) / (read_count / read_seconds)
            floor = how == "parsed, not folded"
            verdict = "the ceiling" if floor else "met" if ratio >= GOAL else "missed"
            print(
                f"  {name + (' replay, ' if floor else ' replay + fold, ') + how:36} "
                f"{count / seconds:>9,.0f} records/s ({seconds:.2f} s): {ratio:.2f} of the bare "
                f"read ({verdict}), per CPU second {read_cpu / cpu:.2f}; "
                f"{'the parse' if floor else 'the fold'} alone "
                f"{1e6 * inside / count:.1f} us a record; {applied:,} "
                f"{'parsed' if floor else 'folded'}, {count - applied:,} skipped unparsed by type"
            )
            if how == "as rebuilt":
                rebuilt[name] = proc
    for name, proc in rebuilt.items():
        if left := open_rounds(name, proc):
            raise RuntimeError(f"{name} holds {left} rounds open after the replay")


async def main(rounds: int) -> None:
    # An outside broker: the HOLDEM_KAFKA_* variables of its admin principal.
    bootstrap = os.environ.get("HOLDEM_KAFKA_BOOTSTRAP") or os.environ.get(
        "KAFKA_BOOTSTRAP_SERVERS"
    )
    if bootstrap:
        await measure(KafkaConnection.from_env(bootstrap=bootstrap), rounds)
        return
    broker = LocalBroker()
    await asyncio.to_thread(broker.up)
    try:
        await measure(broker.connection("admin"), rounds)
    finally:
        await asyncio.to_thread(broker.down)


def tuned_main(rounds: int) -> None:
    """Replay and bare read both timed with the collector a service runs with (ADR 045); given
    back after, for the benches that follow in `make bench`'s process."""
    replaced = heap.tune()
    try:
        asyncio.run(main(rounds))
    finally:
        heap.untune(replaced)


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 25_000
    tuned_main(count)
