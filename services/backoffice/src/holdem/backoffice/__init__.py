"""The back office: the game log projected into PostgreSQL, statements, reconciliation, web."""
