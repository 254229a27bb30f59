# SPDX-License-Identifier: MIT
"""Board twins: a real OpenSSH sshd in a private mount + PID namespace presenting a board's files.

``start_twin(spec, workdir)`` builds the twin's tree from a :class:`TwinSpec`, runs
``twin-init.sh`` under ``unshare --mount --propagation private --pid --fork`` (root only) and
waits until sshd answers on 127.0.0.1:<free port>. Inside, the board's root is an overlay of the
spec's files over the host root with a tmpfs upper layer (so nothing a session writes reaches
the host), ``/sys``, ``/dev``, ``/run`` and ``/tmp`` are fresh tmpfs filled from the spec, and
spec files under ``/proc`` are bind-mounted over existing procfs entries.

The twin has its own UTS namespace with the spec's name as hostname. ``uname -r`` (the syscall)
still reports the host's kernel: a twin's kernel release is the procfs fact
``/proc/sys/kernel/osrelease``, which is what the tools read.

``/proc/device-tree`` cannot be created in procfs on a host without a device tree: present the
tree under ``/sys/firmware/devicetree/base`` (what ``/proc/device-tree`` links to on a board).

The board's ``python3`` is the interpreter running the harness (its directory comes first on the
twin's PATH), so the on-target tools find the same numpy and TFLite bindings; when that
interpreter lives under a directory the twin replaces with a tmpfs (a venv in /tmp), the
directory is bind-mounted into the twin read-only.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from npu_accept.paths import sim_dir

INIT_SCRIPT = sim_dir() / "twin-init.sh"

# Top-level directories that are fresh tmpfs in a twin (everything else is the overlay root).
_TMPFS_DIRS = ("sys", "dev", "run", "tmp")


class TwinError(Exception):
    """A twin could not be built or started; the message says why and what to do."""


@dataclass(frozen=True)
class TwinFile:
    """A file the twin presents: content and permission bits."""

    content: bytes | str
    mode: int = 0o644

    def data(self) -> bytes:
        return self.content.encode() if isinstance(self.content, str) else self.content


@dataclass(frozen=True)
class DeviceNode:
    """A character device node in the twin's /dev."""

    major: int
    minor: int
    mode: int = 0o660


@dataclass(frozen=True)
class TwinProcess:
    """A background process started inside the twin before sshd.

    ``command`` is a simple command line that /bin/sh execs (so the daemon itself is the process
    a test kills), or a whole script if it starts with ``#!``. With ``restart`` a tiny supervisor
    restarts it 0.2 s after it dies. Output goes to /run/twin/log/<name>.log on the twin.
    """

    name: str
    command: str
    restart: bool = False


@dataclass
class TwinSpec:
    """What a board presents. Paths are absolute board paths."""

    name: str = "twin"
    files: Mapping[str, bytes | str | TwinFile] = field(default_factory=dict)
    symlinks: Mapping[str, str] = field(default_factory=dict)
    devices: Mapping[str, DeviceNode | tuple[int, int]] = field(default_factory=dict)
    kernel_release: str | None = None
    proc_modules: str | None = None
    executables: Mapping[str, bytes | str] = field(default_factory=dict)
    kernel_log: str | None = None
    processes: Sequence[TwinProcess] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    # sshd's "Subsystem sftp" command; a hostile twin sets one that never answers
    sftp_subsystem: str = "internal-sftp"


