"""A user without root: `memvault db up` builds the server by unpacking the packages and runs it in a user
namespace, then `memvault migrate`, `memvault serve --local-key`, a write and a recall, all as that user.

The suite runs as root in CI, so this test switches to an unprivileged user of its own (`memvault-rootless`, made
here if missing) and runs each step as that user: the rootless path is exercised on every run, from an empty data
directory (the tree is downloaded and unpacked again: ~25 s). The user gets a virtual environment of its own from
the system's Python (root's interpreter is usually under /root, which others cannot enter), cached in its home by
the hash of pyproject.toml's dependencies, and this checkout's ``app/`` copied where it can read it. When the suite
itself runs without root, every other test already runs on a rootless cluster, and this one is skipped.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest

from tests.fakes.live_server import wait_serving

REPO = Path(__file__).resolve().parents[2]
USER = "memvault-rootless"


def _system_python() -> str | None:
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            version = subprocess.run([candidate, "-c", "import sys, venv; print(sys.version_info >= (3, 11))"],
                                     capture_output=True, text=True, check=False).stdout.strip()
            if version == "True":
                return candidate
    return None


@pytest.fixture(scope="module")
def rootless_user() -> pwd.struct_passwd:
    if os.geteuid() != 0:
        pytest.skip("the suite runs without root: every test's cluster is already a rootless one")
    if not sys.platform.startswith("linux"):
        pytest.skip("the rootless embedded server is built on Linux only")
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    if shutil.which("useradd") is None:
        pytest.skip("no useradd to make an unprivileged user with")
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True)
    return pwd.getpwnam(USER)


def _as_user(user: pwd.struct_passwd, argv: list[str], env: dict[str, str], timeout: float = 600,
             **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, env=env, user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd=user.pw_dir,
                          capture_output=True, text=True, timeout=timeout, check=False, **kw)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def user_python(rootless_user: pwd.struct_passwd) -> str:
    """A virtual environment of the user's with the project's dependencies (not the project: its code is copied
    per test), made once per list of dependencies."""
    python = _system_python()
    if python is None:
        pytest.skip("no system Python >= 3.11 with venv that an unprivileged user can run")
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    digest = hashlib.sha256("\n".join(deps).encode()).hexdigest()[:12]
    venv = Path(rootless_user.pw_dir) / ".cache" / f"memvault-test-venv-{digest}"
    ready = venv / ".ready"
    if not ready.exists():
        env = {"HOME": rootless_user.pw_dir, "PATH": "/usr/bin:/bin"}
        for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT"):
            if key in os.environ:
                env[key] = os.environ[key]
        _as_user(rootless_user, [python, "-m", "venv", str(venv)], env)
        _as_user(rootless_user, [str(venv / "bin/python"), "-m", "pip", "install", "-q", *deps], env, timeout=1200)
        ready.touch()
        os.chown(ready, rootless_user.pw_uid, rootless_user.pw_gid)
    return str(venv / "bin/python")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(1800)
def test_a_user_without_root_sets_up_serves_writes_and_recalls(rootless_user, user_python, tmp_path) -> None:
    home = Path(rootless_user.pw_dir)
    work = home / f"memvault-test-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(REPO / "app", work / "code" / "app", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__"))  # app/sql, app/migrations: their files
    for path in [work, *work.rglob("*")]:
        os.chown(path, rootless_user.pw_uid, rootless_user.pw_gid, follow_symlinks=False)
    env = {"HOME": str(home), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
           "PYTHONPATH": str(work / "code"), "MEMVAULT_DATA_DIR": str(work / "data"),
           "MEMVAULT_EMBEDDER": "use", "MEMVAULT_LLM": "heuristic", "MEMVAULT_RERANKER": "none",
           "MEMVAULT_RAIL2_EMBEDDER": "none"}
    memvault = [user_python, "-m", "app.cli"]
    serve = None
    try:
        up = _as_user(rootless_user, [*memvault, "db", "up"], env)
        assert "without root" in up.stdout + up.stderr, up.stdout
        _as_user(rootless_user, [*memvault, "migrate"], env)
        port = _free_port()
        with (tmp_path / "serve.log").open("w") as log:
            serve = subprocess.Popen([*memvault, "serve", "--local-key", "--port", str(port)], env=env,
                                     user=rootless_user.pw_uid, group=rootless_user.pw_gid, extra_groups=[],
                                     cwd=home, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        key_file = work / "data" / "api_key"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            wait_serving(http, serve, tmp_path / "serve.log", key_file=key_file)
            http.headers["Authorization"] = f"Bearer {key_file.read_text().strip()}"
            assert http.post("/v1/vaults", json={"name": "bob"}).status_code == 201
            r = http.post("/v1/vaults/bob/memories", json={"content": "I moved to Tainan last week."})
            assert r.status_code == 200, r.text
            r = http.post("/v1/vaults/bob/recall", json={"query": "where do I live now?"})
            assert r.status_code == 200 and "Tainan" in r.text, r.text
            # the server reads the tree's zone files (pg_timezone_names): the unpacked tree has them all
            r = http.put("/v1/vaults/bob/dream/schedule", json={"timezone": "Asia/Taipei", "hour": 4})
            assert r.status_code == 200, r.text
        status = _as_user(rootless_user, [*memvault, "db", "status"], env)
        assert "userns" in status.stdout, status.stdout
    finally:
        if serve is not None:
            os.killpg(serve.pid, 15)
            serve.wait(60)
        subprocess.run([*memvault, "db", "down"], env=env, user=rootless_user.pw_uid, group=rootless_user.pw_gid,
                       extra_groups=[], cwd=home, capture_output=True, check=False, timeout=120)
        shutil.rmtree(work, ignore_errors=True)
