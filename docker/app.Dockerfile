# The memvault service (API + background worker) on the database of docker/db.Dockerfile.
# Build from the repository root:  docker build -f docker/app.Dockerfile -t memvault-app .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MEMVAULT_HOST=0.0.0.0 \
    MEMVAULT_PORT=8420 \
    MEMVAULT_DATA_DIR=/var/lib/memvault

WORKDIR /srv/memvault
COPY pyproject.toml README.md ./
COPY app ./app
COPY sql ./sql
COPY migrations ./migrations
# The package carries sql/ and migrations/ (app/sql, app/migrations: package data, app/db/resources.py).
RUN pip install --no-cache-dir -e . \
    && useradd --system --home-dir /var/lib/memvault --create-home memvault
USER memvault

EXPOSE 8420
# MEMVAULT_DATABASE_URL (set by compose.yaml) points at the db service; no embedded server is built here.
# --local-key: the first start makes an admin API key in the data volume (0600) and prints where; the API binds
# 0.0.0.0 inside the container, which memvault refuses while no key exists.
CMD ["sh", "-c", "memvault migrate && exec memvault serve --local-key"]
