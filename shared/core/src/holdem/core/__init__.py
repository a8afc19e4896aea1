"""The game itself, pure: cards, the evaluator, rules and pay tables, deciders, contracts and the
wire vocabulary (holdem.core.wire). No IO."""
