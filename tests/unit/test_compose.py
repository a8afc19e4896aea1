"""docker-compose.yml, the Dockerfile and prometheus.yml agree with each other and the docs (the
stack itself runs in tests/containers/)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
# The only settings the services take from the environment in the compose stack
# (docs/containers.md).
DOCUMENTED_ENV = {
    "HOLDEM_KAFKA_BOOTSTRAP",
    "HOLDEM_KAFKA_SECURITY_PROTOCOL",
    "HOLDEM_KAFKA_SASL_MECHANISM",
    "HOLDEM_KAFKA_SASL_USERNAME",
    "HOLDEM_KAFKA_SASL_PASSWORD",
    "HOLDEM_METRICS_PORT",
    "HOLDEM_PARTITIONS",
    "HOLDEM_DEALER_VAULT_KEY_FILE",
    "HOLDEM_DEALER_TEST_MODE",
}
METRICS_PORTS = {"dealer": 9101, "wallet": 9102, "settlement": 9103, "query": 9104}
# The back office's containers (ADR 026): one image, three commands; only the projection
# reads Kafka.
BACKOFFICE = ("backoffice-init", "backoffice-projection", "backoffice")
BACKOFFICE_ENV = {"HOLDEM_BACKOFFICE_DSN", "PGPASSFILE", "HOLDEM_BACKOFFICE_PASSWORD"}
BACKOFFICE_TARGETS = {"backoffice-projection:9105", "backoffice:9106"}
# The live auditor (issue 31): its own principal, image target and metrics port.
AUDITOR_TARGET = "auditor:9107"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def stage(name: str) -> str:
    """The text of one stage of the Dockerfile, from its FROM to the next."""
    text = (REPO / "Dockerfile").read_text()
    found = re.search(rf"^FROM \S+ AS {re.escape(name)}\n(.*?)(?=^FROM |\Z)", text, re.M | re.S)
    assert found, f"no stage {name} in the Dockerfile"
    return found.group(1)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(REPO / "docker-compose.yml")
    return loaded


@pytest.fixture(scope="module")
def built(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services built from this repository (the rest are upstream images)."""
    return {name: svc for name, svc in compose["services"].items() if "build" in svc}


