"""Numba kernels of the exact enumeration: per flop, the summed result of calling per hole pair.

For a flop and each of its 1,176 turn/river pairs the 1,081 two-card hands from the 47 unseen
cards are evaluated once, sorted by value (a two-pass radix sort), and scanned in order with
per-card counters. A hand's rivals are the 990 of those hands that share no card with it:
"pairs below v" minus those holding either of its cards (inclusion-exclusion; the only pair
holding both is the hand itself). That gives, for every player hand at once, how many dealer
hands do not qualify, lose, tie and win, so a board costs ~10 steps per hand instead of 990.
Results are integers in antes, summed over the 1,081 x 990 completions of each (hole, flop).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit, prange

from holdem.core.evaluator_tables import SUIT_BITS
from holdem.math.kernels import KernelTables, plain_value, value_of_sum
from holdem.math.rtp_symmetry import flop_symmetries, orbit_size, relabel

SUIT_LOW = (1 << SUIT_BITS) - 1
RIVALS = 990  # dealer hands from the 45 cards the player's hand and the board leave
COMPLETIONS = 1081 * RIVALS  # turn/river pairs from 47 cards x dealer hands


@njit(cache=True)
def pair_index() -> npt.NDArray[np.int32]:
    """``index[i, j]`` (i < j) of the 1,326 two-card hands, in lexicographic order."""
    index = np.full((52, 52), -1, dtype=np.int32)
    n = 0
    for i in range(52):
        for j in range(i + 1, 52):
            index[i, j] = n
            index[j, i] = n
            n += 1
    return index


@njit(cache=True, inline="always")
def _value(key_sum: int, c1: int, c2: int, masks: npt.NDArray[np.int64], t: KernelTables) -> int:
    suit = t[1][key_sum & SUIT_LOW]
    if suit < 0:
        return plain_value(key_sum >> SUIT_BITS, t)
    mask = masks[suit]
    if c1 & 3 == suit:
        mask |= 1 << (c1 >> 2)
    if c2 & 3 == suit:
        mask |= 1 << (c2 >> 2)
    return int(t[2][mask])


@njit(cache=True)
def sort_hands(
    board: npt.NDArray[np.int64],
    unseen: npt.NDArray[np.int64],
    t: KernelTables,
    work: npt.NDArray[np.int32],
) -> int:
    """Evaluate every two-card hand from ``unseen`` on this board and sort them by value into
    ``work[:n]`` as ``value << 12 | c1 << 6 | c2`` (c1 < c2); return n."""
    masks = np.zeros(4, dtype=np.int64)
    suits = np.zeros(4, dtype=np.int64)
    base = 0
    for card in board:
        base += t[0][card]
        masks[card & 3] |= 1 << (card >> 2)
        suits[card & 3] += 1
    packed, spare = work[:1081], work[1081:]
    hist_low = np.zeros(128, dtype=np.int64)
    hist_high = np.zeros(64, dtype=np.int64)
    n = 0
    if suits.max() < 3:  # no flush possible: the plain table alone
        for a in range(len(unseen)):
            c1 = unseen[a]
            partial = (base + t[0][c1]) >> SUIT_BITS
            for b in range(a + 1, len(unseen)):
                c2 = unseen[b]
                value = plain_value(partial + (t[0][c2] >> SUIT_BITS), t)
                packed[n] = value << 12 | c1 << 6 | c2
                hist_low[value & 127] += 1
                hist_high[value >> 7] += 1
                n += 1
    else:
        for a in range(len(unseen)):
            c1 = unseen[a]
            partial = base + t[0][c1]
            for b in range(a + 1, len(unseen)):
                c2 = unseen[b]
                value = _value(partial + t[0][c2], c1, c2, masks, t)
                packed[n] = value << 12 | c1 << 6 | c2
                hist_low[value & 127] += 1
                hist_high[value >> 7] += 1
                n += 1
    # LSD radix sort by value: low 7 bits, then the high 6
    start = 0
    for k in range(128):
        hist_low[k], start = start, start + hist_low[k]
    for i in range(n):
        k = (packed[i] >> 12) & 127
        spare[hist_low[k]] = packed[i]
        hist_low[k] += 1
    start = 0
    for k in range(64):
        hist_high[k], start = start, start + hist_high[k]
    for i in range(n):
        k = spare[i] >> 19
        packed[hist_high[k]] = spare[i]
        hist_high[k] += 1
    return n


@njit(cache=True)
def scan_board(
    board: npt.NDArray[np.int64],
    unseen: npt.NDArray[np.int64],
    t: KernelTables,
    qualify: int,
    work: npt.NDArray[np.int32],
    held: npt.NDArray[np.int64],
    below: npt.NDArray[np.int64],
    scan: npt.NDArray[np.int64],
) -> int:
    """Sort the hands from ``unseen`` on this board (``sort_hands``) and, for the i-th, count
    its 990 rivals: ``scan[0, i]`` do not qualify, ``scan[1, i]`` qualify and lose to it,
    ``scan[2, i]`` tie it (the rest beat it). Return the number of hands."""
    n = sort_hands(board, unseen, t, work)
    packed, spare = work[:1081], work[1081:]
    # hands below the qualifier: only how many (and how many per card) matter
    held[:] = 0
    lo = 0
    while lo < n and packed[lo] >> 12 < qualify:
        held[(packed[lo] >> 6) & 63] += 1
        held[packed[lo] & 63] += 1
        lo += 1
    n_below = lo
    below[:] = held
    for i in range(n_below):
        c1, c2 = (packed[i] >> 6) & 63, packed[i] & 63
        # rivals that do not qualify; the hand itself is among them, add it back once
        scan[0, i] = n_below - below[c1] - below[c2] + 1
        scan[1, i] = 0
        scan[2, i] = 0
    passed = n_below
    while lo < n:
        value = packed[lo] >> 12
        hi = lo + 1
        while hi < n and packed[hi] >> 12 == value:
            hi += 1
        for i in range(lo, hi):  # rivals strictly below, before the tie group is counted
            spare[i] = passed - held[(packed[i] >> 6) & 63] - held[packed[i] & 63]
        for i in range(lo, hi):
            held[(packed[i] >> 6) & 63] += 1
            held[packed[i] & 63] += 1
        passed += hi - lo
        for i in range(lo, hi):
            c1, c2 = (packed[i] >> 6) & 63, packed[i] & 63
            unqualified = n_below - below[c1] - below[c2]
            lower = spare[i]
            scan[0, i] = unqualified
            scan[1, i] = lower - unqualified
            scan[2, i] = passed - held[c1] - held[c2] + 1 - lower
        lo = hi
    return n


@njit(cache=True)
def _board(
    board: npt.NDArray[np.int64],
    unseen: npt.NDArray[np.int64],
    weight: int,
    t: KernelTables,
    pays: npt.NDArray[np.int64],
    qualify: int,
    totals: npt.NDArray[np.int64],
    work: npt.NDArray[np.int32],
    held: npt.NDArray[np.int64],
    below: npt.NDArray[np.int64],
    scan: npt.NDArray[np.int64],
) -> None:
    """Add ``weight`` x the result of calling on this board to each hand from ``unseen``
    (``totals[c1 * 52 + c2]``, c1 < c2): the ante's pay when the dealer does not qualify, the
    ante's and the call's when he loses, nothing on a tie, ante and call lost when he wins."""
    n = scan_board(board, unseen, t, qualify, work, held, below, scan)
    for i in range(n):
        c1, c2 = (work[i] >> 6) & 63, work[i] & 63
        pay = pays[work[i] >> 12]
        unqualified, beaten, ties = scan[0, i], scan[1, i], scan[2, i]
        lost = RIVALS - unqualified - beaten - ties
        totals[c1 * 52 + c2] += weight * (unqualified * pay + beaten * (pay + 2) - 3 * lost)


@njit(cache=True)
def turn_rivers(flop: npt.NDArray[np.int64], group: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """One turn/river pair per orbit of the flop's suit symmetries: rows (turn, river, orbit
    size); every pair of the 49 cards left is the image of exactly one row."""
    rest = np.empty(49, dtype=np.int64)
    n = 0
    for card in range(52):
        if card != flop[0] and card != flop[1] and card != flop[2]:
            rest[n] = card
            n += 1
    rows = np.empty((1176, 3), dtype=np.int64)
    m = 0
    for a in range(49):
        for b in range(a + 1, 49):
            weight = orbit_size(rest[a], rest[b], group)
            if weight > 0:
                rows[m, 0], rows[m, 1], rows[m, 2] = rest[a], rest[b], weight
                m += 1
    return rows[:m]


@njit(cache=True)
def board_of(flop: npt.NDArray[np.int64], row: npt.NDArray[np.int64],
             board: npt.NDArray[np.int64], unseen: npt.NDArray[np.int64]) -> None:  # fmt: skip
    """Fill ``board`` with the flop and the row's turn and river, ``unseen`` with the other 47."""
    board[:3] = flop
    board[3], board[4] = row[0], row[1]
    m = 0
    for card in range(52):
        if card not in (board[0], board[1], board[2], board[3], board[4]):
            unseen[m] = card
            m += 1


