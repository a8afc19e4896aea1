"""Game terminology in en, bg, ro, ms and nb, copied from the rule sheets' translation tables."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from holdem.core.cards import HandCategory

ENGLISH: Final = "en"


class TermError(LookupError):
    """A term key or language the catalogue does not have."""


def term(key: str, lang: str = ENGLISH) -> str:
    """The text of ``key`` in ``lang`` (``en``, ``bg``, ``ro``, ``ms`` or ``nb``): a term of the
    sheets' closing tables, else one of their controls (``CONTROLS``).

    >>> term("hand.full_house", "nb"), term("bet.call", "ro"), term("bet.ante")
    ('Fullt hus', 'SEC', 'ANTE')
    >>> term("control.fold", "ro")
    'Renunţ'
    """
    found = catalogue(lang).get(key) or CONTROLS.get(lang, {}).get(key)
    if found is None:
        raise TermError(f"no term {key!r}; keys: {', '.join((*KEYS, *CONTROL_KEYS))}")
    return found


def hand_term(hand: HandCategory, lang: str = ENGLISH) -> str:
    """The name of a hand category, e.g. ``Four of a kind``.

    >>> hand_term(HandCategory.FOUR_OF_A_KIND, "bg")
    'Каре'
    """
    return term(f"hand.{hand.key}", lang)


def catalogue(lang: str) -> Mapping[str, str]:
    """Every term of one language, key to text."""
    try:
        return CATALOGUES[lang]
    except KeyError:
        raise TermError(f"no language {lang!r}; languages: {', '.join(LANGUAGES)}") from None


# Keys are stable; the English text is each sheet's "English term" column. The translations are
# exactly as the sheets print them, slips included (bg "Tаблица" starts with a Latin T, bg
# "ДЪЛЪРЪТ", ms "PASANGAN 45"): fix them here only when the sheets are fixed.
_CATALOGUES: Final[dict[str, dict[str, str]]] = {
    "en": {
        "ui.paytable": "Paytable",
        "limit.max": "Max",
        "limit.min": "Min",
        "role.player": "Player",
        "role.dealer": "Dealer",
        "result.tie": "Tie",
        "result.push": "Push",
        "bet.ante": "ANTE",
        "bet.call": "CALL",
        "bet.aa_bonus": "AA BONUS",
        "bonus.pair_aces_or_better": "PAIR ACES OR BETTER",
        "ante.winning": "Ante Winning",
        "hand.flush": "Flush",
        "hand.straight_flush": "Straight flush",
        "hand.royal_flush": "Royal flush",
        "hand.straight": "Straight",
        "hand.three_of_a_kind": "Three of a kind",
        "hand.two_pair": "Two pair",
        "hand.four_of_a_kind": "Four of a kind",
        "hand.full_house": "Full house",
        "hand.pair": "Pair",
        "hand.high_card": "High card",
        "ante.straight_or_less": "Straight or less",
        "bonus.flush_or_better": "Flush or higher",
        "bonus.aces_to_straight": "Pair of Aces to Straight",
        "limit.aa_bonus_max": "AA Bonus bet max",
        "rule.dealer_qualifies": "DEALER QUALIFIES ON A PAIR OF 4S OR BETTER",
    },
    "bg": {
        "ui.paytable": "Tаблица на печалбите",
        "limit.max": "Макс.",
        "limit.min": "Мин",
        "role.player": "Играч",
        "role.dealer": "Крупие",
        "result.tie": "Равенство",
        "result.push": "Равенство",
        "bet.ante": "МИЗА",
        "bet.call": "АНОНС",
        "bet.aa_bonus": "АА БОНУС",
        "bonus.pair_aces_or_better": "ЧИФТ АСА ИЛИ ПО-ДОБРИ",
        "ante.winning": "Печеливша миза",
        "hand.flush": "Флъш",
        "hand.straight_flush": "Стрейт флъш",
        "hand.royal_flush": "Роял Флъш",
        "hand.straight": "стрейт",
        "hand.three_of_a_kind": "Три еднакви",
        "hand.two_pair": "Два чифта",
        "hand.four_of_a_kind": "Каре",
        "hand.full_house": "Фул хаус",
        "hand.pair": "чифт",
        "hand.high_card": "Висока карта",
        "ante.straight_or_less": "Стрейт или по-малък",
        "bonus.flush_or_better": "Флъш или по-висок",
        "bonus.aces_to_straight": "От чифт аса до стрейт",
        "limit.aa_bonus_max": "АА максимален бонус залог",
        "rule.dealer_qualifies": "ДЪЛЪРЪТ ПРОДЪЛЖАВА ДА ИГРАЕ С ЧИФТ 4-КИ ИЛИ ПО-СИЛЕН",
    },
    "ro": {
        "ui.paytable": "Tabelul de plăţi",
        "limit.max": "Max",
        "limit.min": "Min",
        "role.player": "Jucător",
        "role.dealer": "Dealer",
        "result.tie": "Egalitate",
        "result.push": "Egalitate",
        "bet.ante": "ANTE",
        "bet.call": "SEC",
        "bet.aa_bonus": "BONUS AA",
        "bonus.pair_aces_or_better": "PERECHE DE AȘI SAU MAI MARE",
        "ante.winning": "Câștigul Ante",
        "hand.flush": "Culoare",
        "hand.straight_flush": "Chintă-culoare",
        "hand.royal_flush": "Chintă roială",
        "hand.straight": "Chintă",
        "hand.three_of_a_kind": "Brelan",
        "hand.two_pair": "Două perechi",
        "hand.four_of_a_kind": "Careu",
        "hand.full_house": "Full",
        "hand.pair": "O pereche",
        "hand.high_card": "Carte puternică",
        "ante.straight_or_less": "Chintă sau mai mic",
        "bonus.flush_or_better": "Culoare sau mai mare",
        "bonus.aces_to_straight": "Pereche de Aşi sau Chintă",
        "limit.aa_bonus_max": "Miza maximă Bonus AA",
        "rule.dealer_qualifies": "CRUPIERUL SE CALIFICĂ CU O PERECHE DE 4 SAU MAI MARE",
    },
    "ms": {
        "ui.paytable": "Jadual pembayaran",
        "limit.max": "Maks",
        "limit.min": "Min",
        "role.player": "Pemain",
        "role.dealer": "Pengedar",
        "result.tie": "Seri",
        "result.push": "Tolak",
        "bet.ante": "ANTE",
        "bet.call": "PANGGIL",
        "bet.aa_bonus": "AA BONUS",
        "bonus.pair_aces_or_better": "PASANGAN ACE ATAU LEBIH TINGGI",
        "ante.winning": "Kemenangan Ante",
        "hand.flush": "Siram",
        "hand.straight_flush": "Siram Lurus",
        "hand.royal_flush": "Siram diraja",
        "hand.straight": "Lurus",
        "hand.three_of_a_kind": "Tiga sejenis",
        "hand.two_pair": "Dua pasangan",
        "hand.four_of_a_kind": "Empat sejenis",
        "hand.full_house": "Rumah penuh",
        "hand.pair": "Pasangan",
        "hand.high_card": "Kad tinggi",
        "ante.straight_or_less": "Lurus atau kurang",
        "bonus.flush_or_better": "Siram atau lebih tinggi",
        "bonus.aces_to_straight": "Pasangan Ace hingga Lurus",
        "limit.aa_bonus_max": "Maks taruhan AA Bonus",
        "rule.dealer_qualifies": "PEMBAHAGI LAYAK DENGAN PASANGAN 45 ATAU LEBIH BAIK",
    },
    "nb": {
        "ui.paytable": "Utbetalingstabell",
        "limit.max": "Maks",
        "limit.min": "Min",
        "role.player": "Spiller",
        "role.dealer": "Giver",
        "result.tie": "Uavgjort",
        "result.push": "Push",
        "bet.ante": "ANTE",
        "bet.call": "SYN",
        "bet.aa_bonus": "AA-BONUS",
        "bonus.pair_aces_or_better": "PAR I ESS ELLER BEDRE",
        "ante.winning": "Ante-gevinst",
        "hand.flush": "Flush",
        "hand.straight_flush": "Straight flush",
        "hand.royal_flush": "Royal flush",
        "hand.straight": "Straight",
        "hand.three_of_a_kind": "Tre like",
        "hand.two_pair": "2 par",
        "hand.four_of_a_kind": "Fire like",
        "hand.full_house": "Fullt hus",
        "hand.pair": "Par",
        "hand.high_card": "Høyt kort",
        "ante.straight_or_less": "Straight eller mindre",
        "bonus.flush_or_better": "Flush eller høyere",
        "bonus.aces_to_straight": "Et par med esser til Straight",
        "limit.aa_bonus_max": "Maks innsats på AA-bonus",
        "rule.dealer_qualifies": "DEALER KVALIFISERER MED PAR I 4 ELLER BEDRE",
    },
}

CATALOGUES: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {lang: MappingProxyType(terms) for lang, terms in _CATALOGUES.items()}
)
LANGUAGES: Final[tuple[str, ...]] = tuple(CATALOGUES)
KEYS: Final[tuple[str, ...]] = tuple(CATALOGUES[ENGLISH])

# Terms the closing tables lack, taken from where the sheets name them otherwise (kept apart so
# that the catalogues above stay exactly the tables). Sources, in shared/rules/:
# control.fold: the "Main game" control list of the ro (001, line 82 "Renunţ"), ms (003, line 82
#   "Lipat") and nb (004, line 82 "Trekk deg") sheets, and the bg sheet's rules (000, line 18
#   "Ако играчът натисне Пас"). No sheet is in English: "Fold" is the English game term the ro
#   sheet itself uses (001, line 20 "făcând fold"), not a translation from a table.
# No sheet names win, lose, void, total or balance: the summaries show those as signed amounts
# and symbols, never as invented words (holdem.core.summary).
CONTROLS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "en": MappingProxyType({"control.fold": "Fold"}),
        "bg": MappingProxyType({"control.fold": "Пас"}),
        "ro": MappingProxyType({"control.fold": "Renunţ"}),
        "ms": MappingProxyType({"control.fold": "Lipat"}),
        "nb": MappingProxyType({"control.fold": "Trekk deg"}),
    }
)
CONTROL_KEYS: Final[tuple[str, ...]] = tuple(CONTROLS[ENGLISH])
