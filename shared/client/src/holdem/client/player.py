"""One player's commands and their answers: deposit, bet, read the deal, call or fold, outcome.

Each method sends one command and awaits the event that answers it; a refusal raises ``Refused``
with the service's typed rejection (its ``reason`` is a stable code), a missing answer
``StalledError`` after ``step_s`` seconds. Idempotency keys are generated unless given. A command
sent again with the same ``command_id`` and body has no second effect and gets no second answer
(the services stay silent). So after a ``StalledError`` a resend with the same id is safe, and
what the command did is read from ``Operator.stream()`` or ``Operator.balance()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from holdem.client.commands import command, new_id
from holdem.client.operator import Operator, Refused
from holdem.client.promotions import FreeHands, PromoRefused, free_hands_of
from holdem.client.watch import StalledError, Watch
from holdem.core.contracts import (
    AcknowledgeRealityCheck,
    BetPlaced,
    BetRejected,
    Call,
    CallCaptured,
    Called,
    CallReleased,
    CommandRejected,
    Dealt,
    Deposit,
    EndSession,
    Fold,
    Folded,
    FundsDeposited,
    FundsWithdrawn,
    GrantFun,
    Message,
    Mode,
    OperatorEndReason,
    PayoutCredited,
    PlaceBet,
    PlayFreeHand,
    PromoRejected,
    ProtectionRejected,
    RealityCheckAcknowledged,
    Rebet,
    ResetFun,
    RoundClosed,
    RoundVoided,
    SessionEnded,
    SessionRejected,
    Settled,
    StakesRefunded,
    VoidRound,
    WalletRejected,
    Withdraw,
)
from holdem.core.contracts.wallet import WalletEvent

__all__ = [
    "FreeHands",
    "Outcome",
    "Player",
    "PromoRefused",
    "Refused",
    "Round",
    "StalledError",
    "Voided",
    "last_movement",
]


class Voided(Exception):
    """The round was voided before its deal; ``outcome()`` still gives the refund's balance."""

    def __init__(self, event: RoundVoided) -> None:
        super().__init__(f"round {event.round_id} voided: {event.reason}")
        self.event = event


@dataclass(frozen=True)
class Outcome:
    """How a round ended: its result (``Settled``) or void, the cards revealed, the balance."""

    round_id: str
    end: Settled | RoundVoided
    revealed: Called | Folded | None  # the dealer's cards, turn and river, deck and salt
    balance: int  # available, minor units, after the round's last money movement
    paid: int | None = None  # what the wallet paid for it (a free hand: its winnings, ADR 029)

    @property
    def settled(self) -> Settled | None:
        return self.end if isinstance(self.end, Settled) else None


def last_movement(end: Message) -> type[WalletEvent]:
    """The wallet's last movement for a round that ended with ``end``: once it is read, the
    player's balance is final and their next round may start.

    >>> last_movement(RoundVoided.model_construct()).__name__
    'StakesRefunded'
    """
    if isinstance(end, RoundVoided):
        return StakesRefunded
    assert isinstance(end, Settled)
    if end.total_return > 0:
        return PayoutCredited
    return CallCaptured if end.decision == "call" else CallReleased


