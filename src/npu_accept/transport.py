# SPDX-License-Identifier: MIT
"""SSH transport to a board: one paramiko connection per board, reused for the whole session.

Public API (everything else is private)::

    target = parse_target("root@192.168.1.20:22")          # -> Target, or BadTarget
    conn = Connection.open(target, identity=Path("id_ed25519"), known_hosts=None,
                           accept_new_host_key=False, connect_timeout=10.0)
    result = conn.run("uname -r", timeout=30)             # -> Result(exit_code, stdout, stderr, duration)
    conn.put(Path("model.tflite"), "/tmp/x/model.tflite")  # a file, or a directory tree
    conn.get("/tmp/x/out0.npy", Path("out0.npy"))
    tmp = conn.make_temp_dir()                             # mktemp -d on the board, removed at close()
    tmp, result = conn.run_in_temp_dir('ls "$NPU_ACCEPT_TMP"', timeout=30)  # both in one round trip
    conn.reconnect(wait_s=120)                             # after a reboot dropped the connection
    conn.close()

Host keys are verified against ``known_hosts`` (default ``~/.ssh/known_hosts``); an unknown key is
refused unless ``accept_new_host_key`` is set, which records the key in that file. A key that
differs from the recorded one is always refused.

A board is untrusted: every wait has a deadline and every capture a bound.

- ``run`` keeps at most ``max_output`` bytes of each stream (default 8 MiB) and counts the rest
  (``Result.stdout_dropped``/``stderr_dropped``); a command that prints more than
  ``flood_limit`` bytes in all (default 64 MiB) is killed (:class:`OutputFlood`).
- Connecting, authenticating, opening a channel and starting a command have deadlines (the
  connect timeout); a command has its own timeout; a transfer ends when no byte moved for
  ``progress_timeout`` seconds.
- Files move as byte streams over exec channels (``cat``), not SFTP: it is faster in paramiko
  (benchmarks/bench_transport.py) and works on boards without an SFTP server. An upload is
  written to a temporary name, checked for length and renamed; a failed download leaves no
  local file.
- ``make_temp_dir`` (and ``run_in_temp_dir``) records the SSH session that made the directory;
  the next one on the board (any run) removes directories whose session is gone, so a dropped
  link leaves nothing behind for long.

Every failure a user can hit raises a :class:`TransportError` subclass whose message is one sentence
naming the thing and the fix. A connection may be used from several threads; the temp-dir
bookkeeping is guarded by a lock so a fleet runs one thread per board.
"""

from __future__ import annotations

import binascii
import contextlib
import hmac
import io
import re
import select
import shlex
import signal
import socket
import stat
import tarfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from npu_accept.memo import shared

if TYPE_CHECKING:
    import paramiko  # the same module; mypy reads its types from types-paramiko
else:
    from npu_accept.sshlib import paramiko

MSG_CHANNEL_REQUEST = paramiko.common.MSG_CHANNEL_REQUEST


__all__ = [
    "AuthenticationRefused",
    "BadTarget",
    "BoardDidNotReturn",
    "CommandTimeout",
    "Connection",
    "ConnectionLost",
    "ConnectTimeout",
    "DEFAULT_FLOOD_LIMIT",
    "DEFAULT_MAX_OUTPUT",
    "HostKeyChanged",
    "HostUnreachable",
    "IdentityError",
    "OutputFlood",
    "Result",
    "Target",
    "TransferError",
    "TransportError",
    "UnknownHostKey",
    "parse_target",
    "visible",
]

_DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
_READ_CHUNK = 1 << 20
_SEND_CHUNK = 1 << 18
DEFAULT_MAX_OUTPUT = 8 << 20  # bytes kept per stream of one command
DEFAULT_FLOOD_LIMIT = 64 << 20  # bytes of output after which a command is killed
DEFAULT_PROGRESS_TIMEOUT = 30.0  # seconds a transfer may go without moving a byte
# Channel window: how much a board may send before we acknowledge. paramiko's 2 MiB caps a
# download at 2 MiB per round trip (50 MiB/s over 40 ms); what arrives is drained at once anyway.
_WINDOW = 8 << 20
# AES-GCM does cipher and MAC in one OpenSSL call: ~2x the throughput of paramiko's default
# aes128-ctr + hmac-sha2-256 at lower CPU (benchmarks/bench_transport.py).
_FAST_CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com")
_OWNER_FILE = ".npu-accept-owner"
_QUOTE_CHARS = 200
# What paramiko raises when the socket under a channel dies (EOFError from its packetizer).
_LINK_ERRORS = (EOFError, OSError, paramiko.SSHException)
_MARK_ROOM = 64  # stderr room for the PID mark every command prints first
_POLL_S = 5.0


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


class OutputFlood(TransportError):
    """A command printed more than its flood limit; it was killed (output kept up to the limit)."""

    def __init__(self, message: str, stdout: bytes = b"", stderr: bytes = b"") -> None:
        super().__init__(message)
        self.stdout = stdout
        self.stderr = stderr


class ConnectionLost(TransportError):
    """The connection dropped (reboot, crash, cable)."""


class BoardDidNotReturn(TransportError):
    """reconnect() gave up at its deadline."""


