"""The deck: CSPRNG shuffle, the sha256 commitment auditors verify, and the deal order."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from holdem.core.cards import FULL_DECK, Card

RandBelow = Callable[[int], int]
"""``randbelow(n)`` returns a uniform int in ``[0, n)``; a fresh ``OneRead`` in production."""

SALT_BYTES: Final = 32
# One read of the OS CSPRNG per shuffle: 1,024 bits, where a shuffle's 51 draws take 249 before
# rejections and 355.9 on average with them (the shuffle reads again if they ever run out).
SHUFFLE_BYTES: Final = 128
CARDS_PER_ROUND: Final = 9
_CODES: Final = frozenset(range(52))


class DeckError(ValueError):
    """A deck that is not the 52 distinct cards, or a random source that broke its contract."""


@dataclass(frozen=True, slots=True)
class Deal:
    """One round's cards, in the order they come off the deck.

    >>> d = deal(FULL_DECK)
    >>> d.player, d.dealer, d.turn, d.river
    ((Card('2c'), Card('2d')), (Card('2h'), Card('2s')), Card('3s'), Card('4c'))
    >>> d.board
    (Card('3c'), Card('3d'), Card('3h'), Card('3s'), Card('4c'))
    """

    player: tuple[Card, Card]
    dealer: tuple[Card, Card]
    flop: tuple[Card, Card, Card]
    turn: Card
    river: Card

    @property
    def board(self) -> tuple[Card, Card, Card, Card, Card]:
        """The five community cards: flop, turn, river."""
        return (*self.flop, self.turn, self.river)


@dataclass(frozen=True, slots=True)
class SealedDeck:
    """A shuffled deck with its salt and public commitment: what the dealer keeps in the vault."""

    deck: tuple[Card, ...]
    salt: bytes
    commitment: str


class OneRead:
    """A ``randbelow`` drawing from one read of the OS CSPRNG (``os.urandom``, what
    ``secrets.randbelow`` reads with a system call per draw), made fresh for each shuffle.

    ``randbelow(n)`` takes the next ``(n - 1).bit_length()`` bits of the read and rejects a
    value ``>= n`` (rejection sampling, as ``secrets.randbelow`` does): every value in
    ``[0, n)`` is equally likely. If the bits run out it reads ``size`` bytes more.

    The read's bits from the lowest: ``000`` is 0 below 8; ``11`` is 3, rejected below 3, and
    ``00`` is 0; ``01`` is 1:

    >>> draw = OneRead(lambda size: bytes([0b1_00_11_000]) + bytes(size - 1), size=4)
    >>> draw(8), draw(3), draw(3)
    (0, 0, 1)
    """

    def __init__(self, read: Callable[[int], bytes] | None = None, size: int = SHUFFLE_BYTES):
        self._read = os.urandom if read is None else read  # looked up now: tests count reads
        self._size = size
        self._bits, self._left = 0, 0

    def __call__(self, n: int) -> int:
        if n < 1:
            raise ValueError(f"randbelow({n}): n must be at least 1")
        width = (n - 1).bit_length()  # 0 bits for n = 1: the answer is 0
        mask = (1 << width) - 1
        while True:
            if self._left < width:
                self._bits = int.from_bytes(self._read(self._size), "little")
                self._left = 8 * self._size
            value = self._bits & mask
            self._bits >>= width
            self._left -= width
            if value < n:
                return value


def shuffle(
    cards: Sequence[int] = FULL_DECK,
    randbelow: RandBelow | None = None,
    *,
    read: Callable[[int], bytes] | None = None,
) -> tuple[Card, ...]:
    """Return ``cards`` in a uniformly random order (Fisher–Yates, Durstenfeld's in-place form).

    Each position ``i`` from the last down to 1 swaps with ``randbelow(i + 1)``; with an unbiased
    ``randbelow`` every one of the ``n!`` orders has probability ``1/n!``. Tests inject a
    deterministic ``randbelow``; production keeps the default: the OS CSPRNG (``read``, default
    ``os.urandom``), read once for the whole shuffle and drawn from in one loop, the very draws
    ``OneRead`` makes from the same bits.

    >>> shuffle([0, 1, 2], randbelow=lambda n: 0)
    (Card('2d'), Card('2h'), Card('2c'))
    """
    deck = [card if type(card) is Card else Card(card) for card in cards]
    if randbelow is None:
        draw_swaps(deck, os.urandom if read is None else read)  # looked up now: tests count reads
        return tuple(deck)
    for i in range(len(deck) - 1, 0, -1):
        j = randbelow(i + 1)
        if not 0 <= j <= i:
            raise DeckError(f"randbelow({i + 1}) returned {j}, outside [0, {i + 1})")
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def draw_swaps(deck: list[Any], read: Callable[[int], bytes], size: int = SHUFFLE_BYTES) -> int:
    """Fisher–Yates over ``deck`` in place, each index drawn as ``OneRead(read, size)`` draws it
    (the next ``i.bit_length()`` bits of the read, from the lowest; a value above ``i`` is
    rejected and the next bits drawn; a fresh read of ``size`` bytes when too few are left), in
    one loop. Returns the number of bits drawn (accepted and rejected).

    >>> deck = [0, 1, 2]
    >>> draw_swaps(deck, lambda size: bytes([0b1_0_11]) + bytes(size - 1)), deck
    (5, [1, 0, 2])
    """
    bits, left, drawn = 0, 0, 0
    for i in range(len(deck) - 1, 0, -1):
        width = i.bit_length()  # randbelow(i + 1): (n - 1).bit_length() bits
        mask = (1 << width) - 1
        while True:
            if left < width:
                bits, left = int.from_bytes(read(size), "little"), 8 * size
            j = bits & mask
            bits >>= width
            left -= width
            drawn += width
            if j <= i:
                break
        deck[i], deck[j] = deck[j], deck[i]
    return drawn


def new_salt() -> bytes:
    """Return 32 fresh bytes from the OS CSPRNG, the salt of one round's commitment."""
    return secrets.token_bytes(SALT_BYTES)


def deck_bytes(deck: Sequence[int]) -> bytes:
    """Encode a full deck as 52 bytes, one card code (``rank * 4 + suit``, 0..51) each, in order.

    >>> deck_bytes(FULL_DECK)[:5].hex()
    '0001020304'
    """
    ensure_full_deck(deck)
    return bytes(deck)


def commit(deck: Sequence[int], salt: bytes) -> str:
    """Return the commitment: lowercase hex of ``sha256(salt || deck_bytes(deck))``.

    The bytes hashed are the salt (32 bytes as dealt by ``new_salt``) followed by the 52 card
    codes, one byte each, in deal order (``deck[0]`` is the player's first card). An auditor needs
    nothing but sha256 to check it:

    >>> salt = bytes(32)
    >>> commit(FULL_DECK, salt) == hashlib.sha256(salt + bytes(range(52))).hexdigest()
    True
    """
    return hashlib.sha256(salt + deck_bytes(deck)).hexdigest()


def verify_commitment(deck: Sequence[int], salt: bytes, commitment: str) -> bool:
    """True if ``commitment`` (hex, any case) is ``commit(deck, salt)`` for a valid full deck.

    >>> c = commit(FULL_DECK, b"salt")
    >>> verify_commitment(FULL_DECK, b"salt", c), verify_commitment(FULL_DECK[::-1], b"salt", c)
    (True, False)
    """
    try:
        expected = commit(deck, salt)
    except DeckError:
        return False
    return hmac.compare_digest(expected, commitment.strip().lower())


def seal(randbelow: RandBelow | None = None, salt: bytes | None = None) -> SealedDeck:
    """Shuffle a fresh deck and commit to it with a fresh salt (both from the CSPRNG by default)."""
    deck = shuffle(FULL_DECK, randbelow)
    salt = new_salt() if salt is None else salt
    return SealedDeck(deck, salt, commit(deck, salt))


def deal(deck: Sequence[int]) -> Deal:
    """Deal one round from the top of a shuffled deck; no burn cards.

    Order: ``deck[0:2]`` player hole cards, ``deck[2:4]`` dealer hole cards, ``deck[4:7]`` flop,
    ``deck[7]`` turn, ``deck[8]`` river. The rest of the deck is unused.
    """
    if len(deck) < CARDS_PER_ROUND:
        raise DeckError(f"a round needs {CARDS_PER_ROUND} cards, the deck has {len(deck)}")
    c = [card if type(card) is Card else Card(card) for card in deck[:CARDS_PER_ROUND]]
    if len(set(c)) != CARDS_PER_ROUND:
        raise DeckError("the deck repeats a card among the first nine")
    return Deal((c[0], c[1]), (c[2], c[3]), (c[4], c[5], c[6]), c[7], c[8])


def ensure_full_deck(deck: Sequence[int]) -> None:
    """Raise ``DeckError`` unless ``deck`` is exactly the 52 distinct card codes, in any order."""
    if len(deck) != len(FULL_DECK) or set(deck) != _CODES:
        raise DeckError("a deck must hold each of the 52 card codes exactly once")
