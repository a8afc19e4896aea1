"""`make serve` runs the live auditor as its own principal, with /metrics on this host only;
`--no-auditor` leaves it out; a storage older than the principal says why it is off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holdem.core.wire.connection import KafkaConnection
from holdem.ops import serve


class Broker:
    def __init__(self, clients_dir: Path) -> None:
        self.clients_dir = clients_dir

    def connection(self, principal: str) -> KafkaConnection:
        return KafkaConnection.from_file(self.clients_dir / f"{principal}.env")


def test_the_auditor_runs_as_its_principal_and_is_off_on_an_older_storage(tmp_path: Path) -> None:
    clients = tmp_path / "clients"
    clients.mkdir()
    broker: Any = Broker(clients)
    off = serve.auditor_process(broker, tmp_path, seamless=False)
    assert isinstance(off, str) and "WIPE=1" in off
    (clients / "auditor.env").write_text(
        "HOLDEM_KAFKA_BOOTSTRAP=127.0.0.1:1\nHOLDEM_KAFKA_SASL_USERNAME=auditor\n"
        "HOLDEM_KAFKA_SASL_PASSWORD=pw\nHOLDEM_KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT\n"
        "HOLDEM_KAFKA_SASL_MECHANISM=SCRAM-SHA-512\n"
    )
    process = serve.auditor_process(broker, tmp_path, seamless=True)
    assert not isinstance(process, str)
    assert process.argv[1:] == ["-m", "holdem.harness.auditor_service"]
    assert process.env["HOLDEM_KAFKA_SASL_USERNAME"] == "auditor"
    assert process.env["HOLDEM_METRICS_HOST"] == "127.0.0.1"
    assert process.env["HOLDEM_WALLET_MODE"] == "seamless"
    assert serve.parse_args(["--no-auditor"]).no_auditor
    assert not serve.parse_args([]).no_auditor
