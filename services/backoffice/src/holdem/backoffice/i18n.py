"""The pages' words in the rule sheets' five languages: game terms from ``holdem.core.terms``
(the sheets' own translations), the back office's own labels from the table below."""

from __future__ import annotations

from holdem.core.terms import TermError, term

LANGUAGES = ("en", "bg", "ro", "ms", "nb")
# Back-office labels (ours, not the sheets'): en, bg, ro, ms, nb.
_LABELS: dict[str, tuple[str, str, str, str, str]] = {
    "rounds": ("Rounds", "Рундове", "Runde", "Pusingan", "Runder"),
    "round": ("Round", "Рунд", "Rundă", "Pusingan", "Runde"),
    "search": ("Search", "Търсене", "Căutare", "Cari", "Søk"),
    "player": ("Player", "Играч", "Jucător", "Pemain", "Spiller"),
    "history": ("History", "История", "Istoric", "Sejarah", "Historikk"),
    "statements": ("Statements", "Отчети", "Situații", "Penyata", "Oppgjør"),
    "flagged": (
        "Flagged activity",
        "Маркирана активност",
        "Activitate semnalată",
        "Aktiviti ditanda",
        "Flagget aktivitet",
    ),
    "login": ("Log in", "Вход", "Autentificare", "Log masuk", "Logg inn"),
    "logout": ("Log out", "Изход", "Deconectare", "Log keluar", "Logg ut"),
    "username": ("User", "Потребител", "Utilizator", "Pengguna", "Bruker"),
    "password": ("Password", "Парола", "Parolă", "Kata laluan", "Passord"),
    "time": ("Time", "Час", "Ora", "Masa", "Tid"),
    "step": ("Step", "Стъпка", "Pas", "Langkah", "Steg"),
    "stake": ("Stake", "Залог", "Miză", "Taruhan", "Innsats"),
    "return": ("Return", "Връщане", "Câștig", "Pulangan", "Utbetaling"),
    "balance_before": (
        "Balance before",
        "Баланс преди",
        "Sold înainte",
        "Baki sebelum",
        "Saldo før",
    ),
    "balance_after": ("Balance after", "Баланс след", "Sold după", "Baki selepas", "Saldo etter"),
    "table": ("Table", "Маса", "Masă", "Meja", "Bord"),
    "pay_table": (
        "Pay table",
        "Таблица на печалбите",
        "Tabelul de plăţi",
        "Jadual pembayaran",
        "Gevinsttabell",
    ),
    "commitment": (
        "Deck commitment",
        "Ангажимент на тестето",
        "Angajamentul pachetului",
        "Komitmen dek",
        "Kortstokk-forpliktelse",
    ),
    "verified": ("verified", "проверен", "verificat", "disahkan", "verifisert"),
    "not_verified": (
        "NOT verified",
        "НЕ е проверен",
        "NEverificat",
        "TIDAK disahkan",
        "IKKE verifisert",
    ),
    "bet": ("Bet", "Залог", "Pariu", "Pertaruhan", "Innsats"),
    "deal": ("Deal", "Раздаване", "Împărțire", "Urusan", "Utdeling"),
    "decision": ("Decision", "Решение", "Decizie", "Keputusan", "Beslutning"),
    "auto": (
        "by the table's timeout policy",
        "по правилото на масата при изтичане на времето",
        "de regula mesei la expirare",
        "oleh dasar tamat masa meja",
        "av bordets tidsregel",
    ),
    "reveal": ("Reveal", "Разкриване", "Dezvăluire", "Dedah", "Avsløring"),
    "settlement": ("Settlement", "Уреждане", "Decontare", "Penyelesaian", "Oppgjør"),
    "void": ("Void", "Анулиране", "Anulare", "Batal", "Annullert"),
    "day": ("Day", "Ден", "Zi", "Hari", "Dag"),
    "download": ("Download", "Изтегляне", "Descărcare", "Muat turun", "Last ned"),
    "outcome": ("Outcome", "Резултат", "Rezultat", "Keputusan", "Utfall"),
    "amount": ("Amount", "Сума", "Sumă", "Jumlah", "Beløp"),
    "brand": ("Brand", "Марка", "Brand", "Jenama", "Merke"),
    "from": ("From", "От", "De la", "Dari", "Fra"),
    "to": ("To", "До", "Până la", "Hingga", "Til"),
    "big_wins": (
        "Big wins",
        "Големи печалби",
        "Câștiguri mari",
        "Kemenangan besar",
        "Store gevinster",
    ),
    "voids": ("Voids", "Анулирания", "Anulări", "Pembatalan", "Annulleringer"),
    "seamless": (
        "Operator wallet refusals and timeouts",
        "Откази и изтичания на портфейла",
        "Refuzuri și expirări ale portofelului",
        "Penolakan dan tamat masa dompet",
        "Avslag og tidsavbrudd i lommeboken",
    ),
    "mismatches": (
        "Settlement mismatches",
        "Несъответствия при уреждане",
        "Nepotriviri la decontare",
        "Ketidakpadanan penyelesaian",
        "Avvik i oppgjør",
    ),
    "movements": (
        "Money movements",
        "Движения на пари",
        "Mișcări de bani",
        "Pergerakan wang",
        "Pengebevegelser",
    ),
}


def label(key: str, lang: str) -> str:
    """A back-office label, else a game term of the sheets, else the key itself.

    >>> label("rounds", "nb"), label("bet.call", "ro"), label("nope", "en")
    ('Runder', 'SEC', 'nope')
    """
    lang = lang if lang in LANGUAGES else "en"
    if key in _LABELS:
        return _LABELS[key][LANGUAGES.index(lang)]
    try:
        return term(key, lang)
    except TermError:
        return key


BET_TERMS = {"ante": "bet.ante", "call": "bet.call", "aa_bonus": "bet.aa_bonus"}
