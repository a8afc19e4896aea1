#!/usr/bin/env bash
# The compose stack's Kafka (apache/kafka image), production's layout as deploy/kafka/kafka.sh runs
# it (ADR 042): two containers of one image, this script the entrypoint of both.
#
#   kafka-start.sh controller   the KRaft controller (node 1000, process.roles=controller): its
#                               SASL PLAIN controller listener on the private network, KRaft's
#                               StandardAuthorizer (deny by default) with the same super users; its
#                               storage formatted once with the SCRAM users (admin, dealer, wallet,
#                               settlement, query, operator, backoffice, the live auditor when its
#                               password is set, and the broker's own identity): SCRAM credentials
#                               live in the metadata log, which the controller writes. Broker 1's
#                               registration lines of its log are kept in REGISTRATIONS.
#   kafka-start.sh broker       the broker (node 1, process.roles=broker): SASL SCRAM-SHA-512 client
#                               listeners; its storage needs only the cluster id. It starts once
#                               the controller holds no unfenced registration of broker 1 (read in
#                               REGISTRATIONS, mounted read-only), bounded by KAFKA_START_TIMEOUT
#                               (s, default 120): past it, it exits 1 saying so (and is restarted).
#
# Why the split: a combined broker+controller killed -9 and started again has a controller that
# holds the dead process's registration unfenced for broker.session.timeout.ms; the new broker's
# transaction coordinators act on it, the fence then leaves every partition leaderless and Kafka
# 4.4 drops the queued commit markers: a partition blocked behind a transaction for good. With
# the controller alive in its own container, the broker starts only once the dead registration is
# fenced. See docs/adr/042-the-test-broker-s-controller-is-a-process-of-its-own.md and
# docs/adr/007-broker-authentication-and-acls.md.
set -euo pipefail

ROLE="${1:-}"
CONFIG=/tmp/holdem-server.properties
DATA=/var/lib/kafka/data
MECHANISM=SCRAM-SHA-512
CONTROLLER_ID=1000
# The controller's address on the private network, and the file of broker 1's registration lines
# (the controller's volume: the controller writes it, the broker reads it).
CONTROLLER="${HOLDEM_KAFKA_CONTROLLER:-kafka-controller:9093}"
REGISTRATIONS="${HOLDEM_KAFKA_REGISTRATIONS:-/var/lib/kafka/data/registrations.log}"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
# Broker 1's registration as the controller logs it (deploy/kafka/controller.sh's lines): the last
# of these says whether the controller holds it unfenced (a dead process's must not be) or not.
UNFENCED_LINE='The request from broker 1 to unfence has been granted'
FENCED_LINES='Fencing broker 1 at epoch|Unfenced broker 1 has requested and been granted|The request from broker 1 to shut down has been granted|Fenced broker 1 has requested and been granted|Registering a new incarnation of broker 1\.|No previous registration found for broker 1\.'

log() { echo "kafka-start.sh $ROLE: $*" >&2; }
die() { log "$*"; exit 1; }

: "${CLUSTER_ID:?}" "${HOLDEM_BROKER_PASSWORD:?}"

# The controller listener: SASL PLAIN (SCRAM credentials live in the metadata log the controller
# serves, so it cannot check them before that log is up); the broker logs in as `broker`.
controller_auth() {
    cat <<EOF
controller.listener.names=CONTROLLER
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="$HOLDEM_BROKER_PASSWORD" user_broker="$HOLDEM_BROKER_PASSWORD";
# KRaft's authorizer on both (the controller applies ACL changes); no ACL = no access.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:admin;User:broker
EOF
}

# The topic defaults on both (a CreateTopics without them takes the controller's).
topic_defaults() {
    cat <<EOF
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
EOF
}

scram() { echo "--add-scram" "$MECHANISM=[name=$1,password=$2]"; }

# Broker 1's registration lines of the controller's output, appended to REGISTRATIONS as they
# come (the output itself still goes to the container's log). Bash alone: the upstream image's
# grep may not flush per line.
keep_registrations() {
    local line
    while IFS= read -r line; do
        printf '%s\n' "$line"
        if [[ "$line" == *"$UNFENCED_LINE"* ]] || [[ "$line" =~ $FENCED_LINES ]]; then
            printf '%s\n' "$line" >>"$REGISTRATIONS"
        fi
    done
}

