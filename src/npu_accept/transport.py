# SPDX-License-Identifier: MIT
"""SSH transport to a board: one paramiko connection per board, reused for the whole session.

Public API (everything else is private)::

    target = parse_target("root@192.168.1.20:22")          # -> Target, or BadTarget
    conn = Connection.open(target, identity=Path("id_ed25519"), known_hosts=None,
                           accept_new_host_key=False, connect_timeout=10.0)
    result = conn.run("uname -r", timeout=30)             # -> Result(exit_code, stdout, stderr, duration)
    conn.put(Path("model.tflite"), "/tmp/x/model.tflite")  # SFTP; directories are copied recursively
    conn.get("/tmp/x/out0.npy", Path("out0.npy"))
    tmp = conn.make_temp_dir()                             # mktemp -d on the board, removed at close()
    conn.reconnect(wait_s=120)                             # after a reboot dropped the connection
    conn.close()

Host keys are verified against ``known_hosts`` (default ``~/.ssh/known_hosts``); an unknown key is
refused unless ``accept_new_host_key`` is set, which records the key in that file. A key that
differs from the recorded one is always refused.

Every failure a user can hit raises a :class:`TransportError` subclass whose message is one sentence
naming the thing and the fix. A connection may be used from one thread at a time per board; the
SFTP session and the temp-dir bookkeeping are guarded by a lock so a fleet runs one thread per board.
"""

from __future__ import annotations

import contextlib
import re
import select
import shlex
import signal
import socket
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from paramiko.common import MSG_CHANNEL_REQUEST

__all__ = [
    "AuthenticationRefused",
    "BadTarget",
    "BoardDidNotReturn",
    "CommandTimeout",
    "Connection",
    "ConnectionLost",
    "ConnectTimeout",
    "HostKeyChanged",
    "HostUnreachable",
    "IdentityError",
    "Result",
    "Target",
    "TransferError",
    "TransportError",
    "UnknownHostKey",
    "parse_target",
]

_DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
_READ_CHUNK = 1 << 16


class TransportError(Exception):
    """Base class: the message is one sentence naming the problem and the fix."""


class BadTarget(TransportError):
    """The target string is not USER@HOST[:PORT]."""


class IdentityError(TransportError):
    """The private key file is missing, unreadable or not a key paramiko can use."""


class HostUnreachable(TransportError):
    """Nothing answers as an SSH server at HOST:PORT."""


class ConnectTimeout(TransportError):
    """The board did not complete the connection or the SSH handshake in time."""


class AuthenticationRefused(TransportError):
    """The board refused our key."""


class UnknownHostKey(TransportError):
    """The board's host key is not in known_hosts and accepting new keys was not asked for."""


class HostKeyChanged(TransportError):
    """The board's host key differs from the one recorded in known_hosts."""


class CommandTimeout(TransportError):
    """A command did not finish within its timeout; it was killed."""

    def __init__(self, message: str, stdout: bytes = b"", stderr: bytes = b"") -> None:
        super().__init__(message)
        self.stdout = stdout
        self.stderr = stderr


class ConnectionLost(TransportError):
    """The connection dropped (reboot, crash, cable)."""


class BoardDidNotReturn(TransportError):
    """reconnect() gave up at its deadline."""


class TransferError(TransportError):
    """An SFTP upload or download failed."""


@dataclass(frozen=True)
class Target:
    """Where a board is reached: ``user@host:port``."""

    user: str
    host: str
    port: int = 22

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.user}@{host}:{self.port}"

    @property
    def known_hosts_name(self) -> str:
        """The host name as OpenSSH writes it in known_hosts."""
        return self.host if self.port == 22 else f"[{self.host}]:{self.port}"


@dataclass(frozen=True)
class Result:
    """What a command did: exit code (128+N when killed by signal N, as a shell reports it)."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    duration: float
    signal: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def text(self) -> str:
        """stdout decoded as UTF-8 (invalid bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")


_USER_RE = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._-]*\$?")
_HOST_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Every command first writes its shell's PID (= its session and process group, sshd runs it under
# setsid) to stderr between RS bytes; run() strips it. On timeout the group is killed with it:
# OpenSSH refuses the SSH "signal" request for root logins, which boards mostly use.
_PID_PREFIX = "printf '\\036npu-accept-pid %s\\036' \"$$\" >&2; "
_PID_MARK = re.compile(rb"\x1enpu-accept-pid (\d+)\x1e")


