"""A graceful stop that is seen and bounded (issue 26): each phase logged with its seconds, a phase
that outlasts its share cut short with a warning naming what it awaits, and the whole stop bounded
below the supervisor's grace. Past the bound one critical line names the phase and every task
still running, each with the chain of coroutines it is suspended in, and ``hung`` ends the process
(status 70 in a service). The bound is kept by the event loop (``call_later``) and, should the
loop itself be blocked, by a thread a second later, which logs the main thread's stack instead;
in a service's process (``until_exit``) the thread's bound holds until the process ends, so what
runs after the stop (asyncio.run cancelling and awaiting every task left) is bounded too."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import structlog

log = structlog.get_logger(__name__)
THREAD_GRACE_S = 1.0  # the thread's fallback, after the loop's own watchdog


def awaiting(task: asyncio.Task[Any]) -> list[str]:
    """Where ``task`` is suspended: each coroutine of its await chain as ``file:line in name``,
    innermost last, then what that one awaits (a future, a task, a generator)."""
    chain: list[str] = []
    awaited: Any = task.get_coro()
    for _ in range(64):  # an await chain is short; bounded whatever it is
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is None:
            break
        chain.append(f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    if awaited is not None:
        chain.append(f"awaits {awaited!r}"[:300])
    return chain


def running_tasks(exclude: asyncio.Task[Any] | None = None) -> dict[str, list[str]]:
    """Every task of the running loop not done (but ``exclude``), by name, with its chain."""
    return {
        task.get_name(): awaiting(task)
        for task in asyncio.all_tasks()
        if not task.done() and task is not exclude
    }


class StopWatch:
    """``with StopWatch(service, bound_s, hung) as watch: await watch.phase(...)``."""

    def __init__(
        self,
        service: str,
        bound_s: float,
        hung: Callable[[], object],
        *,
        until_exit: bool = False,
    ) -> None:
        self.service = service
        self.until_exit = until_exit  # the thread's bound holds until the process ends
        self.bound_s = bound_s
        self.hung = hung
        self.current = "starting"
        self.started = time.monotonic()
        self._handle: asyncio.TimerHandle | None = None
        self._done = threading.Event()
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> StopWatch:
        self.started = time.monotonic()
        self._task = asyncio.current_task()
        self._handle = asyncio.get_running_loop().call_later(self.bound_s, self._expired)
        main = threading.main_thread().ident
        thread = threading.Thread(
            target=self._blocked, args=(main,), name="stop-watch", daemon=True
        )
        thread.start()
        log.info("stopping", service=self.service, bound_s=self.bound_s)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self.until_exit:
            self._done.set()
        else:
            self.current = "after the stop (asyncio.run's cleanup)"
        if self._handle is not None:
            self._handle.cancel()
        log.info(
            "stopped",
            service=self.service,
            seconds=round(time.monotonic() - self.started, 3),
            error=None if exc is None else repr(exc),
        )

    async def phase(self, name: str, step: Awaitable[object], share_s: float) -> None:
        """Run one phase of the stop; past ``share_s`` it is cut short (cancelled, not waited
        for) with a warning naming where it waits, and the stop goes on to the next phase."""
        self.current = name
        began = time.monotonic()
        task = asyncio.ensure_future(step)
        task.set_name(f"stop-{name}")
        done, _ = await asyncio.wait({task}, timeout=share_s)
        seconds = round(time.monotonic() - began, 3)
        if not done:
            log.warning(
                "stop phase cut short",
                service=self.service,
                phase=name,
                seconds=seconds,
                awaiting=awaiting(task),
                running=running_tasks(exclude=asyncio.current_task()),
            )
            task.cancel()
            return
        error = task.exception()
        if error is not None:  # logged, and the stop goes on: what is left must still close
            log.error("stop phase failed", service=self.service, phase=name, error=repr(error))
        log.info("stop phase", service=self.service, phase=name, seconds=seconds)

    def _expired(self) -> None:
        log.critical(
            "stop hung: exiting",
            service=self.service,
            phase=self.current,
            bound_s=self.bound_s,
            running=running_tasks(),
        )
        self._done.set()
        self.hung()

    def _blocked(self, main: int | None) -> None:
        if self._done.wait(self.bound_s + THREAD_GRACE_S):
            return
        frame = sys._current_frames().get(main) if main is not None else None
        log.critical(
            "stop hung: exiting",
            service=self.service,
            seen_by="thread",  # the event loop did not run its own watchdog: blocked, or done
            phase=self.current,
            bound_s=self.bound_s,
            main_thread=traceback.format_stack(frame) if frame is not None else None,
        )
        self.hung()
