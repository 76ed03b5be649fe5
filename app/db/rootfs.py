"""A cached Debian trixie root filesystem with PostgreSQL 17, pgvector and AGE (DESIGN.md section 2).

Two ways to build it, each into a temporary directory beside the target, renamed into place when complete (an
interrupted build never leaves a half root filesystem that a later run would take as cached); a marker file inside
records what was installed and how:

- as root: ``debootstrap --variant=minbase``, then ``apt-get install`` of ``postgres-packages.txt`` inside it
  through ``chroot`` (the server then runs through ``chroot`` as the tree's ``postgres`` user);
- without root ("unpacked"): the host's ``apt-get`` resolves and downloads the same packages and their
  dependencies as an ordinary user (a private apt directory, an empty package database, the archive signatures
  checked against the host's Debian keyring), and ``dpkg-deb -x`` unpacks each into the tree. No maintainer script
  runs: the tree gets the two users it needs written by hand. The server then runs in a user namespace
  (``unshare``) that maps the user to the tree's ``postgres`` user and chroots into the tree: no sudo, no daemon.
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
UNPACKED_EXTRA = ("dash",)  # pg_ctl and initdb start the server through /bin/sh; debootstrap would bring it
UNPACKED_UID = 999  # the tree's postgres user, which the user namespace maps the invoking user to
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


def ensure_rootfs(
    root: Path, *, mirror: str, log: CommandLog, progress: Progress = quiet, unpacked: bool = False
) -> str:
    """Make sure ``root`` holds trixie with the server packages; return what was done, for progress.
    ``unpacked``: build it without root (see the module's docstring)."""
    packages = postgres_packages()
    with file_lock(root.parent / f".{root.name}.lock", progress):
        marker = read_marker(root)
        if marker is not None:
            if unpacked and marker.get("how") != "unpacked":
                raise ProvisionError(
                    f"{root} was built as root (debootstrap) and cannot run a server without root",
                    hint="unset MEMVAULT_ROOTFS_DIR (memvault then unpacks a tree of your own in the data "
                    "directory), or run as root",
                )
            if unpacked:
                _unpacked_fixups(root)
            missing = [p for p in packages if p not in marker.get("packages", [])]
            if not missing:
                return f"cached ({root})"
            # the shared list grew since the build: add to the cached tree
            versions = _unpack(root, missing, mirror, log) if unpacked else {}
            if not unpacked:
                _install(root, missing, log)
            _write_marker(root, sorted({*marker.get("packages", []), *missing}), mirror,
                          how=marker.get("how", "debootstrap"), versions={**marker.get("versions", {}), **versions})
            return f"cached ({root}), added {', '.join(missing)}"
        if root.exists():
            raise ProvisionError(
                f"{root} exists but is not a root filesystem built by memvault (no {MARKER} in it)",
                hint=f"remove it (rm -rf {root}) or set MEMVAULT_DATA_DIR to another directory, then run "
                "again",
            )
        _remove_partial_builds(root)
        _check_free_space(root.parent)
        debootstrap = None if unpacked else _debootstrap(log, progress)
        tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.build-", dir=root.parent))
        tmp.chmod(0o755)  # mkdtemp makes 0700; inside the chroot this is "/" and postgres must traverse it
        try:
            if debootstrap is None:
                progress(f"apt-get download (as {_user()}) and dpkg-deb -x of {' '.join(packages)} ...")
                versions = _unpack(tmp, list(packages), mirror, log)
                _write_marker(tmp, list(packages), mirror, how="unpacked", versions=versions)
            else:
                _build(tmp, debootstrap=debootstrap, mirror=mirror, packages=packages, log=log,
                       progress=progress)
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


def _unpack(root: Path, packages: list[str], mirror: str, log: CommandLog) -> dict[str, str]:
    """Without root: download ``packages`` and everything they depend on with the host's apt-get into a private
    apt directory beside the tree, and unpack each into ``root``. Returns {package: version} of what was
    unpacked. The downloaded archives are deleted afterwards; the package lists are kept for the next run."""
    problems = unpacked_problems()
    if problems:
        raise ProvisionError("the server cannot be set up without root here: " + "; ".join(problems),
                             hint=_UNPACKED_HINT)
    apt = root.parent / ".apt"
    for sub in ("etc/apt/apt.conf.d", "etc/apt/preferences.d", "etc/apt/sources.list.d",
                "var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/lib/dpkg"):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "var/lib/dpkg/status").write_text("")  # nothing installed: apt resolves the whole closure
    (apt / "etc/apt/sources.list").write_text(f"deb [signed-by={KEYRING}] {mirror} {SUITE} main\n")
    for old in (apt / "var/cache/apt/archives").glob("*.deb"):
        old.unlink()
    opts = [
        "-o", f"Dir={apt}", "-o", f"Dir::State::status={apt}/var/lib/dpkg/status", "-o", "Debug::NoLocking=1",
        "-o", "Dir::Etc::trusted=/etc/apt/trusted.gpg", "-o", "Dir::Etc::trustedparts=/etc/apt/trusted.gpg.d",
        *_APT_OPTS[:4],
    ]
    hint = f"check network access to {mirror} (MEMVAULT_DEBIAN_MIRROR selects another mirror), then run again"
    apt_get = shutil.which("apt-get") or "apt-get"
    log.run([apt_get, *opts, "-qq", "update"], what="apt-get update (trixie package lists)", hint=hint)
    log.run([apt_get, *opts, "-y", "-qq", "--no-install-recommends", "install", "--download-only",
             *packages, *UNPACKED_EXTRA], what=f"apt-get download {' '.join(packages)}", hint=hint)
    for sub in ("bin", "lib", "lib64", "sbin"):  # trixie is merged-/usr: what debootstrap would have made
        (root / "usr" / sub).mkdir(parents=True, exist_ok=True)
        if not (root / sub).exists():
            (root / sub).symlink_to(f"usr/{sub}")
    versions = {}
    debs = sorted((apt / "var/cache/apt/archives").glob("*.deb"))
    for deb in debs:
        log.run(["dpkg-deb", "-x", deb, root], what=f"dpkg-deb -x {deb.name}", hint="see the log")
        name, version = deb.name.split("_")[:2]
        versions[name] = version.replace("%3a", ":")
        deb.unlink()
    _unpacked_fixups(root)
    log.note(f"unpacked {len(debs)} packages into {root}")
    return versions


