"""holdem.core."""
