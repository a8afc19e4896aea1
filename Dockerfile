# The images of the four services, the back office and topic-init, one target each
# (docs/adr/027-container-images-and-the-compose-stack.md):
#   docker build --target dealer|wallet|settlement|query|backoffice|auditor|ops --secret id=ca,src=CA.pem .
# `make up` (deploy/docker/stack.sh) builds them through docker-compose.yml.
#
# Each runtime stage is the base image plus one virtual environment: the service's package and
# what it depends on, installed from wheels (non-editable), nothing of tests/, bench/, docs/ or the
# other services. The stages name packages, never source paths, so a package that moves or
# splits needs no edit here. BuildKit (the engine's built-in frontend: no `# syntax` line, since
# no registry may answer) builds the targets in parallel and shares the builder's uv cache.
#
# PYTHON_IMAGE: python:3.11-slim, or where no registry answers the Debian-built stand-in
# (deploy/docker/base-images.sh). Each venv is built on the base it runs on, so either works.
# Extra CA certificates (a proxy that re-signs TLS): the BuildKit secret `ca`, a PEM bundle read
# only by the steps that download (deploy/docker/with-ca.sh); it is in no layer. Empty is fine.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ARG UV_VERSION=0.13.8
ENV UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_NATIVE_TLS=1 \
    UV_CACHE_DIR=/root/.cache/uv \
    UV_PROJECT_ENVIRONMENT=/venv \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY deploy/docker/with-ca.sh /usr/local/bin/with-ca
RUN --mount=type=secret,id=ca \
    python3 -m venv /opt/uv \
    && with-ca /opt/uv/bin/pip install --no-cache-dir --quiet "uv==${UV_VERSION}"
WORKDIR /src
# The workspace (.dockerignore keeps tests, bench, docs, caches and venvs out of the context).
COPY . .

# `uv sync --package P`: P and its locked dependencies, as wheels built from the workspace.
FROM builder AS venv-dealer
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /opt/uv/bin/uv sync --frozen --no-dev --no-editable --package holdem-dealer
FROM builder AS venv-wallet
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /opt/uv/bin/uv sync --frozen --no-dev --no-editable --package holdem-wallet
FROM builder AS venv-settlement
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /opt/uv/bin/uv sync --frozen --no-dev --no-editable --package holdem-settlement
FROM builder AS venv-query
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /opt/uv/bin/uv sync --frozen --no-dev --no-editable --package holdem-query
FROM builder AS venv-backoffice
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /opt/uv/bin/uv sync --frozen --no-dev --no-editable --package holdem-backoffice
# The live auditor (holdem-auditor) ships in holdem-harness, which also carries the tools that
# plot and simulate (holdem-math: numba, matplotlib): a heavier venv, none of it imported by the
# auditor itself.
FROM builder AS venv-auditor
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /opt/uv/bin/uv sync --frozen --no-dev --no-editable --package holdem-harness
# topic-init's tools (topics, ACLs). The one place to change when they move package.
FROM builder AS venv-ops
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /opt/uv/bin/uv sync --frozen --no-dev --no-editable --package holdem-ops

# What every runtime image shares: the base, a user without privileges, the venv on PATH.
# Nothing is written at run time but /tmp (compose mounts a tmpfs there; the root is read-only).
FROM ${PYTHON_IMAGE} AS runtime
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin holdem
# The evaluator's and the optimal strategy's tables ship inside holdem-core (no IO at import,
# nothing computed at start); no service loads numba (holdem-math is no service's dependency).
ENV PATH="/venv/bin:$PATH" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER holdem
# Ready = the state of every assigned partition rebuilt and a member of its group (the
# holdem_ready gauge on the metrics port: holdem.runtime.health). Failures in the start period do
# not count, and the first success ends it: a slow first start (a long replay) is not a failure.
HEALTHCHECK --interval=5s --timeout=5s --start-period=300s --retries=3 \
    CMD ["python", "-m", "holdem.runtime.health"]
# SIGTERM is the app's graceful stop: it leaves its group and hands its partitions over.
STOPSIGNAL SIGTERM

FROM runtime AS dealer
COPY --from=venv-dealer /venv /venv
ENV HOLDEM_METRICS_PORT=9101
EXPOSE 9101
CMD ["holdem-dealer"]

FROM runtime AS wallet
COPY --from=venv-wallet /venv /venv
ENV HOLDEM_METRICS_PORT=9102
EXPOSE 9102
CMD ["holdem-wallet"]

FROM runtime AS settlement
COPY --from=venv-settlement /venv /venv
ENV HOLDEM_METRICS_PORT=9103
EXPOSE 9103
CMD ["holdem-settlement"]

FROM runtime AS query
COPY --from=venv-query /venv /venv
ENV HOLDEM_METRICS_PORT=9104
EXPOSE 9104
CMD ["holdem-query"]

# The back office: one image, two processes (compose runs `project` and `serve`); PostgreSQL
# is another container. Its health checks are compose's: the projection's metrics port, the
# web's login page (holdem.runtime.health is not in this venv: the back office is no service).
FROM runtime AS backoffice
COPY --from=venv-backoffice /venv /venv
HEALTHCHECK NONE
ENV HOLDEM_BACKOFFICE_METRICS_PORT=9105 \
    HOLDEM_BACKOFFICE_HOST=0.0.0.0 \
    HOLDEM_BACKOFFICE_PORT=8080
EXPOSE 8080 9105
CMD ["holdem-backoffice", "serve"]

# The live auditor (docs/audit.md, "Live"): folds the log as it is written as principal
# `auditor`, reports each finding to [prefix.]holdem.audit.findings and its metrics port. Ready =
# the log read to its end once (holdem_audit_ready).
FROM runtime AS auditor
COPY --from=venv-auditor /venv /venv
# Its checkpoint (ADR 044): a restart resumes from it instead of reading the whole log again.
# Compose mounts a named volume here, which starts with this directory's owner and mode.
USER root
RUN install -d -o holdem -g holdem -m 0700 /var/lib/holdem-auditor
USER holdem
ENV HOLDEM_METRICS_PORT=9107 \
    HOLDEM_AUDITOR_CHECKPOINT_DIR=/var/lib/holdem-auditor
EXPOSE 9107
HEALTHCHECK --interval=5s --timeout=5s --start-period=300s --retries=3 \
    CMD ["python", "-m", "holdem.runtime.health", "--gauge", "holdem_audit_ready"]
CMD ["holdem-auditor"]

# topic-init: creates the topics and applies every principal's ACLs as admin, then exits 0.
FROM runtime AS ops
COPY --from=venv-ops /venv /venv
HEALTHCHECK NONE
CMD ["sh", "-c", "python -m holdem.ops.create_topics && python -m holdem.ops.acl apply"]
