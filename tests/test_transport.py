# SPDX-License-Identifier: MIT
"""The SSH transport against real OpenSSH sshd twins on loopback."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest
from conftest import TwinFactory
from paramiko.common import MSG_CHANNEL_REQUEST

from npu_accept.sim.harness import Twin, TwinSpec
from npu_accept.transport import (
    AuthenticationRefused,
    BadTarget,
    BoardDidNotReturn,
    CommandTimeout,
    Connection,
    ConnectionLost,
    ConnectTimeout,
    HostKeyChanged,
    HostUnreachable,
    IdentityError,
    OutputFlood,
    Target,
    TransferError,
    TransportError,
    UnknownHostKey,
    _load_host_keys,
    _Transport,
    parse_target,
    visible,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def twin(twin_factory: TwinFactory) -> Twin:
    return twin_factory(TwinSpec(name="transport"))


@pytest.fixture(scope="module")
def conn(twin: Twin) -> Iterator[Connection]:
    c = Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts)
    yield c
    c.close()


def _keygen(path: Path) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- target strings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("root@192.168.1.20", Target("root", "192.168.1.20", 22)),
        ("root@board.local:2222", Target("root", "board.local", 2222)),
        ("ci-user@imx95-verdin", Target("ci-user", "imx95-verdin", 22)),
        ("root@[fe80::1]:22", Target("root", "fe80::1", 22)),
        ("root@[::1]", Target("root", "::1", 22)),
    ],
)
def test_parse_target_accepts(text: str, expected: Target) -> None:
    assert parse_target(text) == expected


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("192.168.1.20", "no user"),
        ("@board", "invalid user"),
        ("root@", "invalid host"),
        ("root@board:", "invalid port"),
        ("root@board:0", "invalid port"),
        ("root@board:65536", "invalid port"),
        ("root@board:ssh", "invalid port"),
        ("root@bo ard", "invalid host"),
        ("root@[fe80::1", "malformed IPv6"),
        ("root@[not-v6]:22", "malformed IPv6"),
        ("root@::1", "invalid host"),
    ],
)
def test_parse_target_rejects_with_one_sentence(text: str, named: str) -> None:
    with pytest.raises(BadTarget) as exc:
        parse_target(text)
    message = str(exc.value)
    assert named in message
    assert "USER@HOST" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_target_str_round_trips() -> None:
    for text in ("root@10.0.0.2:22", "u@[fe80::1]:2200"):
        assert str(parse_target(text)) == text


# --- run ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [0, 1, 42])
def test_exit_codes_are_kept(conn: Connection, code: int) -> None:
    result = conn.run(f"exit {code}", timeout=10)
    assert result.exit_code == code
    assert result.signal is None


def test_signal_death_is_reported_as_shell_does(conn: Connection) -> None:
    result = conn.run("kill -TERM $$", timeout=10)
    assert result.signal == "TERM"
    assert result.exit_code == 128 + 15


def test_stdout_and_stderr_are_separate(conn: Connection) -> None:
    result = conn.run("echo out; echo err >&2; echo out2", timeout=10)
    assert result.stdout == b"out\nout2\n"
    assert result.stderr == b"err\n"
    assert result.duration > 0


def test_four_mb_on_stderr_before_any_stdout_does_not_deadlock(conn: Connection) -> None:
    cmd = "head -c 4194304 /dev/zero | tr '\\0' e >&2; echo done"
    result = conn.run(cmd, timeout=30)
    assert result.exit_code == 0
    assert result.stdout == b"done\n"
    assert result.stderr == b"e" * 4194304


def test_large_stdout_arrives_intact(conn: Connection) -> None:
    result = conn.run("seq 1 1000000", timeout=60)
    expected = "".join(f"{i}\n" for i in range(1, 1000001)).encode()
    assert len(result.stdout) == len(expected)
    assert result.stdout == expected


def test_large_input_echoed_back_concurrently(conn: Connection) -> None:
    data = os.urandom(8 * 1024 * 1024)
    result = conn.run("cat", timeout=60, input=data)
    assert result.exit_code == 0
    assert hashlib.sha256(result.stdout).hexdigest() == hashlib.sha256(data).hexdigest()


def test_input_reaches_stdin(conn: Connection) -> None:
    result = conn.run("sha256sum", timeout=30, input=b"npu\n")
    assert result.text().split()[0] == hashlib.sha256(b"npu\n").hexdigest()


def test_env_is_passed_quoted(conn: Connection) -> None:
    result = conn.run('printf %s "$NPU_X"', timeout=10, env={"NPU_X": "a b'c $HOME"})
    assert result.stdout == b"a b'c $HOME"


def test_bad_env_name_is_one_sentence(conn: Connection) -> None:
    with pytest.raises(ValueError, match="not a valid shell variable name"):
        conn.run("true", timeout=10, env={"A;rm": "x"})


@pytest.mark.parametrize("timeout", [0, -1.5])
def test_a_timeout_is_required_and_positive(conn: Connection, timeout: float) -> None:
    with pytest.raises(ValueError, match="must be a positive number of seconds"):
        conn.run("true", timeout=timeout)


def test_timeout_kills_the_command_and_names_it(conn: Connection) -> None:
    start = time.monotonic()
    with pytest.raises(CommandTimeout) as exc:
        conn.run("echo started; sleep 37", timeout=1)
    assert time.monotonic() - start < 5
    assert "sleep 37" in str(exc.value) and "1 s" in str(exc.value)
    assert exc.value.stdout == b"started\n"
    # the command's process group was killed on the board, and the connection still works
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = conn.run("ps -eo args | grep -c '^sleep 37' || true", timeout=10).text().strip()
        if left == "0":
            break
        time.sleep(0.1)
    assert left == "0"


def test_one_connection_serves_several_threads(conn: Connection) -> None:
    errors: list[str] = []

    def worker(n: int) -> None:
        for i in range(15):
            r = conn.run(f"echo {n}-{i}", timeout=20)
            if r.stdout != f"{n}-{i}\n".encode():
                errors.append(f"{n}-{i}: {r.stdout!r}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# --- SFTP and temp dirs ---------------------------------------------------------------------------


def test_sftp_round_trip_keeps_bytes_and_mode(conn: Connection, tmp_path: Path) -> None:
    remote_dir = conn.make_temp_dir()
    src = tmp_path / "blob.bin"
    src.write_bytes(os.urandom(3 * 1024 * 1024 + 17))
    src.chmod(0o755)
    conn.put(src, f"{remote_dir}/blob.bin")
    assert conn.run(f"test -x {remote_dir}/blob.bin", timeout=10).exit_code == 0
    back = tmp_path / "back.bin"
    conn.get(f"{remote_dir}/blob.bin", back)
    assert back.read_bytes() == src.read_bytes()


def test_sftp_puts_a_directory_tree(conn: Connection, tmp_path: Path) -> None:
    tree = tmp_path / "tools"
    (tree / "pkg" / "sub").mkdir(parents=True)
    (tree / "npu-info").write_text("#!/bin/sh\necho info\n")
    (tree / "npu-info").chmod(0o755)
    (tree / "pkg" / "sub" / "m.py").write_text("x = 1\n")
    remote = conn.make_temp_dir()
    conn.put(tree, f"{remote}/tools")
    assert conn.run(f"{remote}/tools/npu-info", timeout=10).stdout == b"info\n"
    assert conn.run(f"cat {remote}/tools/pkg/sub/m.py", timeout=10).stdout == b"x = 1\n"


def test_sftp_errors_are_one_sentence(conn: Connection, tmp_path: Path) -> None:
    with pytest.raises(TransferError, match="check that the file exists on the board"):
        conn.get("/nonexistent/file.npy", tmp_path / "x.npy")
    assert not (tmp_path / "x.npy").exists()
    with pytest.raises(TransferError, match="Local path .* does not exist"):
        conn.put(tmp_path / "missing", "/tmp/missing")
    src = tmp_path / "f"
    src.write_text("x")
    with pytest.raises(TransferError, match="remote directory exists"):
        conn.put(src, "/nonexistent-dir/f")


def test_temp_dirs_are_removed_at_close(twin_factory: TwinFactory) -> None:
    board = twin_factory(TwinSpec(name="tempclean"))
    before = sorted(p.name for p in board.board_path("/tmp").iterdir())
    c = Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts)
    made = [c.make_temp_dir(), c.make_temp_dir(prefix="npu-run")]
    for d in made:
        assert board.board_path(d).is_dir()
        c.run(f"mkdir {d}/sub && echo x > {d}/sub/f", timeout=10)
    c.close()
    assert sorted(p.name for p in board.board_path("/tmp").iterdir()) == before


def test_run_in_temp_dir_makes_the_dir_and_runs_in_one_command(twin_factory: TwinFactory) -> None:
    board = twin_factory(TwinSpec(name="tempone"))
    before = sorted(p.name for p in board.board_path("/tmp").iterdir())
    with Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts) as c:
        orphan = c.make_temp_dir()
        c.run(f"echo 999999999 >{orphan}/.npu-accept-owner", timeout=10)  # its session is gone
        started = _channels_opened(c)
        path, result = c.run_in_temp_dir(
            'cat >"$NPU_ACCEPT_TMP/in" && echo "out $NPU_ACCEPT_TMP" && echo oops >&2 && exit 3',
            timeout=10,
            input=b"data",
        )
        assert _channels_opened(c) == started + 1
        assert result.exit_code == 3
        assert result.stdout == f"out {path}\n".encode()
        assert result.stderr == b"oops\n"  # neither the PID mark nor the directory's announcement
        assert board.board_path(f"{path}/in").read_bytes() == b"data"
        assert not board.board_path(orphan).exists()  # the same command swept the orphan
        assert c._temp_dirs == [orphan, path]
    assert sorted(p.name for p in board.board_path("/tmp").iterdir()) == before


def test_run_in_temp_dir_bounds_stay_the_callers(conn: Connection) -> None:
    _, result = conn.run_in_temp_dir(
        "head -c 5000 /dev/zero; head -c 5000 /dev/zero >&2", 10, max_output=1000
    )
    assert (len(result.stdout), result.stdout_dropped) == (1000, 4000)
    assert (len(result.stderr), result.stderr_dropped) == (1000, 4000)


def test_run_in_temp_dir_of_a_timed_out_script_is_still_removed(twin_factory: TwinFactory) -> None:
    board = twin_factory(TwinSpec(name="tempslow"))
    before = sorted(p.name for p in board.board_path("/tmp").iterdir())
    c = Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts)
    with pytest.raises(CommandTimeout) as exc:
        c.run_in_temp_dir('touch "$NPU_ACCEPT_TMP/x"; echo late >&2; sleep 30', timeout=1)
    assert exc.value.stderr == b"late\n"
    (made,) = c._temp_dirs
    assert board.board_path(f"{made}/x").exists()
    c.close()
    assert sorted(p.name for p in board.board_path("/tmp").iterdir()) == before


def test_run_in_temp_dir_without_a_temp_dir_is_one_sentence(twin_factory: TwinFactory) -> None:
    board = twin_factory(TwinSpec(name="notmp", env={"TMPDIR": "/nonexistent"}))
    with Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts) as c:
        with pytest.raises(
            TransportError, match=r"^mktemp -d failed on .*check that /tmp on the board"
        ) as exc:
            c.run_in_temp_dir("echo never-run", timeout=10)
        assert "never-run" not in str(exc.value)
        with pytest.raises(TransportError, match=r"^mktemp -d failed on "):
            c.make_temp_dir()
        assert c._temp_dirs == []


def _channels_opened(connection: Connection) -> int:
    """Session channels the connection opened so far: one per command (the next one's is opened
    ahead as a command starts)."""
    return connection._client.get_transport()._channel_counter


# --- connecting: host keys, keys, unreachable -----------------------------------------------------


def test_unknown_host_key_is_rejected_by_default(twin: Twin, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    with pytest.raises(UnknownHostKey) as exc:
        Connection.open(twin.target, identity=twin.identity, known_hosts=known)
    message = str(exc.value)
    assert "--accept-new-host-key" in message and "ssh-keyscan" in message
    assert f"[127.0.0.1]:{twin.port}" in message
    assert known.read_text() == ""


def test_accept_new_host_key_is_opt_in_and_records_the_key(twin: Twin, tmp_path: Path) -> None:
    known = tmp_path / "sub" / "known_hosts"
    opened = Connection.open(twin.target, identity=twin.identity, known_hosts=known, accept_new_host_key=True)
    with opened as c:
        assert c.run("echo ok", timeout=10).stdout == b"ok\n"
    assert known.read_text() == twin.known_hosts_line + "\n"
    # the recorded key now verifies without the opt-in; OpenSSH's client agrees with the format
    with Connection.open(twin.target, identity=twin.identity, known_hosts=known) as c:
        assert c.run("true", timeout=10).exit_code == 0
    ssh = subprocess.run(
        [
            "ssh",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f"UserKnownHostsFile={known}",
            "-i",
            str(twin.identity),
            "-p",
            str(twin.port),
            "root@127.0.0.1",
            "echo ssh-ok",
        ],
        capture_output=True,
        timeout=30,
    )
    assert ssh.stdout == b"ssh-ok\n", ssh.stderr


def test_hashed_known_hosts_entries_verify(twin: Twin, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(twin.known_hosts_line + "\n")
    subprocess.run(["ssh-keygen", "-H", "-f", str(known)], check=True, capture_output=True)
    assert known.read_text().startswith("|1|")
    with Connection.open(twin.target, identity=twin.identity, known_hosts=known) as c:
        assert c.run("true", timeout=10).exit_code == 0


def test_accept_new_into_an_unwritable_known_hosts_is_one_sentence(twin: Twin, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    known = blocker / "known_hosts"  # its parent is a file: cannot be created, even by root
    with pytest.raises(UnknownHostKey, match="Cannot record the host key .* --known-hosts"):
        Connection.open(twin.target, identity=twin.identity, known_hosts=known, accept_new_host_key=True)


def test_changed_host_key_is_refused(twin: Twin, tmp_path: Path) -> None:
    other = _keygen(tmp_path / "other_host_key")
    pub = " ".join(Path(f"{other}.pub").read_text().split()[:2])
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{twin.port} {pub}\n")
    with pytest.raises(HostKeyChanged) as exc:
        Connection.open(twin.target, identity=twin.identity, known_hosts=known, accept_new_host_key=True)
    assert "ssh-keygen -R" in str(exc.value)


def test_wrong_client_key_is_refused_clearly(twin: Twin, tmp_path: Path) -> None:
    wrong = _keygen(tmp_path / "id_wrong")
    with pytest.raises(AuthenticationRefused) as exc:
        Connection.open(twin.target, identity=wrong, known_hosts=twin.known_hosts)
    assert str(wrong) in str(exc.value) and "--identity" in str(exc.value)


def test_missing_or_bad_identity_file(twin: Twin, tmp_path: Path) -> None:
    with pytest.raises(IdentityError, match="does not exist"):
        Connection.open(twin.target, identity=tmp_path / "nope", known_hosts=twin.known_hosts)
    junk = tmp_path / "junk"
    junk.write_text("not a key\n")
    with pytest.raises(IdentityError, match="not a usable private key"):
        Connection.open(twin.target, identity=junk, known_hosts=twin.known_hosts)


def test_unreachable_port_is_one_sentence(twin: Twin) -> None:
    port = _free_port()
    start = time.monotonic()
    with pytest.raises(HostUnreachable) as exc:
        Connection.open(f"root@127.0.0.1:{port}", identity=twin.identity, known_hosts=twin.known_hosts)
    assert time.monotonic() - start < 5
    assert "connection refused" in str(exc.value) and f"port {port}" in str(exc.value)


def test_silent_server_times_out(twin: Twin) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        start = time.monotonic()
        with pytest.raises(ConnectTimeout) as exc:
            Connection.open(
                f"root@127.0.0.1:{port}",
                identity=twin.identity,
                known_hosts=twin.known_hosts,
                connect_timeout=1,
            )
        assert time.monotonic() - start < 6
    assert "SSH handshake" in str(exc.value)


# --- reconnect ------------------------------------------------------------------------------------


def test_reconnect_after_sshd_restart(twin_factory: TwinFactory) -> None:
    board = twin_factory(TwinSpec(name="reboot"))
    c = Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts)
    assert c.run("echo before", timeout=10).stdout == b"before\n"
    board.kill_sshd()
    with pytest.raises(ConnectionLost):
        c.run("echo during", timeout=10)
    restarter = threading.Timer(1.0, board.start_sshd)
    restarter.start()
    try:
        c.reconnect(wait_s=20)
    finally:
        restarter.join()
    assert c.run("echo after", timeout=10).stdout == b"after\n"
    c.close()


def test_reconnect_gives_up_at_its_deadline(twin_factory: TwinFactory) -> None:
    board = twin_factory(TwinSpec(name="dead"))
    c = Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts)
    board.kill_sshd()
    start = time.monotonic()
    with pytest.raises(BoardDidNotReturn) as exc:
        c.reconnect(wait_s=1.5)
    assert time.monotonic() - start < 5
    assert "did not answer within 1.5 s" in str(exc.value)
    board.start_sshd()
    c.reconnect(wait_s=10)
    assert c.run("true", timeout=10).exit_code == 0
    c.close()


# --- a board is untrusted: bounded output, deadlines, clean transfers -----------------------------


def test_output_beyond_the_limit_is_counted_and_dropped(conn: Connection) -> None:
    cmd = "head -c 3000000 /dev/zero; head -c 2500000 /dev/zero >&2"
    result = conn.run(cmd, timeout=30, max_output=1 << 20)
    assert result.exit_code == 0
    assert len(result.stdout) == len(result.stderr) == 1 << 20
    assert result.stdout_dropped == 3000000 - (1 << 20)
    assert result.stderr_dropped == 2500000 - (1 << 20)


def test_endless_output_is_killed_at_the_flood_limit(conn: Connection) -> None:
    start = time.monotonic()
    with pytest.raises(OutputFlood) as exc:
        conn.run("echo started; cat /dev/zero", timeout=120, max_output=1 << 16, flood_limit=8 << 20)
    assert time.monotonic() - start < 20
    message = str(exc.value)
    assert "printed more than 8 MiB" in message and "was killed" in message
    assert exc.value.stdout.startswith(b"started\n") and len(exc.value.stdout) == 1 << 16
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = conn.run("ps -eo args | grep -c '^cat /dev/zero' || true", timeout=10).text().strip()
        if left == "0":
            break
        time.sleep(0.1)
    assert left == "0"


def test_board_text_is_made_visible_and_bounded() -> None:
    hostile = "ok\x1b]0;pwned\x07\x1b[2J\r\nnext\u202eevil\x00" + "x" * 1000
    shown = visible(hostile, limit=60)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown and "\x00" not in shown
    assert shown.startswith("ok\\e]0;pwned\\x07\\e[2J\\r\\nnext\\u202eevil\\x00")
    assert shown.endswith(f"… ({len(hostile)} characters in all)") and len(shown) < 100
    assert visible(b"caf\xc3\xa9 \xff") == "café \ufffd"


def test_a_stalled_download_ends_at_the_progress_deadline(conn: Connection, tmp_path: Path) -> None:
    remote = conn.make_temp_dir()
    conn.run(f"mkfifo {remote}/never", timeout=10)  # nobody ever writes: cat waits forever
    local = tmp_path / "never.bin"
    start = time.monotonic()
    with pytest.raises(TransferError, match="moved no byte for 1 s"):
        conn.get(f"{remote}/never", local, progress_timeout=1)
    assert time.monotonic() - start < 6
    assert not local.exists() and not local.with_name("never.bin.part").exists()
    assert conn.run("true", timeout=10).exit_code == 0


def test_a_download_above_its_limit_is_refused(conn: Connection, tmp_path: Path) -> None:
    remote = conn.make_temp_dir()
    conn.run(f"head -c 5000000 /dev/zero > {remote}/big", timeout=10)
    with pytest.raises(TransferError, match="larger than the limit of 1 MiB"):
        conn.get(f"{remote}/big", tmp_path / "big", max_bytes=1 << 20)
    assert list(tmp_path.iterdir()) == []


def _twin_pids(board: Twin, comm: str) -> list[int]:
    return [pid for pid, name in board.pids().items() if name == comm]


def test_a_stalled_upload_ends_and_leaves_no_partial_file(twin_factory: TwinFactory, tmp_path: Path) -> None:
    board = twin_factory(TwinSpec(name="stall-up"))
    src = tmp_path / "blob"
    src.write_bytes(os.urandom(48 << 20))
    with Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts) as c:
        remote = c.make_temp_dir()
        stopper = threading.Thread(target=_stop_cat_when_it_runs, args=(board,))
        stopper.start()
        try:
            with pytest.raises(TransferError, match="moved no byte for 2 s"):
                c.put(src, f"{remote}/blob", progress_timeout=2)
        finally:
            stopper.join()
        left = c.run(f"ls -A {remote}", timeout=10).text().split()
        assert left == [".npu-accept-owner"]


def _stop_cat_when_it_runs(board: Twin) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pids = _twin_pids(board, "cat")
        if pids:
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            return
        time.sleep(0.01)


@pytest.mark.parametrize("direction", ["upload", "download"])
def test_a_link_dropped_mid_transfer_is_one_sentence(
    twin_factory: TwinFactory, tmp_path: Path, direction: str
) -> None:
    board = twin_factory(TwinSpec(name=f"drop-{direction}"))
    blob = tmp_path / "blob"
    blob.write_bytes(os.urandom(256 << 20))
    c = Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts)
    remote = c.make_temp_dir()
    if direction == "download":
        c.put(blob, f"{remote}/blob")
    killer = threading.Timer(0.3, board.kill_sshd)
    killer.start()
    try:
        with pytest.raises(TransferError) as exc:
            if direction == "upload":
                c.put(blob, f"{remote}/blob")
            else:
                c.get(f"{remote}/blob", tmp_path / "back")
    finally:
        killer.join()
    message = str(exc.value)
    assert f"dropped during the {direction}" in message and message.count(";") == 1, message
    assert not (tmp_path / "back").exists() and not (tmp_path / "back.part").exists()
    board.start_sshd()
    c.reconnect(wait_s=20)
    if direction == "upload":  # the board's shell saw the stream end short and removed its part
        deadline = time.monotonic() + 5
        while c.run(f"ls -A {remote}", timeout=10).text().split() != [".npu-accept-owner"]:
            assert time.monotonic() < deadline, c.run(f"ls -A {remote}", timeout=10).text()
            time.sleep(0.1)
    c.close()


def test_temp_dir_of_a_dropped_link_is_removed_by_the_next_connection(twin_factory: TwinFactory) -> None:
    board = twin_factory(TwinSpec(name="sweep"))
    first = Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts)
    orphan = first.make_temp_dir()
    board.kill_sshd()  # the link is gone: close() cannot remove it
    first.close()
    board.start_sshd()
    assert board.board_path(orphan).is_dir()
    with Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts) as second:
        mine = second.make_temp_dir()
        assert not board.board_path(orphan).exists()
        assert board.board_path(mine).is_dir()
        with Connection.open(board.target, identity=board.identity, known_hosts=board.known_hosts) as third:
            third.make_temp_dir()
            assert board.board_path(mine).is_dir()  # a live session's directory is kept


class _SilentExecServer(paramiko.ServerInterface):
    """A hostile board: authenticates, opens channels, and never answers a command."""

    def __init__(self, key: paramiko.PKey) -> None:
        self.key = key

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        return paramiko.AUTH_SUCCESSFUL

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_channel_request(self, kind: str, chanid: int) -> int:
        return paramiko.OPEN_SUCCEEDED

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes) -> bool:
        time.sleep(3600)
        return False


def test_a_board_that_never_starts_a_command_is_given_up(twin: Twin, tmp_path: Path) -> None:
    host_key = paramiko.Ed25519Key.from_private_key_file(str(_keygen(tmp_path / "host")))
    known = tmp_path / "known_hosts"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        known.write_text(f"[127.0.0.1]:{port} {host_key.get_name()} {host_key.get_base64()}\n")

        def serve() -> None:
            sock, _ = listener.accept()
            server = paramiko.Transport(sock)
            server.add_server_key(host_key)
            server.start_server(server=_SilentExecServer(host_key))
            channel = server.accept(20)  # held: paramiko closes a channel nobody references
            time.sleep(30)
            del channel

        threading.Thread(target=serve, daemon=True).start()
        c = Connection.open(
            f"root@127.0.0.1:{port}", identity=twin.identity, known_hosts=known, connect_timeout=2
        )
        start = time.monotonic()
        with pytest.raises(ConnectionLost) as exc:
            c.run("echo hi", timeout=60)
        assert time.monotonic() - start < 5
        assert "did not start 'echo hi' within 2 s" in str(exc.value)
        c.close()


def test_paramiko_private_api_is_still_there() -> None:
    # transport.py reads OpenSSH's exit-signal through these (paramiko has no public hook);
    # pyproject.toml pins paramiko below the next minor release for that reason. If this fails,
    # paramiko changed them: port _handle_channel_request, then move the pin.
    table = getattr(paramiko.Transport, "_channel_handler_table", None)
    assert isinstance(table, dict) and MSG_CHANNEL_REQUEST in table, (
        "Transport._channel_handler_table changed"
    )
    assert table[MSG_CHANNEL_REQUEST] is paramiko.Channel._handle_request, "Channel._handle_request changed"
    assert _Transport._channel_handler_table[MSG_CHANNEL_REQUEST] is not table[MSG_CHANNEL_REQUEST]
    # _send_open replicates the first half of Transport.open_channel with these, _exec_request
    # Channel.exec_command without its unbounded wait for the answer.
    for name in ("_sanitize_window_size", "_sanitize_packet_size", "_next_channel", "_send_user_message"):
        assert callable(getattr(paramiko.Transport, name, None)), f"Transport.{name} changed"
    for name in ("_set_transport", "_set_window"):
        assert callable(getattr(paramiko.Channel, name, None)), f"Channel.{name} changed"
    assert hasattr(paramiko.common, "cMSG_CHANNEL_OPEN") and hasattr(paramiko.common, "cMSG_CHANNEL_REQUEST")


def test_commands_after_the_first_use_a_channel_opened_ahead(
    twin: Twin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One round trip a command: the next session channel's open request goes out as a command
    starts, without a thread; only the first command opens its own."""
    opened = []
    real = paramiko.Transport.open_session

    def counting(self, *args, **kwargs):
        opened.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(paramiko.Transport, "open_session", counting)
    with Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts) as c:
        for n in range(5):
            assert c.run(f"echo {n}", timeout=10).stdout == f"{n}\n".encode()
        # paramiko's own thread only: no helper thread of ours per connection
        assert not [t.name for t in threading.enumerate() if t.name.startswith("npu-accept-")]
        live = [ch for ch in c._client.get_transport()._channels.values() if not ch.closed]
    assert len(opened) == 1
    assert len(live) <= 1  # the unused spare at most, closed with the connection