def parse_target(text: str) -> Target:
    """Parse ``USER@HOST[:PORT]`` (IPv6 as ``USER@[ADDR]:PORT``); raise BadTarget otherwise."""
    fix = "write it as USER@HOST or USER@HOST:PORT, for example root@192.168.1.20:22"
    if not isinstance(text, str) or "@" not in text:
        raise BadTarget(f"Target {text!r} has no user; {fix}.")
    user, _, rest = text.rpartition("@")
    if not _USER_RE.fullmatch(user):
        raise BadTarget(f"Target {text!r} has an invalid user name {user!r}; {fix}.")
    port_text: str | None = None
    if rest.startswith("["):
        host, sep, tail = rest[1:].partition("]")
        if not sep or ":" not in host or (tail and not tail.startswith(":")):
            raise BadTarget(f"Target {text!r} has a malformed IPv6 address; {fix}.")
        port_text = tail[1:] if tail else None
        try:
            socket.inet_pton(socket.AF_INET6, host)
        except OSError:
            raise BadTarget(f"Target {text!r} has an invalid IPv6 address {host!r}; {fix}.") from None
    else:
        host, sep, port_part = rest.partition(":")
        if sep:
            port_text = port_part
        if not host or not _HOST_RE.fullmatch(host):
            raise BadTarget(f"Target {text!r} has an invalid host {host!r}; {fix}.")
    port = 22
    if port_text is not None:
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise BadTarget(f"Target {text!r} has an invalid port {port_text!r} (1-65535); {fix}.")
        port = int(port_text)
    return Target(user=user, host=host, port=port)


def _handle_channel_request(chan: paramiko.Channel, m: paramiko.Message) -> None:
    # paramiko ignores "exit-signal" (RFC 4254 6.10), so a command killed by a signal would look
    # like exit status -1; record the signal name, then let paramiko handle everything else.
    start = m.packet.tell()
    if m.get_text() == "exit-signal":
        m.get_boolean()
        chan.npu_exit_signal = m.get_text()  # type: ignore[attr-defined]
        chan.status_event.set()
        return
    m.packet.seek(start)
    paramiko.Channel._handle_request(chan, m)


class _Transport(paramiko.Transport):
    _channel_handler_table = {
        **paramiko.Transport._channel_handler_table,
        MSG_CHANNEL_REQUEST: _handle_channel_request,
    }


def _exit_code_of_signal(name: str) -> int:
    try:
        return 128 + int(signal.Signals[f"SIG{name}"])
    except KeyError:
        return 255


class _HostKeyPolicy(paramiko.MissingHostKeyPolicy):
    """Refuse unknown keys, or (explicit opt-in) accept and append them to known_hosts."""

    def __init__(self, target: Target, known_hosts: Path, accept_new: bool) -> None:
        self._target = target
        self._known_hosts = known_hosts
        self._accept_new = accept_new

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        if not self._accept_new:
            t = self._target
            raise UnknownHostKey(
                f"The host key of {t.known_hosts_name} ({key.get_name()} {key.fingerprint}) is not in "
                f"{self._known_hosts}; after checking the fingerprint add it with "
                f"`ssh-keyscan -p {t.port} {t.host} >> {self._known_hosts}`, "
                "or pass --accept-new-host-key to trust it on first use."
            )
        line = f"{hostname} {key.get_name()} {key.get_base64()}\n"
        try:
            self._known_hosts.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with self._known_hosts.open("a", encoding="ascii") as f:
                f.write(line)
        except OSError as e:
            raise UnknownHostKey(
                f"Cannot record the host key of {self._target.known_hosts_name} in {self._known_hosts} "
                f"({e.strerror or e}); make that file writable or pass another one with --known-hosts."
            ) from None
        client.get_host_keys().add(hostname, key.get_name(), key)


def _load_identity(identity: Path) -> paramiko.PKey:
    fix = "pass the private key of the board's authorized key with --identity"
    if not identity.is_file():
        raise IdentityError(f"Identity file {identity} does not exist; {fix}.")
    try:
        return paramiko.PKey.from_path(identity)
    except paramiko.PasswordRequiredException:
        raise IdentityError(
            f"Identity file {identity} is passphrase-protected; load it into ssh-agent and omit "
            "--identity, or use an unencrypted key."
        ) from None
    except (paramiko.SSHException, OSError, ValueError) as e:
        raise IdentityError(f"Identity file {identity} is not a usable private key ({e}); {fix}.") from None


