"""The sealed vault: AES-256-GCM of each round's deck and salt under a rotating dealer key ring."""

from __future__ import annotations

import base64
import binascii
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from holdem.core.contracts import DeckSealed
from holdem.core.deck import SALT_BYTES, DeckError, commit, deck_bytes

KEY_BYTES = 32  # AES-256
NONCE_BYTES = 12  # GCM's 96-bit nonce, fresh from the OS CSPRNG per record
DECK_CARDS = 52
# The records a vault sealed, kept to open them again without decrypting: at most this many
# (the oldest goes first). About 300 bytes each: a round's deck is revealed within seconds.
SEALED_KEPT: Final = 4096

# (key, nonce, ciphertext, associated data): every input of AES-GCM's decryption.
_Sealed = tuple[bytes, bytes, bytes, bytes]


class VaultError(Exception):
    """A vault record that cannot be opened: unknown key id, or a tag that does not verify."""


class VaultKeyError(ValueError):
    """A key ring that cannot be used: none given, malformed, or its active id missing."""


@dataclass(frozen=True)
class Opened:
    """What a vault record holds once opened: the deck's card codes in deal order and the salt."""

    codes: tuple[int, ...]
    salt: bytes


def parse_keys(text: str) -> dict[str, bytes]:
    """``kid1:<base64 of 32 bytes>,kid2:...`` (commas or newlines) into {key id: key}.

    >>> sorted(parse_keys("a:" + "A" * 43 + "=, b:" + "B" * 43 + "="))
    ['a', 'b']
    """
    keys: dict[str, bytes] = {}
    for item in text.replace("\n", ",").split(","):
        item = item.strip()
        if not item or item.startswith("#"):
            continue
        key_id, sep, encoded = item.partition(":")
        key_id = key_id.strip()
        if not sep or not key_id.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise VaultKeyError(f"vault key entry {key_id[:32]!r} is not 'id:<base64 key>'")
        try:
            key = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            raise VaultKeyError(f"vault key {key_id!r} is not valid base64") from None
        if len(key) != KEY_BYTES or key_id in keys or len(key_id) > 32 or not key_id.isascii():
            raise VaultKeyError(f"vault key {key_id!r}: need a unique id and {KEY_BYTES} bytes")
        keys[key_id] = key
    return keys


class Sealed:
    """What one vault sealed, by the exact inputs of the decryption that would open it, and how
    many records it really decrypted (a cost counter, issue 28); and the AES-GCM cipher of each
    key of the ring, built once (building one took more CPU than a deck's encryption), with how
    many were built (a cost counter: one per key used, not one per record)."""

    def __init__(self, limit: int = SEALED_KEPT) -> None:
        self.limit = limit
        self.opened: OrderedDict[_Sealed, Opened] = OrderedDict()
        self.decryptions = 0
        self.ciphers: dict[bytes, AESGCM] = {}
        self.ciphers_built = 0

    def cipher(self, key: bytes) -> AESGCM:
        """The AES-GCM cipher of ``key`` (a key of the vault's ring, so at most its size)."""
        found = self.ciphers.get(key)
        if found is None:
            found = self.ciphers[key] = AESGCM(key)
            self.ciphers_built += 1
        return found

    def keep(self, sealed: _Sealed, opened: Opened) -> None:
        self.opened[sealed] = opened
        while len(self.opened) > self.limit:
            self.opened.popitem(last=False)


@dataclass(frozen=True)
class Vault:
    """Seals with the active key; opens with any key of the ring, so old records outlive a
    rotation as long as their key stays in the ring.

    It keeps what it sealed (``Sealed``, at most ``SEALED_KEPT``): a record with exactly the
    key, nonce, ciphertext and associated data it sealed opens to what it sealed without being
    decrypted, since decrypting those bytes can only give that. Any other record, or one byte
    changed, is decrypted and checked."""

    keys: Mapping[str, bytes]
    active: str
    sealed: Sealed = field(default_factory=Sealed, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.keys:
            raise VaultKeyError("the vault key ring is empty")
        if self.active not in self.keys:
            raise VaultKeyError(f"the active vault key id {self.active!r} is not in the ring")

    def seal(
        self, round_id: str, player_id: str, codes: Sequence[int], salt: bytes
    ) -> dict[str, Any]:
        """The DeckSealed fields (but the envelope) of ``codes`` and ``salt`` for one round."""
        commitment = commit(codes, salt)
        nonce = os.urandom(NONCE_BYTES)
        aad = _aad(round_id, player_id, commitment, self.active)
        key, deck = self.keys[self.active], deck_bytes(codes)
        sealed = self.sealed.cipher(key).encrypt(nonce, deck + salt, aad)
        # Kept as ``open`` would read it back: the codes are the plaintext's first 52 bytes.
        self.sealed.keep((key, nonce, sealed, aad), Opened(tuple(deck), salt))
        return {
            "key_id": self.active,
            "nonce": nonce.hex(),
            "ciphertext": sealed.hex(),
            "commitment": commitment,
        }

    def open(self, record: DeckSealed) -> Opened:
        """The deck and salt of ``record``; ``VaultError`` unless it opens, for its own round,
        to the deck its commitment names."""
        key = self.keys.get(record.key_id)
        if key is None:
            raise VaultError(f"round {record.round_id}: unknown vault key id {record.key_id!r}")
        aad = _aad(record.round_id, record.player_id, record.commitment, record.key_id)
        nonce, ciphertext = bytes.fromhex(record.nonce), bytes.fromhex(record.ciphertext)
        kept = self.sealed.opened.get((key, nonce, ciphertext, aad))
        if kept is not None:
            return kept
        self.sealed.decryptions += 1
        try:
            plain = self.sealed.cipher(key).decrypt(nonce, ciphertext, aad)
        except InvalidTag:
            raise VaultError(f"round {record.round_id}: the vault record does not verify") from None
        codes, salt = tuple(plain[:DECK_CARDS]), plain[DECK_CARDS:]
        # Authenticated, so this only fails for a record sealed by a broken dealer.
        try:
            committed = len(salt) == SALT_BYTES and commit(codes, salt) == record.commitment
        except DeckError:
            committed = False
        if not committed:
            raise VaultError(f"round {record.round_id}: the sealed deck is not the committed one")
        return Opened(codes, salt)


def _aad(round_id: str | None, player_id: str, commitment: str, key_id: str) -> bytes:
    # Binds the ciphertext to its round: a record copied onto another round does not open.
    return f"holdem.vault.v2\n{round_id}\n{player_id}\n{commitment}\n{key_id}".encode()
