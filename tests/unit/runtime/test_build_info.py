"""Every service exports holdem_build_info{service,version,manifest}: which certified build runs."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from support.toy import TOY

from holdem.core import manifest
from holdem.runtime.app import build_app
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.settings import RuntimeSettings


def test_a_service_app_exports_its_build_and_manifest_digest() -> None:
    registry = CollectorRegistry()
    build_app(TOY, RuntimeSettings(), transport=MemoryTransport(), registry=registry)
    labels = {
        "service": TOY.name,
        "version": manifest.release_version(),
        "manifest": manifest.digest(manifest.build()),
    }
    assert registry.get_sample_value("holdem_build_info", labels) == 1.0
    assert len(labels["manifest"]) == 64 and labels["version"] != "unknown"


def test_the_back_office_exports_it_too() -> None:
    from prometheus_client import REGISTRY

    from holdem.backoffice import metrics

    metrics.announce_build("backoffice-web")
    labels = {
        "service": "backoffice-web",
        "version": manifest.release_version(),
        "manifest": manifest.installed_digest(),
    }
    assert REGISTRY.get_sample_value("holdem_build_info", labels) == 1.0
