# PostgreSQL 17 with pgvector and Apache AGE: the same Debian trixie packages as the embedded server
# (docker/postgres-packages.txt is a copy of app/db/postgres-packages.txt; a test keeps them equal).
# Build from the repository root:  docker build -f docker/db.Dockerfile -t memvault-db .
FROM debian:trixie-slim

ENV PGDATA=/var/lib/postgresql/data \
    PATH=/usr/lib/postgresql/17/bin:$PATH \
    LANG=C.UTF-8

COPY docker/postgres-packages.txt /tmp/postgres-packages.txt
# No default 17/main cluster (the entrypoint makes its own in $PGDATA); no services started by dpkg.
RUN set -eux; \
    mkdir -p /etc/postgresql-common; \
    echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 apt-get install -y --no-install-recommends \
        -o Dpkg::Options::=--force-confold $(grep -v '^#' /tmp/postgres-packages.txt); \
    rm -rf /var/lib/apt/lists/* /tmp/postgres-packages.txt; \
    mkdir -p "$PGDATA" /run/postgresql; \
    chown -R postgres:postgres /var/lib/postgresql /run/postgresql; \
    chmod 700 "$PGDATA"

COPY docker/db-entrypoint.sh /usr/local/bin/memvault-db-entrypoint

USER postgres
VOLUME /var/lib/postgresql/data
EXPOSE 5432
HEALTHCHECK --interval=5s --timeout=5s --retries=30 CMD pg_isready -h 127.0.0.1 -p 5432 -U postgres -d "${POSTGRES_DB:-memvault}"
ENTRYPOINT ["memvault-db-entrypoint"]
