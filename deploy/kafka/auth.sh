# Sourced by kafka.sh: the broker's principals, their SCRAM credentials, TLS material and the
# per-principal client env files. Everything lives in the run dir and is made once per fresh
# storage (the SCRAM users are written into the metadata log at format time), so a restart on
# kept data reuses them. See docs/adr/007-broker-authentication-and-acls.md.

# The clients' principals; `broker` is the broker's own identity (inter-broker and controller).
PRINCIPALS=(admin dealer wallet settlement query operator backoffice auditor)
SCRAM_MECHANISM="SCRAM-SHA-512"

new_password() {
    # Alphanumeric only: the password goes into JAAS lines and --add-scram without quoting issues.
    local out=""
    while ((${#out} < 32)); do out+="$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"; done
    echo "${out:0:32}"
}

# secrets/<name>: one password per principal (0600, in a 0700 dir), made on a fresh storage only.
make_secrets() {
    local name
    rm -rf "$RUN_DIR/secrets"
    mkdir -m 700 "$RUN_DIR/secrets"
    for name in broker "${PRINCIPALS[@]}"; do
        (umask 077; new_password >"$RUN_DIR/secrets/$name")
    done
}

secret() { cat "${SECRETS_DIR:-$RUN_DIR/secrets}/$1"; }

# The --add-scram arguments of StorageTool format: every principal plus the broker itself.
scram_args() {
    local name
    for name in broker "${PRINCIPALS[@]}"; do
        printf '%s\n' "--add-scram" "$SCRAM_MECHANISM=[name=$name,password=$(secret "$name")]"
    done
}

# A private CA and a broker certificate for 127.0.0.1/localhost, with openssl (no downloads).
make_tls() {
    local tls="$RUN_DIR/tls"
    command -v openssl >/dev/null || die "openssl not found: needed for --tls"
    rm -rf "$tls"
    mkdir -m 700 "$tls"
    (
        umask 077
        openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=holdem local CA" \
            -keyout "$tls/ca.key" -out "$tls/ca.pem" >/dev/null 2>&1
        openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
            -keyout "$tls/broker.key.pem" -out "$tls/broker.csr" >/dev/null 2>&1
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' \
            >"$tls/ext.cnf"
        openssl x509 -req -in "$tls/broker.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" \
            -CAcreateserial -days 825 -extfile "$tls/ext.cnf" -out "$tls/broker.crt" >/dev/null 2>&1
        # Kafka's PEM key store: an unencrypted PKCS#8 key followed by the certificate chain.
        openssl pkcs8 -topk8 -nocrypt -in "$tls/broker.key.pem" -out "$tls/broker.pem"
        cat "$tls/broker.crt" "$tls/ca.pem" >>"$tls/broker.pem"
        rm -f "$tls/broker.csr" "$tls/broker.key.pem" "$tls/ext.cnf" "$tls/ca.srl"
    ) || die "could not make the TLS material in $tls"
    chmod 644 "$tls/ca.pem"  # the CA certificate is public: clients need it
}

# The controller listener's SASL PLAIN (on loopback) and the authorizer: a combined node's, a
# broker's towards its controller, and a controller's own (it applies the ACL changes).
controller_auth_properties() {
    local pw
    pw="$(secret broker)"
    cat <<EOF
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="$pw" user_broker="$pw";
# KRaft's authorizer; no ACL = no access. admin sets up, broker is this node itself.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:admin;User:broker
EOF
}

# The listener part of server.properties. Clients: SCRAM-SHA-512 (SASL_PLAINTEXT, or SASL_SSL with
# --tls). Controller: SASL PLAIN on loopback, because SCRAM credentials live in the metadata log
# the controller serves, so the controller cannot check them before that log is up.
# With a proxied port (arguments 4 and 5: the port it listens on, the port it is advertised as),
# a second client listener, PROXIED, with CLIENT's protocol and mechanism: a proxy (the fault
# tests' toxiproxy) listens on the advertised port and forwards to it. Kafka clients connect to
# the addresses the metadata advertises on the listener they came in by, so the clients that
# bootstrap through the proxy stay behind it, and those of CLIENT never meet it.
auth_properties() {
    local protocol="$1" broker_port="$2" controller_port="$3" proxied="${4:-}" advertised="${5:-}"
    local pw listeners="CLIENT://127.0.0.1:$broker_port" map="CLIENT:$protocol" name
    local advertise="CLIENT://127.0.0.1:$broker_port"
    local -a names=(client)
    pw="$(secret broker)"
    if [[ -n "$proxied" ]]; then
        listeners+=",PROXIED://127.0.0.1:$proxied"
        advertise+=",PROXIED://127.0.0.1:$advertised"
        map+=",PROXIED:$protocol"
        names+=(proxied)
    fi
    cat <<EOF
listeners=$listeners,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=$advertise
controller.listener.names=CONTROLLER
inter.broker.listener.name=CLIENT
listener.security.protocol.map=$map,CONTROLLER:SASL_PLAINTEXT
sasl.enabled.mechanisms=$SCRAM_MECHANISM
sasl.mechanism.inter.broker.protocol=$SCRAM_MECHANISM
EOF
    for name in "${names[@]}"; do
        cat <<EOF
listener.name.$name.sasl.enabled.mechanisms=$SCRAM_MECHANISM
listener.name.$name.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="$pw";
EOF
    done
    controller_auth_properties
    if [[ "$protocol" == SASL_SSL ]]; then
        for name in "${names[@]}"; do
            cat <<EOF
listener.name.$name.ssl.keystore.type=PEM
listener.name.$name.ssl.keystore.location=$RUN_DIR/tls/broker.pem
listener.name.$name.ssl.truststore.type=PEM
listener.name.$name.ssl.truststore.location=$RUN_DIR/tls/ca.pem
EOF
        done
        cat <<EOF
ssl.truststore.type=PEM
ssl.truststore.location=$RUN_DIR/tls/ca.pem
EOF
    fi
}

# clients/<principal>.env: the HOLDEM_KAFKA_* variables every client of the game reads. A third
# argument names another folder of the run dir for them (proxied-clients: the same principals,
# bootstrapping through the proxy).
write_client_envs() {
    local protocol="$1" bootstrap="$2" folder="${3:-clients}" name file
    mkdir -p -m 700 "$RUN_DIR/$folder"
    for name in "${PRINCIPALS[@]}"; do
        # A storage formatted before this principal existed has no secret (nor SCRAM user) for
        # it: no env file then (make serve WIPE=1 formats one that has).
        [[ -f "${SECRETS_DIR:-$RUN_DIR/secrets}/$name" ]] || continue
        file="$RUN_DIR/$folder/$name.env"
        (
            umask 077
            {
                echo "# kafka.sh: the $name principal of the broker in $RUN_DIR${3:+, through the proxy at $bootstrap}"
                echo "HOLDEM_KAFKA_BOOTSTRAP=$bootstrap"
                echo "HOLDEM_KAFKA_SECURITY_PROTOCOL=$protocol"
                echo "HOLDEM_KAFKA_SASL_MECHANISM=$SCRAM_MECHANISM"
                echo "HOLDEM_KAFKA_SASL_USERNAME=$name"
                echo "HOLDEM_KAFKA_SASL_PASSWORD=$(secret "$name")"
                [[ "$protocol" == SASL_SSL ]] && echo "HOLDEM_KAFKA_SSL_CAFILE=$RUN_DIR/tls/ca.pem"
                true
            } >"$file.tmp"
        )
        mv -f "$file.tmp" "$file"
    done
}