@dataclass
class Twin:
    """A running twin. ``target`` is what the suite's --target takes."""

    spec: TwinSpec
    host: str
    port: int
    user: str
    identity: Path
    known_hosts: Path
    host_public_key: str
    directory: Path
    _process: subprocess.Popen[bytes]

    @property
    def target(self) -> str:
        return f"{self.user}@{self.host}:{self.port}"

    @property
    def known_hosts_line(self) -> str:
        return f"[{self.host}]:{self.port} {self.host_public_key}"

    @property
    def sshd_log(self) -> str:
        path = self.directory / "run" / "sshd.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def board_path(self, path: str) -> Path:
        """The host path through which the twin's view of board ``path`` can be read."""
        init = self._init_pid()
        board_root = Path(f"/proc/{init}/root") / str(self.directory / "mnt" / "root").lstrip("/")
        return board_root / path.lstrip("/")

    def pids(self) -> dict[int, str]:
        """Host PIDs and command names of every process inside the twin."""
        init = self._init_pid()
        return {pid: _comm(pid) for pid in _descendants(init)}

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by every process that ever ran inside the twin (reaped children
        included): the board's own CPU, for benchmarks and for what a run costs the board."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # utime stime cutime cstime: fields 14-17 of stat, here 11-14 after the command name
            total += sum(int(x) for x in fields[11:15]) / tick
        return total

    def _init_pid(self) -> int:
        children = [p for p, ppid in _ppids().items() if ppid == self._process.pid]
        if not children:
            raise TwinError(f"Twin {self.spec.name} is not running (its init process is gone).")
        return children[0]

    def kill_sshd(self) -> None:
        """Kill sshd and every session in the twin, as a board going down would."""
        for pid, comm in self.pids().items():
            if comm.startswith("sshd"):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while _port_open(self.host, self.port) and time.monotonic() < deadline:
            time.sleep(0.05)
        (self.directory / "run" / "sshd.pid").unlink(missing_ok=True)

    def start_sshd(self, deadline_s: float = 10.0) -> None:
        """Bring sshd back on the same port (after kill_sshd)."""
        (self.directory / "run" / "restart").touch()
        _wait_for_sshd(self, deadline_s)

    def stop(self) -> None:
        """Kill everything in the namespace and remove the twin's directory."""
        stop_twins([self])

    def _kill(self) -> int | None:
        """SIGKILL the twin's namespace; its init's PID (None if it was gone already)."""
        init = None
        with contextlib.suppress(TwinError):
            init = self._init_pid()
        if self._process.poll() is None:
            # unshare --fork ignores SIGTERM while it waits; SIGKILL it, and --kill-child makes the
            # kernel SIGKILL the namespace's init, which takes every process of the twin with it.
            self._process.kill()
            self._process.wait(timeout=10)
        return init

    def _reap(self, init: int | None, deadline: float) -> None:
        """Wait (until DEADLINE) for the namespace to be gone and the port closed; remove the directory."""
        while time.monotonic() < deadline and (
            (init is not None and Path(f"/proc/{init}").exists()) or _port_open(self.host, self.port)
        ):
            time.sleep(0.02)
        shutil.rmtree(self.directory, ignore_errors=True)


def stop_twins(twins: Sequence[Twin]) -> None:
    """Stop every twin: all namespaces are killed first, then each is waited for. The kernel takes
    a second or two to tear a killed namespace down; killing them one after the other cost that
    once per twin (about three minutes for the test session's twins)."""
    inits = [twin._kill() for twin in twins]
    deadline = time.monotonic() + 10
    for twin, init in zip(twins, inits, strict=True):
        twin._reap(init, deadline)


@contextlib.contextmanager
def started_twins(specs: Iterable[TwinSpec], workdir: Path) -> Iterator[list[Twin]]:
    """A twin for each spec, started in order; every twin started is stopped when the block ends,
    also when a later one cannot start (its TwinError goes on to the caller) or the block raises."""
    twins: list[Twin] = []
    try:
        for spec in specs:
            twins.append(start_twin(spec, workdir))
        yield twins
    finally:
        stop_twins(twins)


def fleet_access(twins: Sequence[Twin], directory: Path) -> tuple[Path, Path]:
    """One identity and one known_hosts file for a fleet of twins (the first twin's client key is
    authorized on every twin, through the harness's /run/twin/authorized_keys)."""
    directory.mkdir(parents=True, exist_ok=True)
    identity = twins[0].identity
    public = identity.with_suffix(".pub").read_text()
    for twin in twins[1:]:
        with (twin.directory / "run" / "authorized_keys").open("a") as keys:
            keys.write(public)
    known_hosts = directory / "known_hosts"
    known_hosts.write_text("".join(t.known_hosts.read_text() for t in twins))
    return identity, known_hosts


def start_twin(spec: TwinSpec, workdir: Path, deadline_s: float = 15.0) -> Twin:
    """Build and start a twin under ``workdir``; raise TwinError with one clear sentence."""
    if os.geteuid() != 0:
        raise TwinError("Board twins need root (mount namespaces, mknod); run the tests as root, as CI does.")
    for tool in ("unshare", "ssh-keygen"):
        if shutil.which(tool) is None:
            raise TwinError(f"{tool} is missing; install it (apt-get install util-linux openssh-client).")
    if not Path("/usr/sbin/sshd").exists():
        raise TwinError("/usr/sbin/sshd is missing; install openssh-server (apt-get install openssh-server).")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    for _attempt in range(3):
        try:
            return _start(spec, workdir, deadline_s)
        except _PortTaken:
            continue  # another process took the free port between probe and bind; pick another
    raise TwinError(f"Twin {spec.name}: three free ports were taken before sshd could bind them; retry.")


class _PortTaken(Exception):
    pass


