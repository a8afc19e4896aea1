"""holdem.query: the query service (open round, balance, history, round summaries)."""
