"""A cached Debian trixie root filesystem with PostgreSQL 17, pgvector and AGE (DESIGN.md section 2).

Built with ``debootstrap --variant=minbase`` into a temporary directory beside the target, the packages of
``postgres-packages.txt`` installed into it, then renamed into place: an interrupted build never leaves a half
root filesystem that a later run would take as cached. A marker file inside records what was installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path

from app.db.proclog import CommandLog, Progress, file_lock, quiet
from app.errors import ProvisionError

SUITE = "trixie"
MARKER = ".memvault-rootfs.json"
MIN_FREE_BYTES = 1024**3  # peak use of a build: ~850 MB (debootstrap + downloaded .debs), ~560 MB after
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
CHROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_PROXY_VARS = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
_APT_OPTS = (
    "-o", "Acquire::Languages=none",
    "-o", "Acquire::Retries=3",
    "-o", "Dpkg::Options::=--force-unsafe-io",
    "-o", "Dpkg::Options::=--force-confold",
)  # fmt: skip


def postgres_packages() -> tuple[str, ...]:
    """The Debian packages of the server, from the list shared with ``docker/db.Dockerfile``."""
    text = resources.files("app.db").joinpath("postgres-packages.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def chroot_env(home: str = "/root") -> dict[str, str]:
    """A clean environment for commands inside the root filesystem (no host locale leaks in)."""
    env = {k: v for k, v in os.environ.items() if k in _PROXY_VARS}
    env.update(
        PATH=CHROOT_PATH, LANG="C.UTF-8", LC_ALL="C.UTF-8", HOME=home, DEBIAN_FRONTEND="noninteractive"
    )
    return env


def read_marker(root: Path) -> dict | None:
    try:
        return json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def ensure_rootfs(root: Path, *, mirror: str, log: CommandLog, progress: Progress = quiet) -> str:
    """Make sure ``root`` holds trixie with the server packages; return what was done, for progress."""
    packages = postgres_packages()
    with file_lock(root.parent / f".{root.name}.lock", progress):
        marker = read_marker(root)
        if marker is not None:
            missing = [p for p in packages if p not in marker.get("packages", [])]
            if not missing:
                return f"cached ({root})"
            _install(root, missing, log)  # the shared list grew since the build: add to the cached tree
            _write_marker(root, sorted({*marker.get("packages", []), *missing}), mirror)
            return f"cached ({root}), added {', '.join(missing)}"
        if root.exists():
            raise ProvisionError(
                f"{root} exists but is not a root filesystem built by memvault (no {MARKER} in it)",
                hint=f"remove it (rm -rf {root}) or set MEMVAULT_DATA_DIR to another directory, then run "
                "again",
            )
        _remove_partial_builds(root)
        _check_free_space(root.parent)
        debootstrap = _debootstrap(log, progress)
        tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.build-", dir=root.parent))
        tmp.chmod(0o755)  # mkdtemp makes 0700; inside the chroot this is "/" and postgres must traverse it
        try:
            _build(tmp, debootstrap=debootstrap, mirror=mirror, packages=packages, log=log, progress=progress)
        except BaseException:
            _remove_partial_builds(root)  # the next run would, too; free the space now
            raise
        tmp.rename(root)
        return f"built ({root})"


def _build(
    tmp: Path,
    *,
    debootstrap: str,
    mirror: str,
    packages: tuple[str, ...],
    log: CommandLog,
    progress: Progress,
) -> None:
    """debootstrap, then the packages, into the scratch directory ``tmp``."""
    progress(f"debootstrap {SUITE} from {mirror} into {tmp.name} ...")
    args = [debootstrap, "--variant=minbase"]
    if KEYRING.exists():
        args.append(f"--keyring={KEYRING}")
    args += [SUITE, str(tmp), mirror]
    if not Path(
        f"/usr/share/debootstrap/scripts/{SUITE}"
    ).exists():  # an older debootstrap: trixie is like sid
        args.append("/usr/share/debootstrap/scripts/sid")
    log.run(
        args,
        what=f"debootstrap {SUITE}",
        hint=f"check network access to {mirror} (MEMVAULT_DEBIAN_MIRROR selects another mirror) and free "
        "disk space, then run again",
    )
    progress(f"apt-get install {' '.join(packages)} ...")
    _install(tmp, list(packages), log)
    _write_marker(tmp, list(packages), mirror)


def _install(root: Path, packages: list[str], log: CommandLog) -> None:
    """apt-get install into ``root``, keeping services stopped and Debian's default cluster uncreated."""
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\n# memvault: never start services inside this root filesystem\nexit 101\n")
    policy.chmod(0o755)
    conf = root / "etc/postgresql-common/createcluster.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    if not conf.exists():
        conf.write_text("# memvault runs its own cluster; no default 17/main\ncreate_main_cluster = false\n")
    resolv = root / "etc/resolv.conf"
    if Path("/etc/resolv.conf").exists():  # DNS for apt inside; never write through a symlink in the tree
        resolv.unlink(missing_ok=True)
        shutil.copyfile("/etc/resolv.conf", resolv)
    env = chroot_env() | {"UCF_FORCE_CONFFOLD": "1"}
    script = (
        f"apt-get update -qq {' '.join(_APT_OPTS)} && "
        f"apt-get install -y -qq --no-install-recommends {' '.join(_APT_OPTS)} {' '.join(packages)} && "
        "apt-get clean && rm -rf /var/lib/apt/lists/*"
    )
    log.run(
        ["chroot", root, "/bin/sh", "-c", script],
        env=env,
        what=f"apt-get install {' '.join(packages)}",
        hint="check network access to the Debian mirror (MEMVAULT_DEBIAN_MIRROR), then run again",
    )


