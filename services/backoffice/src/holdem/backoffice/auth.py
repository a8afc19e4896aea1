"""Back-office users: scrypt-hashed passwords, a role and the one operator they may see.

``Authenticator`` is the seam for single sign-on: an OIDC deployment supplies one that maps
its verified ID token's claims to a ``User`` (role, operator) and the login form is not used.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import psycopg

Role = Literal["support", "finance", "regulator"]
ROLES: tuple[Role, ...] = ("support", "finance", "regulator")
# What each role may open (regulator: everything, read-only like every page here).
PAGES: dict[Role, frozenset[str]] = {
    "support": frozenset({"rounds", "players", "flagged"}),
    "finance": frozenset({"statements", "exports", "flagged", "reconcile", "promotions"}),
    "regulator": frozenset(
        {"rounds", "players", "flagged", "statements", "exports", "reconcile", "promotions"}
    ),
}
SCRYPT = {"n": 2**14, "r": 8, "p": 1}


@dataclass(frozen=True)
class User:
    username: str
    role: Role
    operator_id: str

    def may(self, page: str) -> bool:
        return page in PAGES[self.role]


class Authenticator(Protocol):
    def authenticate(
        self, conn: psycopg.Connection[Any], username: str, secret: str
    ) -> User | None:
        """The user these credentials prove, or None."""


def hash_password(password: str, salt: bytes | None = None) -> str:
    """``scrypt$n$r$p$salt$hash`` (base64).

    >>> verify_password("pw", hash_password("pw")), verify_password("no", hash_password("pw"))
    (True, False)
    """
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT, dklen=32)
    parts = (
        *map(str, SCRYPT.values()),
        base64.b64encode(salt).decode(),
        base64.b64encode(digest).decode(),
    )
    return "$".join(("scrypt", *parts))


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    found = hashlib.scrypt(
        password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=32
    )
    return hmac.compare_digest(found, base64.b64decode(digest))


class PasswordAuthenticator:
    """Users in the ``users`` table with scrypt hashes."""

    def authenticate(
        self, conn: psycopg.Connection[Any], username: str, secret: str
    ) -> User | None:
        row = conn.execute(
            "SELECT password_hash, role, operator_id, disabled FROM users WHERE username = %s",
            (username,),
        ).fetchone()
        if row is None:
            hash_password(secret)  # the same work as a known user: no timing tells who exists
            return None
        stored, role, operator, disabled = row
        if not verify_password(secret, stored) or disabled:
            return None
        return User(username, role, operator)


def add_user(
    conn: psycopg.Connection[Any], username: str, password: str, role: Role, operator: str
) -> None:
    if role not in ROLES:
        raise ValueError(f"role {role!r}: expected one of {', '.join(ROLES)}")
    """Add the user, or give an existing one this password, role and operator (enabled again):
    every session the user had ends (a changed password or role must not outlive them)."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO users (username, password_hash, role, operator_id)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (username) DO UPDATE"
            " SET password_hash = excluded.password_hash, role = excluded.role,"
            " operator_id = excluded.operator_id, disabled = false",
            (username, hash_password(password), role, operator),
        )
        end_sessions(conn, username)


def disable_user(conn: psycopg.Connection[Any], username: str) -> bool:
    """The user can no longer log in and every session of theirs ends; False: no such user."""
    with conn.transaction():
        found = conn.execute(
            "UPDATE users SET disabled = true WHERE username = %s", (username,)
        ).rowcount
        end_sessions(conn, username)
    return bool(found)


def end_sessions(conn: psycopg.Connection[Any], username: str) -> None:
    conn.execute("DELETE FROM web_sessions WHERE username = %s", (username,))