def test_paramiko_loads_without_invoke_which_match_exec_still_imports_on_use():
    """npu_accept.sshlib holds back paramiko's eager import of invoke (0.05-0.08 s of start-up);
    an ssh_config ``Match exec`` line still runs through invoke, imported when first used."""
    probe = (
        "import sys\n"
        "import npu_accept.transport, paramiko\n"
        "print('invoke' in sys.modules, 'asyncio' in sys.modules)\n"
        "config = paramiko.SSHConfig.from_text('Match exec true\\n  User matched\\n')\n"
        "print(config.lookup('board').get('user'), 'invoke' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["False False", "matched True"], proc.stdout


def _known_hosts_corpus(tmp_path: Path, board: str, board_line: str) -> str:
    """A lab's known_hosts: many other hosts (plain, hashed, in lists), comments, markers, bad lines,
    a second key type and a second (different) key for some names, and the board's own line."""
    rng = random.Random(7)
    keys = [" ".join(Path(f"{_keygen(tmp_path / f'k{i}')}.pub").read_text().split()[:2]) for i in range(3)]
    rsa = tmp_path / "k_rsa"
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)], check=True)
    keys.append(" ".join(Path(f"{rsa}.pub").read_text().split()[:2]))
    lines = ["# lab hosts", ""]
    for n in range(300):
        name = f"[10.0.{n // 250}.{n % 250}]:22" if n % 3 else f"host{n}.lab"
        line = f"{name} {rng.choice(keys)}"
        if n % 7 == 0:
            line = f"{name},alias{n} {rng.choice(keys)}"
        lines.append(line)
    lines += [
        f"other.lab,{board} {keys[3]}",
        f"{board} {board_line.split(' ', 1)[1]}",
        f"{board} {board_line.split(' ', 1)[1]}",
    ]
    rng.shuffle(lines)
    # a second ed25519 key for the board after its real one: the first of a type wins
    return "\n".join([*lines, f"{board} {keys[1]}"]) + "\n"


