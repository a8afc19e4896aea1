# Stands in for postgres:15 where no registry answers (base-images.sh builds it): Debian 12's
# postgresql-15 on the Debian-built base, with the upstream image's contract as far as the compose
# stack uses it: POSTGRES_USER, POSTGRES_DB and POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD) at
# the first start, the data in /var/lib/postgresql/data, pg_isready on PATH; the entry point runs as root
# and the server as postgres.
ARG BASE_IMAGE=holdem-base/python:3.11-bookworm
FROM ${BASE_IMAGE}
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /usr/share/doc/* /usr/share/man/* \
    && rm -rf /var/lib/postgresql/15 /etc/postgresql/15 \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY postgres-start.sh /usr/local/bin/postgres-start
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
EXPOSE 5432
VOLUME ["/var/lib/postgresql/data"]
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-start"]
