#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft: a broker and its controller, two JVMs, ADR 042) from Maven Central jars, no Docker.
#
#   kafka.sh fetch                      download the broker classpath once into .cache/libs/
#   kafka.sh up     [--dir DIR] [--watch PID] [--tls] [--wipe] [--proxied-port R]
#                                       start on 127.0.0.1, wait until ready, print the bootstrap
#                                       address as the last stdout line. A fresh DIR is formatted
#                                       with new free ports and new credentials; a DIR with data is
#                                       started again as it was (same ports, same credentials)
#                                       unless --wipe. --tls: SASL_SSL instead of SASL_PLAINTEXT.
#                                       --proxied-port R: a second client listener (same protocol
#                                       and SCRAM) on a free port Q of its own, advertised as
#                                       127.0.0.1:R, for a proxy that listens on R and forwards to
#                                       Q (the network-fault tests' toxiproxy); DIR/proxied holds
#                                       "Q R", DIR/proxied-clients/ the env files with bootstrap R.
#                                       One node only; kept by later ups of DIR.
#   kafka.sh down   [--dir DIR] [--wipe] SIGTERM, wait, SIGKILL after KAFKA_STOP_TIMEOUT seconds;
#                                       the data stays unless --wipe
#   kafka.sh restart [--dir DIR] [--watch PID]
#                                       down, then up on the same data, ports and credentials
#   kafka.sh status [--dir DIR]         exit 0 and print pid/bootstrap if running, exit 3 if not
#
# A three-node cluster (cluster.sh; replication factor 3, min.insync.replicas 2, internal topics
# likewise): `up --nodes 3 [--dir DIR]` formats one, and every command above acts on the whole
# cluster of a DIR made so. DIR/bootstrap lists the three client addresses. One node at a time:
#   kafka.sh kill-node N [--dir DIR]    SIGKILL node N (1..3), no goodbye: a crashed broker
#   kafka.sh stop-node N [--dir DIR]    SIGTERM node N (controlled shutdown), SIGKILL if it hangs
#   kafka.sh start-node N [--dir DIR]   start node N again on its data, wait until it is ready
#
# The single broker's KRaft controller is a process of its own in DIR/controller/ (ADR 042): a kill
# of the broker's pid leaves it up, and `up` starts the broker again only once the controller has
# fenced the dead one's registration. `down` stops both.
# DIR defaults to deploy/kafka/.run/; DIR/data (the log dir) may be a mount point of its own (the
# disk-full test's small filesystem): a wipe empties it then, and leaves the mount.
# Clients authenticate with SCRAM-SHA-512: DIR/clients/
# <principal>.env (admin, dealer, wallet, settlement, query, operator, backoffice) holds the HOLDEM_KAFKA_* variables
# of each. The ACLs are applied by `python -m holdem.ops.acl apply` (make kafka-up does).
# --watch PID stops the broker (and drops its data) when PID exits, so a test session that is
# killed outright does not leave a JVM behind.
# Environment: JAVA_HOME, KAFKA_CACHE_DIR, KAFKA_HEAP_OPTS, KAFKA_START_TIMEOUT (s, default 90),
# KAFKA_STOP_TIMEOUT (s, default 30), MAVEN_ARGS (extra mvn flags, e.g. -o), KAFKA_CDS (0 = off),
# KAFKA_NODE_HEAP_OPTS (a cluster node's heap, default -Xms128m -Xmx384m: three JVMs on 2 cores),
# KAFKA_CLUSTER_STOP_TIMEOUT (s, default 10: a cluster's down, before SIGKILL),
# KAFKA_CONTROLLER_HEAP_OPTS (the single broker's controller, default -Xms64m -Xmx192m).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${KAFKA_CACHE_DIR:-$HERE/.cache}"
LIBS="$CACHE/libs"
STAMP="$LIBS/.complete"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
READY_LINE="Kafka Server started"