# Lines paramiko skips (an unknown key type, too few fields); ssh-keygen -H refuses a file holding them.
_ODD_KNOWN_HOSTS = "{board} ssh-unknown-type AAAA\ntruncated-line-without-key\n"


def _lookups(keys: paramiko.HostKeys, names: list[str]) -> dict[str, dict[str, str] | None]:
    found = {}
    for name in names:
        entry = keys.lookup(name)
        found[name] = None if entry is None else {t: entry[t].get_base64() for t in entry.keys()}
    return found


@pytest.mark.parametrize("hashed", [False, True])
def test_known_hosts_lines_of_the_board_load_as_paramiko_loads_the_whole_file(
    twin: Twin, tmp_path: Path, hashed: bool
) -> None:
    """_load_host_keys keeps what paramiko's HostKeys.load keeps for the board's name, in the same
    order (the first key of a type wins), from a file of hundreds of other hosts."""
    board = f"[127.0.0.1]:{twin.port}"
    known = tmp_path / "known_hosts"
    known.write_text(_known_hosts_corpus(tmp_path, board, twin.known_hosts_line))
    if hashed:
        subprocess.run(["ssh-keygen", "-H", "-f", str(known)], check=True, capture_output=True)
    with known.open("a") as f:
        f.write(_ODD_KNOWN_HOSTS.format(board=board))
    names = [board, "host3.lab", "[10.0.0.1]:22", "alias7", "other.lab", "nobody"]
    expected = _lookups(paramiko.HostKeys(str(known)), names)
    for name in names:
        ours = paramiko.HostKeys()
        _load_host_keys(ours, known, name)
        assert _lookups(ours, [name]) == {name: expected[name]}, name
    assert expected[board] is not None and expected["nobody"] is None