def _start(spec: TwinSpec, workdir: Path, deadline_s: float) -> Twin:
    directory = Path(tempfile.mkdtemp(prefix=f"twin-{_safe(spec.name)}-", dir=workdir))
    try:
        _build_tree(spec, directory)
        host_pub = _keys(directory)
        port = _free_port()
        _write_sshd_config(spec, directory, port)
        known_hosts = directory / "client" / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {host_pub}\n")
        with (directory / "run" / "init.log").open("wb") as log:
            process = subprocess.Popen(
                [
                    "unshare",
                    "--mount",
                    "--propagation",
                    "private",
                    "--pid",
                    "--uts",
                    "--fork",
                    "--kill-child=SIGKILL",
                    "/bin/bash",
                    str(INIT_SCRIPT),
                    str(directory),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    twin = Twin(
        spec=spec,
        host="127.0.0.1",
        port=port,
        user="root",
        identity=directory / "client" / "id_ed25519",
        known_hosts=known_hosts,
        host_public_key=host_pub,
        directory=directory,
        _process=process,
    )
    try:
        _wait_for_sshd(twin, deadline_s)
    except BaseException:
        twin.stop()
        raise
    return twin


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40] or "twin"


def _board_rel(path: str, what: str) -> PurePosixPath:
    p = PurePosixPath(path)
    if not p.is_absolute() or ".." in p.parts or len(p.parts) < 2:
        raise TwinError(f"TwinSpec {what} path {path!r} must be an absolute file path without '..'.")
    if p.parts[1] == "run" and len(p.parts) > 2 and p.parts[2] == "twin":
        raise TwinError(f"TwinSpec {what} path {path!r} is under /run/twin, which the harness owns.")
    return p.relative_to("/")


def _dest(spec_dir: Path, rel: PurePosixPath) -> Path:
    top = rel.parts[0]
    if top == "proc":
        raise AssertionError("procfs paths are handled by the caller")
    if top in _TMPFS_DIRS:
        return spec_dir / rel
    return spec_dir / "fs" / _through_host_symlinks(rel)


def _through_host_symlinks(rel: PurePosixPath) -> PurePosixPath:
    # The twin's files lie over the host's root: a directory that is a symlink on the host
    # (/lib -> usr/lib on merged-/usr systems) must not be shadowed by a real directory.
    parts = rel.parts
    for i in range(len(parts) - 1, 0, -1):
        prefix = Path("/", *parts[:i])
        if prefix.exists():
            resolved = PurePosixPath(os.path.realpath(prefix)).relative_to("/")
            return resolved.joinpath(*parts[i:])
    return rel


def _write(dest: Path, data: bytes, mode: int) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    dest.chmod(mode)


def _build_tree(spec: TwinSpec, directory: Path) -> None:
    spec_dir = directory / "spec"
    for sub in ("fs", "proc", *_TMPFS_DIRS):
        (spec_dir / sub).mkdir(parents=True)
    for sub in ("client", "run/log", "run/processes", "mnt"):
        (directory / sub).mkdir(parents=True)
    proc_files: dict[str, bytes] = {}
    files: dict[str, TwinFile] = {}
    for path, content in spec.files.items():
        files[path] = content if isinstance(content, TwinFile) else TwinFile(content)
    for path, content in spec.executables.items():
        files[path] = TwinFile(content, 0o755)
    if spec.kernel_log is not None:
        files["/usr/share/twin/kernel.log"] = TwinFile(spec.kernel_log)
        files["/usr/bin/dmesg"] = TwinFile("#!/bin/sh\nexec cat /usr/share/twin/kernel.log\n", 0o755)
    for path, f in files.items():
        rel = _board_rel(path, "file")
        if rel.parts[0] == "proc":
            proc_files[str(rel.relative_to("proc"))] = f.data()
        else:
            _write(_dest(spec_dir, rel), f.data(), f.mode)
    if spec.kernel_release is not None:
        proc_files["sys/kernel/osrelease"] = (spec.kernel_release.rstrip("\n") + "\n").encode()
    if spec.proc_modules is not None:
        proc_files["modules"] = spec.proc_modules.encode()
    for rel_text, data in proc_files.items():
        if not (Path("/proc") / rel_text).is_file():
            hint = {
                "modules": "present the module as /sys/module/<name>/initstate containing 'live', "
                "which a board has too",
            }.get(rel_text, "present the fact elsewhere (device tree: /sys/firmware/devicetree/base)")
            raise TwinError(
                f"TwinSpec file /proc/{rel_text} does not exist in this host kernel's procfs and "
                f"procfs cannot gain files; {hint}."
            )
        _write(spec_dir / "proc" / rel_text, data, 0o444)
    (spec_dir / "hostname").write_text(_safe(spec.name) + "\n")
    (spec_dir / "proc.list").write_text("".join(f"{r}\n" for r in proc_files))
    for path, target in spec.symlinks.items():
        rel = _board_rel(path, "symlink")
        if rel.parts[0] == "proc":
            raise TwinError(f"TwinSpec symlink {path!r} is in procfs, which cannot gain entries.")
        dest = _dest(spec_dir, rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(target)
    lines = []
    for path, node in spec.devices.items():
        rel = _board_rel(path, "device")
        if rel.parts[0] != "dev":
            raise TwinError(f"TwinSpec device {path!r} must be under /dev.")
        dev = node if isinstance(node, DeviceNode) else DeviceNode(*node)
        lines.append(f"{path} {dev.major} {dev.minor} {dev.mode:o}\n")
    (spec_dir / "devices.list").write_text("".join(lines))
    env_lines = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in _environment(spec).items())
    plines = []
    for proc in spec.processes:
        name = _safe(proc.name)
        body = proc.command
        if not body.startswith("#!"):
            body = f"#!/bin/sh\n{env_lines}exec {proc.command}\n"
        _write(directory / "run" / "processes" / name, body.encode(), 0o755)
        plines.append(f"{name} {int(proc.restart)}\n")
    (spec_dir / "processes.list").write_text("".join(plines))
    (spec_dir / "keep.list").write_text("".join(f"{p}\n" for p in host_dirs_to_keep()))


def host_dirs_to_keep() -> list[Path]:
    """Directories of this Python installation that lie under a directory the twin replaces with a
    fresh tmpfs (/tmp, /run, ...): the twin bind-mounts them back so its python3 still runs."""
    keep: list[Path] = []
    for prefix in {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}:
        if len(prefix.parts) > 2 and prefix.parts[1] in _TMPFS_DIRS:
            keep.append(prefix)
    return sorted(keep)


def _environment(spec: TwinSpec) -> dict[str, str]:
    # The board's python3 is the one running the tests: it has numpy and the TFLite bindings.
    path = f"{Path(sys.executable).parent}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return {"PATH": path, **spec.env}


def _keys(directory: Path) -> str:
    run = directory / "run"
    client = directory / "client"
    for key in (run / "ssh_host_ed25519_key", client / "id_ed25519"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "npu-twin", "-f", str(key)],
            check=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
        )
    shutil.copy(client / "id_ed25519.pub", run / "authorized_keys")
    return " ".join((run / "ssh_host_ed25519_key.pub").read_text().split()[:2])


