"""A twin watch: whether another live process runs with this instance's HOLDEM_INSTANCE_ID
(ADR 034). It reports, it never refuses and nothing waits on it.

Safety does not depend on it: a twin shares this instance's transactional id, so Kafka's producer
fencing (epochs) ends whichever started first (exit 70, one critical line naming the id), and
offsets are committed as the group's member (KIP-447). What a twin costs is availability, and
an operator should know: every ``twin_check_s`` (20 s) the watch lists the group (one group per
describe call), and when the same other member with this instance's client id is listed by two
checks at least a session timeout apart, it reports a twin (``holdem_duplicate_instance`` 1,
alert ``HoldemDuplicateInstance``); 0 once no such member is listed.

A listing counts only when it lists this instance's own member too: one that does not (before
this member joined, or a restarted broker's listing of members that died during its outage,
issue 26) is not of the group as it now is, and proves nothing either way. A failed describe
changes nothing.

Under static membership (ADR 037, the default) the broker itself fences a twin when it joins,
and the group never lists two members with one instance id: the watch then reports nothing, and
the fenced process's restarts page instead (``holdem_started_seconds``, ``HoldemRestartLoop``)."""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from holdem.runtime.transport import GroupAdmin

log = structlog.get_logger(__name__)


class TwinWatch:
    """One instance's watch for a twin in its consumer group."""

    def __init__(
        self,
        admin: GroupAdmin,
        group_id: str,
        client_id: str,
        own: Callable[[], str | None],
        report: Callable[[bool], None],
        session_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.admin = admin
        self.group_id = group_id
        self.client_id = client_id
        self.own = own  # this instance's member id now (None: not a member)
        self.report = report
        self.session_s = session_s
        self.clock = clock
        self.twin = False
        self._seen: dict[str, float] = {}  # another member with this client id: first listed at

    async def check(self) -> bool:
        """List the group once; whether a twin is reported now."""
        listed = await self.admin.members(self.group_id)
        own = self.own()
        if listed is None or own is None or own not in {m.member_id for m in listed}:
            return self.twin
        now = self.clock()
        others = {m.member_id for m in listed if m.client_id == self.client_id} - {own}
        self._seen = {member: self._seen.get(member, now) for member in others}
        twin = any(now - first >= self.session_s for first in self._seen.values())
        if twin and not self.twin:
            log.critical(
                "twin: another live member uses this HOLDEM_INSTANCE_ID: give each its own",
                group=self.group_id,
                client_id=self.client_id,
                members=sorted(others),
            )
        elif self.twin and not twin:
            log.info("twin gone", group=self.group_id, client_id=self.client_id)
        self.twin = twin
        self.report(twin)
        return twin

    async def close(self) -> None:
        await self.admin.close()