@njit(cache=True)
def symmetrise(
    by_cards: npt.NDArray[np.int64],
    flop: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    index: npt.NDArray[np.int32],
    out: npt.NDArray[np.int64],
) -> None:
    """``out[index[c1, c2]] += `` the mean over the flop's symmetries of the sums ``by_cards``
    (rows ``c1 * 52 + c2``) at the hand's images: what enumerating every orbit member gives."""
    for c1 in range(52):
        for c2 in range(c1 + 1, 52):
            if index[c1, c2] < 0 or c1 in (flop[0], flop[1], flop[2]):
                continue
            if c2 == flop[0] or c2 == flop[1] or c2 == flop[2]:
                continue
            total = np.zeros(by_cards.shape[1], dtype=np.int64)
            for g in range(len(group)):
                x, y = relabel(c1, group[g]), relabel(c2, group[g])
                total += by_cards[min(x, y) * 52 + max(x, y)]
            out[index[c1, c2]] += total // len(group)


@njit(cache=True)
def flop_totals(
    flop: npt.NDArray[np.int64],
    t: KernelTables,
    pays: npt.NDArray[np.int64],
    qualify: int,
    index: npt.NDArray[np.int32],
    totals: npt.NDArray[np.int64],
) -> None:
    """Summed result of calling (antes, over 1,081 x 990 completions) for every hole pair,
    into ``totals[index[c1, c2]]``. Turn/river pairs the flop's suit symmetries map onto each
    other are enumerated once; the sums are symmetrised back at the end."""
    group = flop_symmetries(flop)
    board = np.empty(5, dtype=np.int64)
    unseen = np.empty(47, dtype=np.int64)
    work = np.empty(2 * 1081, dtype=np.int32)
    held = np.empty(52, dtype=np.int64)
    below = np.empty(52, dtype=np.int64)
    scan = np.empty((3, 1081), dtype=np.int64)
    by_cards = np.zeros(52 * 52, dtype=np.int64)
    for row in turn_rivers(flop, group):
        board_of(flop, row, board, unseen)
        _board(board, unseen, row[2], t, pays, qualify, by_cards, work, held, below, scan)
    symmetrise(by_cards.reshape(52 * 52, 1), flop, group, index, totals.reshape(-1, 1))


