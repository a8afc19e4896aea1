"""JSON Schema of every contract, and the fingerprints that pin each (type, version) pair."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from holdem.core.contracts import ALL_MODELS, Envelope


def type_and_version(model: type[Envelope]) -> tuple[str, int]:
    fields = model.model_fields
    return str(fields["type"].default), int(fields["version"].default)


def json_schema(model: type[Envelope]) -> dict[str, Any]:
    return model.model_json_schema(mode="validation")


def fingerprint(model: type[Envelope]) -> str:
    """sha256 of the canonical JSON Schema: changes whenever the wire contract changes."""
    canonical = json.dumps(json_schema(model), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def fingerprints() -> dict[str, dict[str, str]]:
    """{type: {version: fingerprint}} for every model in the code."""
    found: dict[str, dict[str, str]] = {}
    for model in ALL_MODELS:
        kind, version = type_and_version(model)
        found.setdefault(kind, {})[str(version)] = fingerprint(model)
    return found


def schema_files() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, one file per (type, version)."""
    files: dict[str, dict[str, Any]] = {}
    for model in ALL_MODELS:
        kind, version = type_and_version(model)
        files[f"{kind}.v{version}.json"] = json_schema(model)
    return files
