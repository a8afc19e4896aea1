"""Issue 28's cost counter for the dealer's vault: a record the vault sealed itself is never
decrypted again (it keeps what it sealed, by the decryption's exact inputs), and the dealer folds
its own DeckSealed as built (``Spec.evolve_own``), without opening it. Any other record, or one
byte changed, is decrypted and checked."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.dealer import GAME, TABLE, VAULT_KEYS, call
from support.outbox import ListOutbox, handle
from support.rounds import RoundEvents

from holdem.core.contracts import DeckSealed, dump
from holdem.core.wire.topics import Topics
from holdem.dealer import vault as vault_module
from holdem.dealer.app import dealer_spec
from holdem.dealer.state import DealerState
from holdem.dealer.vault import SEALED_KEPT, Sealed, Vault, VaultError, parse_keys
from holdem.runtime.metrics import Metrics
from holdem.runtime.processor import Processor

TOPICS = Topics()


def vault(limit: int = SEALED_KEPT) -> Vault:
    return Vault(parse_keys(VAULT_KEYS), "test-1", Sealed(limit))


def dealer(the_vault: Vault) -> Processor[DealerState]:
    spec = dealer_spec(TABLE, the_vault, new_deck=lambda: (GAME.deck, GAME.salt))
    return Processor(spec, TOPICS, ListOutbox(), Metrics(CollectorRegistry()))  # type: ignore[arg-type]


async def play(processor: Processor[DealerState], rounds: int) -> list[Any]:
    """``rounds`` rounds bet and called; the dealer's records on the rounds topic come back to
    it, as they do from the topic it reads. What it published."""
    outbox: ListOutbox = processor.outbox  # type: ignore[assignment]
    offset = 0
    for n in range(rounds):
        game = RoundEvents(round_id=f"r{n}")
        for topic, raw in ((TOPICS.rounds, dump(game.bet_placed())),
                           (TOPICS.commands, dump(call(f"r{n}")))):  # fmt: skip
            await handle(processor, topic, 0, offset, raw, b"p1")
            offset += 1
        echoes = [r for r in outbox.records if r.topic == TOPICS.rounds]
        for record in echoes:
            await handle(processor, TOPICS.rounds, 0, offset, record.value, b"p1")
            offset += 1
    return outbox.parsed("rounds") + outbox.parsed("vault")


async def test_the_dealer_never_decrypts_a_record_its_vault_sealed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[str] = []
    real_open = Vault.open

    def counting_open(self: Vault, record: DeckSealed) -> Any:
        opened.append(record.round_id)
        return real_open(self, record)

    monkeypatch.setattr(Vault, "open", counting_open)
    the_vault = vault()
    published = await play(dealer(the_vault), 3)
    kinds = [event.type for event in published]
    assert kinds.count("round.called") == 3 and kinds.count("vault.deck_sealed") == 3
    # Opened once a round, to reveal; not to fold its own DeckSealed (it was twice).
    assert opened == ["r0", "r1", "r2"]
    # Decrypted: never (it was 2 a round: that fold, and the reveal).
    assert the_vault.sealed.decryptions == 0


async def test_a_replayed_vault_record_is_decrypted_and_checked() -> None:
    sealer = vault()
    records = [e for e in await play(dealer(sealer), 2) if isinstance(e, DeckSealed)]
    restarted = vault()  # a new process: it sealed none of them
    replay = dealer(restarted)
    for record in records:
        replay.fold(TOPICS.vault, dump(record), b"p1", 0)
    assert restarted.sealed.decryptions == 2
    assert restarted.open(records[0]).codes == tuple(GAME.deck)
    assert restarted.sealed.decryptions == 3  # it keeps only what it sealed itself


def changed(record: DeckSealed, field: str) -> DeckSealed:
    value = getattr(record, field)
    flipped = "1" if value[-1] == "0" else "0"
    return record.model_copy(update={field: value[:-1] + flipped})


@pytest.mark.parametrize("field", ["nonce", "ciphertext", "commitment"])
def test_a_changed_byte_of_a_sealed_record_is_decrypted_and_refused(field: str) -> None:
    the_vault = vault()
    envelope = GAME.envelope("sealed", 0)
    record = DeckSealed(**envelope, **the_vault.seal("r1", "p1", GAME.deck, GAME.salt))
    assert the_vault.open(record).codes == tuple(GAME.deck)
    assert the_vault.sealed.decryptions == 0
    assert the_vault.open(record) == vault().open(record)  # kept: what decrypting gives
    with pytest.raises(VaultError):
        the_vault.open(changed(record, field))
    assert the_vault.sealed.decryptions == 1
    other_round = record.model_copy(update={"round_id": "r2"})  # other associated data
    with pytest.raises(VaultError):
        the_vault.open(other_round)
    assert the_vault.sealed.decryptions == 2


def test_the_vault_keeps_at_most_its_limit_and_forgets_the_oldest() -> None:
    the_vault = vault(limit=2)
    records = [
        DeckSealed(
            **RoundEvents(round_id=f"r{n}").envelope("sealed", 0),
            **the_vault.seal(f"r{n}", "p1", GAME.deck, GAME.salt),
        )
        for n in range(3)
    ]
    assert len(the_vault.sealed.opened) == 2
    for record in records:
        assert the_vault.open(record).salt == GAME.salt
    assert the_vault.sealed.decryptions == 1  # only r0, forgotten, was decrypted
    assert SEALED_KEPT == 4096


def test_the_vault_builds_one_cipher_per_key_not_one_per_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 28's cost counter: AES-GCM ciphers built, once per key of the ring the vault uses,
    whatever the number of records it seals and opens; a record sealed under a rotated key
    still opens, and a wrong one is still refused."""
    built: list[bytes] = []
    real = vault_module.AESGCM

    def counted(key: bytes) -> Any:
        built.append(key)
        return real(key)

    monkeypatch.setattr(vault_module, "AESGCM", counted)
    keys = {"k1": bytes(range(32)), "k2": bytes(range(1, 33))}
    old, new = Vault(keys, "k1"), Vault(keys, "k2")
    sealed_old = [
        DeckSealed(
            **RoundEvents(round_id=f"r{n}").envelope("sealed", 0),
            **old.seal(f"r{n}", "p1", GAME.deck, GAME.salt),
        )
        for n in range(20)
    ]
    assert old.sealed.ciphers_built == len(built) == 1
    for n in range(20):
        new.seal(f"s{n}", "p1", GAME.deck, GAME.salt)
    for record in sealed_old:  # sealed under k1 by another vault: decrypted with k1
        assert new.open(record).codes == tuple(GAME.deck)
    assert new.sealed.decryptions == 20
    assert new.sealed.ciphers_built == 2  # k2 to seal, k1 to open
    with pytest.raises(VaultError):
        new.open(changed(sealed_old[0], "ciphertext"))
    assert len(built) == 3  # k1 by the old vault, k2 and k1 by the new one