@dataclass
class _Settings:
    target: Target
    identity: Path | None
    known_hosts: Path
    accept_new_host_key: bool
    connect_timeout: float


@dataclass
class Connection:
    """An open SSH connection to one board; create it with :meth:`Connection.open`."""

    target: Target
    _settings: _Settings
    _client: paramiko.SSHClient
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _sftp: paramiko.SFTPClient | None = None
    _temp_dirs: list[str] = field(default_factory=list)

    @classmethod
    def open(
        cls,
        target: Target | str,
        identity: Path | None = None,
        known_hosts: Path | None = None,
        accept_new_host_key: bool = False,
        connect_timeout: float = 10.0,
    ) -> Connection:
        """Connect and authenticate; raise a TransportError subclass with one clear sentence."""
        if isinstance(target, str):
            target = parse_target(target)
        settings = _Settings(
            target=target,
            identity=Path(identity).expanduser() if identity is not None else None,
            known_hosts=Path(known_hosts or _DEFAULT_KNOWN_HOSTS).expanduser(),
            accept_new_host_key=accept_new_host_key,
            connect_timeout=connect_timeout,
        )
        return cls(target=target, _settings=settings, _client=_connect(settings))

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        transport = self._client.get_transport()
        return transport is not None and transport.is_active()

    def run(
        self,
        cmd: str,
        timeout: float,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> Result:
        """Run ``cmd`` through the board's login shell; stdout and stderr are drained concurrently.

        On timeout the command's process group is sent SIGKILL, the channel is closed and
        CommandTimeout is raised (with the output read so far).
        """
        shown = cmd
        if not timeout > 0:
            raise ValueError(f"The timeout of {cmd!r} must be a positive number of seconds, not {timeout!r}.")
        if env:
            bad = [k for k in env if not _ENV_NAME_RE.fullmatch(k)]
            if bad:
                raise ValueError(f"Environment name {bad[0]!r} is not a valid shell variable name.")
            cmd = "".join(f"export {k}={shlex.quote(v)}; " for k, v in env.items()) + cmd
        start = time.monotonic()
        deadline = start + timeout
        try:
            chan = self._transport().open_session(timeout=max(timeout, 1.0))
            chan.exec_command(_PID_PREFIX + cmd)
        except (paramiko.SSHException, OSError, EOFError) as e:
            raise self._lost(shown, e) from None
        try:
            out, err, finished = self._pump(chan, input, deadline)
            if not finished:
                self._kill_group(err)
                raise CommandTimeout(
                    f"Command {shown!r} did not finish within {timeout:g} s on {self.target} and was "
                    "killed; raise its timeout if the board is just slow.",
                    out,
                    _PID_MARK.sub(b"", err, count=1),
                )
        finally:
            chan.close()
        exit_signal = getattr(chan, "npu_exit_signal", None)
        if exit_signal is not None:
            code = _exit_code_of_signal(exit_signal)
        elif chan.exit_status_ready() and chan.exit_status >= 0:
            code = chan.exit_status
        else:
            raise self._lost(shown, None)
        return Result(code, out, _PID_MARK.sub(b"", err, count=1), time.monotonic() - start, exit_signal)

    def _kill_group(self, err: bytes) -> None:
        mark = _PID_MARK.search(err)
        if mark is None:
            return
        pgid = int(mark.group(1))
        with contextlib.suppress(TransportError):
            self.run(f"kill -KILL -- -{pgid} 2>/dev/null || kill -KILL -{pgid}", timeout=10)

    @staticmethod
    def _pump(chan: paramiko.Channel, data: bytes | None, deadline: float) -> tuple[bytes, bytes, bool]:
        """Send ``data`` and read both streams until exit; (stdout, stderr, finished in time)."""
        out: list[bytes] = []
        err: list[bytes] = []
        pending = memoryview(data) if data is not None else None
        if pending is not None and not pending:
            chan.shutdown_write()
            pending = None
        elif pending is None:
            chan.shutdown_write()
        fd = chan.fileno()
        while True:
            while chan.recv_ready():
                out.append(chan.recv(_READ_CHUNK))
            while chan.recv_stderr_ready():
                err.append(chan.recv_stderr(_READ_CHUNK))
            if pending is not None and chan.send_ready():
                try:
                    sent = chan.send(pending[:_READ_CHUNK])
                except OSError:
                    sent = len(pending)  # the command closed its stdin; drop the rest
                pending = pending[sent:] if sent < len(pending) else None
                if pending is None:
                    chan.shutdown_write()
            if chan.eof_received and not chan.recv_ready() and not chan.recv_stderr_ready():
                # exit-status follows EOF closely; wait for it (or for the close).
                remaining = deadline - time.monotonic()
                if chan.status_event.wait(max(remaining, 0)) or chan.closed:
                    return b"".join(out), b"".join(err), True
            elif chan.closed and not chan.recv_ready() and not chan.recv_stderr_ready():
                return b"".join(out), b"".join(err), True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return b"".join(out), b"".join(err), False
            # While input is pending, poll: window space for sending does not wake select().
            select.select([fd], [], [], min(remaining, 0.02 if pending is not None else 1.0))

    def _transport(self) -> paramiko.Transport:
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectionLost(
                f"The SSH connection to {self.target} is closed; the board may have rebooted, "
                "call reconnect() or check the board."
            )
        return transport

    def _lost(self, cmd: str, cause: BaseException | None) -> ConnectionLost:
        why = f" ({cause})" if cause else ""
        return ConnectionLost(
            f"The SSH connection to {self.target} dropped while running {cmd!r}{why}; the board may "
            "have rebooted or crashed, call reconnect() or check its console."
        )

    def _sftp_client(self) -> paramiko.SFTPClient:
        if self._sftp is None or self._sftp.get_channel() is None or self._sftp.get_channel().closed:
            try:
                self._sftp = self._client.open_sftp()
            except (paramiko.SSHException, OSError, EOFError) as e:
                raise TransferError(
                    f"Cannot open an SFTP session on {self.target} ({e}); enable the sftp subsystem "
                    "in the board's sshd (Subsystem sftp …)."
                ) from None
        return self._sftp

    def put(self, local: Path, remote: str) -> None:
        """Upload a file (keeping its permission bits) or a directory tree to ``remote``."""
        local = Path(local)
        if not local.exists():
            raise TransferError(f"Local path {local} does not exist; check the path to upload.")
        with self._lock:
            sftp = self._sftp_client()
            try:
                self._put(sftp, local, remote)
            except OSError as e:
                raise TransferError(
                    f"Cannot upload {local} to {self.target}:{remote} ({e.strerror or e}); check that "
                    "the remote directory exists and is writable."
                ) from None

    def _put(self, sftp: paramiko.SFTPClient, local: Path, remote: str) -> None:
        mode = stat.S_IMODE(local.stat().st_mode)
        if local.is_dir():
            with contextlib.suppress(OSError):
                sftp.mkdir(remote, mode)
            for child in sorted(local.iterdir()):
                if child.name == "__pycache__":
                    continue
                self._put(sftp, child, f"{remote.rstrip('/')}/{child.name}")
        else:
            sftp.put(str(local), remote)
            sftp.chmod(remote, mode)

    def get(self, remote: str, local: Path) -> None:
        """Download one file from the board."""
        local = Path(local)
        with self._lock:
            sftp = self._sftp_client()
            try:
                sftp.get(remote, str(local))
            except OSError as e:
                with contextlib.suppress(OSError):
                    if local.exists() and local.stat().st_size == 0:
                        local.unlink()
                raise TransferError(
                    f"Cannot download {self.target}:{remote} to {local} ({e.strerror or e}); check "
                    "that the file exists on the board and the local directory is writable."
                ) from None

    def make_temp_dir(self, prefix: str = "npu-accept") -> str:
        """Create a private directory on the board (mktemp -d); it is removed at close()."""
        if not re.fullmatch(r"[A-Za-z0-9._-]+", prefix):
            raise ValueError(f"Temp dir prefix {prefix!r} may only use letters, digits, '.', '_', '-'.")
        result = self.run(f'mktemp -d "${{TMPDIR:-/tmp}}/{prefix}.XXXXXX"', timeout=30)
        path = result.text().strip()
        if result.exit_code != 0 or not path.startswith("/"):
            raise TransportError(
                f"mktemp -d failed on {self.target} ({result.stderr.decode(errors='replace').strip()}); "
                "check that /tmp on the board exists and is writable."
            )
        with self._lock:
            self._temp_dirs.append(path)
        return path

    def _remove_temp_dirs(self) -> None:
        with self._lock:
            dirs, self._temp_dirs = self._temp_dirs, []
        if dirs and self.connected:
            with contextlib.suppress(TransportError):
                self.run("rm -rf -- " + " ".join(shlex.quote(d) for d in dirs), timeout=60)

    def reconnect(self, wait_s: float = 120.0) -> None:
        """Drop the old connection and retry until the board answers or ``wait_s`` passes.

        Refused keys and changed host keys are not transient: they are raised at once.
        """
        deadline = time.monotonic() + wait_s
        with self._lock:
            self._drop()
            delay = 0.2
            last: TransportError | None = None
            while time.monotonic() < deadline:
                try:
                    self._client = _connect(self._settings)
                    return
                except (HostUnreachable, ConnectTimeout) as e:
                    last = e
                time.sleep(min(delay, max(deadline - time.monotonic(), 0)))
                delay = min(delay * 1.5, 2.0)
            raise BoardDidNotReturn(
                f"{self.target} did not answer within {wait_s:g} s after the connection dropped "
                f"(last error: {last}); check that the board booted and its network came up."
            )

    def _drop(self) -> None:
        if self._sftp is not None:
            with contextlib.suppress(Exception):
                self._sftp.close()
            self._sftp = None
        with contextlib.suppress(Exception):
            self._client.close()

    def close(self) -> None:
        """Remove the temp dirs made on the board, then close SFTP and the connection."""
        self._remove_temp_dirs()
        with self._lock:
            self._drop()


def _connect(s: _Settings) -> paramiko.SSHClient:
    t = s.target
    pkey = _load_identity(s.identity) if s.identity is not None else None
    client = paramiko.SSHClient()
    if s.known_hosts.is_file():
        try:
            client.load_host_keys(str(s.known_hosts))
        except (OSError, paramiko.SSHException) as e:
            raise UnknownHostKey(
                f"Cannot read known_hosts file {s.known_hosts} ({e}); fix or remove the bad line."
            ) from None
    client.set_missing_host_key_policy(_HostKeyPolicy(t, s.known_hosts, s.accept_new_host_key))
    started = time.monotonic()
    try:
        client.connect(
            t.host,
            port=t.port,
            username=t.user,
            pkey=pkey,
            allow_agent=pkey is None,
            look_for_keys=pkey is None,
            timeout=s.connect_timeout,
            banner_timeout=s.connect_timeout,
            auth_timeout=s.connect_timeout,
            channel_timeout=s.connect_timeout,
            transport_factory=_Transport,
        )
    except TransportError:
        client.close()
        raise
    except paramiko.BadHostKeyException as e:
        client.close()
        raise HostKeyChanged(
            f"The host key of {t.known_hosts_name} ({e.key.fingerprint}) differs from the one in "
            f"{s.known_hosts}; if the board was reflashed remove the old entry with "
            f"`ssh-keygen -R '{t.known_hosts_name}' -f {s.known_hosts}`, otherwise suspect an attacker."
        ) from None
    except paramiko.AuthenticationException:
        client.close()
        key = f"key {s.identity}" if s.identity else "the keys of ssh-agent and ~/.ssh"
        raise AuthenticationRefused(
            f"{t} refused {key}; add its public key to ~{t.user}/.ssh/authorized_keys on the board "
            "or pass the right private key with --identity."
        ) from None
    except TimeoutError:
        client.close()
        raise ConnectTimeout(
            f"Connecting to {t} timed out after {s.connect_timeout:g} s; check that the board is up "
            "and reachable on that address and port."
        ) from None
    except paramiko.SSHException as e:
        client.close()
        if time.monotonic() - started >= s.connect_timeout * 0.9:
            raise ConnectTimeout(
                f"{t} accepted the TCP connection but did not complete the SSH handshake within "
                f"{s.connect_timeout:g} s ({e}); check that sshd runs on that port."
            ) from None
        raise HostUnreachable(
            f"{t} did not talk SSH ({e}); check that the port is the board's sshd."
        ) from None
    except (OSError, EOFError) as e:
        client.close()
        reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
        if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError):
            reason = "connection refused"
        raise HostUnreachable(
            f"Cannot reach {t} ({reason}); check that the board is up and its sshd listens on port {t.port}."
        ) from None
    transport = client.get_transport()
    if transport is not None:
        transport.set_keepalive(15)
        # Nagle + delayed ACK costs ~40 ms on every channel open; commands are small round trips.
        with contextlib.suppress(OSError, AttributeError):
            transport.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return client
