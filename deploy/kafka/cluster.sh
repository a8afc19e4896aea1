# Sourced by kafka.sh: a KRaft cluster of NODES combined broker+controller nodes on 127.0.0.1.
# DIR/node-N/ holds one node as kafka.sh's single-node code would (server.properties, data, pid,
# server.log, state), so launch/await_ready/cmd_down_quiet serve both; DIR/secrets and DIR/clients
# are shared, DIR/nodes marks a cluster dir, DIR/up exists while `up` left it running.
# See docs/adr/011-three-node-cluster.md.

CLUSTER_REPLICAS=3  # replication factor; fewer nodes than this get one replica per node
CLUSTER_MIN_ISR=2

is_cluster() { [[ "$NODES" -gt 1 || -f "$RUN_DIR/nodes" ]]; }

node_count() { if [[ -f "$RUN_DIR/nodes" ]]; then cat "$RUN_DIR/nodes"; else echo "$NODES"; fi; }

node_dir() { echo "$RUN_DIR/node-$1"; }

# From the nodes' state files: "voters" gives "1@127.0.0.1:port,2@..." (their controllers),
# "clients" gives "127.0.0.1:port,..." (their client listeners).
node_list() {
    local count="$1" which="$2" n broker controller out=""
    for ((n = 1; n <= count; n++)); do
        read -r _ broker controller <"$(node_dir "$n")/state"
        if [[ "$which" == voters ]]; then
            out+="${out:+,}$n@127.0.0.1:$controller"
        else
            out+="${out:+,}127.0.0.1:$broker"
        fi
    done
    echo "$out"
}

quorum_voters() { node_list "$1" voters; }

cluster_bootstrap() { node_list "$1" clients; }

# Every node's server.properties from the state files; the shared secrets are the broker's.
write_cluster_configs() {
    local count="$1" voters replicas min_isr n protocol broker controller
    voters="$(quorum_voters "$count")"
    replicas=$((count < CLUSTER_REPLICAS ? count : CLUSTER_REPLICAS))
    min_isr=$((replicas < CLUSTER_MIN_ISR ? replicas : CLUSTER_MIN_ISR))
    for ((n = 1; n <= count; n++)); do
        read -r protocol broker controller <"$(node_dir "$n")/state"
        SECRETS_DIR="$RUN_DIR/secrets" write_node_config "$(node_dir "$n")" "$n" "$voters" \
            "$replicas" "$min_isr" "$protocol" "$broker" "$controller"
    done
}

# A fresh cluster: new ports and credentials, every node formatted with one cluster id and the
# SCRAM users (each controller may be the one that writes the bootstrap metadata).
cluster_prepare_fresh() {
    local java="$1" count="$2" id n dir
    local -a ports scram pids
    rm -rf "$RUN_DIR"/node-* "$RUN_DIR/clients" "$RUN_DIR/state" "$RUN_DIR/nodes" "$RUN_DIR/up" \
        "$RUN_DIR/data" "$RUN_DIR/tls" "$RUN_DIR/server.properties"  # a single-node storage before
    read -r -a ports <<<"$(free_ports $((2 * count)))"
    make_secrets
    for ((n = 1; n <= count; n++)); do
        mkdir -p -m 700 "$(node_dir "$n")"
        echo "SASL_PLAINTEXT ${ports[2 * n - 2]} ${ports[2 * n - 1]}" >"$(node_dir "$n")/state"
    done
    write_cluster_configs "$count"
    id="$(cluster_id)"
    mapfile -t scram < <(scram_args)
    for ((n = 1; n <= count; n++)); do
        dir="$(node_dir "$n")"
        "$java" -Xmx256m -cp "$LIBS/*" -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
            kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" "${scram[@]}" \
            >"$dir/format.log" 2>&1 &
        pids+=($!)
    done
    for ((n = 1; n <= count; n++)); do
        wait "${pids[n - 1]}" || { cat "$(node_dir "$n")/format.log" >&2; die "storage format of node $n failed"; }
        chmod 700 "$(node_dir "$n")/data"
    done
    write_client_envs SASL_PLAINTEXT "$(cluster_bootstrap "$count")"
    echo "$count" >"$RUN_DIR/nodes"  # written last: a complete cluster that `up` may start again
}

node_running() { (RUN_DIR="$(node_dir "$1")" && running_pid >/dev/null); }

# Start every stopped node at once (a node is ready only once a quorum of controllers is up),
# then wait for each. 2 = a port was taken.
cluster_start_all() {
    local java="$1" count="$2" n rc=0
    for ((n = 1; n <= count; n++)); do
        node_running "$n" || (RUN_DIR="$(node_dir "$n")"; launch "$java" "$(node_heap)")
    done
    for ((n = 1; n <= count; n++)); do
        (RUN_DIR="$(node_dir "$n")"; await_ready "$java") || rc=$?
        [[ $rc -eq 0 ]] || return "$rc"
    done
}

node_heap() { echo "${KAFKA_NODE_HEAP_OPTS:--Xms128m -Xmx384m}"; }