class Player:
    """Commands for one player at the table, each awaiting its answer (``step_s`` bound).

    >>> from holdem.core.wire.connection import KafkaConnection
    >>> alice = Player(Operator(KafkaConnection("127.0.0.1:9092")), "alice")
    >>> alice.player_id, alice.currency
    ('alice', 'EUR')
    """

    def __init__(
        self,
        operator: Operator,
        player_id: str,
        currency: str = "EUR",
        step_s: float = 60.0,
        table_id: str | None = None,
        mode: Mode = Mode.REAL,
    ) -> None:
        self.operator = operator
        self.player_id = player_id
        self.currency = currency
        self.step_s = step_s
        self.table_id = table_id  # None: the deployment's default table (a v1 PlaceBet)
        self.mode = mode  # the table's: fun at a fun table

    async def grant_fun(self, amount: int, *, command_id: str | None = None) -> FundsDeposited:
        """Add ``amount`` of play money to the player's fun balance (operator's decision)."""
        grant = command(GrantFun, self.player_id, command_id=command_id, **self._money(amount))
        answer = await self._wallet(grant, FundsDeposited)
        assert isinstance(answer, FundsDeposited)
        return answer

    async def reset_fun(self, amount: int = 0, *, command_id: str | None = None) -> WalletEvent:
        """Set the player's available fun balance to ``amount``; the last movement answers."""
        reset = command(ResetFun, self.player_id, command_id=command_id, **self._money(amount))
        answer = await self._wallet(reset, FundsDeposited if amount else FundsWithdrawn)
        assert isinstance(answer, WalletEvent)
        return answer

    async def deposit(self, amount: int, *, command_id: str | None = None) -> FundsDeposited:
        """Credit ``amount`` minor units; the FundsDeposited carries the new balance."""
        deposit = command(Deposit, self.player_id, command_id=command_id, **self._money(amount))
        answer = await self._wallet(deposit, FundsDeposited)
        assert isinstance(answer, FundsDeposited)
        return answer

    async def withdraw(self, amount: int, *, command_id: str | None = None) -> FundsWithdrawn:
        """Debit ``amount`` minor units (``insufficient_funds`` if the balance is short)."""
        withdraw = command(Withdraw, self.player_id, command_id=command_id, **self._money(amount))
        answer = await self._wallet(withdraw, FundsWithdrawn)
        assert isinstance(answer, FundsWithdrawn)
        return answer

    async def bet(
        self,
        ante: int,
        aa_bonus: int = 0,
        *,
        round_id: str | None = None,
        command_id: str | None = None,
    ) -> Round:
        """Start a round: the wallet takes ante + bonus and holds the call (2 × ante).
        ``placed.ante`` may be lower than asked: auto-adjust to the table maximum."""
        round_id = round_id or new_id()
        stakes: dict[str, Any] = {"currency": self.currency, "ante": ante, "aa_bonus": aa_bonus}
        if self.table_id is not None:
            stakes.update(version=2, table_id=self.table_id, mode=self.mode)
        place = command(
            PlaceBet, self.player_id, command_id=command_id, round_id=round_id, **stakes
        )
        return await self._start_round(place)

    async def rebet(self, *, round_id: str | None = None, command_id: str | None = None) -> Round:
        """Start a round with the bets last asked for at this player's table (through today's
        limits); ``Refused`` with ``nothing_to_rebet`` if there were none."""
        if self.table_id is None:
            raise ValueError("rebet needs a table: Player(..., table_id=...)")
        again = command(
            Rebet,
            self.player_id,
            command_id=command_id,
            round_id=round_id or new_id(),
            table_id=self.table_id,
        )
        return await self._start_round(again)

    async def play_free_hand(
        self, campaign_id: str, *, round_id: str | None = None, command_id: str | None = None
    ) -> Round:
        """Start a round with one free hand of the campaign (ADR 029): its ante and AA Bonus
        are the promotion's, the call (2 × ante) is held from the player's balance. ``Refused``
        with ``campaign_expired``, ``no_free_hands``, ``insufficient_funds`` …"""
        free = command(
            PlayFreeHand,
            self.player_id,
            command_id=command_id,
            round_id=round_id or new_id(),
            campaign_id=campaign_id,
        )
        return await self._start_round(free)

    async def free_hands(self) -> list[FreeHands]:
        """The player's free-hand campaigns and their remaining hands, from his wallet log."""
        return free_hands_of(await self.operator.wallet_log(self.player_id), self.player_id)

    async def _start_round(self, place: PlaceBet | Rebet | PlayFreeHand) -> Round:
        round_id = place.round_id
        watch = self.operator.watch(f"round:{round_id}")
        try:
            await self.operator.send(place)
            answer = await watch.until(BetPlaced, BetRejected, PromoRejected, within_s=self.step_s)
        except BaseException:
            self.operator.forget(watch.key)
            raise
        if isinstance(answer, BetRejected | PromoRejected):
            self.operator.forget(watch.key)
            raise Refused(answer)
        return Round(self, round_id, answer, watch)  # type: ignore[arg-type]

    async def end_session(
        self, reason: OperatorEndReason | None = None, *, command_id: str | None = None
    ) -> SessionEnded:
        """End the player's session at his table (ADR 020), ``ended`` or for the operator's
        ``reason`` (ADR 028): a round of it waiting for his decision is finished by the table's
        policy. ``Refused`` with ``no_session`` if none."""
        table_id = self._table()
        why: dict[str, Any] = {} if reason is None else {"reason": reason, "version": 2}
        end = command(EndSession, self.player_id, command_id=command_id, table_id=table_id, **why)
        answer = await self._ask(end, SessionEnded, SessionRejected)
        assert isinstance(answer, SessionEnded)
        return answer

    async def acknowledge_reality_check(
        self, *, command_id: str | None = None
    ) -> RealityCheckAcknowledged:
        """The player read the reality check (a bet ``Refused`` with ``reality_check``, whose
        ``event.reality_check`` says his session's time, rounds and net result): he may bet
        at his table again. ``Refused`` with ``no_reality_check`` if none is due."""
        ack = command(
            AcknowledgeRealityCheck, self.player_id, command_id=command_id, table_id=self._table()
        )
        answer = await self._ask(ack, RealityCheckAcknowledged, ProtectionRejected)
        assert isinstance(answer, RealityCheckAcknowledged)
        return answer

    def _table(self) -> str:
        if self.table_id is None:
            raise ValueError("sessions are at tables: Player(..., table_id=...)")
        return self.table_id

    def _money(self, amount: int) -> dict[str, Any]:
        return {"currency": self.currency, "amount": amount}

    async def _wallet(
        self, cmd: Deposit | Withdraw | GrantFun | ResetFun, kind: type[Message]
    ) -> Message:
        return await self._ask(cmd, kind, WalletRejected)

    async def _ask(
        self,
        cmd: Deposit | Withdraw | GrantFun | ResetFun | EndSession | AcknowledgeRealityCheck,
        kind: type[Message],
        refusal: type[WalletRejected | SessionRejected | ProtectionRejected],
    ) -> Message:
        """Send ``cmd`` and await its answer (routed by its command_id): ``kind``, or
        ``refusal`` raised as ``Refused``."""
        watch = self.operator.watch(f"command:{cmd.command_id}")
        try:
            await self.operator.send(cmd)
            answer = await watch.until(kind, refusal, within_s=self.step_s)
        finally:
            self.operator.forget(watch.key)
        if isinstance(answer, WalletRejected | SessionRejected | ProtectionRejected):
            raise Refused(answer)
        return answer


