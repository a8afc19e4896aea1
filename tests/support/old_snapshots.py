"""The snapshot encoders as they were before the codecs were derived from the state types
(commit cb0c72b: dealer v2, wallet v3, settlement v1), before promotions (commit bb74a0b:
wallet v4) and before player protection (commit 2a45df5: wallet v5), kept to write the
snapshots a service of that release left on its snapshot topic, which today's ``load_state``
must still read."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

import orjson

from holdem.core.contracts import DeckSealed, dump
from holdem.dealer import snapshot as dealer_snapshot
from holdem.dealer.state import DealerState, Round, Session
from holdem.settlement.state import HistoryEntry, RoundState, SettlementState
from holdem.wallet import snapshot as wallet_snapshot
from holdem.wallet.state import State

STAKE = ("player_id", "currency", "mode", "ante", "aa_bonus", "call_hold", "call", "status",
         "paid_by")  # fmt: skip


def dealer_v2(state: DealerState) -> bytes:
    def round_(r: Round) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(Round):
            value = getattr(r, f.name)
            if f.default is not MISSING and value == f.default:
                continue
            out[f.name] = dump(value).decode() if isinstance(value, DeckSealed) else value
        return out

    def session(s: Session) -> dict[str, Any]:
        return {f.name: getattr(s, f.name) for f in fields(Session)}

    return orjson.dumps(
        {
            "service": "dealer",
            "version": 2,
            "rounds": [round_(state.rounds[round_id]) for round_id in sorted(state.rounds)],
            "commands": sorted([*key, *answer] for key, answer in state.commands.items()),
            "closed": {player: list(ids) for player, ids in sorted(state.closed.items())},
            "used": {player: list(ids) for player, ids in sorted(state.used.items())},
            "sessions": [session(state.sessions[key]) for key in sorted(state.sessions)],
            "ended": {player: list(ids) for player, ids in sorted(state.ended.items())},
        }
    )


def dealer_v3(state: DealerState) -> bytes:
    """The dealer's v3 snapshot: v4 without the forced decks (ADR 030), which it could not say."""
    document = orjson.loads(dealer_snapshot.dump_state(state))
    assert not document.pop("forced", None), "a v3 snapshot has no forced deck"
    for r in document["rounds"]:
        assert not r.pop("forced", False), "a v3 snapshot has no forced round"
    return orjson.dumps({**document, "version": 3})


def _wire(event: Any) -> str | None:
    """An event as the old release wrote it: without the fields later versions added (a Dealt
    v3's and a reveal v2's ``forced``, ADR 030; ``campaign_id``, ADR 029), which it did not have."""
    if event is None:
        return None
    if getattr(event, "forced", None) is False:
        event = event.model_dump(mode="json", exclude={"forced"})
    return orjson.dumps(_before_promotions(event)).decode()


def _before_promotions(event: Any) -> Any:
    """A record as the release before ADR 029 wrote it: no ``campaign_id`` (its contracts had
    none; a record that has one is a free hand's, which that release could not hold)."""
    body = orjson.loads(dump(event)) if not isinstance(event, dict) else dict(event)
    if body is not None and body.get("campaign_id", "absent") is None:
        del body["campaign_id"]
    return body


def wallet_v3(state: State) -> bytes:
    applied: dict[str, list[str]] = {}
    for player_id, key in sorted(state.applied):
        applied.setdefault(player_id, []).append(key)
    bridges = {
        k: [_wire(b.debit), b.status, b.debit_applied, _wire(b.request), b.sent_at]
        for k, b in state.bridges.rounds.items()
    }
    return orjson.dumps(
        {
            "service": "wallet",
            "version": 3,
            "accounts": [[*key, a.available, a.held] for key, a in state.accounts.items()],
            "house": [[*key, amount] for key, amount in state.house.items()],
            "rounds": {
                round_id: [getattr(stake, name) for name in STAKE]
                for round_id, stake in state.rounds.items()
            },
            "open_rounds": state.open_rounds,
            "evidence": [
                [*key, [e.commitment, _wire(e.reveal), e.unverifiable]]
                for key, e in state.evidence.items()
            ],
            "closed": state.closed,
            "answered": {
                player: [[c, at, state.commands[(player, c)]] for c, at in seen]
                for player, seen in state.answered.items()
            },
            "applied": applied,
            "horizon": state.horizon,
            "bridges": {"rounds": bridges, "closed": state.bridges.closed},
            "rebets": {
                player: [[table, ante, bonus] for table, (ante, bonus) in tables.items()]
                for player, tables in state.rebets.items()
            },
        }
    )


def wallet_v5(state: State) -> bytes:
    """The wallet snapshot of the release with promotions, before player protection (v5,
    commit 2a45df5): the v6 document without the protection, which v5 could not say."""
    document = orjson.loads(wallet_snapshot.dump_state(state))
    protection = document.pop("protection")
    assert not any(protection.values()), "v5 could not hold player protection"
    return orjson.dumps({**document, "version": 5})


def wallet_v4(state: State) -> bytes:
    """The wallet snapshot of the release before promotions (v4, commit bb74a0b): the v5
    document without the promotion account and campaigns, a stake row without its campaign."""
    assert not state.campaigns and not state.promo, "v4 could not hold promotions"
    document = orjson.loads(wallet_v5(state))
    del document["promo"], document["campaigns"]
    document["version"] = 4
    document["rounds"] = {k: row[: len(STAKE)] for k, row in document["rounds"].items()}
    for bridge in document["bridges"].values():
        bridge["debit"] = _before_promotions(bridge["debit"])
        if bridge["request"] is not None:
            bridge["request"] = _before_promotions(bridge["request"])
    for _, evidence in document["evidence"]:
        if evidence["reveal"] is not None:
            evidence["reveal"] = _before_promotions(evidence["reveal"])
    return orjson.dumps(document)


def settlement_v1(state: SettlementState) -> bytes:
    def round_(r: RoundState) -> list[Any]:
        faults = [[f.malfunction_id, f.source, f.reason] for f in r.faults]
        events = [_wire(r.bet), _wire(r.dealt), _wire(r.decision)]
        return [r.round_id, r.player_id, *events, faults, r.status, r.settled_id, r.mismatch_id]

    entry = [f.name for f in fields(HistoryEntry)]
    return orjson.dumps(
        {
            "service": "settlement",
            "version": 1,
            "rounds": [round_(r) for r in state.rounds.values()],
            "ended": state.ended,
            "history": {
                player: [[getattr(e, name) for name in entry] for e in entries]
                for player, entries in state.history.items()
            },
            "history_limit": state.history_limit,
        }
    )
