# SPDX-License-Identifier: MIT
"""The board-twin harness: what a twin presents over SSH, and that the host never sees it."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TwinFactory

from npu_accept.sim import harness
from npu_accept.sim.harness import (
    DeviceNode,
    Twin,
    TwinError,
    TwinFile,
    TwinProcess,
    TwinSpec,
    start_twin,
    started_twins,
)
from npu_accept.transport import Connection

# Unique names so that "absent on the host" cannot pass by accident of the host's contents.
_MARK = "npu-twin-probe-7c1e"

SPEC = TwinSpec(
    name="presenter",
    files={
        "/sys/devices/soc0/soc_id": "i.MX95\n",
        "/sys/devices/soc0/revision": "2.0\n",
        "/sys/module/neutron/version": "1.0\n",
        "/sys/firmware/devicetree/base/model": b"NXP i.MX95 19X19 board\0",
        f"/usr/lib/{_MARK}.so": b"\x7fELF-not-really",
        f"/etc/{_MARK}.conf": "key=value\n",
        "/lib/firmware/NeutronFirmware.elf": TwinFile(b"\x7fELF", 0o600),
        f"/opt/{_MARK}/data": "opt\n",
    },
    symlinks={"/sys/class/remoteproc/remoteproc0": "../../devices/platform/neutron-rproc/remoteproc0"},
    devices={"/dev/neutron0": DeviceNode(10, 123, 0o666), "/dev/dri/renderD129": (226, 129)},
    kernel_release="6.12.49-lts-next",
    executables={f"/usr/bin/{_MARK}-tool": "#!/bin/sh\necho vendor tool $1\n"},
    kernel_log="[    2.100000] neutron 4ab00004.imx95-neutron: probed\n",
    processes=[
        TwinProcess("npu_daemon", "sleep 3600", restart=True),
        TwinProcess("oneshot", "sleep 3601"),
    ],
    env={"NPU_TWIN_ENV": "from-spec"},
)


@pytest.fixture(scope="module")
def twin(twin_factory: TwinFactory) -> Twin:
    return twin_factory(SPEC)


@pytest.fixture(scope="module")
def conn(twin: Twin) -> Iterator[Connection]:
    c = Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts)
    yield c
    c.close()


def _out(conn: Connection, cmd: str) -> str:
    result = conn.run(cmd, timeout=20)
    assert result.exit_code == 0, (cmd, result)
    return result.text()


def test_twin_presents_sysfs(conn: Connection) -> None:
    assert _out(conn, "cat /sys/devices/soc0/soc_id /sys/devices/soc0/revision") == "i.MX95\n2.0\n"
    assert _out(conn, "cat /sys/module/neutron/version") == "1.0\n"
    assert _out(conn, "readlink /sys/class/remoteproc/remoteproc0").startswith("../../devices/")
    # the host's sysfs is not there: only what the spec presents
    assert conn.run("test -e /sys/kernel/mm", timeout=10).exit_code == 1


def test_twin_presents_device_nodes(conn: Connection) -> None:
    assert _out(conn, "stat -c '%F %t:%T %a' /dev/neutron0") == "character special file a:7b 666\n"
    assert _out(conn, "stat -c '%t:%T' /dev/dri/renderD129") == "e2:81\n"
    assert _out(conn, "head -c 4 /dev/zero | od -An -tx1").split() == ["00"] * 4
    assert _out(conn, "echo gone > /dev/null; head -c 8 /dev/urandom | wc -c").strip() == "8"


def test_twin_presents_procfs_and_dmesg(conn: Connection) -> None:
    assert _out(conn, "cat /proc/sys/kernel/osrelease") == "6.12.49-lts-next\n"
    # uname(2) cannot be changed by a namespace: the kernel release is a procfs fact in a twin
    assert _out(conn, "hostname") == "presenter\n"
    assert _out(conn, "dmesg") == "[    2.100000] neutron 4ab00004.imx95-neutron: probed\n"


def test_twin_presents_usr_etc_opt_and_firmware(conn: Connection) -> None:
    assert _out(conn, f"cat /etc/{_MARK}.conf /opt/{_MARK}/data") == "key=value\nopt\n"
    assert _out(conn, f"{_MARK}-tool x") == "vendor tool x\n"
    assert _out(conn, "stat -c '%a %s' /lib/firmware/NeutronFirmware.elf") == "600 4\n"
    # the host's own /usr is still underneath: the board has a working userland
    assert _out(conn, "python3 -c 'import numpy; print(1)'") == "1\n"


def test_twin_environment_comes_from_the_spec(conn: Connection) -> None:
    assert _out(conn, 'echo "$NPU_TWIN_ENV"') == "from-spec\n"


def test_host_never_sees_the_twin(conn: Connection) -> None:
    for path in (f"/usr/lib/{_MARK}.so", f"/etc/{_MARK}.conf", f"/opt/{_MARK}", f"/usr/bin/{_MARK}-tool"):
        assert not os.path.lexists(path), path
    assert Path("/proc/sys/kernel/osrelease").read_text() != "6.12.49-lts-next\n"
    for path in ("/sys/module/neutron/version", "/dev/neutron0"):
        assert not os.path.lexists(path), path
    if Path("/sys/devices/soc0/soc_id").exists():
        assert Path("/sys/devices/soc0/soc_id").read_text() != "i.MX95\n"
    # what a session writes anywhere stays in the twin
    _out(conn, f"touch /usr/share/{_MARK}-written /{_MARK}-root /etc/{_MARK}-etc")
    assert _out(conn, f"ls /usr/share/{_MARK}-written") != ""
    for path in (f"/usr/share/{_MARK}-written", f"/{_MARK}-root", f"/etc/{_MARK}-etc"):
        assert not os.path.lexists(path), path


def test_twin_has_its_own_process_namespace(conn: Connection, twin: Twin) -> None:
    pids = [int(p) for p in _out(conn, "ls /proc | grep -E '^[0-9]+$'").split()]
    assert 1 in pids and len(pids) < 20
    assert str(os.getpid()) not in _out(conn, "ps -eo pid")
    host_names = set(twin.pids().values())
    assert {"sshd", "sleep"} <= host_names


def test_supervised_daemon_is_restarted_after_being_killed(conn: Connection) -> None:
    first = _out(conn, 'ps -eo pid,args | awk \'$2=="sleep" && $3=="3600" {print $1}\'').split()
    assert len(first) == 1
    _out(conn, f"kill -9 {first[0]}")
    deadline = time.monotonic() + 5
    again: list[str] = []
    while time.monotonic() < deadline:
        again = _out(conn, 'ps -eo pid,args | awk \'$2=="sleep" && $3=="3600" {print $1}\'').split()
        if again and again != first:
            break
        time.sleep(0.1)
    assert len(again) == 1 and again != first
    assert "sleep 3601" in _out(conn, "ps -eo args")


@pytest.mark.twin  # starts a twin (root) without the twin_factory fixture
def test_stop_removes_everything(tmp_path: Path) -> None:
    twin = start_twin(TwinSpec(name="stopper", processes=[TwinProcess("d", "sleep 3602")]), tmp_path)
    inside = twin.pids()
    assert inside
    directory = twin.directory
    twin.stop()
    assert not directory.exists()
    for pid in inside:
        assert not Path(f"/proc/{pid}").exists(), pid
    with pytest.raises(OSError), socket.create_connection((twin.host, twin.port), timeout=1):
        pass


@pytest.mark.twin  # starts twins (root) without the twin_factory fixture
def test_started_twins_stops_every_twin_also_when_a_later_one_cannot_start(tmp_path: Path) -> None:
    started: list[Twin] = []
    with started_twins([TwinSpec(name="first"), TwinSpec(name="second")], tmp_path) as twins:
        started.extend(twins)
        assert [t.directory.is_dir() for t in twins] == [True, True]
    assert started and not any(t.directory.exists() for t in started)
    with pytest.raises(TwinError, match="must be an absolute file path"):
        with started_twins([TwinSpec(name="ok"), TwinSpec(files={"usr/lib/x": "relative"})], tmp_path):
            pytest.fail("the block runs only when every twin started")
    assert list(tmp_path.iterdir()) == []  # the first twin was stopped and its directory removed


@pytest.mark.twin  # starts a twin (root) without the twin_factory fixture
@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (TwinSpec(files={"usr/lib/x": "relative"}), "must be an absolute file path"),
        (TwinSpec(files={"/usr/../etc/x": "dots"}), "without '..'"),
        (TwinSpec(files={"/proc/npu-not-in-procfs": "x"}), "procfs cannot gain files"),
        (TwinSpec(files={"/run/twin/sshd_config": "x"}), "the harness owns"),
        (TwinSpec(devices={"/sys/neutron0": (10, 1)}), "must be under /dev"),
        (TwinSpec(symlinks={"/proc/device-tree": "/sys/firmware/devicetree/base"}), "procfs"),
    ],
)
def test_bad_specs_fail_with_one_sentence(tmp_path: Path, spec: TwinSpec, message: str) -> None:
    with pytest.raises(TwinError, match=message.replace(".", r"\.")):
        start_twin(spec, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.twin  # starts a twin (root) without the twin_factory fixture
def test_sshd_that_cannot_start_is_reported_with_its_output(tmp_path: Path) -> None:
    fake_sshd = "#!/bin/sh\necho sshd-broke-here >&2\nexit 1\n"
    spec = TwinSpec(name="broken", executables={"/usr/sbin/sshd": fake_sshd})
    start = time.monotonic()
    with pytest.raises(TwinError) as exc:
        start_twin(spec, tmp_path, deadline_s=3)
    assert time.monotonic() - start < 10
    assert "sshd-broke-here" in str(exc.value) and "did not answer" in str(exc.value)
    assert list(tmp_path.iterdir()) == []


def test_not_root_is_one_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(TwinError, match="Board twins need root"):
        start_twin(TwinSpec(), tmp_path)


def test_port_taken_by_another_sshd_is_not_mistaken_for_ours(
    twin: Twin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_free_port = harness._free_port
    ports = iter([twin.port])  # the first "free" port is the running twin's: sshd cannot bind it
    monkeypatch.setattr(harness, "_free_port", lambda: next(ports, None) or real_free_port())
    other = start_twin(TwinSpec(name="second"), tmp_path)
    try:
        assert other.port != twin.port
        with Connection.open(other.target, identity=other.identity, known_hosts=other.known_hosts) as c:
            assert c.run("hostname", timeout=10).stdout == b"second\n"
    finally:
        other.stop()


def test_python_under_a_tmpfs_directory_is_kept_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv in /tmp (the twin's /tmp is a fresh tmpfs) is bind-mounted back; /usr is not."""
    monkeypatch.setattr(harness.sys, "prefix", "/tmp/some-venv")
    monkeypatch.setattr(harness.sys, "base_prefix", "/usr")
    assert harness.host_dirs_to_keep() == [Path("/tmp/some-venv").resolve()]
