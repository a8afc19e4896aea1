"""holdem.settlement: the settlement service."""