def _unpacked_fixups(root: Path) -> None:
    """What the packages' maintainer scripts would have made in an unpacked tree, which none ran; idempotent, so a
    tree unpacked by an older memvault gets what it lacks too."""
    for sub in ("etc", "tmp", "dev", "var/lib/postgresql", "srv"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "tmp").chmod(0o1777)
    # what tzdata's maintainer script would have made: zoneinfo/localtime points at /etc/localtime, and the server
    # reads every zone file to list pg_timezone_names (a dangling link there fails any time zone lookup)
    localtime = root / "etc/localtime"
    if not localtime.is_symlink() and not localtime.exists():
        localtime.symlink_to("/usr/share/zoneinfo/Etc/UTC")
    (root / "etc/timezone").write_text("Etc/UTC\n")
    passwd, group = root / "etc/passwd", root / "etc/group"
    passwd.write_text(f"root:x:0:0:root:/root:/bin/sh\n"
                      f"postgres:x:{UNPACKED_UID}:{UNPACKED_UID}:PostgreSQL:/var/lib/postgresql:/bin/sh\n")
    group.write_text(f"root:x:0:\npostgres:x:{UNPACKED_UID}:\n")


_UNPACKED_HINT = (
    "set MEMVAULT_DATABASE_URL to a PostgreSQL 17 server with pgvector >= 0.8 and AGE 1.5 (`memvault db up` then "
    "creates the database), use the image in docker/, or run `memvault db up` once as root"
)


def unpacked_problems() -> list[str]:
    """What this machine lacks to build and run the server without root (empty: nothing). Cheap: checked before
    any download."""
    problems = []
    for program, package in (("apt-get", "apt"), ("dpkg-deb", "dpkg"), ("unshare", "util-linux")):
        if shutil.which(program) is None:
            problems.append(f"{program} is not installed (Debian/Ubuntu package {package})")
    if not KEYRING.exists():
        problems.append(f"{KEYRING} is missing (package debian-archive-keyring)")
    if shutil.which("unshare") is not None:
        probe = subprocess.run(  # the same two namespaces the server runs in, around / (its /dev onto itself)
            ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _USERNS_SCRIPT, "/", "true"],
            capture_output=True, text=True, check=False)
        if probe.returncode != 0:
            problems.append(
                "this kernel does not let an ordinary user create a user namespace and chroot in it "
                f"(unshare said: {probe.stderr.strip() or probe.returncode}; an administrator can allow it, e.g. "
                "sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ "
                "kernel.apparmor_restrict_unprivileged_userns=0)")
    return problems


# Two nested user namespaces: the outer maps the user to root there, only to bind the host's /dev into the tree
# (the server writes to /dev/null, and its shared memory lives in /dev/shm); the inner maps the user to the tree's
# postgres user (the server refuses to run as root) and chroots into the tree. Neither needs any privilege.
_USERNS_SCRIPT = (
    'mount --rbind /dev "$0/dev" && exec unshare --user --map-user={uid} --map-group={uid} --mount --root="$0" '
    '--wd=/ "$@"'
).format(uid=UNPACKED_UID)


def userns_prefix(root: Path) -> list[str]:
    """argv prefix that runs a program of the unpacked tree ``root`` as its postgres user, without root."""
    (root / "dev").mkdir(exist_ok=True)
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _USERNS_SCRIPT, str(root)]


def _user() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def _write_marker(root: Path, packages: list[str], mirror: str, *, how: str = "debootstrap",
                  versions: dict[str, str] | None = None) -> None:
    data = {
        "suite": SUITE,
        "mirror": mirror,
        "packages": packages,
        "how": how,
        "versions": versions or {},
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