def _write_marker(root: Path, packages: list[str], mirror: str) -> None:
    data = {
        "suite": SUITE,
        "mirror": mirror,
        "packages": packages,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    (root / MARKER).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _debootstrap(log: CommandLog, progress: Progress) -> str:
    """The debootstrap program, installed with apt-get when missing."""
    for candidate in (shutil.which("debootstrap"), "/usr/sbin/debootstrap"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    apt = shutil.which("apt-get") or "/usr/bin/apt-get"
    if not os.access(apt, os.X_OK):
        raise ProvisionError(
            "debootstrap is not installed and there is no apt-get to install it",
            hint="install debootstrap with your package manager, or set MEMVAULT_DATABASE_URL to a "
            "PostgreSQL 17 server with pgvector >= 0.8 and AGE 1.5",
        )
    progress("installing debootstrap with apt-get ...")
    packages = ["debootstrap"] + ([] if KEYRING.exists() else ["debian-archive-keyring"])
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    hint = "install debootstrap yourself (apt-get install debootstrap), or set MEMVAULT_DATABASE_URL"
    log.run(
        [apt, "update", "-qq", "-o", "DPkg::Lock::Timeout=120"], env=env, what="apt-get update", hint=hint
    )
    log.run(
        [apt, "install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=120", *packages],
        env=env,
        what="apt-get install debootstrap",
        hint=hint,
    )
    return shutil.which("debootstrap") or "/usr/sbin/debootstrap"


def _check_free_space(directory: Path) -> None:
    free = shutil.disk_usage(directory).free
    if free < MIN_FREE_BYTES:
        raise ProvisionError(
            f"only {free // 2**20} MB free on the disk of {directory}; building the PostgreSQL root "
            f"filesystem needs about {MIN_FREE_BYTES // 2**20} MB",
            hint="free some space, or set MEMVAULT_DATA_DIR to a directory on a larger disk, then run again",
        )


def _remove_partial_builds(root: Path) -> None:
    """Delete what interrupted builds left behind (unmounting anything debootstrap had mounted in them)."""
    for partial in root.parent.glob(f".{root.name}.build-*"):
        for mount_point in _mounts_under(partial):
            subprocess.run(["umount", "-l", mount_point], check=False, capture_output=True)
        if _mounts_under(partial):
            raise ProvisionError(
                f"{partial} (an interrupted build) still has file systems mounted in it",
                hint=f"unmount them (see /proc/mounts), remove {partial}, then run again",
            )
        shutil.rmtree(partial, ignore_errors=True)


def _mounts_under(path: Path) -> list[str]:
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    prefix = str(path.resolve()) + "/"
    points = [line.split()[1].replace("\\040", " ") for line in lines if len(line.split()) > 1]
    return sorted((p for p in points if p.startswith(prefix)), reverse=True)
