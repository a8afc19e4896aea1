#!/usr/bin/env bash
# The compose stack's Kafka (apache/kafka image): writes server.properties with SASL SCRAM-SHA-512
# client listeners, KRaft's StandardAuthorizer (deny by default) and a SASL PLAIN controller
# listener, formats the storage once with the SCRAM users (admin, dealer, wallet, settlement,
# query, operator, backoffice, the live auditor when its password is set, and the broker's own
# identity), then runs the broker. Same layout as
# deploy/kafka/auth.sh; see docs/adr/007-broker-authentication-and-acls.md.
set -euo pipefail

CONFIG=/tmp/holdem-server.properties
DATA=/var/lib/kafka/data
MECHANISM=SCRAM-SHA-512
: "${CLUSTER_ID:?}" "${HOLDEM_BROKER_PASSWORD:?}" "${HOLDEM_ADMIN_PASSWORD:?}"
: "${HOLDEM_DEALER_PASSWORD:?}" "${HOLDEM_WALLET_PASSWORD:?}" "${HOLDEM_SETTLEMENT_PASSWORD:?}"
: "${HOLDEM_QUERY_PASSWORD:?}" "${HOLDEM_OPERATOR_PASSWORD:?}" "${HOLDEM_BACKOFFICE_PASSWORD:?}"

umask 077
cat >"$CONFIG" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@kafka:9093
listeners=INTERNAL://:9092,CONTROLLER://:9093,EXTERNAL://:29092
advertised.listeners=INTERNAL://kafka:9092,EXTERNAL://${HOLDEM_KAFKA_EXTERNAL:-localhost:29092}
controller.listener.names=CONTROLLER
inter.broker.listener.name=INTERNAL
# Production: SASL_SSL on every client listener (docs/operations.md); here a private network.
listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
sasl.enabled.mechanisms=$MECHANISM
sasl.mechanism.inter.broker.protocol=$MECHANISM
listener.name.internal.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="$HOLDEM_BROKER_PASSWORD";
listener.name.external.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="$HOLDEM_BROKER_PASSWORD" user_broker="$HOLDEM_BROKER_PASSWORD";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:admin;User:broker
log.dirs=$DATA
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF

# For the healthcheck's admin client.
cat >/tmp/holdem-admin.properties <<EOF
security.protocol=SASL_PLAINTEXT
sasl.mechanism=$MECHANISM
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="$HOLDEM_ADMIN_PASSWORD";
EOF

scram() { echo "--add-scram" "$MECHANISM=[name=$1,password=$2]"; }
# --ignore-formatted: the kafka-data volume keeps the users of its first start.
# shellcheck disable=SC2046  # scram prints two words on purpose
/opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "$CLUSTER_ID" -c "$CONFIG" \
    $(scram broker "$HOLDEM_BROKER_PASSWORD") $(scram admin "$HOLDEM_ADMIN_PASSWORD") \
    $(scram dealer "$HOLDEM_DEALER_PASSWORD") $(scram wallet "$HOLDEM_WALLET_PASSWORD") \
    $(scram settlement "$HOLDEM_SETTLEMENT_PASSWORD") $(scram query "$HOLDEM_QUERY_PASSWORD") \
    $(scram operator "$HOLDEM_OPERATOR_PASSWORD") $(scram backoffice "$HOLDEM_BACKOFFICE_PASSWORD") \
    ${HOLDEM_AUDITOR_PASSWORD:+$(scram auditor "$HOLDEM_AUDITOR_PASSWORD")}
exec /opt/kafka/bin/kafka-server-start.sh "$CONFIG"
