"""Numba kernels of the PAR sheet's counting enumeration: per flop and hole pair, how many of
the 1,081 x 990 completions end in each (hand category, outcome) when the player calls.

The boards, the scan of each hand's rivals and the suit symmetries are the RTP kernel's
(``rtp_kernels``); where that kernel prices the rivals, this one counts them: dealer not
qualified, player wins, push, dealer wins, under the player's final 7-card hand category.
Priced by the pay table the counts must give the RTP kernel's totals back (``holdem.math.par``
checks it).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit, prange

from holdem.math.kernels import KernelTables
from holdem.math.rtp_kernels import (
    RIVALS,
    board_of,
    pair_index,
    scan_board,
    symmetrise,
    turn_rivers,
)
from holdem.math.rtp_symmetry import flop_symmetries

CATEGORIES = 10  # HandCategory, HIGH_CARD .. ROYAL_FLUSH
OUTCOMES = 4  # UNQUALIFIED, WIN, PUSH, LOSS: the dealer's answer to a called hand
UNQUALIFIED, WIN, PUSH, LOSS = range(OUTCOMES)


@njit(cache=True)
def _board_counts(
    board: npt.NDArray[np.int64],
    unseen: npt.NDArray[np.int64],
    weight: int,
    t: KernelTables,
    cats: npt.NDArray[np.int64],
    qualify: int,
    counts: npt.NDArray[np.int64],
    work: npt.NDArray[np.int32],
    held: npt.NDArray[np.int64],
    below: npt.NDArray[np.int64],
    scan: npt.NDArray[np.int64],
) -> None:
    """Add ``weight`` x each hand's rivals by outcome on this board to
    ``counts[(c1 * 52 + c2) * CATEGORIES + category]``."""
    n = scan_board(board, unseen, t, qualify, work, held, below, scan)
    for i in range(n):
        c1, c2 = (work[i] >> 6) & 63, work[i] & 63
        row = (c1 * 52 + c2) * CATEGORIES + cats[work[i] >> 12]
        counts[row, UNQUALIFIED] += weight * scan[0, i]
        counts[row, WIN] += weight * scan[1, i]
        counts[row, PUSH] += weight * scan[2, i]
        counts[row, LOSS] += weight * (RIVALS - scan[0, i] - scan[1, i] - scan[2, i])


@njit(cache=True)
def flop_counts(
    flop: npt.NDArray[np.int64],
    t: KernelTables,
    cats: npt.NDArray[np.int64],
    qualify: int,
    index: npt.NDArray[np.int32],
    out: npt.NDArray[np.int64],
) -> None:
    """Completions by (category, outcome) for every hole pair: ``out[index[c1, c2]]``, a
    ``CATEGORIES * OUTCOMES`` row, over every turn, river and dealer hand."""
    group = flop_symmetries(flop)
    board = np.empty(5, dtype=np.int64)
    unseen = np.empty(47, dtype=np.int64)
    work = np.empty(2 * 1081, dtype=np.int32)
    held = np.empty(52, dtype=np.int64)
    below = np.empty(52, dtype=np.int64)
    scan = np.empty((3, 1081), dtype=np.int64)
    counts = np.zeros((52 * 52 * CATEGORIES, OUTCOMES), dtype=np.int64)
    for row in turn_rivers(flop, group):
        board_of(flop, row, board, unseen)
        _board_counts(board, unseen, row[2], t, cats, qualify, counts, work, held, below, scan)
    by_cards = counts.reshape(52 * 52, CATEGORIES * OUTCOMES)
    symmetrise(by_cards, flop, group, index, out)


@njit(cache=True, parallel=True)
def all_flop_counts(
    flops: npt.NDArray[np.int64],
    t: KernelTables,
    cats: npt.NDArray[np.int64],
    qualify: int,
) -> npt.NDArray[np.int64]:
    """``flop_counts`` of each row of ``flops`` (n, 3): an array (n, 1326, CATEGORIES,
    OUTCOMES), in parallel."""
    index = pair_index()
    out = np.zeros((flops.shape[0], 1326, CATEGORIES * OUTCOMES), dtype=np.int64)
    for f in prange(flops.shape[0]):
        flop_counts(flops[f], t, cats, qualify, index, out[f])
    return out.reshape(flops.shape[0], 1326, CATEGORIES, OUTCOMES)