log() { echo "kafka.sh: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=deploy/kafka/auth.sh
source "$HERE/auth.sh"
# shellcheck source=deploy/kafka/cds.sh
source "$HERE/cds.sh"
# shellcheck source=deploy/kafka/cluster.sh
source "$HERE/cluster.sh"
# shellcheck source=deploy/kafka/controller.sh
source "$HERE/controller.sh"

java_bin() {
    local java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
    command -v "$java" >/dev/null || die "java not found (Java 17+ needed; set JAVA_HOME or install openjdk-17-jre-headless)"
    local major
    major="$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
    [[ "${major%%.*}" -ge 17 ]] || die "Java 17+ needed, $java is $major"
    echo "$java"
}

# kill -0 is true for an unreaped zombie (our own background child), so read the process state instead.
alive() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"
    [[ "${stat:0:1}" != "Z" ]]
}

pom_hash() { sha256sum "$HERE/pom.xml" | cut -d' ' -f1; }

cmd_fetch() {
    mkdir -p "$CACHE"
    # One fetch at a time (parallel sessions may all `up` on a cold cache). A subshell holds the
    # lock so its fd is closed before the broker starts: an inherited fd would hold it forever.
    (
        flock 9
        if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$(pom_hash)" ]]; then
            log "jars cached in $LIBS ($(find "$LIBS" -name '*.jar' | wc -l) jars), nothing to download"
            exit 0
        fi
        command -v mvn >/dev/null || die "mvn not found: install Maven (apt-get install maven) to fetch the Kafka jars"
        log "fetching the Kafka broker classpath from Maven Central into $LIBS"
        rm -rf "$LIBS.tmp"
        # jansi.noreset: Debian's Maven otherwise prints stray colour resets even in batch mode.
        # shellcheck disable=SC2086  # MAVEN_ARGS is a list of flags on purpose
        MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.noreset=true" \
            mvn -B -q -Dstyle.color=never ${MAVEN_ARGS:-} -f "$HERE/pom.xml" \
            dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS.tmp" >&2
        # Swap in whole so an interrupted download never looks complete.
        rm -rf "$LIBS"
        mv "$LIBS.tmp" "$LIBS"
        pom_hash >"$STAMP"
        log "fetched $(find "$LIBS" -name '*.jar' | wc -l) jars"
    ) 9>"$CACHE/.fetch.lock"
}

parse_dir() {
    RUN_DIR="$HERE/.run"
    WATCH_PID=""
    TLS=0
    WIPE=0
    NODES=1
    PROXIED_PORT=""
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --dir) RUN_DIR="$2"; shift 2 ;;
            --nodes) NODES="$2"; shift 2 ;;
            --proxied-port) PROXIED_PORT="$2"; shift 2 ;;
            --watch) WATCH_PID="$2"; shift 2 ;;
            --tls) TLS=1; shift ;;
            --wipe) WIPE=1; shift ;;
            *) die "unknown argument: $1" ;;
        esac
    done
    mkdir -p "$RUN_DIR"
    RUN_DIR="$(cd "$RUN_DIR" && pwd)"
    [[ "$NODES" =~ ^[0-9]+$ && "$NODES" -ge 1 ]] || die "--nodes wants a count >= 1, not $NODES"
    [[ -z "$PROXIED_PORT" || "$PROXIED_PORT" =~ ^[0-9]+$ ]] || die "--proxied-port wants a port, not $PROXIED_PORT"
}

# The log dir's contents go; the dir itself too unless it is a mount point (rmdir refuses one).
drop_data() {
    [[ -d "$1" ]] || return 0
    find "$1" -mindepth 1 -delete
    rmdir "$1" 2>/dev/null || true
}

