#!/bin/bash
# The entry point of the PostgreSQL stand-in (postgres.Dockerfile), started as root like
# postgres:15's: reads the secret, gives the data folder to postgres, and runs everything else as
# postgres. At the first start: initdb with scram-sha-256 for every connection, POSTGRES_USER's
# password from POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD), the database POSTGRES_DB. Then the
# server in the foreground on every address of the container (SIGINT from `docker stop` is its
# fast, clean shutdown).
set -euo pipefail
: "${PGDATA:?}"
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"
if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
    password="${POSTGRES_PASSWORD:-}"
    [[ -z "${POSTGRES_PASSWORD_FILE:-}" ]] || password="$(cat "$POSTGRES_PASSWORD_FILE")"
    [[ -n "$password" ]] || { echo "postgres-start: no POSTGRES_PASSWORD(_FILE): refusing a database without one" >&2; exit 1; }
    pwfile="$(mktemp)"
    printf '%s\n' "$password" >"$pwfile"
    chown postgres "$pwfile"
    as_postgres initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [[ "$db" != postgres ]]; then
        PGPASSWORD="$password" as_postgres psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -q -c "CREATE DATABASE \"$db\""
    fi
    as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres-start: initialised $PGDATA (user $user, database $db)"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups -- postgres -D "$PGDATA" -c listen_addresses='*'
