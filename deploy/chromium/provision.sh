#!/usr/bin/env bash
# Debian's chromium for the back office's browser test (Playwright drives /usr/bin/chromium: its
# own browser download cannot run on our machines). Installs it with apt when absent (needs
# root), then prints its path.
set -euo pipefail

if [[ ! -x /usr/bin/chromium ]]; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "provision.sh: chromium is not installed and installing it needs root (apt-get install chromium)" >&2
        exit 1
    fi
    echo "provision.sh: installing Debian's chromium" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
fi
echo /usr/bin/chromium
