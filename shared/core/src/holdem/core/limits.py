"""Table limits and auto-adjust: what a table accepts as ante and AA Bonus, in minor units."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from holdem.core.errors import BetBelowMinimumError, StakeError


@dataclass(frozen=True, slots=True)
class TableLimits:
    """A table's limits in minor units: ante min/max, AA Bonus max; chip values are for display."""

    ante_min: int
    ante_max: int
    bonus_max: int
    chips: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not 0 < self.ante_min <= self.ante_max or self.bonus_max < 0:
            raise ValueError(f"inconsistent table limits: {self}")
        if any(chip <= 0 for chip in self.chips):
            raise ValueError(f"chip values must be positive: {self.chips}")


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
    """Lower each bet above its table max to the max; an ante below the min is rejected.

    >>> adjusted = auto_adjust(500, 300, TableLimits(ante_min=10, ante_max=400, bonus_max=300))
    >>> adjusted.ante, adjusted.aa_bonus, adjusted.adjustments
    (400, 300, (Adjustment(bet='ante', requested=500, allowed=400),))
    """
    check_stake("ante", ante)
    check_stake("aa_bonus", aa_bonus)
    if ante < limits.ante_min:
        raise BetBelowMinimumError(f"ante {ante} is below the table minimum {limits.ante_min}")
    caps: tuple[tuple[Literal["ante", "aa_bonus"], int, int], ...] = (
        ("ante", ante, limits.ante_max),
        ("aa_bonus", aa_bonus, limits.bonus_max),
    )
    changed = tuple(Adjustment(bet, asked, cap) for bet, asked, cap in caps if asked > cap)
    return AdjustedBets(min(ante, limits.ante_max), min(aa_bonus, limits.bonus_max), changed)