class TransferError(TransportError):
    """An upload or download failed."""


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
    """What a command did: exit code (128+N when killed by signal N, as a shell reports it).

    ``stdout``/``stderr`` hold at most the command's ``max_output`` bytes each; the ``*_dropped``
    counts say how many more the board sent.
    """

    exit_code: int
    stdout: bytes
    stderr: bytes
    duration: float
    signal: str | None = None
    stdout_dropped: int = 0
    stderr_dropped: int = 0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def text(self) -> str:
        """stdout decoded as UTF-8 (invalid bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")


# Lone surrogates too: valid in JSON (a "\ud800" escape), not encodable as UTF-8, so never written raw.
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}


def visible(text: object, limit: int = _QUOTE_CHARS) -> str:
    """Board text made safe to show: control characters, escape sequences and bidi overrides
    become visible escapes (``\\e``, ``\\x07``, ``\\u202e``), and at most ``limit`` characters
    are kept (a cut says how long the text was)."""
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    total = len(raw)
    shown = _CONTROL.sub(_escape_char, raw[: limit + 1])  # escaping only lengthens: cut first
    if len(shown) <= limit and total <= limit:
        return shown
    return f"{shown[:limit]}… ({total} characters in all)"


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_USER_RE = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._-]*\$?")
_HOST_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Every command first writes its shell's PID (= its session and process group, sshd runs it under
# setsid) to stderr between RS bytes; run() strips it. On timeout the group is killed with it:
# OpenSSH refuses the SSH "signal" request for root logins, which boards mostly use.
_PID_PREFIX = "printf '\\036npu-accept-pid %s\\036' \"$$\" >&2; "
# A command without input reads /dev/null instead of waiting for our EOF: after a quick command
# the board may have closed the channel already, and an EOF sent after paramiko answered that
# close names a channel the board has freed, which OpenSSH answers by disconnecting.
_NO_INPUT = "exec </dev/null; "
_PID_MARK = re.compile(rb"\x1enpu-accept-pid (\d+)\x1e")
# run_in_temp_dir's command announces the directory it made on stderr, right after the PID mark.
_TEMP_MARK = re.compile(rb"\x1enpu-accept-tmp ([^\x1e\n]{1,4096})\x1e")
_TEMP_ROOM = 4200  # stderr room for that announcement
_TEMP_FAILED = 125  # its exit status when mktemp failed (the script did not run)


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


# --- the one use of paramiko's private API --------------------------------------------------------
# paramiko drops the "exit-signal" channel request (RFC 4254 6.10) without a public hook, and
# OpenSSH sends exit-signal *instead of* exit-status when a command dies of a signal: without it a
# killed command would be indistinguishable from a dropped connection. The override below uses
# Transport._channel_handler_table and Channel._handle_request; pyproject.toml therefore pins
# paramiko below the next minor release and tests/test_transport.py
# (test_paramiko_private_api_is_still_there) fails when paramiko changes them.


def _handle_channel_request(chan: paramiko.Channel, m: paramiko.Message) -> None:
    start = m.packet.tell()
    if m.get_text() == "exit-signal":
        m.get_boolean()
        chan.npu_exit_signal = m.get_text()  # type: ignore[attr-defined]
        chan.status_event.set()
        return
    m.packet.seek(start)
    paramiko.Channel._handle_request(chan, m)  # type: ignore[attr-defined]  # private, see above


class _Transport(paramiko.Transport):
    _channel_handler_table = {
        **paramiko.Transport._channel_handler_table,  # type: ignore[attr-defined]  # private, see above
        MSG_CHANNEL_REQUEST: _handle_channel_request,
    }


def _transport_factory(sock: Any, /, **kwargs: Any) -> paramiko.Transport:  # a socket, as paramiko passes it
    transport = _Transport(sock, **kwargs)
    options = transport.get_security_options()
    fast = [c for c in _FAST_CIPHERS if c in options.ciphers]
    options.ciphers = tuple(fast + [c for c in options.ciphers if c not in fast])
    return transport


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


def _load_host_keys(keys: paramiko.HostKeys, path: Path, name: str) -> None:
    """The entries of ``path`` that name host ``name`` (as OpenSSH writes it: ``[host]:port``
    unless the port is 22), loaded into ``keys`` as paramiko's ``HostKeys.load`` would load them.

    ``HostKeys.load`` parses every key of the file and checks each against all before it, for
    every connection: with one known_hosts shared by a fleet of N boards that is N^3 name matches
    and N^2 key parses (at 32 boards, 2/3 of the CPU of opening a connection). Only the lines
    whose host pattern is ``name``, plainly or hashed (``|1|salt|hash``), are parsed here: the
    same lines paramiko's lookup of ``name`` would find. The file's lines are read once per
    version of the file (path, size, modification time).
    """
    stat = path.stat()
    for lineno, line in _known_hosts_lines(path, stat.st_ino, stat.st_size, stat.st_mtime_ns):
        fields = re.split(" |\t", line)
        if fields[0].startswith("@") and len(fields) > 1:  # @revoked, @cert-authority
            if any(_names_host(p, name) for p in fields[1].split(",")):
                raise paramiko.SSHException(
                    f"line {lineno} marks {name} {fields[0]}, which the suite cannot evaluate"
                )
            continue
        if len(fields) < 3 or not any(_names_host(p, name) for p in fields[0].split(",")):
            continue
        try:
            entry = paramiko.hostkeys.HostKeyEntry.from_line(line, lineno)
        except paramiko.hostkeys.InvalidHostKey:
            raise paramiko.SSHException(f"line {lineno} holds no valid key for {name}") from None
        except paramiko.SSHException:
            continue  # as HostKeys.load: a line it cannot parse is skipped
        if entry is None:
            continue
        # HostKeys.load's own de-duplication, on the lines kept
        entry.hostnames = [h for h in entry.hostnames if not keys.check(h, entry.key)]
        if entry.hostnames:
            keys._entries.append(entry)  # type: ignore[attr-defined]  # as HostKeys.load does


@shared(maxsize=8)
def _known_hosts_lines(path: Path, inode: int, size: int, mtime_ns: int) -> tuple[tuple[int, str], ...]:
    """The non-empty, non-comment lines of a known_hosts file (one version of it), numbered."""
    with path.open("r") as f:
        lines = [(n, line.strip()) for n, line in enumerate(f, 1)]
    return tuple((n, line) for n, line in lines if line and not line.startswith("#"))


def _names_host(pattern: str, name: str) -> bool:
    """Whether a known_hosts host pattern is ``name``, as paramiko's HostKeys matches it."""
    if pattern == name:
        return True
    if pattern.startswith("|1|") and not name.startswith("|1|"):
        try:
            hashed = paramiko.HostKeys.hash_host(name, pattern)
        except (binascii.Error, ValueError):
            return False  # a malformed salt names no host
        return hmac.compare_digest(hashed.encode(), pattern.encode())
    return False