def test_connecting_parses_only_the_boards_known_hosts_lines(
    twin: Twin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One shared known_hosts for a fleet: each connection parses its own board's key, not the
    fleet's (paramiko's HostKeys.load parses every line and matches each against all before it)."""
    other = " ".join(Path(f"{_keygen(tmp_path / 'other')}.pub").read_text().split()[:2])
    known = tmp_path / "known_hosts"
    lines = [f"[10.1.{n // 200}.{n % 200}]:22 {other}" for n in range(400)]
    known.write_text("\n".join(lines[:200] + [twin.known_hosts_line] + lines[200:]) + "\n")
    parsed: list[str] = []
    real = paramiko.hostkeys.HostKeyEntry.from_line

    def counting(line: str, lineno: int | None = None) -> paramiko.hostkeys.HostKeyEntry | None:
        parsed.append(line)
        return real(line, lineno)

    monkeypatch.setattr(paramiko.hostkeys.HostKeyEntry, "from_line", counting)
    with Connection.open(twin.target, identity=twin.identity, known_hosts=known) as c:
        assert c.run("true", timeout=10).exit_code == 0
    assert parsed == [twin.known_hosts_line]


def test_a_broken_or_marked_known_hosts_line_of_the_board_is_one_sentence_of_another_host_ignored(
    twin: Twin, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    other = f"@revoked other.lab {twin.known_hosts_line.split(' ', 1)[1]}"
    known.write_text(f"other.lab ssh-ed25519 not-base64!!\n{other}\n{twin.known_hosts_line}\n")
    with Connection.open(twin.target, identity=twin.identity, known_hosts=known) as c:
        assert c.run("true", timeout=10).exit_code == 0
    known.write_text(f"[127.0.0.1]:{twin.port} ssh-ed25519 not-base64!!\n{twin.known_hosts_line}\n")
    with pytest.raises(UnknownHostKey) as exc:
        Connection.open(twin.target, identity=twin.identity, known_hosts=known)
    assert str(exc.value) == (
        f"Cannot read known_hosts file {known} (line 1 holds no valid key for [127.0.0.1]:{twin.port}); "
        "fix or remove the bad line."
    )
    known.write_text(f"{twin.known_hosts_line}\n@revoked {twin.known_hosts_line}\n")
    with pytest.raises(UnknownHostKey) as exc:
        Connection.open(twin.target, identity=twin.identity, known_hosts=known)
    assert f"line 2 marks [127.0.0.1]:{twin.port} @revoked, which the suite cannot evaluate" in str(exc.value)