# DIR/proxied: "Q R", the port the PROXIED listener binds and the one it is advertised as.
# --proxied-port R on a dir without one: Q is ${1:-a new free port}; on a dir with one, R moves.
set_proxied() {
    local listen advertised
    [[ -n "$PROXIED_PORT" ]] || return 0
    if [[ -f "$RUN_DIR/proxied" ]]; then
        read -r listen advertised <"$RUN_DIR/proxied"
    else
        listen="${1:-$(free_ports 1)}"
    fi
    echo "$listen $PROXIED_PORT" >"$RUN_DIR/proxied"
}

# The pid file may outlive its process and the pid be reused: only trust a live kafka.Kafka of this dir.
running_pid() {
    local pid
    [[ -f "$RUN_DIR/pid" ]] || return 1
    pid="$(cat "$RUN_DIR/pid")"
    [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "kafka.Kafka $RUN_DIR/server.properties" || return 1
    echo "$pid"
}

free_ports() {
    # Bind all at once so the ports differ; the tiny race with other processes is retried by `up`.
    python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in ss))
for s in ss: s.close()' "${1:-2}"
}

cluster_id() {
    # 16 random bytes as unpadded url-safe base64 = the 22-char form Kafka's Uuid uses.
    # A leading '-' would be read as an option by StorageTool's argument parser, so avoid it.
    local id
    while :; do
        id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
        [[ "$id" != -* ]] && { echo "$id"; return; }
    done
}

# Holds the broker's password: readable by the owner only.
write_config() {
    local protocol="$1" broker_port="$2" controller_port="$3" proxied=()
    if split_layout; then  # ADR 042: the broker, and its controller as a process of its own
        write_broker_config "$protocol" "$broker_port" "$controller_port"
        write_controller_config "$controller_port"
        return
    fi
    [[ -f "$RUN_DIR/proxied" ]] && read -r -a proxied <"$RUN_DIR/proxied"
    write_node_config "$RUN_DIR" 1 "1@127.0.0.1:$controller_port" 1 1 \
        "$protocol" "$broker_port" "$controller_port" "${proxied[@]}"
}

# With a proxied listener: DIR/proxied-clients/<principal>.env, bootstrap 127.0.0.1:R.
write_proxied_envs() {
    local protocol="$1" advertised
    [[ -f "$RUN_DIR/proxied" ]] || return 0
    read -r _ advertised <"$RUN_DIR/proxied"
    write_client_envs "$protocol" "127.0.0.1:$advertised" proxied-clients
}

# One KRaft broker+controller: its dir, node id, the quorum's voters, replication factor and
# min.insync.replicas (1 and 1 alone; 3 and 2 in a cluster, internal topics likewise).
# NODE_ROLES=broker: a broker alone, without a controller listener (its controller's is a voter).
write_node_config() {
    local dir="$1" node="$2" voters="$3" replicas="$4" min_isr="$5" roles="${NODE_ROLES:-broker,controller}"
    shift 5
    (umask 077; cat >"$dir/server.properties") <<EOF
# Written by kafka.sh up: a KRaft $roles for development and tests.
process.roles=$roles
node.id=$node
controller.quorum.voters=$voters
$(auth_properties "$@" | if [[ "$roles" == broker ]]; then sed '/^listeners=/s/,CONTROLLER:[^,]*$//'; else cat; fi)
log.dirs=$dir/data
# Topics are created explicitly with their partition counts (holdem.ops.create_topics), never by accident.
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=$replicas
min.insync.replicas=$min_isr
# Internal topics must not ask for more replicas than exist (transactions need these).
offsets.topic.replication.factor=$replicas
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=$replicas
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=$replicas
share.coordinator.state.topic.min.isr=$min_isr
# Tests start consumer groups constantly; the default 3 s join delay would only slow them down.
group.initial.rebalance.delay.ms=0
log.flush.interval.messages=9223372036854775807
num.network.threads=2
num.io.threads=4
EOF
}

