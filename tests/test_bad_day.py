# SPDX-License-Identifier: MIT
"""A lab's bad day (issue 28): killed runs, full disks, boards nobody can reach. Every test is a
case that broke before: the real suite in its own process, against board twins, a signal sent
to that process, a 64 KiB or 2 MiB tmpfs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from twins.boards_run import REPO, read_junit, run_on_twin, run_suite

from npu_accept.checks.base import CHECK_ORDER
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bad-day")


@pytest.fixture(scope="module")
def profile(work: Path) -> Path:
    return imx95_twin_profile(work / "profile", runs=3)


@pytest.fixture(scope="module")
def healthy(twin_factory, work: Path):
    return twin_factory(imx95_spec(HEALTHY, imx95_assets(work / "assets")))


def _refusing_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # bound, never listening: connections are refused


def test_no_board_reachable_still_gives_a_junit_case_per_board_and_check(tmp_path, profile):
    # Why: exit 3 with a JUnit file holding no test case, and paramiko's raw traceback printed.
    known = tmp_path / "known_hosts"
    known.write_text("")
    targets = [f"root@127.0.0.1:{_refusing_port()}", f"root@127.0.0.1:{_refusing_port()}"]
    run = run_suite(targets, profile, tmp_path / "run", None, known)
    assert run.returncode == 3, run.describe()
    assert {(c.target, c.check) for c in run.cases} == {(t, c) for t in targets for c in CHECK_ORDER}
    assert all(c.status == "fail" and "Cannot reach" in c.message for c in run.cases), run.describe()
    assert "Traceback" not in run.stdout + run.stderr, run.stderr
    assert set(run.summary()) == set(targets)


def _suite(twin, profile: Path, workdir: Path, extra: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "pytest", "pytests", "-p", "no:cacheprovider", "-q"]
    argv += ["--target", twin.target, "--board", str(profile), "--identity", str(twin.identity)]
    argv += ["--known-hosts", str(twin.known_hosts), "--junitxml", str(workdir / "junit.xml")]
    argv += ["--artifacts", str(workdir / "artifacts"), *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # As a user's foreground run: a shell that starts CI in the background leaves SIGINT ignored
    # in its children, and the suite would then never see the Ctrl-C the test sends.
    return subprocess.Popen(
        argv,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_mid_run_keeps_the_verdict_the_reports_and_the_board(healthy, work, tmp_path, signum):
    # Why: SIGTERM (what CI timeouts send) mid-run: exit -15, no report of any kind, temp dirs left
    # on the board; SIGINT reported the board "was not examined" though it was examined to the end.
    # Many timed runs keep the examination going well past npu-info on a loaded machine, so the
    # signal lands mid-run (with 3 runs the whole run could end before it arrived).
    profile = imx95_twin_profile(tmp_path / "profile", runs=400)
    proc = _suite(healthy, profile, tmp_path, ("--lava-signals",))
    board_dir = tmp_path / "artifacts" / healthy.target.replace("@", "_").replace(":", "_")
    deadline = time.monotonic() + 120
    while not (board_dir / "npu-info.json").exists():  # the board is being examined
        assert proc.poll() is None and time.monotonic() < deadline, "the suite never examined the board"
        time.sleep(0.05)
    proc.send_signal(signum)
    stdout, stderr = (s.decode("utf-8", "replace") for s in proc.communicate(timeout=300))
    assert proc.returncode == 2, (proc.returncode, stdout[-2000:], stderr[-2000:])
    assert "Traceback" not in stderr, stderr
    summary = json.loads((tmp_path / "artifacts" / "summary.json").read_text())
    board = summary[healthy.target]
    assert "was not examined" not in json.dumps(board) and board["accepted"] is True, board
    cases = read_junit(tmp_path / "junit.xml")
    assert sorted(c.check for c in cases) == sorted(CHECK_ORDER)
    assert all(c.status != "fail" for c in cases), cases
    assert (tmp_path / "artifacts" / "report.md").stat().st_size > 0
    for check in CHECK_ORDER:  # LAVA gets a result per test case too
        assert stdout.count(f"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={check} RESULT=") == 1, (
            check,
            stdout[-3000:],
        )
    left = [p for p in healthy.board_path("/tmp").iterdir() if p.name.startswith("npu-accept.")]
    assert not left, left


def test_artifacts_and_junit_on_a_full_disk_are_one_sentence(healthy, profile, tiny_disk):
    # Why: --artifacts and --junitxml on a 64 KiB tmpfs ended in pytest's junitxml traceback, no
    # report; report.md left at 0 bytes and every board "could not be judged: an unexpected OSError".
    (tiny_disk / "filler").write_bytes(b"x" * (56 << 10))  # 8 KiB left: less than the reports need
    proc = _suite(healthy, profile, tiny_disk)
    stdout, stderr = (s.decode("utf-8", "replace") for s in proc.communicate(timeout=300))
    assert "Traceback" not in stdout + stderr and "INTERNALERROR" not in stdout + stderr, stderr
    assert "unexpected OSError" not in stdout, stdout[-3000:]
    assert (
        f"the JUnit file {tiny_disk / 'junit.xml'} could not be written (No space left on device)" in stderr
    )
    assert proc.returncode == 0, (proc.returncode, stdout[-2000:], stderr[-2000:])  # the verdict stands
    assert f"npu-accept: the reports could not be written to {tiny_disk / 'artifacts'} in full" in stderr
    assert "the disk is full (No space left on device)" in stderr
    for path in (tiny_disk / "artifacts").glob("*.*"):
        assert path.stat().st_size > 0, path  # whole or absent


# ------------------------------------------------- what the suite changes on a board, it restores


@pytest.fixture(scope="module")
def rk3588(twin_factory, work: Path):
    from twins.boards_rockchip import (
        HEALTHY_RK3588,
        MOBILENET_INPUT,
        MOBILENET_OUTPUT,
        rockchip_assets,
        rockchip_spec,
        twin_model,
    )

    model = twin_model([MOBILENET_INPUT], [MOBILENET_OUTPUT])
    return twin_factory(rockchip_spec(HEALTHY_RK3588, rockchip_assets(work / "rk-assets"), model))


GOVERNORS = {  # tests/twins/boards_rockchip.py: what the RK3588 twin's governors start as
    "/sys/class/devfreq/fdab0000.npu/governor": "simple_ondemand",
    "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor": "schedutil",
    "/sys/devices/system/cpu/cpufreq/policy4/scaling_governor": "schedutil",
}


def _governors(twin) -> dict[str, str]:
    return {path: twin.board_path(path).read_text().strip() for path in GOVERNORS}


def _connect(twin):
    from npu_accept.transport import Connection

    return Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts)


def test_a_second_run_waits_for_the_board_lock_then_names_the_holder(healthy):
    from npu_accept.boardlock import BoardBusy, board_lock

    first, second = _connect(healthy), _connect(healthy)
    try:
        with board_lock(first):
            with pytest.raises(BoardBusy) as info:
                with board_lock(second, wait_s=1.5):
                    pass
            assert "the board is being examined by another run (npu-accept on " in str(info.value)
            assert f"(pid {os.getpid()})" in str(info.value)
        with board_lock(second, wait_s=0):  # released: free again
            pass
        with board_lock(first):
            first.close()  # a run that dies holding the lock: its session process goes
            with board_lock(second, wait_s=5):  # … and its stale lock is taken over
                pass
    finally:
        first.close()
        second.close()


def _die_inside_pinned(board) -> None:
    """A run that dies inside the pinned block: its link is gone, so its restore cannot reach the
    board any more and the governors stay pinned."""
    from npu_accept.collectors.governors import pinned

    killed = _connect(board)
    with pytest.raises(Exception):  # noqa: B017, PT011 - the lost link, raised by the restore
        with pinned(killed, {}):
            killed.close()
            raise RuntimeError("killed")


def test_governors_left_pinned_by_a_killed_run_are_restored_by_the_next(rk3588):
    # Why: a run killed while governors were pinned left them pinned, and the next run read the
    # pinned values as "before" and "restored" them to performance.
    from npu_accept.collectors.governors import SAVED_PATH, pinned

    _die_inside_pinned(rk3588)
    assert set(_governors(rk3588).values()) == {"performance"}
    assert rk3588.board_path(SAVED_PATH).is_file()
    record: dict = {}
    with _connect(rk3588) as following, pinned(following, record):
        assert set(_governors(rk3588).values()) == {"performance"}
    assert record["governors"] == GOVERNORS and record["recovered"] == sorted(GOVERNORS)
    assert record["restored"] is True and _governors(rk3588) == GOVERNORS
    assert not rk3588.board_path(SAVED_PATH).exists()
    # The next run restores them first, under the board lock, before it runs anything.
    from npu_accept.boardlock import board_lock
    from npu_accept.collect import RECOVERY_SH

    _die_inside_pinned(rk3588)
    assert set(_governors(rk3588).values()) == {"performance"}
    with _connect(rk3588) as following, board_lock(following, recover=RECOVERY_SH):
        assert _governors(rk3588) == GOVERNORS and not rk3588.board_path(SAVED_PATH).exists()


def test_two_runs_pinning_at_once_leave_the_governors_as_they_were(rk3588):
    # Why: two runs on the same RK3588 boards, the second 3 s after the first: both said the
    # governors were "pinned to performance and restored after"; every board stayed at
    # performance (the second read the first one's pinned values as "before"). The board lock
    # keeps whole examinations apart; this is the pinning alone, interleaved as it was then.
    from npu_accept.collectors.governors import pinned

    first_record: dict = {}
    second_record: dict = {}
    with _connect(rk3588) as first, _connect(rk3588) as second:
        first_pin = pinned(first, first_record)
        first_pin.__enter__()
        second_pin = pinned(second, second_record)
        second_pin.__enter__()
        first_pin.__exit__(None, None, None)  # the first run ends first …
        second_pin.__exit__(None, None, None)  # … and the second puts back what it took for "before"
    assert second_record["governors"] == GOVERNORS, second_record
    assert _governors(rk3588) == GOVERNORS


def test_a_daemon_no_supervisor_restarts_is_started_again(twin_factory, work):
    # Why: check 3 kills rknn_server to test its supervisor; where there is none, the verdict was
    # right and the board was left without its daemon.
    from twins.boards_rockchip import (
        MOBILENET_INPUT,
        MOBILENET_OUTPUT,
        RockchipBoard,
        rockchip_assets,
        rockchip_spec,
        twin_model,
    )

    from npu_accept.daemon_restart import collect_daemon_restart, daemon_pids
    from npu_accept.facts import BoardFacts
    from npu_accept.profile import load_profile

    board = RockchipBoard(name="rk3588-unsupervised", server_supervised=False)
    model = twin_model([MOBILENET_INPUT], [MOBILENET_OUTPUT])
    twin = twin_factory(rockchip_spec(board, rockchip_assets(work / "rk-assets"), model))
    profile = load_profile("rk3588-evb")
    artifacts = work / "unsupervised"
    artifacts.mkdir()
    with _connect(twin) as link:
        before = daemon_pids(link, "rknn_server")
        record = collect_daemon_restart(link, "/tmp", BoardFacts("t", info={}), profile, artifacts)
        record = record["daemon_restart"]
        assert before and record["restarted"] is False and record["restarted_by_suite"] is True, record
        after = daemon_pids(link, "rknn_server")
        assert after and set(after).isdisjoint(before)
        # A run killed between its kill and the restart leaves the board's record; the next run
        # starts the daemon again before it examines the board.
        from npu_accept.boardlock import board_lock
        from npu_accept.collect import RECOVERY_SH
        from npu_accept.daemon_restart import KILLED_PATH, note_kill

        note_kill(link, "rknn_server", "/usr/bin/rknn_server")
        link.run("kill -9 " + " ".join(map(str, after)), timeout=30)
        deadline = time.monotonic() + 10
        while daemon_pids(link, "rknn_server") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not daemon_pids(link, "rknn_server")
        with board_lock(link, recover=RECOVERY_SH):  # what the next run does first
            pass
        deadline = time.monotonic() + 10
        while not daemon_pids(link, "rknn_server"):
            assert time.monotonic() < deadline, "the next run did not start the daemon again"
            time.sleep(0.1)
        assert not twin.board_path(KILLED_PATH).exists()


# ------------------------------------------------------------------ sentences naming the real cause


def _banner_then_close() -> tuple[int, threading.Thread]:
    """A server that speaks an SSH banner, reads the client's key exchange and hangs up."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve() -> None:
        with server:
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n")
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    conn.recv(4096)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server.getsockname()[1], thread


