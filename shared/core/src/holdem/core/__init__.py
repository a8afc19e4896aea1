"""The game itself, pure: cards, the evaluator, rules and pay tables, strategies, deciders,
contracts and the wire vocabulary (holdem.core.wire).

Importing any module here does no IO and reads no environment (a test checks it); the tables the
evaluator and the optimal strategy read are shipped with the package and generated from first
principles by scripts/generate_core_data.py. The numba math (batch evaluation, the exact-RTP
enumeration) is holdem-math's, which this package never imports.
"""