# A fresh storage: new ports, new credentials (and TLS material), formatted with the SCRAM users.
prepare_fresh() {
    local java="$1" protocol ports id
    protocol="SASL_PLAINTEXT"
    [[ "$TLS" == 1 ]] && protocol="SASL_SSL"
    controller_down  # a retry after a port was taken: its controller has the old ports
    drop_data "$RUN_DIR/data"
    rm -rf "$(controller_dir)"
    mkdir -m 700 "$(controller_dir)"
    rm -rf "$RUN_DIR/clients" "$RUN_DIR/tls" "$RUN_DIR/state" "$RUN_DIR/proxied" \
        "$RUN_DIR/proxied-clients"
    if [[ -n "$PROXIED_PORT" ]]; then
        ports="$(free_ports 3)"
        set_proxied "${ports##* }"
        ports="${ports% *}"
    else
        ports="$(free_ports)"
    fi
    make_secrets
    [[ "$protocol" == SASL_SSL ]] && make_tls
    echo "CONTROLLER ${ports#* } ${ports#* }" >"$(controller_dir)/state"  # the split layout
    touch "$(controller_dir)/fresh"  # until both have started once
    write_config "$protocol" "${ports% *}" "${ports#* }"
    local -a scram
    mapfile -t scram < <(scram_args)
    id="$(cluster_id)"
    # The controller writes the bootstrap metadata (the SCRAM users); the broker's storage only
    # needs the cluster id. Both formatted at once.
    "$java" -Xmx256m -cp "$LIBS/*" -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
        kafka.tools.StorageTool format -t "$id" -c "$(controller_dir)/server.properties" \
        "${scram[@]}" >"$(controller_dir)/format.log" 2>&1 &
    "$java" -Xmx256m -cp "$LIBS/*" -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
        kafka.tools.StorageTool format -t "$id" -c "$RUN_DIR/server.properties" \
        >"$RUN_DIR/format.log" 2>&1 || { cat "$RUN_DIR/format.log" >&2; die "storage format failed"; }
    wait $! || { cat "$(controller_dir)/format.log" >&2; die "the controller's storage format failed"; }
    chmod 700 "$RUN_DIR/data" "$(controller_dir)/data"  # the records, the users' salted SCRAM credentials
    write_client_envs "$protocol" "127.0.0.1:${ports% *}"
    write_proxied_envs "$protocol"
    # Written last: a dir with a state file is a complete storage that `up` may start again.
    echo "$protocol ${ports% *} ${ports#* }" >"$RUN_DIR/state"
}

# Kept data: the ports and protocol of its state file, the credentials of its secrets.
prepare_kept() {
    local protocol broker_port controller_port
    read -r protocol broker_port controller_port <"$RUN_DIR/state"
    if [[ "$TLS" == 1 && "$protocol" != SASL_SSL ]]; then
        die "$RUN_DIR holds a $protocol broker: --tls needs --wipe (a new storage)"
    fi
    set_proxied
    write_config "$protocol" "$broker_port" "$controller_port"
    write_client_envs "$protocol" "127.0.0.1:$broker_port"
    write_proxied_envs "$protocol"
    log "starting again on the kept data of $RUN_DIR (same ports and credentials)"
}

start_once() {
    local rc=0
    if split_layout && [[ ! -f "$(controller_dir)/fresh" ]]; then
        controller_up "$1" || return $?
        controller_settled
    elif split_layout; then
        # A fresh storage has no registration to wait for: both JVMs start at once (the
        # broker retries its controller until it answers).
        controller_running || (RUN_DIR="$(controller_dir)"; launch "$1" "$(controller_heap)")
        launch "$1" "${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
        (RUN_DIR="$(controller_dir)"; await_ready "$1") || rc=$?
        if [[ $rc -ne 0 ]]; then
            cmd_down_quiet
            return "$rc"
        fi
        await_ready "$1" || return $?
        rm -f "$(controller_dir)/fresh"
        return 0
    fi
    launch "$1" "${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
    await_ready "$1"
}