class Round:
    """A round whose bet was placed: read the deal, decide, await the outcome; ``close()`` (or
    ``outcome()``) stops following it."""

    def __init__(self, player: Player, round_id: str, placed: BetPlaced, watch: Watch) -> None:
        self.player = player
        self.round_id = round_id
        self.placed = placed
        self.watch = watch
        self._dealt: Dealt | None = None
        self._end: RoundVoided | None = None  # a void read while waiting for the deal

    async def dealt(self) -> Dealt:
        """The player's two cards and the flop (never the dealer's)."""
        if self._dealt is None:
            answer = await self.watch.until(Dealt, within_s=self.player.step_s)
            if isinstance(answer, RoundVoided):  # e.g. the watchdog's, before any deal
                self._end = answer
                raise Voided(answer)
            assert isinstance(answer, Dealt)
            self._dealt = answer
        return self._dealt

    async def call(self, *, command_id: str | None = None) -> None:
        """Raise by 2 × ante (already held since the bet) and see the showdown."""
        await self._send(Call, command_id)

    async def fold(self, *, command_id: str | None = None) -> None:
        """Give up: the ante and the AA Bonus are lost whatever the hands (ADR 002), the call
        hold goes back to the player."""
        await self._send(Fold, command_id)

    async def void(self, reason: str = "operator", *, command_id: str | None = None) -> None:
        """The operator declares a malfunction: the round is voided, every stake refunded."""
        await self._send(VoidRound, command_id, reason=reason)

    async def outcome(self) -> Outcome:
        """Wait for the round's end, its last money movement (the final balance) and the
        wallet's RoundClosed: the player's next bet is taken from then on."""
        step = self.player.step_s
        try:
            end = self._end or await self.watch.until(CommandRejected, within_s=step)
            if isinstance(end, CommandRejected):
                raise Refused(end)
            assert isinstance(end, Settled | RoundVoided)
            money = await self.watch.until(last_movement(end), within_s=step)
            if not isinstance(money, WalletEvent):  # only a terminal event can come instead
                raise StalledError(f"{self.watch.key}: no wallet movement after {end.type}")
            # The wallet's last word on the round, written with its last movement (ADR 028): a
            # lost round's payout of 0 comes after the call captured, and a bet sent before it
            # would find the round still open in the wallet and be refused.
            await self.watch.until(RoundClosed, within_s=step)
        finally:
            self.close()
        revealed = next((e for e in self.watch.seen if isinstance(e, Called | Folded)), None)
        paid = next((e.amount for e in self.watch.seen if isinstance(e, PayoutCredited)), None)
        return Outcome(self.round_id, end, revealed, money.available, paid)

    def close(self) -> None:
        self.player.operator.forget(self.watch.key)

    async def _send(self, model: type[Any], command_id: str | None, **fields: Any) -> None:
        player = self.player
        cmd = command(
            model, player.player_id, command_id=command_id, round_id=self.round_id, **fields
        )
        await player.operator.send(cmd)
