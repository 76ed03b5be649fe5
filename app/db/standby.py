"""Streaming standbys of the embedded cluster (``memvault db replica add | list | remove``).

A standby is a second cluster beside the embedded one, run by the same programs (the same root filesystem, or
the same host PostgreSQL): ``pg_basebackup -R`` copies the primary and writes ``standby.signal`` and
``primary_conninfo``; a physical replication slot keeps the WAL it has not received yet. It listens on 127.0.0.1
on a port of its own and answers read-only queries (hot standby); the API reads from it when its URL is in
``MEMVAULT_REPLICA_URLS`` (app/db/replicas.py). The embedded cluster's ``embedded.json`` lists them (``standbys``);
``memvault db up`` starts them after the primary and ``memvault db down`` stops them first
(``provision.stop_server``).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from app.db import cluster
from app.db.proclog import CommandLog, Progress, file_lock, quiet
from app.db.provision import _data_dir, _load_state, _runtime_from_state, _save_state, _url
from app.errors import ProvisionError
from app.settings import Settings

# On a standby: the primary keeps the rows a long read on the standby still needs, rather than cancelling the read.
STANDBY_CONFIG = "\n# memvault: a standby's own settings\nhot_standby = 'on'\nhot_standby_feedback = 'on'\n"


def _embedded(settings: Settings) -> tuple[Path, dict, cluster.Runtime]:
    if settings.database_url:
        raise ProvisionError(
            "MEMVAULT_DATABASE_URL is set: memvault manages standbys of its embedded cluster only",
            hint="set up streaming replication on your server (pg_basebackup -R), then list the standbys in "
                 "MEMVAULT_REPLICA_URLS")
    data_dir = _data_dir(settings, create=False)
    state = _load_state(data_dir)
    if not state.get("mode"):
        raise ProvisionError(f"there is no embedded cluster in {data_dir}", hint="run `memvault db up` first")
    return data_dir, state, _runtime_from_state(state)


def _standby_rt(rt: cluster.Runtime, entry: dict) -> cluster.Runtime:
    return replace(rt, cluster_dir=entry["cluster_dir"])


def add_standby(settings: Settings, progress: Progress = quiet) -> str:
    """Copy the running embedded cluster into a new standby, start it, record it; its URL (the owner's login)."""
    data_dir, _, _ = _embedded(settings)
    log = CommandLog(data_dir / "logs" / "provision.log")
    with file_lock(data_dir / "embedded.lock", progress):
        state = _load_state(data_dir)
        rt = _runtime_from_state(state)
        alive = cluster.running(rt)
        if alive is None:
            raise ProvisionError("the embedded cluster is not running", hint="run `memvault db up` first")
        entries = state.get("standbys", [])
        n = max((e["n"] for e in entries), default=0) + 1
        entry = {"n": n, "name": f"standby{n}", "cluster_dir": f"{rt.cluster_dir}-standby{n}",
                 "slot": f"memvault_standby{n}"}
        srt = _standby_rt(rt, entry)
        cluster.prepare_dirs(srt)
        scratch = srt.pgdata + ".basebackup"
        for leftover in (scratch, srt.pgdata):
            shutil.rmtree(srt.host(leftover), ignore_errors=True)
        _drop_slot(alive[1], entry["slot"])
        progress(f"copying the primary (127.0.0.1:{alive[1]}) with pg_basebackup ...")
        srt.run(log, ["pg_basebackup", "-D", scratch, "-h", "127.0.0.1", "-p", str(alive[1]), "-U", "postgres",
                      "-R", "-X", "stream", "-c", "fast", "-C", "-S", entry["slot"]],
                what="pg_basebackup", hint="the primary must accept replication connections from 127.0.0.1")
        with (srt.host(scratch) / "postgresql.auto.conf").open("a", encoding="utf-8") as fh:
            fh.write(STANDBY_CONFIG)
        srt.host(scratch).rename(srt.host(srt.pgdata))
        entry["port"] = cluster.free_port()
        cluster.write_config(srt, entry["port"])
        cluster.start(srt, log)
        _save_state(data_dir, {**state, "standbys": [*entries, entry]})
        progress(f"{entry['name']} streams from the primary, on 127.0.0.1:{entry['port']}")
        return _url(entry["port"], settings.db_name)


def standby_urls(settings: Settings) -> list[tuple[str, str, bool]]:
    """(name, URL, running) of each standby of the embedded cluster."""
    data_dir, state, rt = _embedded(settings)
    out = []
    for e in state.get("standbys", []):
        alive = cluster.running(_standby_rt(rt, e))
        out.append((e["name"], _url(alive[1] if alive else e["port"], settings.db_name), alive is not None))
    return out


def start_standbys(settings: Settings, progress: Progress = quiet) -> list[str]:
    """Start the standbys that are not running (after the primary); their URLs."""
    if settings.database_url:
        return []
    data_dir = _data_dir(settings, create=False)
    state = _load_state(data_dir)
    if not state.get("standbys"):
        return []
    rt, log, urls = _runtime_from_state(state), CommandLog(data_dir / "logs" / "provision.log"), []
    with file_lock(data_dir / "embedded.lock", progress):
        for e in state["standbys"]:
            srt = _standby_rt(rt, e)
            alive = cluster.running(srt)
            if alive is None:
                cluster.clear_stale_pid(srt)
                if not cluster.port_free(e["port"]):
                    e["port"] = cluster.free_port()
                cluster.write_config(srt, e["port"])
                cluster.start(srt, log)
                progress(f"{e['name']}: started on 127.0.0.1:{e['port']}")
            urls.append(_url(alive[1] if alive else e["port"], settings.db_name))
        _save_state(data_dir, state)
    return urls


def remove_standby(settings: Settings, name: str, progress: Progress = quiet) -> None:
    """Stop a standby, drop its replication slot on the primary, delete its data."""
    data_dir, _, _ = _embedded(settings)
    log = CommandLog(data_dir / "logs" / "provision.log")
    with file_lock(data_dir / "embedded.lock", progress):
        state = _load_state(data_dir)
        rt = _runtime_from_state(state)
        entries = state.get("standbys", [])
        entry = next((e for e in entries if e["name"] == name), None)
        if entry is None:
            known = ", ".join(e["name"] for e in entries) or "none"
            raise ProvisionError(f"there is no standby {name!r}", hint=f"the standbys: {known}")
        srt = _standby_rt(rt, entry)
        if cluster.running(srt) is not None:
            cluster.stop(srt, log)
        alive = cluster.running(rt)
        if alive is not None:  # a stopped primary keeps the slot until the next `replica remove` while it runs
            _drop_slot(alive[1], entry["slot"])
        shutil.rmtree(srt.host(srt.cluster_dir), ignore_errors=True)
        _save_state(data_dir, {**state, "standbys": [e for e in entries if e is not entry]})
        progress(f"{name}: removed (its slot dropped, its data deleted)")


def _drop_slot(port: int, slot: str) -> None:
    import psycopg

    with psycopg.connect(_url(port, "postgres"), autocommit=True, connect_timeout=10) as conn:
        conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
                     (slot,))