# Start the JVM of RUN_DIR in the background; await_ready then waits for it.
launch() {
    local java="$1" heap="$2" cds
    # Old logs must go before the start: the readiness poll could match a previous run's line.
    rm -f "$RUN_DIR/server.log" "$RUN_DIR/bootstrap"
    cds="$(cds_options "$java")"
    echo "$cds" >"$RUN_DIR/cds.flags"
    # setsid: the broker must not get the caller's Ctrl-C or die with make's process group.
    # shellcheck disable=SC2086  # heap and cds are lists of JVM flags on purpose
    setsid "$java" $heap -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
        -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true $cds \
        -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
        -cp "$LIBS/*" kafka.Kafka "$RUN_DIR/server.properties" \
        >"$RUN_DIR/server.log" 2>&1 </dev/null &
    echo "$!" >"$RUN_DIR/pid"
}

# 0 once RUN_DIR's broker logged that it is ready; 2 (port taken) and 3 (bad CDS archive) are
# worth another try; any other failure dies.
await_ready() {
    local java="$1" pid deadline cds broker_port
    pid="$(cat "$RUN_DIR/pid")"
    cds="$(cat "$RUN_DIR/cds.flags")"
    read -r _ broker_port _ <"$RUN_DIR/state"
    deadline=$((SECONDS + START_TIMEOUT))
    while ((SECONDS < deadline)); do
        if grep -q "$READY_LINE" "$RUN_DIR/server.log" 2>/dev/null; then
            echo "127.0.0.1:$broker_port" >"$RUN_DIR/bootstrap"
            return 0
        fi
        if ! alive "$pid"; then
            rm -f "$RUN_DIR/pid"
            # A port taken between choosing and binding: worth another try (new ports if fresh).
            grep -q "Address already in use" "$RUN_DIR/server.log" 2>/dev/null && return 2
            # A JVM that died on the shared archive: drop the archive, the next try runs without.
            if [[ "$cds" == -XX:SharedArchiveFile=* ]]; then
                log "broker died with CDS archive ${cds#*=}, removing it and retrying"
                rm -f "${cds#*=}"
                return 3
            fi
            tail -n 40 "$RUN_DIR/server.log" >&2
            die "broker exited during start-up (log: $RUN_DIR/server.log)"
        fi
        sleep 0.2
    done
    tail -n 40 "$RUN_DIR/server.log" >&2
    cmd_down_quiet
    die "broker not ready after ${START_TIMEOUT}s (log: $RUN_DIR/server.log)"
}

start_watchdog() {
    local owner="$1" marker="${2:-pid}"
    # Detached so it survives this script; it polls cheaply and stops the broker once the owner
    # is gone. It ends on its own once the marker file goes (the broker or cluster was stopped).
    # shellcheck disable=SC2016  # expanded by the inner bash, from its arguments
    setsid bash -c '
        while kill -0 "$1" 2>/dev/null && [[ -f "$3/$4" ]]; do sleep 1; done
        [[ -f "$3/$4" ]] || exit 0
        bash "$2" down --dir "$3" >/dev/null 2>&1
        # The owner cannot clean up any more: drop the data, keep the logs for a post-mortem.
        rm -rf "$3/data" "$3"/node-*/data
    ' watchdog "$owner" "$HERE/kafka.sh" "$RUN_DIR" "$marker" </dev/null >/dev/null 2>&1 &
}

