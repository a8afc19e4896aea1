"""What a rolling upgrade needs of versions (ADR 032): this release reads the version it writes
and the next one, writes the one the previous release reads, and refuses a version it does not
know with a typed rejection instead of reading it as another.

RoundClosed: v1 (written) and v2 (``net``, read); the wallet's snapshot: v6 (written) and v7
(``counts``, read)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from support.wallet_histories import HISTORIES, run

from holdem.core.contracts import (
    UNIONS,
    ContractError,
    Mode,
    Reason,
    RoundClosed,
    dump,
    parse,
)
from holdem.core.contracts.versions import upcast
from holdem.wallet import snapshot
from holdem.wallet.snapshot import SnapshotError

AT = datetime(2026, 12, 2, tzinfo=UTC)
V1: dict[str, Any] = {
    "type": "round.closed",
    "version": 1,
    "event_id": "e1",
    "player_id": "p1",
    "round_id": "r1",
    "occurred_at": "2026-12-02T00:00:00Z",
    "outcome": "settled",
    "currency": "EUR",
    "staked": 1_500,
    "returned": 4_000,
}


def closed(**fields: Any) -> RoundClosed:
    values: dict[str, Any] = {
        "event_id": "e1",
        "player_id": "p1",
        "round_id": "r1",
        "occurred_at": AT,
        "outcome": "settled",
        "currency": "EUR",
        "staked": 1_500,
        "returned": 4_000,
        "net": 2_500,
    }
    return RoundClosed(**{**values, **fields})


def test_a_v1_round_closed_is_read_with_its_net() -> None:
    message = parse("rounds", json.dumps(V1))

    assert isinstance(message, RoundClosed) and message.version == 2
    assert message.net == 2_500 and message.staked == 1_500 and message.returned == 4_000


def test_a_v2_round_closed_reads_as_its_v1_does() -> None:
    v2 = {**V1, "version": 2, "net": 2_500}

    assert parse("rounds", json.dumps(v2)) == parse("rounds", json.dumps(V1))


def test_this_release_writes_v1_which_the_previous_release_reads_whole() -> None:
    written = json.loads(dump(closed()))

    assert written["version"] == 1 and "net" not in written
    assert {k: written[k] for k in V1} == {**V1, "occurred_at": "2026-12-02T00:00:00Z"}
    assert parse("rounds", dump(closed())) == closed()


def test_the_next_release_writes_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RoundClosed, "WRITES", 2)

    written = json.loads(dump(closed(returned=0, net=-1_500)))

    assert written["version"] == 2 and written["net"] == -1_500


@pytest.mark.parametrize("version", [0, 3, 99, -1])
def test_a_version_it_does_not_know_is_refused_not_read_as_another(version: int) -> None:
    with pytest.raises(ContractError) as refused:
        parse("rounds", json.dumps({**V1, "version": version, "net": 2_500}))

    assert refused.value.reason is Reason.INVALID and "version" in refused.value.detail


def test_a_v2_whose_net_is_not_its_result_is_refused() -> None:
    with pytest.raises(ContractError, match="net is what the round returned"):
        parse("rounds", json.dumps({**V1, "version": 2, "net": 0}))


def test_an_old_version_is_checked_as_strictly_as_the_newest() -> None:
    for broken in ({"staked": "1500"}, {"occurred_at": 0}, {"version": 1.0}, {"staked": -1}):
        with pytest.raises(ContractError):
            parse("rounds", json.dumps({**V1, **broken}))
    missing = {k: v for k, v in V1.items() if k != "returned"}
    with pytest.raises(ContractError, match="returned"):
        parse("rounds", json.dumps(missing))


def test_upcast_says_none_for_the_newest_and_for_an_unknown_version() -> None:
    assert upcast(RoundClosed, {**V1, "version": 2}) is None
    assert upcast(RoundClosed, {**V1, "version": 7}) is None
    assert upcast(RoundClosed, dict(V1)) == {**V1, "version": 2, "net": 2_500}


@settings(max_examples=40, deadline=None)
@given(HISTORIES)
def test_wallet_states_written_as_v6_and_as_v7_load_equal(steps: list[Any]) -> None:
    state = run(steps)[0]

    v6, v7 = snapshot.dump_state(state), snapshot.dump_state(state, 7)

    assert orjson.loads(v6)["version"] == snapshot.SNAPSHOT_WRITES == 6
    assert "counts" not in orjson.loads(v6) and orjson.loads(v7)["version"] == 7
    assert snapshot.load_state(v6) == state == snapshot.load_state(v7)


def test_a_v7_snapshot_whose_counts_do_not_match_its_rows_is_refused() -> None:
    deposits = [("deposit", p, 500, Mode.REAL, f"c-{p}") for p in ("p1", "p2")]
    state = run(deposits)[0]
    body = orjson.loads(snapshot.dump_state(state, 7))
    body["accounts"] = body["accounts"][:1]  # a row lost

    with pytest.raises(SnapshotError, match="counts"):
        snapshot.load_state(orjson.dumps(body))


def test_a_snapshot_version_it_does_not_know_is_refused() -> None:
    body = orjson.loads(snapshot.dump_state(run([])[0], 7))

    for version in (8, 2):
        with pytest.raises(SnapshotError, match=f"v{version}|version {version}"):
            snapshot.load_state(orjson.dumps({**body, "version": version}))
    with pytest.raises(ValueError, match="v6 or v7"):
        snapshot.dump_state(run([])[0], 8)


# How a round.closed was parsed before its version was read first: strictly as the newest, and
# on failure its upcast, if it was an older version, strictly as the newest again. The oracle
# of the version-first parse: the same messages, the same refusals.
NEWEST_ONLY = TypeAdapter(UNIONS["rounds"])


def parsed_as_before(raw: bytes) -> RoundClosed | tuple[Reason, str]:
    try:
        return NEWEST_ONLY.validate_json(raw, strict=True)  # type: ignore[no-any-return]
    except ValidationError as error:
        body = json.loads(raw)
        newer = upcast(RoundClosed, body) if isinstance(body, dict) else None
        if newer is not None:
            return parsed_as_before(json.dumps(newer).encode())
        first = error.errors()[0]
        if first["type"] == "json_invalid" or not first["loc"]:
            return (Reason.MALFORMED, first["msg"])
        where = ".".join(str(part) for part in first["loc"][1:]) or "message"
        return (Reason.INVALID, f"{where}: {first['msg']}")


def parsed(raw: bytes) -> Any:
    try:
        return parse("rounds", raw)
    except ContractError as error:
        return (error.reason, error.detail)


ODD = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**13), 10**13), st.floats(allow_nan=False),
    st.text(max_size=5), st.sampled_from([0, 1, 2, 3, 1.0, "1", "2", 1_500, 4_000, 2_500]),
)  # fmt: skip
FIELDS = ["version", "staked", "returned", "net", "outcome", "mode", "currency", "occurred_at",
          "round_id", "event_id"]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(
    changes=st.dictionaries(st.sampled_from(FIELDS), ODD, max_size=3),
    dropped=st.sets(st.sampled_from(FIELDS), max_size=2),
    voided=st.booleans(),
)
def test_a_round_closed_of_any_version_parses_or_is_refused_as_before(
    changes: dict[str, Any], dropped: set[str], voided: bool
) -> None:
    body = {**V1, "outcome": "voided", "returned": 1_500} if voided else dict(V1)
    body = {k: v for k, v in {**body, **changes}.items() if k not in dropped}
    raw = json.dumps(body).encode()
    now, before = parsed(raw), parsed_as_before(raw)
    assert now == before, body
    if isinstance(now, RoundClosed):  # the same fields, and the same said to be set
        assert type(now) is RoundClosed and now.model_fields_set == before.model_fields_set  # type: ignore[union-attr]
