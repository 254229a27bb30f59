# SPDX-License-Identifier: MIT
"""npu-info on copied board trees (--root): the Neutron probe's facts, their sources, and one sentence
for every missing fact. The board twins run the same tool over SSH (suite tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from npu_tools import assert_one_sentence_usage_error, run_tool, validate

MIB = 1024 * 1024
MANIFEST = {
    "schema": "npu-build-manifest/1",
    "npu_family": "neutron",
    "machine": "imx95-19x19-verdin",
    "distro": "fsl-imx-xwayland",
    "image": "npu-image",
    "kernel": None,
    "driver": None,
    "runtime": None,
    "delegate": None,
    "daemon": None,
    "models": [],
}


def _write(root: Path, path: str, data: bytes | str, mode: int = 0o644) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.encode() if isinstance(data, str) else data)
    target.chmod(mode)


def _cells(*values: int) -> bytes:
    return b"".join(v.to_bytes(4, "big") for v in values)


def neutron_board(root: Path, dt_base: str = "/sys/firmware/devicetree/base") -> Path:
    """An i.MX95 B0 board with the Neutron stack, as its files look (facts: STACKS.md, design.md)."""
    files: dict[str, bytes | str] = {
        "/proc/sys/kernel/osrelease": "6.12.49-lts-next-g759f4038100f\n",
        "/proc/modules": "imx_neutron_rproc 16384 0 - Live 0x0000000000000000\n",
        "/sys/devices/soc0/soc_id": "i.MX95\n",
        "/sys/devices/soc0/revision": "2.0\n",
        "/sys/devices/soc0/family": "Freescale i.MX\n",
        "/sys/module/neutron/version": "1.0\n",
        "/sys/class/remoteproc/remoteproc0/name": "imx95-neutron-remoteproc\n",
        "/sys/class/remoteproc/remoteproc0/firmware": "NeutronFirmware.elf\n",
        "/sys/class/remoteproc/remoteproc0/state": "running\n",
        "/lib/firmware/NeutronFirmware.elf": b"\x7fELF",
        "/usr/lib/libneutron_delegate.so": b"\x7fELF",
        "/usr/lib/libNeutronDriver.so": b"\x7fELF",
        "/dev/neutron0": b"",
        "/usr/share/meta-npu/build-manifest.json": json.dumps(MANIFEST),
        f"{dt_base}/model": b"NXP i.MX95 19X19 board\x00",
        f"{dt_base}/compatible": b"fsl,imx95-19x19-evk\x00fsl,imx95\x00",
        f"{dt_base}/reserved-memory/#address-cells": _cells(2),
        f"{dt_base}/reserved-memory/#size-cells": _cells(2),
        f"{dt_base}/reserved-memory/neutron@a0000000/reg": _cells(0, 0xA0000000, 0, 128 * MIB),
        f"{dt_base}/reserved-memory/neutron@a0000000/compatible": b"shared-dma-pool\x00",
        f"{dt_base}/reserved-memory/linux,cma/size": _cells(0, 960 * MIB),
        f"{dt_base}/neutron@4ab00004/compatible": b"fsl,imx95-neutron\x00",
    }
    for path, data in files.items():
        _write(root, path, data)
    return root


@pytest.fixture()
def fakebin(tmp_path: Path) -> Path:
    """The board's PATH: a `dmesg` program printing the board's kernel log."""
    bin_dir = tmp_path / "bin"
    script = (
        "#!/bin/sh\n"
        "echo '[    2.1] remoteproc remoteproc0: imx95-neutron-remoteproc is available'\n"
        "echo '[    2.3] usb 1-1: new high-speed USB device'\n"
    )
    _write(bin_dir, "dmesg", script, 0o755)
    return bin_dir


def _info(root: Path, bin_dir: Path, *extra: str):
    env = {"PATH": str(bin_dir), "HOME": str(root)}
    return run_tool("npu-info", "--json", "--root", str(root), *extra, env=env)


def test_healthy_neutron_board(tmp_path: Path, fakebin: Path) -> None:
    run = _info(neutron_board(tmp_path / "board"), fakebin)
    assert run.code == 0, run.stderr
    doc = run.json()
    validate(doc, "npu-info")
    assert doc["errors"] == []
    assert doc["family"] == "neutron"
    assert doc["kernel"] == "6.12.49-lts-next-g759f4038100f"
    assert doc["soc"] == {
        "soc_id": "i.MX95",
        "revision": "2.0",
        "family": "Freescale i.MX",
        "machine": "NXP i.MX95 19X19 board",
        "compatible": ["fsl,imx95-19x19-evk", "fsl,imx95"],
        "chip_id": None,
    }
    driver = doc["driver"]
    assert (driver["version"], driver["version_source"]) == ("1.0", "/sys/module/neutron/version")
    assert driver["devices"] == ["/dev/neutron0"] and driver["module_loaded"] is True
    assert driver["firmware"]["state"] == "running" and driver["firmware"]["present"] is True
    assert driver["firmware"]["path"] == "/lib/firmware/NeutronFirmware.elf"
    assert driver["dmesg"] == ["[    2.1] remoteproc remoteproc0: imx95-neutron-remoteproc is available"]
    pools = {p["name"]: p for p in doc["memory"]["pools"]}
    assert pools["neutron@a0000000"]["size"] == 128 * MIB and pools["neutron@a0000000"]["npu"] is True
    assert pools["neutron@a0000000"]["start"] == 0xA0000000
    assert pools["linux,cma"]["size"] == 960 * MIB and pools["linux,cma"]["npu"] is False
    assert doc["delegate"] == {"path": "/usr/lib/libneutron_delegate.so", "present": True}
    assert doc["runtime"] == {
        "name": "libNeutronDriver",
        "path": "/usr/lib/libNeutronDriver.so",
        "version": None,
    }
    assert doc["manifest"] == MANIFEST


def test_device_tree_under_proc(tmp_path: Path, fakebin: Path) -> None:
    run = _info(neutron_board(tmp_path / "board", dt_base="/proc/device-tree"), fakebin)
    doc = run.json()
    assert doc["soc"]["compatible"] == ["fsl,imx95-19x19-evk", "fsl,imx95"]
    assert any(p["npu"] for p in doc["memory"]["pools"])


def test_human_output(tmp_path: Path, fakebin: Path) -> None:
    run = run_tool("npu-info", "--root", str(neutron_board(tmp_path / "b")), env={"PATH": str(fakebin)})
    assert run.code == 0 and "family: neutron" in run.stdout and "i.MX95 revision 2.0" in run.stdout


def _mutate(root: Path, remove: tuple[str, ...] = (), write: dict[str, str] | None = None) -> Path:
    for path in remove:
        (root / path.lstrip("/")).unlink()
    for path, data in (write or {}).items():
        _write(root, path, data)
    return root


@pytest.mark.parametrize(
    "fault, remove, write, words",
    [
        ("no-version", ("/sys/module/neutron/version",), {}, "driver version is unknown"),
        (
            "rproc-offline",
            (),
            {"/sys/class/remoteproc/remoteproc0/state": "offline\n"},
            "'offline', not 'running'",
        ),
        ("no-firmware", ("/lib/firmware/NeutronFirmware.elf",), {}, "NeutronFirmware.elf is missing"),
        ("no-device", ("/dev/neutron0",), {}, "no /dev/neutron* device node"),
        ("no-delegate", ("/usr/lib/libneutron_delegate.so",), {}, "libneutron_delegate.so is missing"),
        ("no-pool", (), {}, "no reserved-memory pool for the NPU"),
        ("bad-manifest", (), {"/usr/share/meta-npu/build-manifest.json": "{not json"}, "not valid JSON"),
        ("no-manifest", ("/usr/share/meta-npu/build-manifest.json",), {}, "build-manifest.json is missing"),
        ("no-soc", ("/sys/devices/soc0/soc_id",), {}, "soc_id is missing"),
    ],
)
def test_each_missing_fact_is_one_sentence(
    fault: str, remove: tuple[str, ...], write: dict[str, str], words: str, tmp_path: Path, fakebin: Path
) -> None:
    board = neutron_board(tmp_path / "board")
    if fault == "no-pool":
        rm = board / "sys/firmware/devicetree/base/reserved-memory"
        (rm / "neutron@a0000000").rename(rm / "gpu@a0000000")
    run = _info(_mutate(board, remove, write), fakebin)
    assert run.code == 0
    doc = run.json()
    validate(doc, "npu-info")
    matching = [e for e in doc["errors"] if words in e]
    assert len(matching) == 1, doc["errors"]
    assert matching[0].endswith(".") and "\n" not in matching[0]


def test_modinfo_fallback(tmp_path: Path, fakebin: Path) -> None:
    board = _mutate(neutron_board(tmp_path / "board"), ("/sys/module/neutron/version",))
    _write(fakebin, "modinfo", "#!/bin/sh\n[ \"$1 $2 $3\" = '-F version neutron' ] && echo 1.0\n", 0o755)
    doc = _info(board, fakebin).json()
    assert (doc["driver"]["version"], doc["driver"]["version_source"]) == ("1.0", "modinfo")


def test_dmesg_failure_is_reported(tmp_path: Path, fakebin: Path) -> None:
    script = "#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n"
    _write(fakebin, "dmesg", script, 0o755)
    doc = _info(neutron_board(tmp_path / "board"), fakebin).json()
    assert any(e.startswith("dmesg failed (exit 1") for e in doc["errors"]), doc["errors"]


def test_board_without_npu(tmp_path: Path, fakebin: Path) -> None:
    root = tmp_path / "plain"
    _write(root, "/proc/sys/kernel/osrelease", "6.6.0\n")
    run = _info(root, fakebin)
    assert run.code == 0
    doc = run.json()
    validate(doc, "npu-info")
    assert doc["family"] == "none" and doc["driver"] is None
    assert any(e.startswith("no NPU detected") for e in doc["errors"])


def test_forced_family_on_empty_board(tmp_path: Path, fakebin: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    doc = _info(root, fakebin, "--family", "neutron").json()
    validate(doc, "npu-info")
    assert doc["family"] == "neutron" and doc["driver"]["devices"] == []
    assert any("no Neutron remoteproc" in e for e in doc["errors"])


@pytest.mark.parametrize(
    "args, words",
    [
        (["--bogus"], ["--bogus"]),
        (["--root", "/nonexistent/board"], ["/nonexistent/board", "not a directory"]),
        (["--family", "gpu"], ["gpu"]),
    ],
)
def test_bad_usage(args: list[str], words: list[str]) -> None:
    assert_one_sentence_usage_error(run_tool("npu-info", *args), *words)


def test_runs_on_the_host_without_traceback() -> None:
    """On this machine (no NPU) npu-info still prints valid JSON and exits 0."""
    run = run_tool("npu-info", "--json", env={"PATH": os.environ.get("PATH", ""), "HOME": "/tmp"})
    assert run.code == 0 and "Traceback" not in run.stderr
    validate(run.json(), "npu-info")


def test_crashing_probe_still_gives_json(tmp_path: Path, fakebin: Path) -> None:
    import shutil

    from npu_tools import TOOLS_DIR

    copy = tmp_path / "upload"
    shutil.copytree(TOOLS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "npu_target" / "probes" / "neutron.py").write_text(
        "def detect(ctx):\n    raise OSError('boom')\n\ndef probe(ctx):\n    return None\n"
    )
    run = run_tool(
        "npu-info",
        "--json",
        "--root",
        str(neutron_board(tmp_path / "b")),
        tools_dir=copy,
        env={"PATH": str(fakebin)},
    )
    assert run.code == 0 and "Traceback" not in run.stderr
    doc = run.json()
    validate(doc, "npu-info")
    assert any(
        e.startswith("probe for family 'neutron' failed while detecting (OSError: boom)")
        for e in doc["errors"]
    )
