"""Tenant ids, their ACL plan and the SCRAM salted password, without a broker."""

from __future__ import annotations

import doctest
import hashlib
import hmac

import pytest

from holdem.ops import tenants


def test_the_module_examples_hold() -> None:
    result = doctest.testmod(tenants)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("bad", ["", "Acme", "a.b", "a_b", "-a", "a" * 32, "é"])
def test_a_tenant_id_that_could_collide_or_break_a_name_is_refused(bad: str) -> None:
    with pytest.raises(tenants.TenantError):
        tenants.plan(bad)


def test_two_tenants_plans_share_no_operator_rule_and_no_name() -> None:
    a, b = tenants.plan("a"), tenants.plan("ab")
    operator_names = {r.name for r in a if r.principal == "User:operator-a"}
    assert operator_names and not any(r.name.startswith(name) for name in operator_names for r in b)


def test_a_seamless_tenant_s_own_operator_answers_its_wallet_s_requests() -> None:
    rules = tenants.plan("acme", seamless=True)
    replies = {
        (r.principal, r.operation) for r in rules if r.name == "acme.holdem.seamless.replies"
    }
    # The shared back office principal projects them, as the shared services serve the tenant.
    readers = {("User:wallet", "READ"), ("User:backoffice", "READ"), ("User:auditor", "READ")}
    assert replies == {("User:operator-acme", "WRITE"), *readers}
    assert not [r for r in tenants.plan("acme") if "seamless" in r.name]


def test_the_salted_password_is_rfc5802_hi_with_sha512() -> None:
    # Hi(str, salt, i): U1 = HMAC(str, salt + INT(1)), Ui = HMAC(str, Ui-1), result = XOR of all.
    password, salt, rounds = "pencil", b"salt-bytes", 4096
    u = hmac.new(password.encode(), salt + b"\x00\x00\x00\x01", hashlib.sha512).digest()
    result = bytearray(u)
    for _ in range(rounds - 1):
        u = hmac.new(password.encode(), u, hashlib.sha512).digest()
        result = bytearray(x ^ y for x, y in zip(result, u, strict=True))
    assert tenants.salted_password(password, salt, rounds) == bytes(result)