@njit(cache=True, parallel=True)
def all_flop_totals(
    flops: npt.NDArray[np.int64],
    t: KernelTables,
    pays: npt.NDArray[np.int64],
    qualify: int,
) -> npt.NDArray[np.int64]:
    """``flop_totals`` of each row of ``flops`` (n, 3), one row of 1,326 per flop, in parallel."""
    index = pair_index()
    out = np.zeros((flops.shape[0], 1326), dtype=np.int64)
    for f in prange(flops.shape[0]):
        flop_totals(flops[f], t, pays, qualify, index, out[f])
    return out


@njit(cache=True)
def hole_total(
    hole: npt.NDArray[np.int64],
    flop: npt.NDArray[np.int64],
    t: KernelTables,
    pays: npt.NDArray[np.int64],
    qualify: int,
) -> npt.NDArray[np.int64]:
    """Direct count for one hole and flop: (dealer not qualified, player wins, ties, loses,
    summed result of calling), over every turn/river and dealer hand."""
    rest = np.empty(47, dtype=np.int64)
    n = 0
    for card in range(52):
        if card not in (hole[0], hole[1], flop[0], flop[1], flop[2]):
            rest[n] = card
            n += 1
    key = t[0]
    out = np.zeros(5, dtype=np.int64)
    flop_sum = key[flop[0]] + key[flop[1]] + key[flop[2]]
    cards = np.empty(7, dtype=np.uint8)
    cards[2:5] = flop
    for a in range(47):
        for b in range(a + 1, 47):
            cards[5], cards[6] = rest[a], rest[b]
            board_sum = flop_sum + key[rest[a]] + key[rest[b]]
            cards[0], cards[1] = hole[0], hole[1]
            player = value_of_sum(board_sum + key[hole[0]] + key[hole[1]], cards, t)
            pay = pays[player]
            for c in range(47):
                for d in range(c + 1, 47):
                    if c in (a, b) or d in (a, b):
                        continue
                    cards[0], cards[1] = rest[c], rest[d]
                    dealer = value_of_sum(board_sum + key[rest[c]] + key[rest[d]], cards, t)
                    if dealer < qualify:
                        out[0] += 1
                        out[4] += pay
                    elif player > dealer:
                        out[1] += 1
                        out[4] += pay + 2
                    elif player == dealer:
                        out[2] += 1
                    else:
                        out[3] += 1
                        out[4] -= 3
    return out
