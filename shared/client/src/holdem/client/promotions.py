"""Promotions in the SDK (ADR 029): the operator grants free hands and credits promotion money;
a player's campaigns, as his wallet log tells them (what ``Player.free_hands()`` shows)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from holdem.client.commands import command
from holdem.client.watch import Sender
from holdem.core.contracts import (
    CancelFreeHands,
    CreditPromo,
    FreeHandsCancelled,
    FreeHandsExpired,
    FreeHandsGranted,
    FreeStakeRefunded,
    FreeStakeTaken,
    GrantFreeHands,
    Message,
    PromoCredited,
    PromoRejected,
)

STEP_S = 60.0


class PromoRefused(Exception):
    """A promotion command the wallet refused: ``reason`` is the stable code."""

    def __init__(self, event: PromoRejected) -> None:
        super().__init__(f"{event.type}: {event.reason.value} {event.detail}".strip())
        self.event = event
        self.reason = event.reason


@dataclass(frozen=True)
class FreeHands:
    """One campaign of a player: each hand's bets, how many are left, whether it still runs."""

    campaign_id: str
    table_id: str
    currency: str
    ante: int
    aa_bonus: int
    hands: int
    expires_at: datetime
    played: int = 0
    status: str = "active"  # or "cancelled", "expired"

    @property
    def remaining(self) -> int:
        return self.hands - self.played if self.status == "active" else 0


def free_hands_of(events: Iterable[Any], player_id: str) -> list[FreeHands]:
    """The player's campaigns from his wallet log, oldest first (the wallet's own rules: a
    voided hand is given back; the first grant of an id wins).

    >>> from datetime import UTC
    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> env = dict(event_id="e", player_id="p", occurred_at=at, campaign_id="c")
    >>> g = FreeHandsGranted(**env, command_id="k", fingerprint="0" * 32, table_id="t",
    ...                      currency="EUR", hands=5, ante=100, aa_bonus=0, expires_at=at)
    >>> [(c.campaign_id, c.remaining) for c in free_hands_of([g], "p")]
    [('c', 5)]
    """
    found: dict[str, FreeHands] = {}
    for event in events:
        if getattr(event, "player_id", None) != player_id:
            continue
        if isinstance(event, FreeHandsGranted) and event.campaign_id not in found:
            fields = ("table_id", "currency", "ante", "aa_bonus", "hands", "expires_at")
            found[event.campaign_id] = FreeHands(
                event.campaign_id, **{name: getattr(event, name) for name in fields}
            )
        campaign = found.get(getattr(event, "campaign_id", None) or "")
        if campaign is None:
            continue
        if isinstance(event, FreeStakeTaken | FreeStakeRefunded):
            step = 1 if isinstance(event, FreeStakeTaken) else -1
            found[campaign.campaign_id] = replace(campaign, played=campaign.played + step)
        elif isinstance(event, FreeHandsCancelled | FreeHandsExpired) and campaign.remaining:
            status = "cancelled" if isinstance(event, FreeHandsCancelled) else "expired"
            found[campaign.campaign_id] = replace(campaign, status=status)
    return list(found.values())


async def grant_free_hands(
    operator: Sender,
    players: str | Sequence[str],
    *,
    table_id: str,
    hands: int,
    ante: int,
    expires_at: datetime,
    aa_bonus: int = 0,
    campaign_id: str,
) -> dict[str, FreeHandsGranted | PromoRejected]:
    """Grant each player the campaign; one command per player, its id ``grant-<campaign_id>``
    (a retried call grants nobody twice). The answer per player: granted, or refused."""
    names = [players] if isinstance(players, str) else list(players)
    fields: dict[str, Any] = {
        "table_id": table_id,
        "hands": hands,
        "ante": ante,
        "aa_bonus": aa_bonus,
    }
    answers: dict[str, FreeHandsGranted | PromoRejected] = {}
    for player_id in names:
        grant = command(
            GrantFreeHands,
            player_id,
            command_id=f"grant-{campaign_id}",
            campaign_id=campaign_id,
            expires_at=expires_at,
            **fields,
        )
        answer = await ask(operator, grant, FreeHandsGranted)
        assert isinstance(answer, FreeHandsGranted | PromoRejected)
        answers[player_id] = answer
    return answers


async def credit_promo(
    operator: Sender,
    player_id: str,
    amount: int,
    *,
    campaign_id: str,
    reason: str,
    currency: str = "EUR",
    command_id: str | None = None,
) -> PromoCredited:
    """Credit promotion money outside any round; ``PromoRefused`` if the wallet refuses it."""
    credit = command(
        CreditPromo,
        player_id,
        command_id=command_id,
        currency=currency,
        amount=amount,
        campaign_id=campaign_id,
        reason=reason,
    )
    answer = await ask(operator, credit, PromoCredited)
    if isinstance(answer, PromoRejected):
        raise PromoRefused(answer)
    assert isinstance(answer, PromoCredited)
    return answer


async def cancel_free_hands(
    operator: Sender, player_id: str, campaign_id: str, *, command_id: str | None = None
) -> FreeHandsCancelled:
    """End the player's campaign now (a hand in play finishes); ``PromoRefused`` if it does not
    run (``unknown_campaign``, ``campaign_expired``, ``campaign_cancelled``)."""
    cancel = command(CancelFreeHands, player_id, command_id=command_id, campaign_id=campaign_id)
    answer = await ask(operator, cancel, FreeHandsCancelled)
    if isinstance(answer, PromoRejected):
        raise PromoRefused(answer)
    assert isinstance(answer, FreeHandsCancelled)
    return answer


async def ask(operator: Sender, cmd: Any, kind: type[Message]) -> Message:
    """Send a promotion command and await its answer (``kind`` or the refusal)."""
    watch = operator.watch(f"command:{cmd.command_id}")
    try:
        await operator.send(cmd)
        return await watch.until(kind, PromoRejected, within_s=STEP_S)
    finally:
        operator.forget(watch.key)
