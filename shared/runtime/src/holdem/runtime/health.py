"""A container's health check: exit 0 when this instance is ready (``holdem_ready`` is 1 on its
own metrics port: a member of its group, every assigned partition's state rebuilt), else 1.

    python -m holdem.runtime.health [--port PORT] [--gauge NAME]   (default HOLDEM_METRICS_PORT)

``--gauge`` names another readiness gauge: the live auditor's is ``holdem_audit_ready``.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

TIMEOUT_S = 2.0


READY = "holdem_ready"


def ready(metrics_text: str, gauge: str = READY) -> bool:
    """True when the exposition has a ``gauge`` sample and every one of them is 1."""
    values = [
        sample.value
        for family in text_string_to_metric_families(metrics_text)
        if family.name == gauge
        for sample in family.samples
    ]
    return bool(values) and all(value == 1.0 for value in values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=int(os.environ.get("HOLDEM_METRICS_PORT", "0")))
    parser.add_argument("--gauge", default=READY, help="the readiness gauge (default holdem_ready)")
    args = parser.parse_args(argv)
    if not args.port:
        print("unhealthy: no metrics port (HOLDEM_METRICS_PORT)", file=sys.stderr)
        return 1
    try:
        url = f"http://127.0.0.1:{args.port}/metrics"
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            text = response.read().decode()
    except OSError as error:
        print(f"unhealthy: {error}", file=sys.stderr)
        return 1
    if not ready(text, args.gauge):
        print(f"unhealthy: not ready ({args.gauge} is not 1)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
