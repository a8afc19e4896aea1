"""`make serve`: a broker kept between runs, the services and the back office up until Ctrl-C,
and where to connect."""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from holdem.client import Operator, Player
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(420)]

READY_LINE = "Ctrl-C stops"
UP_TIMEOUT_S = 240
PROJECTED_WITHIN_S = 90
BACK_OFFICE = re.compile(r"back office: (http://\S+) \(user (\S+), .* password (\S+);")


def logged_in(url: str, username: str, password: str) -> urllib.request.OpenerDirector:
    """A browser of the back office with its login cookie (the login form, as a person)."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    form = urllib.parse.urlencode({"username": username, "password": password, "next": "/"})
    with opener.open(url + "login", data=form.encode(), timeout=30) as response:
        assert response.status == 200  # the redirect after it is followed to a page
        assert "/login" not in response.url, "login failed"
    return opener


def rounds_of(opener: urllib.request.OpenerDirector, url: str, player: str) -> list[Any]:
    query = urllib.parse.urlencode({"player": player})
    with opener.open(f"{url}rounds.json?{query}", timeout=30) as response:
        rounds: list[Any] = json.load(response)["rounds"]
    return rounds


async def play_a_round(operator_env: Path) -> tuple[str, str]:
    """A deposit and a round played to its outcome as the operator; the player and round ids."""
    async with Operator(KafkaConnection.from_file(operator_env), Topics()) as client:
        player = Player(client, f"served-{uuid.uuid4().hex[:8]}", step_s=120.0)
        await player.deposit(1_000)
        played = await player.bet(100)
        await played.dealt()
        await played.call()
        outcome = await played.outcome()
    return player.player_id, outcome.round_id


@pytest.mark.postgres  # the back office it starts
def test_serve_stays_up_prints_where_to_connect_and_keeps_the_data_after_ctrl_c(
    tmp_path: Path,
) -> None:
    """And its back office answers on the printed URL: the login page, then, logged in as the
    printed user, the round just played in the round list's JSON (projected from Kafka as the
    backoffice principal). PostgreSQL is needed: without it this fails, it does not skip."""
    run_dir = tmp_path / "serve"
    kafka_sh = Path(__file__).resolve().parents[2] / "deploy" / "kafka" / "kafka.sh"
    command = [sys.executable, "-m", "holdem.ops.serve", "--dir", str(run_dir)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_KAFKA_")}
    serve = subprocess.Popen(
        [*command, "--no-metrics"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert serve.stdout is not None
        for line in serve.stdout:  # bounded by the test's timeout; an early exit ends the loop
            lines.append(line)
            if READY_LINE in line:
                break
        printed = "".join(lines)
        assert READY_LINE in printed, printed
        assert serve.poll() is None, printed  # still up
        bootstrap = re.search(r"Kafka at (\S+)", printed)
        assert bootstrap is not None, printed
        operator_env = run_dir / "clients" / "operator.env"
        assert f"operator credentials: {operator_env}" in printed
        assert KafkaConnection.from_file(operator_env).bootstrap == bootstrap.group(1)
        for name in ("dealer", "wallet", "settlement", "query"):
            assert str(run_dir / "services" / f"{name}.log") in printed
        office = BACK_OFFICE.search(printed)
        assert office is not None, printed  # "back office: off (...)" is a failure here
        url, username, password = office.groups()
        with urllib.request.urlopen(url + "login", timeout=30) as login_page:
            assert login_page.status == 200
            assert 'name="password"' in login_page.read().decode()
        player, round_id = asyncio.run(play_a_round(operator_env))
        browser = logged_in(url, username, password)
        deadline = time.monotonic() + PROJECTED_WITHIN_S
        listed: list[Any] = []
        while round_id not in {row["round_id"] for row in listed}:
            assert time.monotonic() < deadline, (round_id, listed)
            time.sleep(0.5)
            listed = rounds_of(browser, url, player)
        assert all(row["player_id"] == player for row in listed)
        assert serve.poll() is None, printed  # still up, back office included
        serve.send_signal(signal.SIGINT)
        rest, _ = serve.communicate(timeout=UP_TIMEOUT_S)
        stopped = subprocess.run(
            [str(kafka_sh), "status", "--dir", str(run_dir)], capture_output=True, check=False
        )
        kept = (run_dir / "state").is_file() and (run_dir / "data" / "meta.properties").is_file()
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
        subprocess.run(
            [str(kafka_sh), "down", "--dir", str(run_dir), "--wipe"],
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert serve.returncode == 0, printed + rest
    assert "data kept" in rest
    assert stopped.returncode == 3  # the broker is down ...
    assert kept  # ... and its storage is there for the next `make serve`
