"""`make contracts`: write the JSON Schema files, the version lock and the services' AsyncAPI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from holdem.core.contracts.schema import fingerprints, schema_files

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "docs" / "contracts" / "schemas"
LOCK = ROOT / "docs" / "contracts" / "versions.lock.json"
ASYNCAPI = ROOT / "docs" / "contracts" / "asyncapi"


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


def update_lock() -> list[str]:
    """Record new (type, version) fingerprints; refuse to overwrite a recorded one."""
    lock = json.loads(LOCK.read_text()) if LOCK.exists() else {}
    problems = []
    for kind, versions in fingerprints().items():
        for version, digest in versions.items():
            recorded = lock.setdefault(kind, {}).get(version)
            if recorded is None:
                lock[kind][version] = digest
            elif recorded != digest:
                problems.append(f"{kind} v{version} changed: bump its version (and upcast)")
    write_json(LOCK, lock)
    return problems


def asyncapi_documents() -> dict[str, str]:
    """Generated from the services' own apps (built, not started: nothing connects to Kafka)."""
    from holdem.dealer.app import create_app as dealer
    from holdem.dealer.settings import DealerSettings
    from holdem.query.app import create_app as query
    from holdem.query.settings import QuerySettings
    from holdem.settlement.app import create_app as settlement
    from holdem.settlement.settings import SettlementSettings
    from holdem.wallet.app import create_app as wallet
    from holdem.wallet.settings import WalletSettings

    services = {
        # Any key: the documents describe the topics, not the vault's content.
        "dealer": dealer(DealerSettings(dealer_vault_keys="docs:" + "A" * 43 + "=")),
        "wallet": wallet(WalletSettings()),
        # HOLDEM_WALLET_MODE=seamless: also the operator's wallet's requests and replies (ADR 015)
        "wallet-seamless": wallet(WalletSettings(wallet_mode="seamless")),
        "settlement": settlement(SettlementSettings()),
        "query": query(QuerySettings()),
    }
    return {name: s.app.schema.to_specification().to_json() for name, s in services.items()}


def main() -> int:
    for name, schema in schema_files().items():
        write_json(SCHEMAS / name, schema)
    problems = update_lock()
    for name, document in asyncapi_documents().items():
        write_json(ASYNCAPI / f"{name}.json", json.loads(document))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
