"""A contract cannot change without its version changing; the published schemas match the code."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from holdem.core.contracts import ALL_MODELS
from holdem.core.contracts.schema import fingerprints, schema_files, type_and_version

ROOT = Path(__file__).resolve().parents[3]
LOCK = ROOT / "docs" / "contracts" / "versions.lock.json"
SCHEMAS = ROOT / "docs" / "contracts" / "schemas"


def test_every_contract_matches_the_fingerprint_recorded_for_its_version() -> None:
    recorded = json.loads(LOCK.read_text())
    changed = [
        f"{kind} v{version}"
        for kind, versions in fingerprints().items()
        for version, digest in versions.items()
        if recorded.get(kind, {}).get(version, digest) != digest
    ]
    assert not changed, f"changed without a version bump: {changed}"


def test_every_contract_version_is_recorded() -> None:
    recorded = json.loads(LOCK.read_text())
    missing = [
        f"{kind} v{version}"
        for kind, versions in fingerprints().items()
        for version in versions
        if version not in recorded.get(kind, {})
    ]
    assert not missing, f"run `make contracts` to record: {missing}"


def test_the_published_json_schemas_are_those_of_the_code() -> None:
    stale = [
        name
        for name, schema in schema_files().items()
        if not (SCHEMAS / name).exists() or json.loads((SCHEMAS / name).read_text()) != schema
    ]
    assert not stale, f"run `make contracts`: {stale}"


def test_types_are_unique_and_namespaced_by_topic() -> None:
    kinds = [type_and_version(model)[0] for model in ALL_MODELS]
    assert len(kinds) == len(set(kinds))
    prefixes = {
        "command", "round", "wallet", "vault", "rejected", "query", "reply", "seamless", "admin",
        "table",
    }  # fmt: skip
    assert all(kind.split(".")[0] in prefixes for kind in kinds)


def test_the_published_asyncapi_documents_are_those_the_apps_generate() -> None:
    spec = importlib.util.spec_from_file_location(
        "export", ROOT / "scripts" / "export_contracts.py"
    )
    assert spec is not None and spec.loader is not None
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    for name, document in export.asyncapi_documents().items():
        published = json.loads(
            (ROOT / "docs" / "contracts" / "asyncapi" / f"{name}.json").read_text()
        )
        assert published == json.loads(document), f"run `make contracts`: {name} AsyncAPI is stale"