def test_a_close_during_the_handshake_is_said_so_and_paramiko_prints_nothing(tmp_path, capfd):
    # Why: "Cannot reach … check that the board is up" (it was up and spoke SSH), and paramiko's
    # raw traceback printed on the terminal.
    from npu_accept.transport import Connection, TransportError

    port, thread = _banner_then_close()
    known = tmp_path / "known_hosts"
    known.write_text("")
    with pytest.raises(TransportError) as info:
        Connection.open(f"root@127.0.0.1:{port}", known_hosts=known, accept_new_host_key=True)
    thread.join(10)
    assert "closed the connection during the SSH handshake" in str(info.value), info.value
    assert "Cannot reach" not in str(info.value)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "paramiko" not in err, err


# ------------------------------------------------------------------- host tools on odd inputs


def _npy(path: Path) -> Path:
    import numpy as np

    np.save(path, np.linspace(-1, 1, 1000, dtype=np.float32))
    return path


def _compare_in_time(argv: list[str], seconds: float = 10) -> int:
    from npu_accept.compare_cli import main

    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"npu-compare {' '.join(argv)} still runs after {seconds} s"
    return result[0]


def test_npu_compare_never_blocks_on_a_fifo_without_writer(tmp_path, capsys):
    # Why: npu-compare hung forever on a FIFO with no writer.
    fifo = tmp_path / "out.npy"
    os.mkfifo(fifo)
    assert _compare_in_time([str(_npy(tmp_path / "ref.npy")), str(fifo)]) == 2
    assert "is a pipe that sent nothing" in capsys.readouterr().err


