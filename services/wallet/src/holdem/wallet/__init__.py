"""holdem.wallet: the wallet service."""
