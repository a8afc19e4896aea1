"""holdem.dealer: the dealer service."""
