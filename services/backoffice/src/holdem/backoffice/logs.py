"""The back office's log lines: JSON on stderr through structlog, like the services' (the back
office does not import the runtime, so it configures its own)."""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(process: str, level: str = "INFO") -> None:
    """One JSON object per line on stderr, naming ``process``; stdlib loggers (uvicorn,
    alembic, aiokafka) still write their own lines at ``level``."""
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(message)s")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    structlog.contextvars.bind_contextvars(service=process)