start_controller() {
    umask 077
    cat >"$CONFIG" <<EOF
process.roles=controller
node.id=$CONTROLLER_ID
controller.quorum.voters=$CONTROLLER_ID@$CONTROLLER
listeners=CONTROLLER://:${CONTROLLER##*:}
advertised.listeners=CONTROLLER://$CONTROLLER
listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT
$(controller_auth)
log.dirs=$DATA/kraft
$(topic_defaults)
num.network.threads=1
num.io.threads=2
EOF
    : "${HOLDEM_ADMIN_PASSWORD:?}" "${HOLDEM_DEALER_PASSWORD:?}" "${HOLDEM_WALLET_PASSWORD:?}"
    : "${HOLDEM_SETTLEMENT_PASSWORD:?}" "${HOLDEM_QUERY_PASSWORD:?}" "${HOLDEM_OPERATOR_PASSWORD:?}"
    : "${HOLDEM_BACKOFFICE_PASSWORD:?}"
    # --ignore-formatted: the volume keeps the users of its first start.
    # shellcheck disable=SC2046  # scram prints two words on purpose
    /opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "$CLUSTER_ID" -c "$CONFIG" \
        $(scram broker "$HOLDEM_BROKER_PASSWORD") $(scram admin "$HOLDEM_ADMIN_PASSWORD") \
        $(scram dealer "$HOLDEM_DEALER_PASSWORD") $(scram wallet "$HOLDEM_WALLET_PASSWORD") \
        $(scram settlement "$HOLDEM_SETTLEMENT_PASSWORD") $(scram query "$HOLDEM_QUERY_PASSWORD") \
        $(scram operator "$HOLDEM_OPERATOR_PASSWORD") $(scram backoffice "$HOLDEM_BACKOFFICE_PASSWORD") \
        ${HOLDEM_AUDITOR_PASSWORD:+$(scram auditor "$HOLDEM_AUDITOR_PASSWORD")}
    # A controller started again on its data re-arms the registration its log last left, and
    # fences it after the session: the lines of every run are kept, in order.
    touch "$REGISTRATIONS"
    chmod 0644 "$REGISTRATIONS"
    exec /opt/kafka/bin/kafka-server-start.sh "$CONFIG" > >(keep_registrations)
}

# 0 once the controller holds no unfenced registration of broker 1: the last registration line is
# not the unfence grant. A dead broker's registration is fenced by the controller within
# broker.session.timeout.ms (9 s) of its last heartbeat, or of the controller's own start.
controller_settled() {
    local last started=$SECONDS waiting=0
    [[ -d "$(dirname "$REGISTRATIONS")" ]] ||
        die "no $(dirname "$REGISTRATIONS"): the controller's volume must be mounted (read-only) here"
    while :; do
        last="$(grep -E "$UNFENCED_LINE|$FENCED_LINES" "$REGISTRATIONS" 2>/dev/null | tail -n 1 || true)"
        if [[ "$last" != *"$UNFENCED_LINE"* ]]; then
            ((waiting == 0)) || log "the controller fenced the previous broker 1 after $((SECONDS - started))s"
            return 0
        fi
        ((SECONDS - started < START_TIMEOUT)) ||
            die "the controller still holds broker 1 unfenced after ${START_TIMEOUT}s: not starting (it would act on a dead registration, ADR 042)"
        ((waiting == 1)) || log "waiting for the controller to fence the previous broker 1"
        waiting=1
        sleep 0.5
    done
}

start_broker() {
    : "${HOLDEM_ADMIN_PASSWORD:?}"
    umask 077
    cat >"$CONFIG" <<EOF
process.roles=broker
node.id=1
controller.quorum.voters=$CONTROLLER_ID@$CONTROLLER
listeners=INTERNAL://:9092,EXTERNAL://:29092
advertised.listeners=INTERNAL://kafka:9092,EXTERNAL://${HOLDEM_KAFKA_EXTERNAL:-localhost:29092}
inter.broker.listener.name=INTERNAL
# Production: SASL_SSL on every client listener (docs/operations.md); here a private network.
listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
sasl.enabled.mechanisms=$MECHANISM
sasl.mechanism.inter.broker.protocol=$MECHANISM
listener.name.internal.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="$HOLDEM_BROKER_PASSWORD";
listener.name.external.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
$(controller_auth)
log.dirs=$DATA
$(topic_defaults)
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF

    # For an admin client in the container (kafka-*.sh --command-config).
    cat >/tmp/holdem-admin.properties <<EOF
security.protocol=SASL_PLAINTEXT
sasl.mechanism=$MECHANISM
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="$HOLDEM_ADMIN_PASSWORD";
EOF

    # A volume a combined node (before ADR 042) formatted holds a metadata log of its own
    # controller: a broker of the new controller must not start on it.
    if [[ -f "$DATA/meta.properties" && ! -f "$DATA/holdem-broker-only" ]]; then
        die "$DATA was formatted by the combined broker+controller of an older stack: drop it (make down) and start again"
    fi
    touch "$DATA/holdem-broker-only"
    /opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "$CLUSTER_ID" -c "$CONFIG"
    controller_settled
    exec /opt/kafka/bin/kafka-server-start.sh "$CONFIG"
}

case "$ROLE" in
    controller) start_controller ;;
    broker) start_broker ;;
    *) echo "usage: kafka-start.sh controller|broker" >&2; exit 2 ;;
esac
