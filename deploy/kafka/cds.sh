# Sourced by kafka.sh: the JVM class-data sharing archive of the broker (faster starts).

# Class-data sharing: the first broker dumps the classes it loaded into an archive when it stops,
# later brokers map it and start seconds sooner. Keyed by pom and JVM, since it fits only those.
cds_archive() {
    local java="$1"
    echo "$CACHE/cds/kafka-$(pom_hash | cut -c1-12)-$("$java" -version 2>&1 | head -n1 | tr -cd '[:alnum:]._-').jsa"
}

cds_options() {
    local java="$1" archive
    [[ "${KAFKA_CDS:-1}" == 1 ]] || return 0
    archive="$(cds_archive "$java")"
    if [[ -s "$archive" ]]; then
        echo "-XX:SharedArchiveFile=$archive"
    else
        # Dumped into the run dir; `down` validates it and only then moves it into the cache.
        mkdir -p "$CACHE/cds"
        echo "$java" >"$RUN_DIR/cds.java"
        echo "-XX:ArchiveClassesAtExit=$RUN_DIR/cds.jsa"
    fi
}

# Runs after the broker exited cleanly: an archive a JVM cannot map would crash every later start.
cds_keep() {
    local java archive
    [[ -f "$RUN_DIR/cds.java" && -s "$RUN_DIR/cds.jsa" ]] || { rm -f "$RUN_DIR/cds.java" "$RUN_DIR/cds.jsa"; return 0; }
    java="$(cat "$RUN_DIR/cds.java")"
    archive="$(cds_archive "$java")"
    if "$java" -XX:SharedArchiveFile="$RUN_DIR/cds.jsa" -Xshare:on -cp "$LIBS/*" -version >/dev/null 2>&1; then
        mv -f "$RUN_DIR/cds.jsa" "$archive"  # atomic: parallel brokers may race to install theirs
    fi
    rm -f "$RUN_DIR/cds.java" "$RUN_DIR/cds.jsa"
}
