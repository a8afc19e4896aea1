"""Issue 29 gap: the operator guide's worked example of the deck commitment is recomputed from
the guide's own text (the card codes, the deal positions, the bytes, the sha256), with nothing
but hashlib, and agrees with the dealer's ``commit`` and with the guide's round example."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from holdem.core.cards import Card
from holdem.core.deck import commit, deal

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "operator-guide.md").read_text()


def code(card: str) -> int:
    """The guide's rule: rank 2..A = 0..12, suit c d h s = 0..3, byte = rank * 4 + suit."""
    return "23456789TJQKA".index(card[0]) * 4 + "cdhs".index(card[1])


def worked() -> dict[str, str]:
    [block] = re.findall(r"```text\n(salt .*?)```", GUIDE, flags=re.S)
    return dict(re.findall(r"^(\w+)\s*=\s*([0-9a-f]+)$", block, flags=re.M))


def history_round() -> dict[str, object]:
    [line] = [line for line in GUIDE.splitlines() if line.startswith('{"type": "reply.history"')]
    rounds = json.loads(line)["rounds"]
    [found] = [r for r in rounds if r["round_id"] == "r-1001-1"]
    return found  # type: ignore[no-any-return]


def test_the_worked_example_recomputes_by_hand() -> None:
    example = worked()
    salt, deck = bytes.fromhex(example["salt"]), bytes.fromhex(example["deck"])
    assert len(salt) == 32 and sorted(deck) == list(range(52))
    assert hashlib.sha256(salt + deck).hexdigest() == example["commitment"]


def test_the_worked_example_is_the_guides_round_and_the_dealers_encoding() -> None:
    example, found = worked(), history_round()
    cards = found["deck"]
    assert isinstance(cards, list)
    assert bytes(code(card) for card in cards).hex() == example["deck"]
    assert [code(c) for c in ("2c", "2d", "Kd", "As")] == [0, 1, 45, 51]
    assert (found["salt"], found["commitment"]) == (example["salt"], example["commitment"])
    ours = [Card.parse(card) for card in cards]
    assert commit(ours, bytes.fromhex(example["salt"])) == example["commitment"]
    dealt = deal(ours)  # the guide's positions: player, dealer, flop, turn, river
    assert list(map(str, dealt.player)) == cards[0:2] == found["player_cards"]
    assert list(map(str, dealt.dealer)) == cards[2:4] == found["dealer_cards"]
    assert list(map(str, dealt.flop)) == cards[4:7] == found["flop"]
    assert [str(dealt.turn), str(dealt.river)] == cards[7:9] == [found["turn"], found["river"]]
    assert "codes 51 45 20 1 50 47 29 8 6" in GUIDE
    assert [code(card) for card in cards[:9]] == [51, 45, 20, 1, 50, 47, 29, 8, 6]