cluster_up() {
    local java count started attempt rc kept=0
    count="$(node_count)"
    [[ "$TLS" == 0 ]] || die "--tls is for the single-node broker only"
    [[ -z "$PROXIED_PORT" ]] || die "--proxied-port is for the single-node broker only"
    if [[ "$WIPE" == 0 && -f "$RUN_DIR/state" ]]; then
        die "$RUN_DIR holds a single-node broker: --wipe to replace it with a $count-node cluster"
    fi
    cmd_fetch
    java="$(java_bin)"
    started=$SECONDS
    if [[ "$WIPE" == 0 && -f "$RUN_DIR/nodes" ]]; then
        kept=1
        write_cluster_configs "$count"
        write_client_envs SASL_PLAINTEXT "$(cluster_bootstrap "$count")"
        log "starting the $count-node cluster again on the kept data of $RUN_DIR"
    else
        cluster_down_quiet
        cluster_prepare_fresh "$java" "$count"
    fi
    for attempt in 1 2 3; do
        rc=0
        cluster_start_all "$java" "$count" || rc=$?
        [[ $rc -eq 0 ]] && break
        cluster_down_quiet
        [[ $rc -ge 2 && $attempt -lt 3 ]] || die "could not start the cluster"
        [[ $rc -eq 2 && $kept -eq 1 ]] && die "a port of the kept cluster is taken (--wipe for new ports)"
        [[ $rc -eq 2 ]] && cluster_prepare_fresh "$java" "$count"
        log "retrying the start"
    done
    cluster_bootstrap "$count" >"$RUN_DIR/bootstrap"
    touch "$RUN_DIR/up"
    [[ -n "$WATCH_PID" ]] && start_watchdog "$WATCH_PID" up
    log "$count nodes ready in $((SECONDS - started))s, logs $RUN_DIR/node-*/server.log," \
        "credentials $RUN_DIR/clients/<principal>.env"
    cat "$RUN_DIR/bootstrap"
}

# SIGTERM to every node at once (one at a time, the last ones would wait for a quorum that is
# gone), SIGKILL after KAFKA_CLUSTER_STOP_TIMEOUT: the last node's controlled shutdown waits for
# a controller that left with the others, and a killed node only recovers its logs at the next up.
cluster_down_quiet() {
    local n
    for ((n = 1; n <= $(node_count); n++)); do
        [[ -d "$(node_dir "$n")" ]] || continue
        (RUN_DIR="$(node_dir "$n")" STOP_TIMEOUT="${KAFKA_CLUSTER_STOP_TIMEOUT:-10}"; cmd_down_quiet) &
    done
    wait
    rm -f "$RUN_DIR/up" "$RUN_DIR/bootstrap"
}

cluster_down() {
    cluster_down_quiet
    if [[ "$WIPE" == 1 ]]; then
        rm -rf "$RUN_DIR"/node-* "$RUN_DIR/clients" "$RUN_DIR/secrets" "$RUN_DIR/nodes" "$RUN_DIR/state"
        log "wiped the cluster's data and credentials in $RUN_DIR"
    fi
}

cluster_status() {
    local n pid down=0
    for ((n = 1; n <= $(node_count); n++)); do
        if pid="$(RUN_DIR="$(node_dir "$n")"; running_pid)"; then
            echo "node $n running pid=$pid"
        else
            echo "node $n stopped"
            down=1
        fi
    done
    echo "bootstrap=$(cluster_bootstrap "$(node_count)") dir=$RUN_DIR clients=$RUN_DIR/clients"
    return $((down * 3))
}

# kill-node|stop-node|start-node N [--dir DIR]
cmd_node() {
    local action="$1" node="${2:-}" pid java
    shift 2 || die "$action wants a node number"
    parse_dir "$@"
    [[ -f "$RUN_DIR/nodes" ]] || die "$RUN_DIR holds no cluster (kafka.sh up --nodes 3 makes one)"
    [[ "$node" =~ ^[0-9]+$ && "$node" -ge 1 && "$node" -le "$(node_count)" ]] ||
        die "no node $node in the $(node_count)-node cluster of $RUN_DIR"
    RUN_DIR="$(node_dir "$node")"
    case "$action" in
        kill-node)
            pid="$(running_pid)" || die "node $node is not running"
            kill -KILL "$pid"
            while alive "$pid"; do sleep 0.1; done
            rm -f "$RUN_DIR/pid" "$RUN_DIR/cds.jsa" "$RUN_DIR/cds.java"  # the dump was cut off
            log "killed node $node (pid $pid)" ;;
        stop-node) cmd_down_quiet ;;
        start-node)
            running_pid >/dev/null && die "node $node is already running"
            java="$(java_bin)"
            launch "$java" "$(node_heap)"
            await_ready "$java" || die "node $node did not start (log: $RUN_DIR/server.log)"
            log "node $node ready (pid $(cat "$RUN_DIR/pid"))" ;;
    esac
}