def _write_sshd_config(spec: TwinSpec, directory: Path, port: int) -> None:
    env = " ".join(f'"{k}={v}"' for k, v in _environment(spec).items())
    (directory / "run" / "sshd_config").write_text(
        "\n".join(
            [
                "ListenAddress 127.0.0.1",
                f"Port {port}",
                "HostKey /run/twin/ssh_host_ed25519_key",
                "AuthorizedKeysFile /run/twin/authorized_keys",
                "PidFile /run/twin/sshd.pid",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                "PermitRootLogin prohibit-password",
                "UsePAM no",
                "StrictModes no",
                "UseDNS no",
                "PrintMotd no",
                "LogLevel ERROR",
                "MaxSessions 100",
                "MaxStartups 100:30:200",
                f"SetEnv {env}",
                f"Subsystem sftp {spec.sftp_subsystem}",
                "",
            ]
        )
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5) as s:
        s.settimeout(2)
        return s.recv(8).startswith(b"SSH-")
    return False


def _wait_for_sshd(twin: Twin, deadline_s: float) -> None:
    # Ours is up when its pid file exists (sshd writes it after binding) and the port talks SSH;
    # the banner alone could come from another twin that took the port.
    pidfile = twin.directory / "run" / "sshd.pid"
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if twin._process.poll() is not None:
            break
        if "Address already in use" in twin.sshd_log:
            raise _PortTaken
        if pidfile.exists() and _port_open(twin.host, twin.port):
            return
        time.sleep(0.05)
    init_log = (twin.directory / "run" / "init.log").read_text(errors="replace")
    detail = (twin.sshd_log + init_log).strip().replace("\n", " | ")[-800:]
    raise TwinError(
        f"Twin {twin.spec.name}'s sshd did not answer on {twin.host}:{twin.port} within {deadline_s:g} s "
        f"(output: {detail or 'none'}); fix the twin spec or the host's sshd."
    )


def _ppids() -> dict[int, int]:
    result: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text()
            result[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    return result


def _descendants(root: int) -> list[int]:
    ppids = _ppids()
    found = [root]
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in ppids.items() if pp == parent]
        found.extend(kids)
        frontier.extend(kids)
    return found


def _comm(pid: int) -> str:
    with contextlib.suppress(OSError):
        return (Path(f"/proc/{pid}/comm")).read_text().strip()
    return ""
