#!/bin/sh
# First start: initdb (password auth, scram-sha-256), AGE preloaded in every session, the memvault database
# with both extensions, and the service's login role memvault_service (password MEMVAULT_SERVICE_PASSWORD). Later starts: just the server. Settings mirror the embedded cluster's (app/db/cluster.py),
# except that here the server listens on all interfaces of the container and wants a password.
set -eu
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD, the password of the postgres user}"
DB="${POSTGRES_DB:-memvault}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -U postgres --pwfile="$pwfile" --auth-local=peer --auth-host=scram-sha-256 \
        -E UTF8 --locale=C.UTF-8
    rm -f "$pwfile"
    # A quarter of the container's memory (its cgroup limit if lower than the host's), 128 MB to 8 GB: as the
    # embedded cluster sizes it (app/db/cluster.py, shared_buffers_mb).
    mem_kb="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || true)"
    mem_kb="${mem_kb:-2097152}"  # no /proc (a bare chroot): 2 GB, as cluster.py assumes then
    limit="$(cat /sys/fs/cgroup/memory.max 2>/dev/null || echo max)"
    if [ "$limit" != max ] && [ "$((limit / 1024))" -lt "$mem_kb" ]; then mem_kb=$((limit / 1024)); fi
    buffers_mb=$((mem_kb / 4096))
    if [ "$buffers_mb" -lt 128 ]; then buffers_mb=128; fi
    if [ "$buffers_mb" -gt 8192 ]; then buffers_mb=8192; fi
    cat >> "$PGDATA/postgresql.conf" <<CONF

# memvault
listen_addresses = '*'
session_preload_libraries = 'age'
password_encryption = 'scram-sha-256'
max_connections = 200
shared_buffers = '${buffers_mb}MB'
work_mem = '16MB'
maintenance_work_mem = '1GB'
max_parallel_maintenance_workers = 2
max_wal_size = '4GB'
CONF
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    # Set up over the socket only, so that the health check passes only once everything exists.
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    psql -v ON_ERROR_STOP=1 -U postgres -d postgres -c "CREATE DATABASE \"$DB\""
    psql -v ON_ERROR_STOP=1 -U postgres -d "$DB" \
        -c "CREATE EXTENSION IF NOT EXISTS vector" -c "CREATE EXTENSION IF NOT EXISTS age"
    # The role the API and the worker log in as (an ordinary one; `memvault migrate` grants what it needs).
    if [ -n "${MEMVAULT_SERVICE_PASSWORD:-}" ]; then
        psql -v ON_ERROR_STOP=1 -v pw="$MEMVAULT_SERVICE_PASSWORD" -U postgres -d postgres <<'SQL'
CREATE ROLE memvault_service LOGIN INHERIT NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION
    PASSWORD :'pw';
SQL
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop
fi

exec postgres -D "$PGDATA" "$@"  # extra arguments go to the server, e.g. -c work_mem=64MB
