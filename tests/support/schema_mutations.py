"""Invalid bodies made from a published JSON Schema: a valid example, mutated field by field
against the keywords the schema states for that field (format, bounds, lengths, pattern, enum,
const, type, required, additionalProperties), each mutation kept only if the schema itself (the
``jsonschema`` library, with an RFC 3339 ``date-time`` check) refuses it. What the boundary must
refuse is thus read from the published contract, not restated by hand."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

# RFC 3339 section 5.6 (JSON Schema's date-time): a full date, "T", a time and an offset.
_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", re.ASCII
)
FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time")
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str) or not _RFC3339.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return False
    return True


NOT_A_TIME = ("2026-12-04T21:46:30", "2026-12-04", "2026-12-04T21:46:30+0100", "1764884790")


@dataclass(frozen=True)
class Mutation:
    path: tuple[str, ...]  # where, in the body
    keyword: str  # which schema keyword refuses it
    body: dict[str, Any]

    @property
    def name(self) -> str:
        return f"{'.'.join(self.path) or '<body>'}:{self.keyword}"


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=FORMATS)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return {
            **schema["$defs"][ref.removeprefix("#/$defs/")],
            **{k: v for k, v in node.items() if k != "$ref"},
        }
    return node


def _branches(schema: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a field (``X | None`` is an anyOf of X and null)."""
    node = _resolve(schema, node)
    if "anyOf" in node:
        return [
            _resolve(schema, branch)
            for branch in node["anyOf"]
            if _resolve(schema, branch).get("type") != "null"
        ]
    return [node]


def _wrong_values(node: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(keyword, value) pairs a field of schema ``node`` must refuse, one per keyword."""
    if node.get("format") == "date-time":
        for text in NOT_A_TIME:
            yield "format", text
    if "minimum" in node:
        yield "minimum", node["minimum"] - 1
    if "exclusiveMinimum" in node:
        yield "exclusiveMinimum", node["exclusiveMinimum"]
    if "maximum" in node:
        yield "maximum", node["maximum"] + 1
    if "exclusiveMaximum" in node:
        yield "exclusiveMaximum", node["exclusiveMaximum"]
    if node.get("minLength", 0) >= 1:
        yield "minLength", ""
    if "maxLength" in node:
        yield "maxLength", "A" * (node["maxLength"] + 1)
    if "pattern" in node:
        yield "pattern", "#" * max(node.get("minLength", 1), 1)
    if "enum" in node:
        yield "enum", 99 if node.get("type") == "integer" else "not-a-member"
    if "const" in node:
        yield "const", 99 if isinstance(node["const"], int) else "not-the-constant"
    if node.get("minItems", 0) >= 1:
        yield "minItems", []
    if "maxItems" in node:
        yield "maxItems", ["As"] * (node["maxItems"] + 1)
    kind = node.get("type")
    if kind in ("integer", "number"):
        yield "type", "1"
        if kind == "integer":
            yield "type", 1.5
    elif kind == "string":
        yield "type", 1
    elif kind == "boolean":
        yield "type", "true"
    elif kind == "array":
        yield "type", "As"
    elif kind == "object":
        yield "type", []


def _set(body: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    target = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return out


def _drop(body: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    out = copy.deepcopy(body)
    target = out
    for part in path[:-1]:
        target = target[part]
    del target[path[-1]]
    return out


def _candidates(
    schema: dict[str, Any], node: dict[str, Any], body: dict[str, Any], at: tuple[str, ...]
) -> Iterator[Mutation]:
    node = _resolve(schema, node)
    value: Any = body
    for part in at:
        value = value[part]
    for name in node.get("required", ()):
        if at or name != "type":  # no type is an unknown type, not an invalid message
            yield Mutation((*at, name), "required", _drop(body, (*at, name)))
    if node.get("additionalProperties") is False:
        yield Mutation((*at, "aa_bonsu"), "additionalProperties", _set(body, (*at, "aa_bonsu"), 1))
    for name, field in node.get("properties", {}).items():
        if not at and name == "type":
            continue  # another type is unknown_type: tested apart
        for branch in _branches(schema, field):
            for keyword, wrong in _wrong_values(branch):
                yield Mutation((*at, name), keyword, _set(body, (*at, name), wrong))
            if branch.get("type") == "object" and isinstance(value.get(name), dict):
                yield from _candidates(schema, branch, body, (*at, name))


def mutations(schema: dict[str, Any], example: dict[str, Any]) -> list[Mutation]:
    """Every mutation of ``example`` the schema refuses (``example`` itself must be valid)."""
    check = validator(schema)
    check.validate(example)
    found: dict[str, Mutation] = {}
    for mutation in _candidates(schema, schema, example, ()):
        if not check.is_valid(mutation.body):
            key = f"{mutation.name}={mutation.body!r}"
            found.setdefault(key, mutation)
    return list(found.values())
