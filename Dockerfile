# steadyscale decision service: `steadyscale serve` on its embedded defaults (a SQLite file in
# /data). The install steps are the README's (`make run`): a virtual environment with the
# project installed into it. A Java 17 runtime is included because the same image runs the
# Spark commands (sweep, paper, trace) and PySpark needs it.
FROM python:3.11-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless make \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 steadyscale
WORKDIR /app
COPY pyproject.toml README.md Makefile ./
COPY filters ./filters
COPY scaling ./scaling
COPY simulator ./simulator
COPY service ./service
RUN make .venv/.installed-run RUN_EXTRAS=all && chown -R steadyscale /app

ENV PATH="/app/.venv/bin:${PATH}" \
    STEADYSCALE_HOST=0.0.0.0 \
    STEADYSCALE_PORT=8000 \
    STEADYSCALE_DATA_DIR=/data
RUN mkdir /data && chown steadyscale /data
VOLUME ["/data"]
USER steadyscale
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status != 200)"

ENTRYPOINT ["steadyscale", "serve"]
