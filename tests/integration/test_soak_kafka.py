"""The soak's one-minute version (issue 21 item 1; `make soak` runs the hour): the report is
written whole, nothing fails, no service logs an error, and the audit (the live auditor's, beside
the services from the first record) is clean over more than 1,000 rounds. Its figures (memory
slopes, p99 drift) are the report's, not assertions: a minute cannot show a slope. One minute of
load, not two (issue 27 item 7): the second minute proved nothing the first does not, and the
rounds' floor is asserted, not assumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holdem.harness.soak import NAMES, Config, soak

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]


async def test_a_one_minute_soak_loses_nothing_and_logs_no_error(tmp_path: Path) -> None:
    out = tmp_path / "report"
    config = Config(
        minutes=0.75,
        warmup_minutes=0.25,
        rate=40,
        out=out,
        sample_s=5,
        void_every=50,
        session_every=20,
        log_dir=tmp_path / "logs",
    )
    found = await soak(config)
    assert not found["judged"]  # a minute cannot show a slope: figures reported, not judged
    print("\nsoak:", json.dumps({k: found[k] for k in ("rounds", "memory", "latency", "max_lag")}))
    assert found["verdict"] == [], found["verdict"]
    audit = found["audit"]
    assert audit["ok"] and audit["rounds"] == audit["ended"] == found["rounds"] > 1000, audit
    # The load mixed what it should: voids and folds beside settled rounds.
    assert {"voided", "fold", "win", "lose"} <= set(found["outcomes"]), found["outcomes"]
    assert set(found["memory"]) >= {*NAMES, "broker", "load", "auditor"}, found["memory"]
    assert found["memory"]["auditor"]["service"]  # judged flat with the services
    assert set(found["max_lag"]) == {*NAMES, "auditor"}
    # The audit is the live auditor's: it folded the whole log, and was at its end.
    assert audit["by"] == "the live auditor" and "at the log's end" in audit["line"], audit
    assert audit["records"] > 10 * audit["rounds"], audit
    assert {"rounds", "dealer.vault", "dealer.snapshots"} <= set(found["topics_mb"]), found[
        "topics_mb"
    ]
    for name in ("README.md", "soak.json", "memory.png", "lag.png", "latency.png"):
        assert (out / name).stat().st_size > 0, name
    assert json.loads((out / "soak.json").read_text())["rounds"] == found["rounds"]