def test_npu_compare_reads_a_pipe_fully(tmp_path, capsys):
    # Why: a valid .npy from a pipe was misread ("holds -128 bytes").
    ref = _npy(tmp_path / "ref.npy")
    fifo = tmp_path / "out.npy"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("wb") as stream:
            stream.write(ref.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert _compare_in_time([str(ref), str(fifo)]) == 0, capsys.readouterr().err
    assert "MATCH" in capsys.readouterr().out


def test_a_full_board_tmp_is_named(twin_factory, work, profile, tmp_path):
    # Why: a board whose /tmp is 64 KiB got "npu-info printed nothing … tar: Exiting with failure
    # status …; check that python3 runs on the board": the "No space left" line hidden, the fix wrong.
    twin = twin_factory(imx95_spec(HEALTHY, imx95_assets(work / "assets")))
    init = twin._init_pid()
    inside = str(twin.directory / "mnt" / "root" / "tmp")
    done = subprocess.run(
        ["nsenter", "-t", str(init), "-m", "mount", "-o", "remount,size=64k", inside], capture_output=True
    )
    assert done.returncode == 0, done.stderr
    run = run_suite([twin.target], profile, tmp_path / "run", twin.identity, twin.known_hosts)
    assert run.returncode == 1, run.describe()
    cause = run.summary()[twin.target]["root_cause"]
    assert cause and "the board's /tmp is full (No space left on device" in cause, cause
    assert "check that python3 runs" not in cause


def test_a_full_artifacts_disk_drops_bulky_evidence_first(tiny_disk):
    # Why: one chatty board filled a 2 MiB disk and the healthy boards lost their verdicts
    # ("could not be judged: an unexpected OSError"). Evidence is kept while there is room.
    from npu_accept.artifacts import keep

    assert keep(tiny_disk / "npu-info.json", b"{}") is True
    assert keep(tiny_disk / "out0.npy", b"x" * 1024, bulky=True) is False  # under the reserve: dropped
    assert keep(tiny_disk / "big.json", b"x" * (128 << 10)) is False  # the disk is full: no raise
    assert not (tiny_disk / "big.json").exists() and not (tiny_disk / "out0.npy").exists()


@pytest.mark.parametrize("tiny_disk", ["2m"], indirect=True)
def test_one_chatty_board_on_a_2_mib_disk_costs_no_board_its_verdict(
    twin_factory, work, healthy, profile, tiny_disk
):
    # Why: one chatty board (within the documented bounds) filled a 2 MiB disk and the healthy
    # boards lost their verdicts ("could not be judged: an unexpected OSError"). The real suite,
    # a fleet of the chatty twin and two healthy ones, --artifacts and --junitxml on a 2 MiB tmpfs.
    from twins.boards_hostile import CHATTY_BYTES, chatty_spec

    from npu_accept.collect import board_dir_name
    from npu_accept.sim.harness import fleet_access

    assets = imx95_assets(work / "assets")
    chatty = twin_factory(chatty_spec(assets))
    other = twin_factory(imx95_spec(replace(HEALTHY, name="imx95-healthy-2"), assets))
    twins = [chatty, healthy, other]
    identity, known_hosts = fleet_access(twins, work / "chatty-access")
    targets = [t.target for t in twins]
    run = run_suite(targets, profile, tiny_disk, identity, known_hosts)
    assert "Traceback" not in run.stdout + run.stderr and "INTERNALERROR" not in run.stdout, run.describe()
    assert "could not be written" not in run.stderr, run.stderr  # every report, in full
    assert run.returncode == 0, run.describe()
    summary = run.summary()
    assert list(summary) == targets
    for target in targets:
        assert summary[target]["accepted"] is True, summary[target]
    assert {(c.target, c.check) for c in run.cases} == {(t, c) for t in targets for c in CHECK_ORDER}
    assert all(c.status == "pass" for c in run.cases), run.describe()
    artifacts = tiny_disk / "artifacts"
    report = (artifacts / "report.md").read_text()
    assert all(t in report for t in targets), report[:2000]
    for name in ("report.html", "baseline.json"):
        assert (artifacts / name).stat().st_size > 0, name
    for twin in (healthy, other):  # the healthy boards' own small files are kept too
        assert (artifacts / board_dir_name(twin.target) / "npu-info.json").stat().st_size > 0
    # The chatty board did print more than the disk holds: three tool runs on stderr, its kernel log.
    trace = (artifacts / board_dir_name(chatty.target) / "trace.jsonl").read_text()
    chatter = [r for r in map(json.loads, trace.splitlines()) if r.get("bytes_out", 0) >= CHATTY_BYTES]
    assert len(chatter) >= 4 and 4 * CHATTY_BYTES > 2 << 20, trace[-3000:]


# ------------------------------------------------------------------ --keep-tools: two runs, a kill


@pytest.fixture(scope="module")
def hooked(twin_factory, work: Path):
    from twins.boards_hostile import upload_hook_spec

    return twin_factory(upload_hook_spec(imx95_assets(work / "assets")))


def _hook(twin, name: str) -> Path:
    from twins.boards_hostile import HOOK_DIR

    return twin.board_path(f"{HOOK_DIR}/{name}")


def _fresh_for_keep_tools(twin) -> None:
    """The board as before its first --keep-tools run, and the hook armed for the next install."""
    for kept in twin.board_path("/tmp").glob("npu-accept-tools-*"):
        shutil.rmtree(kept)
    shutil.rmtree(_hook(twin, ""), ignore_errors=True)
    _hook(twin, "").mkdir()
    _hook(twin, "armed").touch()


def _wait_for(condition, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {seconds:.0f} s"
        time.sleep(0.02)


def _installing(twin) -> bool:
    """Whether a --keep-tools install (a shell or tar working on a `.part` directory) runs on the board."""
    for pid in twin.pids():
        with contextlib.suppress(OSError):
            if b".part." in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
    return False


def _took(proc: subprocess.Popen[bytes], signum: int) -> bool:
    """Whether a process has taken a signal sent to it: it is gone, or the signal has reached the
    handler it set (/proc/PID/status: caught, no longer pending). pytest holds the suite's stderr
    until the session ends, so its sentence on the signal cannot tell this."""
    if proc.poll() is not None:
        return True
    bit = 1 << (signum - 1)
    with contextlib.suppress(OSError):
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
        )
        if not int(status["SigCgt"], 16) & bit:
            return False  # not caught: the default action ends the process, wait for that
        pending = [int(status["ShdPnd"], 16)]
        for task in Path(f"/proc/{proc.pid}/task").iterdir():
            with contextlib.suppress(OSError):
                line = next(x for x in (task / "status").read_text().splitlines() if x.startswith("SigPnd:"))
                pending.append(int(line.split(":", 1)[1], 16))
        return not any(p & bit for p in pending)
    return proc.poll() is not None


class _Output:
    """Both streams of a suite process, read as they come (stderr line by line)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.err: list[bytes] = []
        self.out = b""

        def err() -> None:
            for line in iter(proc.stderr.readline, b""):
                self.err.append(line)

        def out() -> None:
            self.out = proc.stdout.read()

        self.readers = [threading.Thread(target=f, daemon=True) for f in (err, out)]
        for reader in self.readers:
            reader.start()

    def finish(self, timeout: float = 300) -> tuple[str, str]:
        self.proc.wait(timeout)
        for reader in self.readers:
            reader.join(timeout)
        return self.out.decode("utf-8", "replace"), b"".join(self.err).decode("utf-8", "replace")


def _assert_tools_whole_and_alone(twin) -> None:
    """One kept tools directory, exactly the suite's tools (besides a `.complete` mark and the
    bytecode Python writes as they run), and no `.part` file or directory in the board's /tmp."""
    import io
    import tarfile

    from npu_accept.collect import tools_archive

    archive = tools_archive()
    tmp = twin.board_path("/tmp")
    stray = [str(p.relative_to(tmp)) for p in tmp.rglob("*") if ".part" in p.name]
    assert not stray, stray
    kept = tmp / archive.dirname
    with tarfile.open(fileobj=io.BytesIO(archive.data)) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isreg()}
    on_board = {str(p.relative_to(kept)) for p in kept.rglob("*") if p.is_file() and ".pyc" not in p.name}
    assert on_board == {*members, ".complete"}, sorted(on_board ^ {*members, ".complete"})
    for name, data in members.items():
        assert (kept / name).read_bytes() == data, f"{name} is half-written"


