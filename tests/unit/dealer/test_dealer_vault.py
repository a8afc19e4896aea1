"""The sealed vault: a reader without the key learns nothing, tampering fails, keys rotate."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from support.dealer import GAME, VAULT, VAULT_KEYS, sealed

from holdem.core.contracts import ContractError, DeckSealed, dump, parse
from holdem.core.deck import deck_bytes
from holdem.dealer.app import checked_evolve
from holdem.dealer.settings import DealerSettings
from holdem.dealer.state import initial_state
from holdem.dealer.vault import Vault, VaultError, VaultKeyError, parse_keys

CARD_TEXTS = {f"{rank}{suit}" for rank in "23456789TJQKA" for suit in "cdhs"}


def key(byte: int) -> bytes:
    return bytes([byte]) * 32


def ring(text_keys: dict[str, bytes]) -> str:
    return ",".join(f"{kid}:{base64.b64encode(k).decode()}" for kid, k in text_keys.items())


def tampered(record: DeckSealed, field: str, index: int) -> DeckSealed:
    value = getattr(record, field)
    flipped = "0" if value[index] != "0" else "1"
    return record.model_copy(update={field: value[:index] + flipped + value[index + 1 :]})


def test_a_sealed_record_holds_no_card_text_no_deck_bytes_and_no_salt() -> None:
    record = sealed()
    raw = dump(record)
    values = json.loads(raw).values()

    assert not CARD_TEXTS & {v for v in values if isinstance(v, str)}
    assert deck_bytes(GAME.deck).hex() not in raw.decode()
    assert GAME.salt.hex() not in raw.decode()
    assert record.commitment == GAME.commitment  # public anyway: it is in Dealt


def test_it_opens_with_the_key_to_the_committed_deck_and_salt() -> None:
    opened = VAULT.open(sealed())

    assert opened.codes == tuple(GAME.deck) and opened.salt == GAME.salt


def test_a_reader_with_another_key_under_the_same_id_cannot_open_it() -> None:
    thief = Vault({"test-1": key(7)}, "test-1")

    with pytest.raises(VaultError, match="does not verify"):
        thief.open(sealed())


@pytest.mark.parametrize("field", ["ciphertext", "nonce"])
def test_changing_any_byte_of_the_sealed_data_makes_it_fail(field: str) -> None:
    record = sealed()
    for index in range(0, len(getattr(record, field)), 2):
        with pytest.raises(VaultError):
            VAULT.open(tampered(record, field, index))


@pytest.mark.parametrize(
    "update", [{"round_id": "r2"}, {"player_id": "p2"}, {"commitment": "0" * 64}]
)
def test_a_record_moved_onto_another_round_player_or_commitment_does_not_open(
    update: dict[str, str],
) -> None:
    with pytest.raises(VaultError):
        VAULT.open(sealed().model_copy(update=update))


def test_after_a_rotation_new_decks_use_the_new_key_and_old_records_still_open() -> None:
    old = Vault({"k1": key(1)}, "k1")
    record = DeckSealed(**GAME.envelope("s", 0), **old.seal("r1", "p1", GAME.deck, GAME.salt))
    rotated = Vault({"k1": key(1), "k2": key(2)}, "k2")

    fresh = rotated.seal("r1", "p1", GAME.deck, GAME.salt)
    assert fresh["key_id"] == "k2" and record.key_id == "k1"
    assert rotated.open(record).codes == tuple(GAME.deck)
    with pytest.raises(VaultError, match="unknown vault key id 'k1'"):
        Vault({"k2": key(2)}, "k2").open(record)


def test_a_plaintext_v1_record_is_refused_by_the_contract() -> None:
    v1 = {
        **json.loads(dump(sealed())),
        "version": 1,
        "deck": [str(card) for card in GAME.deck],
        "salt": GAME.salt.hex(),
    }
    with pytest.raises(ContractError):
        parse("vault", json.dumps(v1))


def test_replaying_a_record_the_ring_cannot_open_is_fatal() -> None:
    stopped: list[VaultError] = []
    fold = checked_evolve(Vault({"other": key(9)}, "other"), on_fatal=stopped.append)

    with pytest.raises(VaultError):
        fold(initial_state(), sealed())
    assert len(stopped) == 1  # main() stops the app on it and exits non-zero
    assert checked_evolve(VAULT)(initial_state(), sealed()).get("r1") is not None


def test_the_key_ring_comes_from_the_environment_or_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLDEM_DEALER_VAULT_KEYS", VAULT_KEYS)
    assert DealerSettings().vault().active == "test-1"

    monkeypatch.delenv("HOLDEM_DEALER_VAULT_KEYS")
    keys = tmp_path / "vault.keys"
    keys.write_text(ring({"k1": key(1)}) + "\n" + ring({"k2": key(2)}) + "\n")
    monkeypatch.setenv("HOLDEM_DEALER_VAULT_KEY_FILE", str(keys))
    monkeypatch.setenv("HOLDEM_DEALER_VAULT_KEY_ID", "k2")
    vault = DealerSettings().vault()
    assert (sorted(vault.keys), vault.active) == (["k1", "k2"], "k2")


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({}, "no vault key"),
        ({"HOLDEM_DEALER_VAULT_KEYS": ring({"a": key(1), "b": key(2)})}, "must name one"),
        (
            {"HOLDEM_DEALER_VAULT_KEYS": ring({"a": key(1)}), "HOLDEM_DEALER_VAULT_KEY_ID": "b"},
            "'b'",
        ),
        ({"HOLDEM_DEALER_VAULT_KEYS": "a:" + base64.b64encode(bytes(16)).decode()}, "32 bytes"),
        ({"HOLDEM_DEALER_VAULT_KEYS": "a:not base64!"}, "base64"),
        ({"HOLDEM_DEALER_VAULT_KEY_FILE": "/nonexistent/vault.keys"}, "cannot read"),
    ],
)
def test_a_missing_or_bad_key_ring_is_a_clear_error(
    env: dict[str, str], words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("KEYS", "KEY_FILE", "KEY_ID"):
        monkeypatch.delenv(f"HOLDEM_DEALER_VAULT_{name}", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    with pytest.raises(VaultKeyError, match=words):
        DealerSettings().vault()


def test_the_dealer_does_not_start_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from holdem.dealer.app import main

    monkeypatch.delenv("HOLDEM_DEALER_VAULT_KEYS", raising=False)
    monkeypatch.delenv("HOLDEM_DEALER_VAULT_KEY_FILE", raising=False)
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code not in (0, None) and "no vault key" in str(stopped.value.code)


def test_key_entries_parse_and_duplicates_are_refused() -> None:
    assert parse_keys(" # a comment\n" + ring({"k.1": key(1)})) == {"k.1": key(1)}
    with pytest.raises(VaultKeyError):
        parse_keys(ring({"k": key(1)}) + "," + ring({"k": key(2)}))
