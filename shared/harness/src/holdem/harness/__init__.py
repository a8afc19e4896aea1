"""Driving and judging a deployment from outside: the demo (`make run`), the player load, chaos
runs, the independent audit and the ownership check. Never installed with a service."""