def test_two_keep_tools_runs_at_once_leave_one_whole_tools_directory(hooked, profile, tmp_path):
    # Why: two runs with --keep-tools left a stray .part file inside the kept tools directory: the
    # second run's install was moved into the first one's. The first run is held in the middle of
    # its upload (the board's tar hook) until the second has met the board lock (its trace) or,
    # without a lock, has ended; then the first goes on.
    from npu_accept.boardlock import LOCK_PATH
    from npu_accept.collect import board_dir_name

    _fresh_for_keep_tools(hooked)
    first = _Output(_suite(hooked, profile, tmp_path / "first", ("--keep-tools",)))
    _wait_for(lambda: _hook(hooked, "uploading").exists() or first.proc.poll() is not None, "the upload")
    assert first.proc.poll() is None, first.finish()
    second = _Output(_suite(hooked, profile, tmp_path / "second", ("--keep-tools",)))
    trace = tmp_path / "second" / "artifacts" / board_dir_name(hooked.target) / "trace.jsonl"
    _wait_for(
        lambda: (trace.exists() and LOCK_PATH in trace.read_text()) or second.proc.poll() is not None,
        "the second run meeting the board lock",
    )
    _hook(hooked, "go").touch()
    runs = {"first": first.finish(), "second": second.finish()}
    _wait_for(lambda: not _installing(hooked), "the installs on the board ending")
    _assert_tools_whole_and_alone(hooked)
    for name, proc in (("first", first.proc), ("second", second.proc)):
        assert proc.returncode == 0, (name, proc.returncode, runs[name][0][-2000:], runs[name][1][-2000:])
        summary = json.loads((tmp_path / name / "artifacts" / "summary.json").read_text())
        assert summary[hooked.target]["accepted"] is True, summary


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_keep_tools_run_killed_mid_upload_leaves_no_partial_tools(hooked, profile, tmp_path, signum):
    # Why: a stray .part left on the board by --keep-tools runs. The first run is killed while its
    # upload of the tools is held on the board (the tar hook), and the upload goes on only once the
    # suite has taken the signal (its handler has it, or the process is gone); then a second run.
    _fresh_for_keep_tools(hooked)
    first = _Output(_suite(hooked, profile, tmp_path / "first", ("--keep-tools",)))
    _wait_for(lambda: _hook(hooked, "uploading").exists() or first.proc.poll() is not None, "the upload")
    assert first.proc.poll() is None, first.finish()
    first.proc.send_signal(signum)
    _wait_for(lambda: _took(first.proc, signum), f"the suite taking {signum.name}")
    _hook(hooked, "go").touch()
    stdout, stderr = first.finish()
    _wait_for(lambda: not _installing(hooked), "the first run's install on the board ending")
    second = run_on_twin(hooked, profile, tmp_path / "second", ("--keep-tools",))
    _assert_tools_whole_and_alone(hooked)
    assert second.returncode == 0, second.describe()
    if signum == signal.SIGTERM:  # examined to the end, as on Ctrl-C
        assert first.proc.returncode == 2 and "Traceback" not in stderr, (
            first.proc.returncode,
            stderr[-2000:],
        )
        summary = json.loads((tmp_path / "first" / "artifacts" / "summary.json").read_text())
        assert summary[hooked.target]["accepted"] is True, summary
    else:
        assert first.proc.returncode == -signal.SIGKILL


