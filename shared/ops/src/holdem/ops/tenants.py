"""Tenants: several operators on one Kafka cluster, none able to reach another's players.

A tenant is an operator id. Its topics are the game's topics under the prefix ``<tenant>``
(``acme.holdem.commands``, ...), and its principal ``operator-<tenant>`` gets the operator's
rights on those topics only: write commands, read rounds, wallet and rejected, consumer groups
``<tenant>.holdem-operator*``. The services of a tenant's deployment run with
``HOLDEM_TOPIC_PREFIX=<tenant>``; their principals are ours, granted per tenant by the same plan.
Tenant ids have no dot, so no tenant's prefix is a prefix of another's (PREFIXED ACLs stay apart).

The principal is a SCRAM-SHA-512 user created at run time with the AlterUserScramCredentials
request (KIP-554): the salted password is computed here (RFC 5802 Hi = PBKDF2-HMAC-SHA-512), so
the password itself never crosses the wire.

    python -m holdem.ops.tenants add acme --env DIR/clients/admin.env --out DIR/clients
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import re
import secrets
import sys
from dataclasses import replace
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    CompactArray,
    CompactBytes,
    CompactString,
    Int8,
    Int16,
    Int32,
    Schema,
    TaggedFields,
)

from holdem.core.wire.connection import KafkaConnection
from holdem.ops import acl

TENANT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")
SCRAM_SHA_512 = 2  # org.apache.kafka.clients.admin.ScramMechanism
ITERATIONS = 8192  # Kafka accepts 4096..16384 for SHA-512


class TenantError(RuntimeError):
    """An invalid tenant id, or a broker that refused the user."""


def check_tenant(tenant: str) -> str:
    """``tenant`` if it is a valid tenant id, else ``TenantError``.

    >>> check_tenant("acme-eu")
    'acme-eu'
    >>> check_tenant("acme.eu")
    Traceback (most recent call last):
    ...
    holdem.ops.tenants.TenantError: not a tenant id: 'acme.eu' (a-z, 0-9, '-'; at most 31)
    """
    if not TENANT_ID.match(tenant):
        raise TenantError(f"not a tenant id: {tenant!r} (a-z, 0-9, '-'; at most 31)")
    return tenant


def operator_principal(tenant: str) -> str:
    """The tenant's operator principal (a SCRAM user name)."""
    return f"operator-{check_tenant(tenant)}"


def plan(tenant: str, *, seamless: bool = False) -> list[acl.Acl]:
    """The ACLs of one tenant: the game's plan under its prefix, its operator's rules given to
    its own principal instead of the shared ``operator``; ``seamless``: its wallet bridges to
    the operator's wallet (ADR 015)."""
    own = f"User:{operator_principal(tenant)}"
    return sorted(
        replace(rule, principal=own) if rule.principal == "User:operator" else rule
        for rule in acl.plan(tenant, seamless=seamless)
    )


def salted_password(password: str, salt: bytes, iterations: int = ITERATIONS) -> bytes:
    """RFC 5802 Hi(password, salt, i) with HMAC-SHA-512: what a SCRAM server stores."""
    return hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)


class _AlterUserScramCredentialsResponse_v0(Response):  # type: ignore[misc]
    API_KEY = 51
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "results",
            CompactArray(
                ("user", CompactString("utf-8")),
                ("error_code", Int16),
                ("error_message", CompactString("utf-8")),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _AlterUserScramCredentialsRequest_v0(RequestStruct):  # type: ignore[misc]
    FLEXIBLE_VERSION = True
    API_KEY = 51
    API_VERSION = 0
    RESPONSE_TYPE = _AlterUserScramCredentialsResponse_v0
    SCHEMA = Schema(
        (
            "deletions",
            CompactArray(
                ("name", CompactString("utf-8")), ("mechanism", Int8), ("tags", TaggedFields)
            ),
        ),
        (
            "upsertions",
            CompactArray(
                ("name", CompactString("utf-8")),
                ("mechanism", Int8),
                ("iterations", Int32),
                ("salt", CompactBytes),
                ("salted_password", CompactBytes),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _UpsertScramUser(Request[_AlterUserScramCredentialsRequest_v0]):  # type: ignore[misc]
    API_KEY = 51

    def __init__(self, name: str, password: str) -> None:
        self._name = name
        self._password = password

    def build(
        self, request_struct_class: type[_AlterUserScramCredentialsRequest_v0]
    ) -> _AlterUserScramCredentialsRequest_v0:
        salt = secrets.token_bytes(32)
        salted = salted_password(self._password, salt)
        upsert: tuple[object, ...] = (self._name, SCRAM_SHA_512, ITERATIONS, salt, salted, {})
        return request_struct_class([], [upsert], {})


async def add_user(admin: KafkaConnection, name: str, password: str) -> None:
    """Create (or give a new password to) the SCRAM-SHA-512 user ``name``, as ``admin``."""
    client = AIOKafkaAdminClient(**admin.kwargs(), request_timeout_ms=30_000)
    await client.start()
    try:
        response = await client._send_request(_UpsertScramUser(name, password))
    finally:
        await client.close()
    failed = [f"{user}: {code} {message}" for user, code, message, _ in response.results if code]
    if failed:
        raise TenantError("the broker refused the SCRAM user: " + "; ".join(failed))


async def add_tenant(
    admin: KafkaConnection, tenant: str, *, seamless: bool = False
) -> KafkaConnection:
    """Create the tenant's operator principal with a new random password, grant the tenant's
    ACLs, and return how that principal connects (same bootstrap and protocol as ``admin``)."""
    name = operator_principal(tenant)
    password = secrets.token_urlsafe(24)
    await add_user(admin, name, password)
    await acl.apply(admin, plan(tenant, seamless=seamless))
    return replace(admin, username=name, password=password)


def write_env(connection: KafkaConnection, path: Path) -> None:
    """The principal's HOLDEM_KAFKA_* variables, as kafka.sh writes them (mode 0600)."""
    lines = [f"# holdem.ops.tenants: the {connection.username} principal"]
    lines += [f"{key}={value}" for key, value in connection.env().items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    """`python -m holdem.ops.tenants add|plan TENANT`: create a tenant's operator principal
    and grant its ACLs (as admin), or print its ACL plan."""
    parser = argparse.ArgumentParser(prog="python -m holdem.ops.tenants", description=main.__doc__)
    parser.add_argument("action", choices=("add", "plan"))
    parser.add_argument("tenant")
    parser.add_argument("--env", help="admin's env file (else the HOLDEM_KAFKA_* environment)")
    parser.add_argument("--out", type=Path, help="directory for <principal>.env (add)")
    parser.add_argument("--seamless", action="store_true", help="its wallet is in seamless mode")
    args = parser.parse_args(argv)
    try:
        rules = plan(args.tenant, seamless=args.seamless)
        if args.action == "plan":
            print(acl.table(rules))
            return 0
        admin = KafkaConnection.from_file(args.env) if args.env else KafkaConnection.from_env()
        connection = asyncio.run(add_tenant(admin, args.tenant, seamless=args.seamless))
    except TenantError as error:
        print(f"tenants: {error}", file=sys.stderr)
        return 2
    if args.out:
        path = args.out / f"{connection.username}.env"
        write_env(connection, path)
        print(path)
    else:
        print(f"{connection.username}: created; its password is shown once: {connection.password}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
