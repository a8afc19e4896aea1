"""Table limits and auto-adjust: what a table accepts as ante and AA Bonus, in minor units."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from holdem.core.chips import check_chips, is_chip_sum, largest_chip_sum
from holdem.core.errors import BetBelowMinimumError, NotChipsError, StakeError

OffChips = Literal["ignore", "reject", "adjust"]


@dataclass(frozen=True, slots=True)
class TableLimits:
    """A table's limits in minor units: ante min/max, AA Bonus max, and its chip denominations
    with what a bet that is not a sum of them gets: ``ignore`` (chips only shown), ``reject``
    or ``adjust`` (lowered to the largest chip sum below it)."""

    ante_min: int
    ante_max: int
    bonus_max: int
    chips: tuple[int, ...] = ()
    off_chips: OffChips = "ignore"

    def __post_init__(self) -> None:
        if not 0 < self.ante_min <= self.ante_max or self.bonus_max < 0:
            raise ValueError(f"inconsistent table limits: {self}")
        if any(chip <= 0 for chip in self.chips):
            raise ValueError(f"chip values must be positive: {self.chips}")
        if self.off_chips != "ignore":
            check_chips(self.chips)  # ChipSetError (a ValueError): none, or too many residues

    def on_chips(self, amount: int) -> int:
        """The largest chip sum not above ``amount`` (``amount`` when chips are ignored)."""
        return amount if self.off_chips == "ignore" else largest_chip_sum(amount, self.chips)


@dataclass(frozen=True, slots=True)
class Adjustment:
    """One bet that auto-adjust lowered: from ``requested`` to ``allowed``."""

    bet: Literal["ante", "aa_bonus"]
    requested: int
    allowed: int


@dataclass(frozen=True, slots=True)
class AdjustedBets:
    """The bets a table accepts, and what auto-adjust changed to get there."""

    ante: int
    aa_bonus: int
    adjustments: tuple[Adjustment, ...] = ()

    @property
    def adjusted(self) -> bool:
        """True if auto-adjust lowered any bet."""
        return bool(self.adjustments)


def check_stake(name: str, stake: object, minimum: int = 0) -> None:
    """Raise ``StakeError`` unless ``stake`` is an int (not a bool) of at least ``minimum``."""
    if isinstance(stake, bool) or not isinstance(stake, int):
        raise StakeError(f"{name} must be an integer amount in minor units, got {stake!r}")
    if stake < minimum:
        raise StakeError(f"{name} must be at least {minimum}, got {stake}")


def auto_adjust(ante: int, aa_bonus: int, limits: TableLimits) -> AdjustedBets:
    """Lower each bet above its table max to the highest amount allowed (the max, or the
    largest chip sum below it); an ante below the min is rejected. With chips enforced, a bet
    that is not a chip sum is rejected (``NotChipsError``) or lowered to one, as the table says;
    the minimum is checked after that.

    >>> adjusted = auto_adjust(500, 300, TableLimits(ante_min=10, ante_max=400, bonus_max=300))
    >>> adjusted.ante, adjusted.aa_bonus, adjusted.adjustments
    (400, 300, (Adjustment(bet='ante', requested=500, allowed=400),))
    >>> chips = TableLimits(10, 400, 300, chips=(4, 10), off_chips="adjust")
    >>> auto_adjust(13, 0, chips).ante, auto_adjust(500, 0, chips).ante
    (12, 400)
    """
    check_stake("ante", ante)
    check_stake("aa_bonus", aa_bonus)
    bets: tuple[tuple[Literal["ante", "aa_bonus"], int, int], ...] = (
        ("ante", ante, limits.ante_max),
        ("aa_bonus", aa_bonus, limits.bonus_max),
    )
    allowed: dict[str, int] = {}
    changed: list[Adjustment] = []
    for bet, asked, cap in bets:
        if limits.off_chips == "reject" and not is_chip_sum(asked, limits.chips):
            raise NotChipsError(f"{bet} {asked} is not a sum of the chips {limits.chips}")
        value = limits.on_chips(min(asked, cap))
        allowed[bet] = value
        if value != asked:
            changed.append(Adjustment(bet, asked, value))
    if allowed["ante"] < limits.ante_min:
        shown = "" if allowed["ante"] == ante else f" (adjusted from {ante})"
        raise BetBelowMinimumError(
            f"ante {allowed['ante']}{shown} is below the table minimum {limits.ante_min}"
        )
    return AdjustedBets(allowed["ante"], allowed["aa_bonus"], tuple(changed))