cmd_up() {
    parse_dir "$@"
    if is_cluster; then cluster_up; return; fi
    local pid java started rc attempt kept=0
    if pid="$(running_pid)"; then
        log "already running (pid $pid)"
        cat "$RUN_DIR/bootstrap"
        return 0
    fi
    cmd_fetch
    java="$(java_bin)"
    started=$SECONDS
    if [[ "$WIPE" == 0 && -f "$RUN_DIR/state" && -d "$RUN_DIR/data" ]]; then
        kept=1
        prepare_kept
    else
        prepare_fresh "$java"
    fi
    # A failed up leaves no controller behind either (a later up starts it again on its data).
    trap '[[ "${UP_OK:-0}" == 1 ]] || controller_down >/dev/null 2>&1' EXIT
    for attempt in 1 2 3; do
        rc=0
        start_once "$java" || rc=$?
        [[ $rc -eq 0 ]] && break
        [[ $rc -ge 2 && $attempt -lt 3 ]] || die "could not start the broker"
        if [[ $rc -eq 2 && $kept -eq 1 ]]; then
            # Its clients were told this address: taking another would strand them.
            die "port $(cut -d' ' -f2 "$RUN_DIR/state") of the kept broker is taken (--wipe for new ports)"
        fi
        [[ $rc -eq 2 ]] && prepare_fresh "$java"
        log "retrying the start"
    done
    UP_OK=1
    [[ -n "$WATCH_PID" ]] && start_watchdog "$WATCH_PID"
    log "ready in $((SECONDS - started))s: pid $(cat "$RUN_DIR/pid"), log $RUN_DIR/server.log," \
        "credentials $RUN_DIR/clients/<principal>.env"
    cat "$RUN_DIR/bootstrap"
}

cmd_down_quiet() {
    local pid deadline
    pid="$(running_pid)" || { rm -f "$RUN_DIR/pid" "$RUN_DIR/bootstrap"; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + STOP_TIMEOUT))
    while alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
    if alive "$pid"; then
        log "pid $pid ignored SIGTERM for ${STOP_TIMEOUT}s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        while alive "$pid"; do sleep 0.1; done
        rm -f "$RUN_DIR/cds.jsa"  # possibly cut off mid-dump
    fi
    cds_keep
    rm -f "$RUN_DIR/pid" "$RUN_DIR/bootstrap"
    log "stopped pid $pid"
}

cmd_down() {
    parse_dir "$@"
    if is_cluster; then cluster_down; return; fi
    cmd_down_quiet
    controller_down  # after the broker: its controlled shutdown asks the controller
    if [[ "$WIPE" == 1 ]]; then
        drop_data "$RUN_DIR/data"
        drop_data "$(controller_dir)/data"  # its log stays, as the broker's does
        rm -f "$(controller_dir)"/{state,server.properties,registrations.log}
        rm -rf "$RUN_DIR/clients" "$RUN_DIR/tls" "$RUN_DIR/secrets" "$RUN_DIR/state" \
            "$RUN_DIR/server.properties" "$RUN_DIR/proxied" "$RUN_DIR/proxied-clients"
        log "wiped the data and credentials of $RUN_DIR"
    fi
}

cmd_restart() {
    parse_dir "$@"
    [[ "$WIPE" == 0 ]] || die "restart keeps the data: use down --wipe, then up"
    if is_cluster; then cluster_down; cluster_up; return; fi
    cmd_down_quiet
    cmd_up "$@"
}

cmd_status() {
    parse_dir "$@"
    if is_cluster; then cluster_status; return; fi
    local pid
    if pid="$(running_pid)"; then
        echo "running pid=$pid bootstrap=$(cat "$RUN_DIR/bootstrap" 2>/dev/null || echo '?') dir=$RUN_DIR clients=$RUN_DIR/clients"
        [[ -f "$RUN_DIR/proxied" ]] &&
            echo "proxied listener=127.0.0.1:$(cut -d' ' -f1 "$RUN_DIR/proxied") advertised=127.0.0.1:$(cut -d' ' -f2 "$RUN_DIR/proxied") clients=$RUN_DIR/proxied-clients"
        return 0
    fi
    echo "stopped dir=$RUN_DIR"
    return 3
}

case "${1:-}" in
    fetch) shift; cmd_fetch "$@" ;;
    up) shift; cmd_up "$@" ;;
    down) shift; cmd_down "$@" ;;
    restart) shift; cmd_restart "$@" ;;
    status) shift; cmd_status "$@" ;;
    kill-node|stop-node|start-node) cmd_node "$@" ;;
    *) sed -n '2,44p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
