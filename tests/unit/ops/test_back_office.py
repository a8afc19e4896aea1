"""The back office of `make serve`, where it cannot run: one line, and nothing is started."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from holdem.ops import back_office
from holdem.ops.launcher import ServiceProcess


def test_a_storage_without_the_backoffice_principal_says_so_and_starts_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "clients").mkdir()
    (tmp_path / "clients" / "operator.env").write_text("HOLDEM_KAFKA_BOOTSTRAP=127.0.0.1:1\n")
    broker: Any = SimpleNamespace(clients_dir=tmp_path / "clients")
    said = asyncio.run(back_office.start(broker, tmp_path / "services"))
    assert isinstance(said, str) and said.startswith("back office: off (")
    assert "WIPE=1" in said and "\n" not in said
    assert not (tmp_path / "services").exists()  # no PostgreSQL, no process, no log


def test_the_banner_line_names_the_url_the_user_and_the_generated_password() -> None:
    office = back_office.BackOffice("http://127.0.0.1:5/", "s3cret")
    line = office.line()
    assert line.startswith("back office: http://127.0.0.1:5/ (user admin, regulator of operator")
    assert "password s3cret;" in line and "\n" not in line


def test_a_machine_without_postgresql_is_told_in_one_line(tmp_path: Path) -> None:
    """localdb's exit 3 (no server installed) is no error: the back office is off, said why."""
    said = "PostgreSQL unavailable: no PostgreSQL server installed"
    code = f"import sys; print({said!r}, file=sys.stderr); sys.exit(3)"
    postgres = ServiceProcess(
        "postgres", {}, tmp_path / "postgres.log", argv=[sys.executable, "-c", code]
    )
    postgres.start()
    assert asyncio.run(back_office._database(postgres)) is None
    assert postgres.log_since_start().strip().splitlines()[-1] == said
