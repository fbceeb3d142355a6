# Two images of steadyscale, each installed by the README's own make target
# (`.venv/.installed-run`, the one `make run` installs through), with the extras it needs, so
# an image and `make run` cannot drift apart:
#
#   docker build --target service -t steadyscale:0.1.0 .        # the decision service (default)
#   docker build --target spark -t steadyscale-spark:0.1.0 .    # sweep, paper, compare, trace
#
# `service` has the [service] extra only: no Java, no PySpark, no scipy or filterpy (a stream
# that asks for ekf or tvd's method="mm" is answered 422 naming the [filters] extra; the
# default and the other filters need numpy only). It runs as uid 10001, needs no write access
# outside /data and /tmp (a read-only root filesystem works, deploy/ sets one), and listens on
# 8000 (HTTP) and 9090 (KEDA's external scaler, gRPC).
# `spark` adds Java 17, which PySpark 4 needs, and the [spark] extra (the adaptor included).
# tests/deploy/test_dockerfile.py checks both, and runs the service's make target into a fresh
# virtual environment to measure what the image carries.

# Debian 12: its openjdk-17 is the Java PySpark 4 is tested with (Debian 13 has no Java 17).
FROM python:3.11-slim-bookworm AS source
ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
    && apt-get install -y --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*
# A numeric USER below, so that Kubernetes' runAsNonRoot can verify it without a runAsUser.
RUN useradd --create-home --uid 10001 steadyscale
WORKDIR /app
COPY pyproject.toml README.md Makefile ./
COPY filters ./filters
COPY scaling ./scaling
COPY simulator ./simulator
COPY service ./service

FROM source AS spark
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
# The installed files stay root's: the user runs them and cannot change them.
RUN make .venv/.installed-run RUN_EXTRAS=spark
ENV PATH="/app/.venv/bin:${PATH}"
RUN mkdir /work && chown 10001 /work
WORKDIR /work
USER 10001
ENTRYPOINT ["steadyscale"]
CMD ["--help"]

# Last, so that a plain `docker build .` gives the service.
FROM source AS service
RUN make .venv/.installed-run RUN_EXTRAS=service
# The ports are the settings' (service/settings.py): 8000 is STEADYSCALE_PORT's default, and the
# gRPC server is on only when STEADYSCALE_GRPC_PORT is set.
ENV PATH="/app/.venv/bin:${PATH}" \
    STEADYSCALE_HOST=0.0.0.0 \
    STEADYSCALE_PORT=8000 \
    STEADYSCALE_GRPC_PORT=9090 \
    STEADYSCALE_DATA_DIR=/data
RUN mkdir /data && chown 10001 /data
VOLUME ["/data"]
USER 10001
EXPOSE 8000 9090
# /healthz answers without a token; the process, not the storage (/readyz is for readiness).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
ENTRYPOINT ["steadyscale", "serve"]