def test_a_keep_tools_upload_cut_between_two_members_is_not_kept(hooked, profile, tmp_path):
    # Why: a half-written tool left on the board. tar takes a stream that ends between two members
    # for the archive's end and exits 0: such an install was marked complete, and every later
    # --keep-tools run used the half-written tools. The board's tar hook cuts the upload there.
    import io
    import tarfile

    from npu_accept.collect import tools_archive

    archive = tools_archive()
    with tarfile.open(fileobj=io.BytesIO(archive.data)) as tar:
        cut = next(m.offset for m in tar.getmembers() if m.name == archive.last)  # its header
    _fresh_for_keep_tools(hooked)
    _hook(hooked, "cut").write_text(f"{cut}\n")
    _hook(hooked, "go").touch()
    first = run_on_twin(hooked, profile, tmp_path / "first", ("--keep-tools",))
    assert _hook(hooked, "extracted").exists(), "the hook did not cut the upload"
    tmp = hooked.board_path("/tmp")
    assert not [p.name for p in tmp.iterdir() if p.name.startswith("npu-accept-tools-")], list(tmp.iterdir())
    assert first.returncode == 1, first.describe()
    cause = first.summary()[hooked.target]["root_cause"]
    assert "the upload of the on-target tools ended short" in cause and "python3" not in cause, cause
    second = run_on_twin(hooked, profile, tmp_path / "second", ("--keep-tools",))
    _assert_tools_whole_and_alone(hooked)
    assert second.returncode == 0, second.describe()


