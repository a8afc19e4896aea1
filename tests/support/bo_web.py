"""The web back office on a free port in a thread of the test process (uvicorn), and a
database filled with synthetic rounds through the projection's own write path."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from holdem.backoffice import db, store
from holdem.backoffice.rows import Batch, Where
from holdem.backoffice.settings import BackofficeSettings
from holdem.backoffice.synthetic import rounds
from holdem.backoffice.web import create_app
from support.postgres import free_port


@contextlib.contextmanager
def running_web(dsn: str, **settings: Any) -> Iterator[str]:
    """The back office at the URL it yields, until the block ends."""
    port = free_port()
    config = BackofficeSettings(dsn=dsn, port=port, **settings)
    server = uvicorn.Server(uvicorn.Config(create_app(config), port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the back office did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def fill(dsn: str, operator: str, count: int, players: int = 5, seed: int = 1, **kw: Any) -> None:
    """``count`` synthetic rounds of ``operator`` (brand b1), written as the projection writes."""
    batch = Batch()
    for offset, (role, message) in enumerate(rounds(count, players, seed, tag=operator, **kw)):
        where = Where(f"{operator}.holdem.{role}", 0, offset, operator, "b1")
        batch.add(role, where, message)
    with db.connect(dsn) as conn:
        store.write(conn, batch, {})
