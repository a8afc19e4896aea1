#!/usr/bin/env bash
# PostgreSQL from Debian's package for the back office's tests: installs `postgresql` with apt
# when no server is found (needs root), then prints the directory holding initdb and pg_ctl.
# The tests run their own throwaway cluster from there (tests/support/postgres.py).
set -euo pipefail

find_bin() {
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

if ! find_bin >/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "provision.sh: PostgreSQL is not installed and installing it needs root (apt-get install postgresql)" >&2
        exit 1
    fi
    echo "provision.sh: installing Debian's postgresql" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql >/dev/null
    # Debian's package starts a cluster of its own; the tests do not use it.
    pg_ctlcluster --help >/dev/null 2>&1 && service postgresql stop >/dev/null 2>&1 || true
fi
find_bin