def test_a_yaml_bomb_profile_is_exit_4_at_once(tmp_path):
    # Why: a billion-laughs profile ended in INTERNALERROR MemoryError after 40 s at 1.3 GB, exit 3
    # (which means "no board reachable").
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 9)}]" for n in range(9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    run = run_suite([f"root@127.0.0.1:{_refusing_port()}"], bomb, tmp_path / "run", None, None, timeout=60)
    assert run.returncode == 4, run.describe()
    assert f"Board profile {bomb} uses a YAML alias at line 2" in run.stdout + run.stderr
    assert run.seconds < 30 and run.max_rss_kib < 400_000, (run.seconds, run.max_rss_kib)


def test_sigterm_while_governors_are_pinned_puts_them_back(rk3588, tmp_path):
    # Why: SIGTERM while governors were pinned left them pinned.
    from npu_accept.collectors.governors import SAVED_PATH

    profile = Path(__file__).resolve().parents[1] / "src/npu_accept/profiles/rk3588-evb.yaml"
    proc = _suite(rk3588, profile, tmp_path)
    deadline = time.monotonic() + 120
    while "performance" not in _governors(rk3588).values():
        assert proc.poll() is None and time.monotonic() < deadline, "the suite never pinned the governors"
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, stderr = (s.decode("utf-8", "replace") for s in proc.communicate(timeout=300))
    assert proc.returncode == 2 and "Traceback" not in stderr, stderr
    assert _governors(rk3588) == GOVERNORS
    assert not rk3588.board_path(SAVED_PATH).exists()
    summary = json.loads((tmp_path / "artifacts" / "summary.json").read_text())
    assert "was not examined" not in json.dumps(summary[rk3588.target]), summary
