"""Currencies and their minor units (ADR 029): how many decimals a currency's amounts have, to
write integer minor units for people and read what people type back into them.

ISO 4217 gives every national currency its exponent (JPY 0, EUR 2, BHD 3, CLF 4); a deployment
adds the codes ISO does not have (crypto) with up to ``MAX_EXPONENT`` decimals, configured
(``HOLDEM_CURRENCIES``, e.g. ``"BTC=8,ETH=8"``). Money stays integer minor units everywhere:
only the edges (displays, summaries, a person's typed stake) look at the exponent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

MAX_EXPONENT: Final = 8  # a configured code may have up to 8 decimals (satoshis)
CODE = re.compile(r"^[A-Z]{3}$")  # the contracts' Currency

# ISO 4217 (list one, 2024 edition) currencies whose exponent is not 2; every other active
# code there has 2. Funds and metals codes without minor units (XAU, XDR, …) are not money a
# table can play in and are left out.


def _codes(text: str) -> list[str]:
    return text.split()


_NOT_TWO: Final = {
    **dict.fromkeys(
        _codes("BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"), 0
    ),
    **dict.fromkeys(_codes("BHD IQD JOD KWD LYD OMR TND"), 3),
    **dict.fromkeys(_codes("CLF UYW"), 4),
}
_TWO: Final = _codes(
    "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP "
    "BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD "
    "FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD "
    "KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD "
    "NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP "
    "SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED "
    "VES WST XCD YER ZAR ZMW ZWG"
)
ISO_4217: Final[Mapping[str, int]] = {**dict.fromkeys(_TWO, 2), **_NOT_TWO}
# Codes ISO does not have that a deployment plays in unless it configures them otherwise.
CRYPTO_DEFAULTS: Final[Mapping[str, int]] = {"BTC": 8, "ETH": 8, "LTC": 8}


class CurrencyError(ValueError):
    """An unknown code, a bad configuration, or an amount the currency cannot write."""


@dataclass(frozen=True)
class Currencies:
    """The currency table: ISO 4217 and the configured codes (which may not redefine an ISO
    one: JPY has no cents whatever a configuration says).

    >>> table = Currencies({"BTC": 8})
    >>> table.exponent("JPY"), table.exponent("BHD"), table.exponent("BTC")
    (0, 3, 8)
    >>> table.format(123456, "EUR"), table.format(123456, "JPY"), table.format(-5, "BHD")
    ('1234.56', '123456', '-0.005')
    """

    extra: Mapping[str, int] = field(default_factory=lambda: dict(CRYPTO_DEFAULTS))

    def __post_init__(self) -> None:
        for code, exponent in self.extra.items():
            if not CODE.match(code):
                raise CurrencyError(f"{code!r} is not a currency code (3 capital letters)")
            if code in ISO_4217:
                raise CurrencyError(f"{code} is an ISO 4217 currency: its exponent is fixed")
            if type(exponent) is not int or not 0 <= exponent <= MAX_EXPONENT:
                raise CurrencyError(f"{code}: {exponent!r} decimals (0 to {MAX_EXPONENT})")

    @classmethod
    def from_text(cls, text: str) -> Currencies:
        """The configured codes as ``"BTC=8,ETH=6"`` (added to the crypto defaults).

        >>> Currencies.from_text("ETH=6, USX=4").exponent("ETH")
        6
        """
        extra = dict(CRYPTO_DEFAULTS)
        for item in filter(None, (part.strip() for part in text.split(","))):
            code, sep, decimals = item.partition("=")
            if not sep or not decimals.strip().isdigit():
                raise CurrencyError(f"{item!r}: write CODE=DECIMALS, e.g. BTC=8")
            extra[code.strip()] = int(decimals)
        return cls(extra)

    def known(self, code: str) -> bool:
        return code in ISO_4217 or code in self.extra

    def exponent(self, code: str) -> int:
        """How many decimals ``code``'s amounts have (its minor units per major: 10**it)."""
        if code in ISO_4217:
            return ISO_4217[code]
        if code in self.extra:
            return self.extra[code]
        raise CurrencyError(f"unknown currency {code!r}")

    def format(self, minor: int, code: str) -> str:
        """Integer minor units as the currency writes them; a sign only when negative."""
        return written(minor, self.exponent(code))

    def parse(self, text: str, code: str) -> int:
        """A non-negative amount in major units (``"2.5"``) as minor units; more decimals than
        the currency has is an error, never a rounding.

        >>> table = Currencies()
        >>> table.parse("2.5", "EUR"), table.parse("2.5", "BHD"), table.parse("250", "JPY")
        (250, 2500, 250)
        >>> table.parse("2.5", "JPY")
        Traceback (most recent call last):
        holdem.core.currencies.CurrencyError: not an amount of JPY: '2.5' (0 decimals)
        """
        exponent = self.exponent(code)
        decimals = rf"(\.\d{{1,{exponent}}})?" if exponent else ""
        if not re.fullmatch(rf"\d+{decimals}", text):
            raise CurrencyError(f"not an amount of {code}: {text!r} ({exponent} decimals)")
        return int(Decimal(text).scaleb(exponent))


def written(minor: int, exponent: int) -> str:
    """Integer minor units with ``exponent`` decimals; a sign only when negative."""
    sign, units = ("-" if minor < 0 else ""), abs(minor)
    if not exponent:
        return f"{sign}{units}"
    whole, part = divmod(units, 10**exponent)
    return f"{sign}{whole}.{part:0{exponent}d}"


CURRENCIES: Final = Currencies()  # ISO 4217 and the crypto defaults, for who reads no settings


def money(minor: int, currency: str = "EUR", table: Currencies = CURRENCIES) -> str:
    """``minor`` as ``currency`` writes it (a code the table does not know: 2 decimals).

    >>> money(12345), money(12345, "JPY"), money(12345, "BHD"), money(5, "BTC")
    ('123.45', '12345', '12.345', '0.00000005')
    """
    return written(minor, table.exponent(currency) if table.known(currency) else 2)
