"""The bench's bare relay (bench/services_relay.py) writes what the services write in a round,
on the same topics, and the bench refuses to measure with a relay that does not: a record the
services add to a round (as ``round.closed`` was) names itself in the error instead of making
every relay round wait out its step timeout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import services_relay
from bench_services import incomplete
from services_relay import (
    SCRIPT,
    Record,
    StaleRelayError,
    answer,
    check_script,
    pick_template,
    published,
)

# What a called round writes through the services today, (topic role, type), in order.
ROUND = (
    ("rounds", "round.bet_placed"),
    ("wallet", "wallet.stake_taken"),
    ("wallet", "wallet.call_held"),
    ("vault", "vault.deck_sealed"),
    ("rounds", "round.dealt"),
    ("rounds", "round.called"),
    ("rounds", "round.settled"),
    ("wallet", "wallet.call_captured"),
    ("wallet", "wallet.payout_credited"),
    ("rounds", "round.closed"),
)


def records(round_id: str, kinds: tuple[tuple[str, str], ...] = ROUND) -> list[Record]:
    player = round_id.split("-r")[0]
    return [
        (role, kind, json.dumps({"type": kind, "round_id": round_id, "player_id": player}).encode())
        for role, kind in kinds
    ]


def test_the_relay_writes_every_record_of_a_round_on_its_topic() -> None:
    assert published() == set(ROUND)
    check_script(records("p1-r000001") + records("p2-r000002"))


def test_the_settled_hop_ends_with_the_round_closed_the_players_client_waits_for() -> None:
    template = pick_template(records("old-r000001"))
    out = answer(
        "rounds",
        json.dumps({"round_id": "p9-r000042", "player_id": "p9"}).encode(),
        "round.settled",
        template,
        "wallet",
    )
    assert [(role, kind) for role, kind, _, _ in out] == list(ROUND[-3:])
    assert all(json.loads(value)["round_id"] == "p9-r000042" for _, _, value, _ in out)
    assert {key for _, _, _, key in out} == {"p9"}


def test_a_record_the_services_add_to_a_round_stops_the_bench_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stale = {
        **SCRIPT,
        "round.settled": ("wallet", ("wallet.call_captured", "wallet.payout_credited")),
    }
    monkeypatch.setattr(services_relay, "SCRIPT", stale)
    with pytest.raises(StaleRelayError, match=r"\['rounds/round.closed'\] that the relay does not"):
        check_script(records("p1-r000001"))


def test_a_record_the_relay_writes_and_the_services_no_longer_do_stops_it_too() -> None:
    without_vault = tuple(kind for kind in ROUND if kind[0] != "vault")
    with pytest.raises(StaleRelayError, match=r"relay writes \['vault/vault.deck_sealed'\]"):
        check_script(records("p1-r000001", without_vault))


def test_a_record_on_another_topic_is_a_difference_and_refusals_are_not() -> None:
    moved = tuple(("wallet", k) if k == "round.closed" else (r, k) for r, k in ROUND)
    with pytest.raises(StaleRelayError, match=r"wallet/round\.closed"):
        check_script(records("p1-r000001", moved))
    refused = (*ROUND, ("rounds", "round.command_rejected"))
    check_script(records("p1-r000001", refused))


def test_no_settled_round_to_compare_with_is_an_error_not_a_pass() -> None:
    with pytest.raises(StaleRelayError, match="no settled round"):
        check_script(records("p1-r000001", ROUND[:3]))


def test_a_round_is_incomplete_until_all_its_records_are_committed() -> None:
    done, late = records("p1-r000001"), records("p2-r000002")
    assert incomplete(done + late[:-1]) == ["p2-r000002"]  # its round.closed not yet there
    assert incomplete(done + late) == []
    assert incomplete(done + records("p3-r000003", ROUND[1:2])) == []  # no bet placed: no round
