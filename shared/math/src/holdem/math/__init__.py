"""holdem-math: the game's exact math, kept out of the core and the services.

The numba kernels of the hand evaluator (``kernels``) and the perfect-hash batch evaluator over
arrays (``batch``); the exact return to player by full enumeration (``rtp``, ``rtp_kernels``,
``rtp_symmetry``) and the optimal strategy's decision table it writes for holdem-core
(``holdem rtp --write-table``); the on-disk cache of what it computes (``cache``); the Monte Carlo
simulator (``sim``). The ``holdem`` command (holdem-core) finds ``rtp``, ``ev`` and ``sim`` here by
name. A service installs holdem-core without this package, so without numba and llvmlite.
"""
