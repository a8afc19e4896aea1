# Sourced by kafka.sh: the single broker's KRaft controller, a process of its own (ADR 042).
#
# DIR/controller/ holds it as kafka.sh's code holds a node (server.properties, data, pid,
# server.log, state), so launch/await_ready/cmd_down_quiet serve it too. The broker (node 1) and
# this controller (node CONTROLLER_ID) are two JVMs: a kill -9 of the broker leaves the
# controller, and with it the cluster's view of the broker, alive.
#
# Why: a combined broker+controller killed -9 and started again comes back with a controller that
# still holds the dead process's registration, unfenced, for broker.session.timeout.ms. In that
# window the new broker leads its partitions from the stale image and its transaction
# coordinators queue the COMMIT markers of the transactions the kill interrupted; when the
# controller then fences the stale registration every partition loses its leader, and Kafka 4.4
# drops the queued markers as if the partitions were deleted ("Couldn't find leader endpoint
# ... can be skipped") and writes the transactions complete: their partitions stay blocked for
# good. With the controller kept alive, `up` starts the broker only once the controller has
# fenced the dead registration (controller_settled), so the new broker never acts on it.
#
# A run dir formatted before ADR 042 (a state file, no DIR/controller) is a combined node and is
# started as one; --wipe makes it the new layout.

CONTROLLER_ID=1000
# Broker 1's registration, in the controller's log: the last of these lines says whether the
# controller holds it unfenced (a dead process's registration must not be) or not.
UNFENCED_LINE='The request from broker 1 to unfence has been granted'
FENCED_LINES='Fencing broker 1 at epoch|Unfenced broker 1 has requested and been granted|The request from broker 1 to shut down has been granted|Fenced broker 1 has requested and been granted|Registering a new incarnation of broker 1\.|No previous registration found for broker 1\.'

controller_dir() { echo "$RUN_DIR/controller"; }

split_layout() { [[ -f "$(controller_dir)/state" ]]; }

# The broker of a split node: node 1, process.roles=broker, no controller listener of its own.
write_broker_config() {
    local protocol="$1" broker_port="$2" controller_port="$3" proxied=()
    [[ -f "$RUN_DIR/proxied" ]] && read -r -a proxied <"$RUN_DIR/proxied"
    NODE_ROLES=broker write_node_config "$RUN_DIR" 1 "$CONTROLLER_ID@127.0.0.1:$controller_port" \
        1 1 "$protocol" "$broker_port" "$controller_port" "${proxied[@]}"
}

# Its controller: the CONTROLLER listener alone (SASL PLAIN on loopback, as the combined node's),
# the same authorizer and super users (ACL changes are applied by the controller), and the same
# topic defaults (a CreateTopics without them takes the controller's).
write_controller_config() {
    local controller_port="$1" dir
    dir="$(controller_dir)"
    (umask 077; cat >"$dir/server.properties") <<EOF
# Written by kafka.sh up: the KRaft controller of the development and test broker (ADR 042).
process.roles=controller
node.id=$CONTROLLER_ID
controller.quorum.voters=$CONTROLLER_ID@127.0.0.1:$controller_port
listeners=CONTROLLER://127.0.0.1:$controller_port
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT
$(controller_auth_properties)
log.dirs=$dir/data
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
num.network.threads=1
num.io.threads=2
EOF
}

controller_heap() { echo "${KAFKA_CONTROLLER_HEAP_OPTS:--Xms64m -Xmx192m}"; }

controller_running() { (RUN_DIR="$(controller_dir)" && running_pid >/dev/null); }

# Start the controller unless it runs. Its previous log's registration lines are kept first
# (launch drops server.log): a controller started again on its data holds the registration its
# log last left, and controller_settled reads the lines of every run in order.
controller_up() {
    local java="$1" dir
    controller_running && return 0
    dir="$(controller_dir)"
    if [[ -f "$dir/server.log" ]]; then
        grep -E "$UNFENCED_LINE|$FENCED_LINES" "$dir/server.log" >>"$dir/registrations.log" || true
    fi
    (RUN_DIR="$dir"; launch "$java" "$(controller_heap)" && await_ready "$java")
}

controller_down() { (RUN_DIR="$(controller_dir)"; cmd_down_quiet); }

# 0 once the controller holds no unfenced registration of broker 1: the last registration line
# of its logs is not the unfence grant. A registration left unfenced by a dead broker is fenced
# by the controller within broker.session.timeout.ms (9 s) of its last heartbeat, or of the
# controller's own start; the wait is bounded by KAFKA_START_TIMEOUT and fails loudly.
controller_settled() {
    local dir last deadline started=$SECONDS waiting=0
    dir="$(controller_dir)"
    deadline=$((SECONDS + START_TIMEOUT))
    while :; do
        last="$(cat "$dir/registrations.log" "$dir/server.log" 2>/dev/null |
            grep -E "$UNFENCED_LINE|$FENCED_LINES" | tail -n 1 || true)"
        if [[ "$last" != *"$UNFENCED_LINE"* ]]; then
            ((waiting == 0)) || log "the controller fenced the previous broker 1 after $((SECONDS - started))s"
            return 0
        fi
        ((SECONDS < deadline)) || die "the controller still holds broker 1 unfenced after" \
            "${START_TIMEOUT}s (log: $dir/server.log)"
        controller_running || die "the controller exited (log: $dir/server.log)"
        ((waiting == 1)) || log "waiting for the controller to fence the previous broker 1"
        waiting=1
        sleep 0.2
    done
}
