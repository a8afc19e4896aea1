# Stands in for apache/kafka:4.4.0 where no registry answers (base-images.sh builds it): Debian's
# JRE and the broker classpath of deploy/kafka/pom.xml (the jars kafka.sh runs), laid out like the
# upstream image: /opt/kafka/bin/<tool>.sh, /opt/kafka/libs, user appuser (uid 1000).
ARG BASE_IMAGE=holdem-base/python:3.11-bookworm
FROM ${BASE_IMAGE}
# The JRE's postinst links its man pages: the folder must exist (the base has none).
RUN mkdir -p /usr/share/man/man1 && apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /usr/share/doc/* /usr/share/man/* \
    && useradd --uid 1000 --create-home --shell /bin/bash appuser \
    && mkdir -p /var/lib/kafka/data /opt/kafka/bin /opt/kafka/config \
    && chown appuser /var/lib/kafka/data
COPY libs/ /opt/kafka/libs/
COPY log4j2.properties /opt/kafka/config/log4j2.properties
# The three tools the compose stack calls, as the upstream scripts name them.
RUN set -e; cd /opt/kafka/bin; \
    tool() { printf '#!/bin/sh\nexec java ${KAFKA_HEAP_OPTS:-%s} -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties -cp "/opt/kafka/libs/*" %s "$@"\n' "$2" "$3" >"$1"; chmod 0755 "$1"; }; \
    tool kafka-server-start.sh "-Xmx1g" kafka.Kafka; \
    tool kafka-storage.sh "-Xmx256m" kafka.tools.StorageTool; \
    printf '#!/bin/sh\nexec java -Xmx128m -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties -cp "/opt/kafka/libs/*" org.apache.kafka.tools.BrokerApiVersionsCommand "$@"\n' >kafka-broker-api-versions.sh; \
    chmod 0755 kafka-broker-api-versions.sh
USER appuser
WORKDIR /opt/kafka
EXPOSE 9092
CMD ["/opt/kafka/bin/kafka-server-start.sh", "/opt/kafka/config/server.properties"]
