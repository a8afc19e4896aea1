"""What a service process runs, and nothing else: the batch loop, the transactional outbox, replay
and snapshots, the record checks, settings, logging and metrics. No SDK, operator tool or harness
(import-linter holds it to that)."""