def env_of(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # the "KEY=value" form
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def test_compose_has_kafka_topic_init_the_three_services_and_monitoring(
    compose: dict[str, Any],
) -> None:
    assert {"kafka", "topic-init", *METRICS_PORTS, "prometheus", "grafana"} <= set(
        compose["services"]
    )
    # The upstream image by default; a stand-in where no registry answers (base-images.sh).
    assert compose["services"]["kafka"]["image"].startswith("${HOLDEM_KAFKA_IMAGE:-apache/kafka:")


def test_every_build_references_a_dockerfile_that_exists(
    built: dict[str, dict[str, Any]],
) -> None:
    assert set(METRICS_PORTS) <= set(built)
    for name, service in built.items():
        build = service["build"]
        context = REPO / (build if isinstance(build, str) else build.get("context", "."))
        dockerfile = (
            "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
        )
        assert (context / dockerfile).is_file(), f"{name}: {context / dockerfile} missing"


def test_each_service_image_runs_its_own_console_script(
    built: dict[str, dict[str, Any]],
) -> None:
    assert not list(REPO.glob("services/*/Dockerfile")), "one Dockerfile, a target per service"
    for name in METRICS_PORTS:
        scripts = tomllib.loads((REPO / "services" / name / "pyproject.toml").read_text())[
            "project"
        ]["scripts"]
        assert built[name]["build"]["target"] == name
        assert f"--no-editable --package holdem-{name}\n" in stage(f"venv-{name}")
        assert f"COPY --from=venv-{name} /venv /venv" in stage(name)
        assert f'CMD ["holdem-{name}"]' in stage(name)
        assert scripts[f"holdem-{name}"] == f"holdem.{name}.app:main"


def test_service_containers_are_unprivileged_read_only_and_health_checked(
    compose: dict[str, Any],
) -> None:
    runtime = stage("runtime")
    assert re.search(r"^USER holdem$", runtime, re.M)
    assert "holdem.runtime.health" in runtime
    for name in METRICS_PORTS:
        service = compose["services"][name]
        assert service["read_only"] is True, name
        assert service["tmpfs"] == ["/tmp"], name
        assert service["restart"] == "unless-stopped", name
        assert service["depends_on"]["topic-init"]["condition"] == (
            "service_completed_successfully"
        )


def test_the_dealer_reads_its_vault_key_from_a_secret_never_a_default(
    compose: dict[str, Any],
) -> None:
    dealer = compose["services"]["dealer"]
    assert dealer["secrets"] == ["dealer_vault_keys"]
    assert env_of(dealer)["HOLDEM_DEALER_VAULT_KEY_FILE"] == "/run/secrets/dealer_vault_keys"
    assert "HOLDEM_DEALER_VAULT_KEYS" not in env_of(dealer)
    assert compose["secrets"]["dealer_vault_keys"]["file"].startswith("${HOLDEM_SECRETS_DIR")


def test_services_read_only_documented_environment_variables(
    built: dict[str, dict[str, Any]],
) -> None:
    for name, service in built.items():
        documented = DOCUMENTED_ENV | BACKOFFICE_ENV if name in BACKOFFICE else DOCUMENTED_ENV
        undocumented = set(env_of(service)) - documented
        assert not undocumented, f"{name} sets undocumented env vars {undocumented}"
        if name not in BACKOFFICE[:1] + BACKOFFICE[2:]:  # init and web never touch Kafka
            assert env_of(service)["HOLDEM_KAFKA_BOOTSTRAP"] == "kafka:9092"


def test_the_back_office_reaches_its_database_without_a_password_in_any_variable(
    compose: dict[str, Any],
) -> None:
    for name in BACKOFFICE:
        service = compose["services"][name]
        env = env_of(service)
        assert service["build"]["target"] == "backoffice", name
        assert env["HOLDEM_BACKOFFICE_DSN"] == "postgresql://holdem@postgres:5432/holdem", name
        assert env["PGPASSFILE"] == "/run/secrets/backoffice_pgpass", name
        assert service["secrets"] == ["backoffice_pgpass"], name
    assert not [
        k for k in env_of(compose["services"]["backoffice"]) if k.startswith("HOLDEM_KAFKA")
    ]
    postgres = env_of(compose["services"]["postgres"])
    assert postgres["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    assert "POSTGRES_PASSWORD" not in postgres
    for secret in ("postgres_password", "backoffice_pgpass"):
        assert compose["secrets"][secret]["file"].startswith("${HOLDEM_SECRETS_DIR"), secret


def test_services_expose_their_fixed_metrics_ports(built: dict[str, dict[str, Any]]) -> None:
    for name, port in METRICS_PORTS.items():
        assert env_of(built[name])["HOLDEM_METRICS_PORT"] == str(port)
        assert re.search(rf"HOLDEM_METRICS_PORT={port}\b", stage(name))


def test_prometheus_scrapes_exactly_the_services_metrics_ports() -> None:
    config = load_yaml(REPO / "deploy" / "prometheus" / "prometheus.yml")
    targets = {
        target
        for job in config["scrape_configs"]
        if job["job_name"] != "prometheus"
        for static in job["static_configs"]
        for target in static["targets"]
    }
    services = {f"{name}:{port}" for name, port in METRICS_PORTS.items()}
    assert targets == services | BACKOFFICE_TARGETS | {AUDITOR_TARGET}


def test_grafana_provisions_prometheus_and_the_dashboards_folder(
    compose: dict[str, Any],
) -> None:
    provisioning = REPO / "deploy" / "grafana" / "provisioning"
    datasources = load_yaml(provisioning / "datasources" / "prometheus.yml")["datasources"]
    assert [d["url"] for d in datasources] == ["http://prometheus:9090"]
    (provider,) = load_yaml(provisioning / "dashboards" / "holdem.yml")["providers"]
    mounts = dict(v.rsplit(":", 2)[:2] for v in compose["services"]["grafana"]["volumes"])
    assert mounts["./deploy/grafana/dashboards"] == provider["options"]["path"]
    assert (REPO / "deploy" / "grafana" / "dashboards").is_dir()


def test_each_built_service_authenticates_as_its_own_principal_with_scram(
    built: dict[str, dict[str, Any]],
) -> None:
    expected = {
        "topic-init": "admin",
        "backoffice-projection": "backoffice",
        "auditor": "auditor",
        **{name: name for name in METRICS_PORTS},
    }
    assert set(expected) | {"backoffice-init", "backoffice"} == set(built)
    for name, principal in expected.items():
        env = env_of(built[name])
        assert env["HOLDEM_KAFKA_SECURITY_PROTOCOL"] == "SASL_PLAINTEXT", name
        assert env["HOLDEM_KAFKA_SASL_MECHANISM"] == "SCRAM-SHA-512", name
        assert env["HOLDEM_KAFKA_SASL_USERNAME"] == principal, name
        # A variable of the operator's environment or .env, never a literal in the file.
        assert env["HOLDEM_KAFKA_SASL_PASSWORD"].startswith(
            f"${{HOLDEM_{principal.upper()}_PASSWORD"
        ), name


def test_topic_init_creates_the_topics_and_applies_the_acls_as_admin(
    built: dict[str, dict[str, Any]],
) -> None:
    assert built["topic-init"]["build"]["target"] == "ops"
    command = stage("ops")
    assert "holdem.ops.create_topics" in command
    assert "holdem.ops.acl apply" in command


def test_the_broker_requires_scram_and_denies_what_no_acl_allows(
    compose: dict[str, Any],
) -> None:
    kafka = compose["services"]["kafka"]
    mounts = dict(v.rsplit(":", 2)[:2] for v in kafka["volumes"] if v.startswith("./"))
    script_path = mounts["./deploy/compose/kafka-start.sh"]
    assert script_path in kafka["entrypoint"]
    script = (REPO / "deploy" / "compose" / "kafka-start.sh").read_text()
    protocols = re.search(r"^listener\.security\.protocol\.map=(.*)$", script, re.M)
    assert protocols is not None
    assert {p.split(":")[1] for p in protocols.group(1).split(",")} == {"SASL_PLAINTEXT"}
    assert "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer" in script
    assert "allow.everyone.if.no.acl.found=false" in script
    assert "super.users=User:admin;User:broker" in script
    for principal in (
        "broker", "admin", "dealer", "wallet", "settlement", "query", "operator", "backoffice"
    ):  # fmt: skip
        assert f"$(scram {principal} " in script, principal
        assert f"HOLDEM_{principal.upper()}_PASSWORD" in env_of(kafka), principal
    assert not {k for k in env_of(kafka) if k.startswith("KAFKA_") and "LISTENER" in k}


def test_every_scraped_service_is_labelled_with_its_tenant() -> None:
    config = load_yaml(REPO / "deploy" / "prometheus" / "prometheus.yml")
    labels = [
        static.get("labels", {})
        for job in config["scrape_configs"]
        if job["job_name"] != "prometheus"
        for static in job["static_configs"]
    ]
    assert labels and all(label.get("tenant") for label in labels), labels


def test_every_long_running_container_restarts_on_failure_under_an_init(
    compose: dict[str, Any],
) -> None:
    """Issue 30 items 4-5: Kafka and Prometheus had no restart policy (a dead broker stayed dead)
    and no container had an init (timed-out health checks were never reaped)."""
    one_shot = {"topic-init", "backoffice-init"}
    long_running = set(compose["services"]) - one_shot
    assert {"kafka", "prometheus", "postgres", *METRICS_PORTS, *BACKOFFICE} - one_shot <= (
        long_running
    )
    for name in sorted(long_running):
        service = compose["services"][name]
        assert service.get("restart") in {"unless-stopped", "on-failure", "always"}, name
        assert service.get("init") is True, name
    for name in one_shot:
        assert compose["services"][name]["restart"] == "no", name


def test_the_kafka_health_check_starts_no_jvm(compose: dict[str, Any]) -> None:
    kafka = compose["services"]["kafka"]
    test = " ".join(kafka["healthcheck"]["test"])
    assert "java" not in test and "/opt/kafka/bin" not in test, test
    assert test == "CMD /bin/bash /holdem/kafka-health.sh"
    assert "./deploy/compose/kafka-health.sh:/holdem/kafka-health.sh:ro" in kafka["volumes"]
    script = (REPO / "deploy" / "compose" / "kafka-health.sh").read_text()
    assert "/dev/tcp/127.0.0.1/9092" in script
    assert "java" not in script and "kafka-" not in script.split("set -euo pipefail")[1]


def test_the_auditor_runs_as_its_own_principal_and_is_healthy_only_once_ready(
    built: dict[str, dict[str, Any]],
) -> None:
    auditor = built["auditor"]
    assert auditor["build"]["target"] == "auditor"
    assert env_of(auditor)["HOLDEM_METRICS_PORT"] == AUDITOR_TARGET.split(":")[1]
    text = stage("auditor")
    assert 'CMD ["holdem-auditor"]' in text
    # Its readiness gauge, not the services' (it has no holdem_ready): a check on the services'
    # gauge would never pass.
    assert '"--gauge", "holdem_audit_ready"' in text
