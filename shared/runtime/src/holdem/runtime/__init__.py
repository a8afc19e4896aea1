"""holdem.runtime."""