def _load_identity(identity: Path) -> paramiko.PKey:
    fix = "pass the private key of the board's authorized key with --identity"
    if not identity.is_file():
        raise IdentityError(f"Identity file {identity} does not exist; {fix}.")
    try:
        stat = identity.stat()
        return _identity_key(identity, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    except paramiko.PasswordRequiredException:
        raise IdentityError(
            f"Identity file {identity} is passphrase-protected; load it into ssh-agent and omit "
            "--identity, or use an unencrypted key."
        ) from None
    except (paramiko.SSHException, OSError, ValueError) as e:
        raise IdentityError(f"Identity file {identity} is not a usable private key ({e}); {fix}.") from None


@shared(maxsize=8)
def _identity_key(identity: Path, inode: int, size: int, mtime_ns: int) -> paramiko.PKey:
    """The private key of one version of an identity file, read once for all boards."""
    return paramiko.PKey.from_path(identity)


@dataclass
class _Settings:
    target: Target
    identity: Path | None
    known_hosts: Path
    accept_new_host_key: bool
    connect_timeout: float


class _Sink(Protocol):
    seen: int

    def add(self, data: bytes) -> None: ...


@dataclass
class _Capture:
    """Keeps the first ``limit`` bytes of a stream and counts the rest."""

    limit: int
    seen: int = 0
    chunks: list[bytes] = field(default_factory=list)

    def add(self, data: bytes) -> None:
        room = self.limit - self.seen
        if room > 0:
            self.chunks.append(data[:room])
        self.seen += len(data)

    @property
    def dropped(self) -> int:
        return max(self.seen - self.limit, 0)

    def value(self) -> bytes:
        return b"".join(self.chunks)


class _LocalWriteError(Exception):
    """Writing a download to the local file failed (kept apart from the link's OSErrors)."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.strerror or str(cause))


@dataclass
class _FileSink:
    """Writes a stream to a local file."""

    handle: BinaryIO
    seen: int = 0

    def add(self, data: bytes) -> None:
        try:
            self.handle.write(data)
        except OSError as e:
            raise _LocalWriteError(e) from None
        self.seen += len(data)


@dataclass
class _Exchange:
    """One command's streams and limits, as _pump drives them."""

    stdout: _Sink
    stderr: _Capture
    source: BinaryIO | None = None
    flood_limit: int = DEFAULT_FLOOD_LIMIT
    progress_timeout: float | None = None  # transfers: end when no byte moved for this long
    sent: int = 0
    send_error: BaseException | None = None
    stalled: bool = False
    flooded: bool = False
    unstarted: bool = False  # no sign of life from the command by its start deadline


class _Helper:
    """A connection's session channel opened ahead, without a thread of its own.

    So that a command costs one round trip (the exec request) instead of two (open, then exec):
    on a 40 ms link that is 40 ms per command. The next channel's open request is sent as a
    command takes the current one, and its answer is awaited (bounded) only when the next command
    needs it: paramiko's ``open_session`` would block the caller for that round trip, which is
    why this replicates its first half (:func:`_send_open`). An earlier version kept a thread per
    connection opening spares, and another as a watchdog for exec requests; both cost a thread
    wake-up per command, a fleet's biggest per-command cost after paramiko's own
    (benchmarks/bench_fleet.py). How a command's start is awaited: :func:`_exec_request`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spare: _Opening | None = None
        self._spares_wanted = True

    def take(self, transport: paramiko.Transport, wait: float) -> paramiko.Channel | None:
        """The channel opened ahead on ``transport`` (or None), and the open request for the next."""
        with self._lock:
            spare, self._spare = self._spare, None
            if self._spares_wanted and transport.is_active():
                with contextlib.suppress(*_LINK_ERRORS):
                    self._spare = _send_open(transport)
        if spare is None:
            return None
        if spare.transport is transport:
            chan = spare.channel(wait)
            if chan is not None:
                return chan
        spare.abandon()
        return None

    def no_more_spares(self) -> None:
        with self._lock:
            self._spares_wanted = False

    def stop(self) -> None:
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.abandon()


@dataclass
class _Opening:
    """A session channel whose open request is sent and whose answer may not have come yet."""

    transport: paramiko.Transport
    chanid: int
    chan: paramiko.Channel
    event: threading.Event

    def channel(self, wait: float) -> paramiko.Channel | None:
        """The open channel, once the board answered (waiting at most ``wait`` s); None if the
        board refused it, the link dropped or no answer came."""
        if not self.event.wait(wait) or not self.transport.is_active():
            return None
        private: Any = self.transport  # paramiko's private API, as in _send_open
        chan = private._channels.get(self.chanid)
        if chan is not self.chan or not chan.active or chan.closed:
            return None
        return chan

    def abandon(self) -> None:
        """Not used: closed once open (a close before the answer would name no channel yet)."""
        if self.event.is_set():
            with contextlib.suppress(Exception):
                self.chan.close()


def _send_open(transport: paramiko.Transport) -> _Opening:
    """The first half of paramiko's ``Transport.open_channel("session")``: the channel is
    registered and its open request sent; the transport's thread records the answer and sets the
    event, as for a channel paramiko opens itself. tests/test_transport.py checks that the
    private names used here are still there."""
    private: Any = transport  # paramiko's private API (names checked by tests/test_transport.py)
    with transport.lock:
        window = private._sanitize_window_size(_WINDOW)
        packet = private._sanitize_packet_size(None)
        chanid = private._next_channel()
        m = paramiko.Message()
        m.add_byte(paramiko.common.cMSG_CHANNEL_OPEN)
        m.add_string("session")
        m.add_int(chanid)
        m.add_int(window)
        m.add_int(packet)
        chan = paramiko.Channel(chanid)
        private._channels.put(chanid, chan)
        transport.channel_events[chanid] = event = threading.Event()
        transport.channels_seen[chanid] = True
        opened: Any = chan
        opened._set_transport(transport)
        opened._set_window(window, packet)
    private._send_user_message(m)
    return _Opening(transport, chanid, chan, event)


def _exec_request(chan: paramiko.Channel, command: str) -> None:
    """paramiko's ``Channel.exec_command`` without asking for an answer (want-reply false).

    paramiko waits for the answer without a timeout (a board whose kernel hangs keeps the TCP
    connection for the retransmission timeout, ~15 min), and waiting for it at all costs a round
    trip per command. Instead the command's first sign of life is awaited, bounded, while its
    streams are drained: every command prints its PID mark on stderr first (``_PID_PREFIX``).
    A board that refuses the request closes the channel, which reads as a dropped link."""
    if chan.closed or chan.eof_received or chan.eof_sent or not chan.active:
        raise paramiko.SSHException("Channel is not open")
    m = paramiko.Message()
    m.add_byte(paramiko.common.cMSG_CHANNEL_REQUEST)
    m.add_int(chan.remote_chanid)
    m.add_string("exec")
    m.add_boolean(False)
    m.add_string(command)
    private: Any = chan.transport  # paramiko's private API, as in _send_open
    private._send_user_message(m)


@dataclass
class Connection:
    """An open SSH connection to one board; create it with :meth:`Connection.open`."""

    target: Target
    _settings: _Settings
    _client: paramiko.SSHClient
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _temp_dirs: list[str] = field(default_factory=list)
    _helper: _Helper = field(default_factory=_Helper)

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
        max_output: int = DEFAULT_MAX_OUTPUT,
        flood_limit: int = DEFAULT_FLOOD_LIMIT,
    ) -> Result:
        """Run ``cmd`` through the board's login shell; stdout and stderr are drained concurrently.

        Each stream keeps at most ``max_output`` bytes (the rest is counted in the Result). On
        timeout, or when the command printed more than ``flood_limit`` bytes, its process group
        is sent SIGKILL, the channel is closed and CommandTimeout / OutputFlood is raised (with
        the output kept so far).
        """
        source = io.BytesIO(input) if input is not None else None
        exchange = _Exchange(_Capture(max_output), _Capture(max_output + _MARK_ROOM), source, flood_limit)
        start = time.monotonic()
        code, exit_signal = self._exec(cmd, timeout, exchange, env)
        out = exchange.stdout
        assert isinstance(out, _Capture)
        err, err_dropped = self._stderr_of(exchange)
        return Result(code, out.value(), err, time.monotonic() - start, exit_signal, out.dropped, err_dropped)

    @staticmethod
    def _stderr_of(exchange: _Exchange) -> tuple[bytes, int]:
        """stderr without the PID mark, cut to the limit the caller asked for, and the bytes dropped."""
        capture = exchange.stderr
        raw = capture.value()
        text = _PID_MARK.sub(b"", raw, count=1)
        limit = capture.limit - _MARK_ROOM
        seen = capture.seen - (len(raw) - len(text))
        return text[:limit], max(seen - limit, 0)

    def _exec(
        self, cmd: str, timeout: float, exchange: _Exchange, env: dict[str, str] | None = None
    ) -> tuple[int, str | None]:
        """Run ``cmd`` with ``exchange``'s streams; (exit code, signal name) or a TransportError."""
        shown = visible(cmd)
        if not timeout > 0:
            raise ValueError(f"The timeout of {cmd!r} must be a positive number of seconds, not {timeout!r}.")
        if env:
            bad = [k for k in env if not _ENV_NAME_RE.fullmatch(k)]
            if bad:
                raise ValueError(f"Environment name {bad[0]!r} is not a valid shell variable name.")
            cmd = "".join(f"export {k}={shlex.quote(v)}; " for k, v in env.items()) + cmd
        deadline = time.monotonic() + timeout
        prefix = _PID_PREFIX + (_NO_INPUT if exchange.source is None else "")
        wait = max(min(timeout, self._settings.connect_timeout), 1.0)
        chan = self._start(prefix + cmd, shown, wait)
        try:
            finished = self._pump(chan, exchange, deadline, time.monotonic() + wait)
            if exchange.unstarted:
                with contextlib.suppress(Exception):
                    if chan.transport is not None:
                        chan.transport.close()
                raise ConnectionLost(
                    f"{self.target} accepted the connection but did not start {shown!r} within "
                    f"{wait:g} s, so the connection was closed; check that the board is not hung."
                )
            if not finished:
                self._kill_group(exchange.stderr.value())
                raise self._unfinished(shown, timeout, exchange)
        except _LINK_ERRORS as e:
            raise self._lost(shown, e) from None
        finally:
            with contextlib.suppress(*_LINK_ERRORS):
                chan.close()
        exit_signal = getattr(chan, "npu_exit_signal", None)
        if exit_signal is not None:
            return _exit_code_of_signal(exit_signal), exit_signal
        if chan.exit_status_ready() and chan.exit_status >= 0:
            return chan.exit_status, None
        raise self._lost(shown, None)

    def _start(self, cmd: str, shown: str, wait: float) -> paramiko.Channel:
        """Take or open a session channel (waiting at most ``wait`` s) and send the exec request."""
        transport = self._transport()
        chan = self._helper.take(transport, wait)
        if chan is None:
            try:
                chan = transport.open_session(window_size=_WINDOW, timeout=wait)
            except (paramiko.SSHException, OSError, EOFError) as e:
                raise self._lost(shown, e) from None
        try:
            _exec_request(chan, cmd)
        except _LINK_ERRORS as e:
            with contextlib.suppress(*_LINK_ERRORS):
                chan.close()
            raise self._lost(shown, e) from None
        return chan

    def _unfinished(self, shown: str, timeout: float, exchange: _Exchange) -> TransportError:
        err, _ = self._stderr_of(exchange)
        out = exchange.stdout.value() if isinstance(exchange.stdout, _Capture) else b""
        if exchange.flooded:
            return OutputFlood(
                f"Command {shown!r} printed more than {_mib(exchange.flood_limit)} on {self.target} and "
                "was killed; the board floods its output, look at its console or kernel log.",
                out,
                err,
            )
        if exchange.stalled:
            return TransferError(
                f"The transfer by {shown!r} on {self.target} moved no byte for "
                f"{exchange.progress_timeout:g} s and was stopped; check the board's link and load."
            )
        return CommandTimeout(
            f"Command {shown!r} did not finish within {timeout:g} s on {self.target} and was "
            "killed; raise its timeout if the board is just slow.",
            out,
            err,
        )

    def _kill_group(self, err: bytes) -> None:
        mark = _PID_MARK.search(err)
        if mark is None or not self.connected:
            return
        pgid = int(mark.group(1))
        with contextlib.suppress(TransportError):
            self.run(f"kill -KILL -- -{pgid} 2>/dev/null || kill -KILL -{pgid}", timeout=10)

    def _pump(self, chan: paramiko.Channel, exchange: _Exchange, deadline: float, start_by: float) -> bool:
        """Feed stdin (in a thread), drain both streams until exit; whether it finished in time
        (not if it showed no sign of life by ``start_by``: ``exchange.unstarted``)."""
        writer = None
        if exchange.source is not None:
            writer = threading.Thread(
                target=_feed, args=(chan, exchange), name="npu-accept-stdin", daemon=True
            )
            writer.start()
        try:
            return self._drain(chan, exchange, deadline, start_by)
        finally:
            if writer is not None:
                if writer.is_alive():
                    with contextlib.suppress(*_LINK_ERRORS):
                        chan.close()  # wakes a writer blocked on the send window
                writer.join()

    @staticmethod
    def _drain(
        chan: paramiko.Channel, exchange: _Exchange, deadline: float, start_by: float | None = None
    ) -> bool:
        fd = chan.fileno()
        progress_at = time.monotonic()
        moved = 0
        while True:
            while chan.recv_ready():
                exchange.stdout.add(chan.recv(_READ_CHUNK))
            while chan.recv_stderr_ready():
                exchange.stderr.add(chan.recv_stderr(_READ_CHUNK))
            if exchange.stdout.seen + exchange.stderr.seen > exchange.flood_limit:
                exchange.flooded = True
                return False
            if chan.eof_received and not chan.recv_ready() and not chan.recv_stderr_ready():
                # exit-status follows EOF closely; wait for it (or for the close).
                remaining = deadline - time.monotonic()
                if chan.status_event.wait(max(remaining, 0)) or chan.closed:
                    return True
            elif chan.closed and not chan.recv_ready() and not chan.recv_stderr_ready():
                return True
            now = time.monotonic()
            if start_by is not None:
                if exchange.stdout.seen or exchange.stderr.seen or chan.exit_status_ready():
                    start_by = None  # the command runs (its PID mark came first)
                elif now >= start_by:
                    exchange.unstarted = True
                    return False
            if exchange.progress_timeout is not None:
                total = exchange.stdout.seen + exchange.stderr.seen + exchange.sent
                if total != moved:
                    moved, progress_at = total, now
                elif now - progress_at > exchange.progress_timeout or exchange.send_error is not None:
                    exchange.stalled = True
                    return False
            if now >= deadline:
                return False
            # Data, EOF, the close and a dropped link all make the channel's pipe readable: sleep
            # until then or the next deadline, not in slices (a fleet's boards wait for minutes).
            wake = deadline if start_by is None else min(deadline, start_by)
            if exchange.progress_timeout is not None:
                wake = min(wake, progress_at + exchange.progress_timeout + 0.01)
            select.select([fd], [], [], max(wake - now, 0.001))

    def _transport(self) -> paramiko.Transport:
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectionLost(
                f"The SSH connection to {self.target} is closed; the board may have rebooted, "
                "call reconnect() or check the board."
            )
        return transport

    def _lost(self, cmd: str, cause: BaseException | None) -> ConnectionLost:
        why = f" ({visible(cause)})" if cause and str(cause) else ""
        return ConnectionLost(
            f"The SSH connection to {self.target} dropped while running {cmd!r}{why}; the board may "
            "have rebooted or crashed, call reconnect() or check its console."
        )

    def put(self, local: Path, remote: str, progress_timeout: float = DEFAULT_PROGRESS_TIMEOUT) -> None:
        """Upload a file (keeping its permission bits) or a directory tree to ``remote``.

        A file is written under a temporary name, its length checked on the board, then renamed:
        a dropped link never leaves a truncated file under ``remote``.
        """
        local = Path(local)
        if not local.exists():
            raise TransferError(f"Local path {local} does not exist; check the path to upload.")
        if local.is_dir():
            archive = io.BytesIO(tar_tree(local))
            size = len(archive.getvalue())
            q = shlex.quote(remote)
            cmd = f"mkdir -p {q} && tar -xof - -C {q} || {{ cat >/dev/null; exit 1; }}"
            stream: BinaryIO = archive
        else:
            size = local.stat().st_size
            mode = stat.S_IMODE(local.stat().st_mode)
            cmd = _put_file_command(remote, size, mode)
            stream = local.open("rb")
        with contextlib.closing(stream):
            exchange = _Exchange(_Capture(1 << 16), _Capture(1 << 16), stream, 1 << 20, progress_timeout)
            try:
                code = self._transfer(cmd, exchange, size, f"upload {local} to {self.target}:{remote}")
            except TransferError:
                if not local.is_dir():
                    self._remove_part(remote, exchange)
                raise
        if code != 0:
            err, _ = self._stderr_of(exchange)
            raise TransferError(
                f"Cannot upload {local} to {self.target}:{remote} ({_last_line(err, code)}); check that "
                "the remote directory exists and is writable."
            )

    def _remove_part(self, remote: str, exchange: _Exchange) -> None:
        """After a killed upload: the board's shell died before it could remove its part file."""
        mark = _PID_MARK.search(exchange.stderr.value())
        if mark is not None and self.connected:
            part = shlex.quote(f"{remote}.npu-part.{int(mark.group(1))}")
            with contextlib.suppress(TransportError):
                self.run(f"rm -f -- {part}", timeout=30)

    def get(
        self,
        remote: str,
        local: Path,
        progress_timeout: float = DEFAULT_PROGRESS_TIMEOUT,
        max_bytes: int | None = None,
    ) -> None:
        """Download one file from the board (at most ``max_bytes``); a failed download leaves no
        local file."""
        local = Path(local)
        partial = local.with_name(local.name + ".part")
        limit = max_bytes if max_bytes is not None else 1 << 62
        what = f"download {self.target}:{remote} to {local}"
        try:
            with partial.open("wb") as handle:
                exchange = _Exchange(_FileSink(handle), _Capture(1 << 16), None, limit, progress_timeout)
                code = self._transfer(f"exec cat -- {shlex.quote(remote)}", exchange, None, what)
        except (OSError, _LocalWriteError) as e:
            partial.unlink(missing_ok=True)
            raise TransferError(
                f"Cannot {what} ({getattr(e, 'strerror', None) or e}); check that the local directory "
                "is writable."
            ) from None
        except TransportError as e:
            partial.unlink(missing_ok=True)
            if isinstance(e, OutputFlood):
                raise TransferError(
                    f"Cannot {what}: it is larger than the limit of {_mib(limit)}; the file on the "
                    "board is not what the suite expects."
                ) from None
            raise
        if code != 0:
            partial.unlink(missing_ok=True)
            err, _ = self._stderr_of(exchange)
            raise TransferError(
                f"Cannot download {self.target}:{remote} to {local} ({_last_line(err, code)}); check "
                "that the file exists on the board and the local directory is writable."
            )
        partial.replace(local)

    def _transfer(self, cmd: str, exchange: _Exchange, size: int | None, what: str) -> int:
        """Run a transfer command with a generous overall timeout; a dropped link is one sentence."""
        # The overall timeout only backs up the per-byte progress deadline: at 1 MiB/s plus slack.
        timeout = 60.0 + (size or 0) / (1 << 20)
        if size is None:
            timeout = 24 * 3600.0
        try:
            code, _ = self._exec(cmd, timeout, exchange)
        except ConnectionLost:
            raise TransferError(
                f"The SSH connection to {self.target} dropped during the {what}; nothing partial was "
                "kept, check the board and try again."
            ) from None
        if exchange.send_error is not None and code == 0:
            raise TransferError(f"The {what} failed ({visible(exchange.send_error)}); try again.")
        return code

    def make_temp_dir(self, prefix: str = "npu-accept") -> str:
        """Create a private directory on the board (mktemp -d); it is removed at close().

        The same command removes earlier temp dirs whose SSH session is gone (a dropped link
        left them behind).
        """
        _check_prefix(prefix)
        result = self.run(_sweep_and_mktemp(prefix) + 'printf "%s\\n" "$d"', timeout=30)
        path = result.text().strip()
        if result.exit_code != 0 or not path.startswith("/") or "\n" in path:
            raise self._mktemp_failed(result.stderr, result.exit_code)
        self._keep_temp_dir(path)
        return path

    def run_in_temp_dir(
        self,
        script: str,
        timeout: float,
        input: bytes | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
        flood_limit: int = DEFAULT_FLOOD_LIMIT,
        prefix: str = "npu-accept",
    ) -> tuple[str, Result]:
        """:meth:`make_temp_dir` and :meth:`run` of ``script`` in one command (one round trip):
        the script finds the new directory in ``$NPU_ACCEPT_TMP``. The directory is removed at
        close(), also when the script timed out or flooded; the Result is the script's, as run()
        gives it."""
        _check_prefix(prefix)
        command = (
            _sweep_and_mktemp(prefix)
            + f"printf '\\036npu-accept-tmp %s\\036' \"$d\" >&2 || exit {_TEMP_FAILED}; "
            + "NPU_ACCEPT_TMP=$d; unset d; "
            + script
        )
        try:
            result = self.run(
                command, timeout, input, max_output=max_output + _TEMP_ROOM, flood_limit=flood_limit
            )
        except (CommandTimeout, OutputFlood) as e:
            path, e.stderr = self._announced(e.stderr)
            if path is not None:
                self._keep_temp_dir(path)
            raise
        path, stderr = self._announced(result.stderr)
        if path is None:
            raise self._mktemp_failed(stderr, result.exit_code)
        self._keep_temp_dir(path)
        seen = (len(result.stdout) + result.stdout_dropped, len(stderr) + result.stderr_dropped)
        return path, replace(
            result,
            stdout=result.stdout[:max_output],
            stderr=stderr[:max_output],
            stdout_dropped=max(seen[0] - max_output, 0),
            stderr_dropped=max(seen[1] - max_output, 0),
        )

    @staticmethod
    def _announced(stderr: bytes) -> tuple[str | None, bytes]:
        """The directory run_in_temp_dir's command announced (None if it made none), and stderr
        without the announcement."""
        mark = _TEMP_MARK.search(stderr)  # the sweep before it may have complained
        if mark is None:
            return None, stderr
        path = mark.group(1).decode("utf-8", "replace")
        return (path if path.startswith("/") else None), stderr[: mark.start()] + stderr[mark.end() :]

    def _mktemp_failed(self, stderr: bytes, code: int) -> TransportError:
        return TransportError(
            f"mktemp -d failed on {self.target} ({_last_line(stderr, code)}); "
            "check that /tmp on the board exists and is writable."
        )

    def _keep_temp_dir(self, path: str) -> None:
        with self._lock:
            self._temp_dirs.append(path)

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
        with contextlib.suppress(Exception):
            self._client.close()

    def close(self) -> None:
        """Remove the temp dirs made on the board, then close the connection."""
        self._helper.no_more_spares()
        self._remove_temp_dirs()
        self._helper.stop()
        with self._lock:
            self._drop()


def _feed(chan: paramiko.Channel, exchange: _Exchange) -> None:
    """Send the exchange's source on stdin, then EOF; a stalled window ends in a recorded error."""
    source = exchange.source
    assert source is not None
    chan.settimeout(exchange.progress_timeout or 3600.0)
    try:
        while chunk := source.read(_SEND_CHUNK):
            view = memoryview(chunk)
            while view:
                sent = chan.send(view)  # type: ignore[arg-type]  # any buffer; the stubs say bytes
                if sent == 0:
                    return  # the command closed its stdin; the rest is not needed
                exchange.sent += sent
                view = view[sent:]
        if not (chan.closed or chan.eof_received):  # a board that exited early: no EOF after its close
            chan.shutdown_write()
    except TimeoutError as e:
        exchange.send_error = e
    except _LINK_ERRORS:
        pass  # the channel closed (the command exited or the link dropped); the reader decides


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def _last_line(stderr: bytes, code: int) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return visible(lines[-1]) if lines else f"exit status {code}"


def _put_file_command(remote: str, size: int, mode: int) -> str:
    q = shlex.quote(remote)
    return (
        f't={q}.npu-part.$$; cat >"$t" || {{ cat >/dev/null; rm -f "$t"; exit 1; }}; n=$(wc -c <"$t"); '
        f'if [ "$n" -ne {size} ]; then rm -f "$t"; echo "only $n of {size} bytes arrived" >&2; exit 1; fi; '
        f'chmod {mode:o} "$t" && mv -f "$t" {q} || {{ rm -f "$t"; exit 1; }}'
    )


def _check_prefix(prefix: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9._-]+", prefix):
        raise ValueError(f"Temp dir prefix {prefix!r} may only use letters, digits, '.', '_', '-'.")


def _sweep_and_mktemp(prefix: str) -> str:
    # A temp dir records the sshd session process that made it ($PPID of the command's shell);
    # when that process is gone (the link dropped), the next connection removes the directory.
    return (
        f'for o in "${{TMPDIR:-/tmp}}"/*/{_OWNER_FILE}; do [ -f "$o" ] || continue; '
        'p=$(cat "$o" 2>/dev/null); case "$p" in ""|*[!0-9]*) continue;; esac; '
        f'[ -d "/proc/$p" ] || rm -rf -- "${{o%/{_OWNER_FILE}}}"; done; '
        f'd=$(mktemp -d "${{TMPDIR:-/tmp}}/{prefix}.XXXXXX") && echo "$PPID" >"$d/{_OWNER_FILE}" && '
    )


def tar_tree(directory: Path) -> bytes:
    """A deterministic uncompressed tar of ``directory``'s files (``__pycache__`` and ``.pyc`` left
    out): the same tree gives the same bytes."""
    paths = sorted(p for p in directory.rglob("*") if "__pycache__" not in p.parts and p.suffix != ".pyc")
    return tar_files({p.relative_to(directory).as_posix(): p for p in paths})


def tar_files(files: dict[str, Path]) -> bytes:
    """A deterministic uncompressed tar of ``files`` (name in the archive -> local path): modes
    kept, owner and times zeroed, names in sorted order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(files):
            path = files[name]
            info = tar.gettarinfo(str(path), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isreg():
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
            elif info.isdir():
                tar.addfile(info)
    return buffer.getvalue()


def _connect(s: _Settings) -> paramiko.SSHClient:
    t = s.target
    pkey = _load_identity(s.identity) if s.identity is not None else None
    client = paramiko.SSHClient()
    if s.known_hosts.is_file():
        try:
            _load_host_keys(client.get_host_keys(), s.known_hosts, t.known_hosts_name)
        except (OSError, UnicodeError, paramiko.SSHException) as e:
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
            transport_factory=_transport_factory,
        )
    except TransportError:
        client.close()
        raise
    except Exception as e:  # noqa: BLE001 - whatever the board sends must end in one sentence
        client.close()
        raise _connect_error(s, e, time.monotonic() - started) from None
    transport = client.get_transport()
    if transport is not None:
        transport.set_keepalive(15)
        sock = transport.sock  # the TCP socket connect() opened
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                # Nagle + delayed ACK costs ~40 ms on every channel open; commands are small round trips.
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                # paramiko's thread wakes at every socket timeout (0.1 s) just to look around; once
                # connected, every 5 s is enough (keepalive is every 15 s; data and the board closing
                # wake it anyway): a fleet's connections waiting for their NPU runs cost the suite a
                # fiftieth of the CPU (benchmarks/bench_fleet.py).
                sock.settimeout(_POLL_S)
    return client


def _connect_error(s: _Settings, e: Exception, elapsed: float) -> TransportError:
    t = s.target
    if isinstance(e, paramiko.BadHostKeyException):
        return HostKeyChanged(
            f"The host key of {t.known_hosts_name} ({e.key.fingerprint}) differs from the one in "
            f"{s.known_hosts}; if the board was reflashed remove the old entry with "
            f"`ssh-keygen -R '{t.known_hosts_name}' -f {s.known_hosts}`, otherwise suspect an attacker."
        )
    if isinstance(e, paramiko.AuthenticationException):
        key = f"key {s.identity}" if s.identity else "the keys of ssh-agent and ~/.ssh"
        return AuthenticationRefused(
            f"{t} refused {key}; add its public key to ~{t.user}/.ssh/authorized_keys on the board "
            "or pass the right private key with --identity."
        )
    if isinstance(e, TimeoutError):
        return ConnectTimeout(
            f"Connecting to {t} timed out after {s.connect_timeout:g} s; check that the board is up "
            "and reachable on that address and port."
        )
    if isinstance(e, paramiko.SSHException):
        if elapsed >= s.connect_timeout * 0.9:
            return ConnectTimeout(
                f"{t} accepted the TCP connection but did not complete the SSH handshake within "
                f"{s.connect_timeout:g} s ({visible(e)}); check that sshd runs on that port."
            )
        return HostUnreachable(
            f"{t} did not talk SSH ({visible(e)}); check that the port is the board's sshd."
        )
    if isinstance(e, (EOFError, ConnectionResetError, BrokenPipeError)):  # it answered, then hung up
        return HostUnreachable(
            f"{t} closed the connection during the SSH handshake ({visible(str(e) or type(e).__name__)}); "
            "the board is up: check its sshd log (MaxStartups, a refused address, a broken host key)."
        )
    if isinstance(e, (OSError, EOFError)):
        reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
        if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError):
            reason = "connection refused"
        return HostUnreachable(
            f"Cannot reach {t} ({visible(reason)}); check that the board is up and its sshd listens on "
            f"port {t.port}."
        )
    return HostUnreachable(
        f"Connecting to {t} failed ({type(e).__name__}: {visible(e)}); check that the port is the "
        "board's sshd."
    )
