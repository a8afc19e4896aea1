# Stands in for prom/prometheus where no registry answers (base-images.sh builds it): the server and
# promtool of Debian's prometheus package (deploy/prometheus/provision.sh), run as nobody with its
# data in /prometheus, like the upstream image.
ARG BASE_IMAGE=holdem-base/python:3.11-bookworm
FROM ${BASE_IMAGE}
COPY prometheus promtool /bin/
RUN mkdir -p /prometheus /etc/prometheus && chown nobody:nogroup /prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
VOLUME ["/prometheus"]
ENTRYPOINT ["/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
