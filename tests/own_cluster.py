"""A PostgreSQL cluster of a test's own, which it may restart, crash, stop for a while or read the files of: the
shared server is never touched. It runs like the shared one (the embedded cluster, in the shared server's cached
root filesystem, so nothing is downloaded; initdb and start take 1-2 s) from a data directory of its own, and is
stopped and removed afterwards. ``pg_ctl`` runs the server's own pg_ctl on it (``restart -m fast``,
``stop -m immediate``, ``start``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.settings import Settings


class OwnCluster:
    def __init__(self, settings: Settings, env: dict[str, str], url: str) -> None:
        self.settings = settings
        self.env = env  # a `memvault` process's environment on it (offline models)
        self.url = url  # the owner's login to its memvault database

    def _runtime(self):
        from app.db import provision

        return provision._runtime_from_state(provision._load_state(provision._data_dir(self.settings)))

    def pg_ctl(self, *args: str) -> None:
        """``pg_ctl -D <its pgdata> -w <args>`` as the server's user (waits until done)."""
        from app.db.proclog import CommandLog

        rt = self._runtime()
        rt.run(CommandLog(self.settings.data_dir / "logs" / "provision.log"),
               ["pg_ctl", "-D", rt.pgdata, "-l", rt.server_log, "-w", "-t", "60", *args],
               what=f"pg_ctl {' '.join(args)}", hint="read the cluster's server log")

    @property
    def pgdata(self) -> Path:
        """Its data directory on this machine."""
        rt = self._runtime()
        return rt.host(rt.pgdata)


@contextmanager
def own_cluster(test_settings: Settings, tmp: Path) -> Iterator[OwnCluster]:
    """A brand-new migrated cluster in ``tmp``; stopped and removed on exit."""
    from app.db.migrate import upgrade
    from app.db.provision import ensure_server, server_status, stop_server
    from tests.conftest import cli_env

    if test_settings.database_url:
        pytest.skip("MEMVAULT_DATABASE_URL is set: no embedded cluster to start one of the test's own beside")
    rootfs = server_status(test_settings).rootfs
    settings = test_settings.model_copy(update={"data_dir": tmp / "data", "db_port": 0, "rootfs_dir": rootfs})
    env = {k: v for k, v in cli_env("").items() if k != "MEMVAULT_DATABASE_URL"}
    env.update(MEMVAULT_DATA_DIR=str(settings.data_dir), MEMVAULT_DB_PORT="0")
    if rootfs is not None:
        env["MEMVAULT_ROOTFS_DIR"] = str(rootfs)
    try:
        url = ensure_server(settings).url
        upgrade(url)
        yield OwnCluster(settings, env, url)
    finally:
        status = server_status(settings)
        if status.running:
            stop_server(settings)
        if status.rootfs is not None and status.pgdata is not None:  # its directory inside the shared rootfs
            shutil.rmtree(status.pgdata.parent, ignore_errors=True)
