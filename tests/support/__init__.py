"""Helpers shared by the test suites (kept out of conftest.py so it stays small)."""
