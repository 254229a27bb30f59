# SPDX-License-Identifier: MIT
"""Rockchip RK3588/RK3576 (vendor RKNPU stack) board twins and the programs they need.

A twin cannot run Rockchip's librknnrt (it needs the NPU), so the tests build a stand-in from
the C source in tests/twins/rockchip/: a real shared library exporting the librknnrt C API that
npu-run's rknn backend calls through ctypes (rknn_init/query/inputs_set/run/outputs_get/
outputs_release/destroy), with
the structures laid out as rknn_api.h v2.3.2 declares them, and the "librknnrt version: X.Y.Z"
string that rknn_server and npu-info read. It runs "twin models" (.rknn files starting with the
magic RKNNTWIN, format below) and computes outputs a test can recompute with numpy
(`reference_outputs`). rknn_server is a stand-in too: a program carrying the
"rknn_server version: X.Y.Z" string that waits until it is killed.

What a healthy RK3588 twin presents, and where a real board has it (the RKNN SDK v2.3.2
guide): /sys/kernel/debug/rknpu/{version,load,mm} ("RKNPU driver: v0.9.8", the load line, the SRAM
bitmap with "SRAM total size: 978944"), the dmesg lines of the driver ("RKNPU fdab0000.npu:
RKNPU: sram region: [0x00000000ff001000, 0x00000000ff0f0000), sram size: 0xef000" and the DRM
core's "Initialized rknpu 0.9.8 20240828 for fdab0000.npu on minor 1"), the render node of the
NPU, /usr/lib/librknnrt.so, /usr/bin/rknn_server (running under a supervisor that restarts it
when killed, as rknn-server.service does), the build manifest.
"""

from __future__ import annotations

import json
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npu_accept.sim.harness import DeviceNode, TwinFile, TwinProcess, TwinSpec

RUNTIME_PATH = "/usr/lib/librknnrt.so"
SERVER_PATH = "/usr/bin/rknn_server"
TWIN_MAGIC = b"RKNNTWIN"
DRM_MAJOR = 226  # the DRM character major
SOURCES = Path(__file__).resolve().parent / "rockchip"


@dataclass(frozen=True)
class TwinTensor:
    name: str
    dims: tuple[int, ...]
    dtype: str  # "uint8" | "int8"
    fmt: int = 1  # RKNN_TENSOR_NHWC
    zero_point: int = 0
    scale: float = 1.0

    @property
    def type_code(self) -> int:
        return {"int8": 2, "uint8": 3}[self.dtype]


MOBILENET_INPUT = TwinTensor("input", (1, 224, 224, 3), "uint8")
MOBILENET_OUTPUT = TwinTensor(
    "MobilenetV1/Logits", (1, 1001), "int8", fmt=0, zero_point=-128, scale=0.00390625
)


def twin_model(inputs: list[TwinTensor], outputs: list[TwinTensor]) -> bytes:
    """A .rknn file the stand-in runtime runs (see rockchip/fake_librknnrt.c)."""
    data = TWIN_MAGIC + struct.pack("<II", len(inputs), len(outputs))
    for t in [*inputs, *outputs]:
        dims = list(t.dims) + [0] * (4 - len(t.dims))
        data += struct.pack(
            "<I4IIIif32s", len(t.dims), *dims, t.type_code, t.fmt, t.zero_point, t.scale, t.name.encode()[:31]
        )
    return data


def reference_outputs(arrays: list[np.ndarray], outputs: list[TwinTensor]) -> list[np.ndarray]:
    """What the stand-in runtime returns for ARRAYS (rknn_outputs_get of rockchip/fake_librknnrt.c)."""
    total = sum(int(a.astype(np.uint8).sum()) for a in arrays)
    result = []
    for j, tensor in enumerate(outputs):
        count = int(np.prod(tensor.dims))
        raw = ((total + 7 * np.arange(count, dtype=np.int64) + j) & 0xFF).astype(np.uint8)
        result.append(raw.view(tensor.dtype).reshape(tensor.dims))
    return result


def build_runtime(workdir: Path, version: str = "2.3.2") -> Path:
    source = SOURCES / "fake_librknnrt.c"
    out = workdir / f"librknnrt-{version}.so"
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-O1",
            "-Wall",
            "-Werror",
            f'-DTWIN_VERSION="{version}"',
            "-o",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def build_server(workdir: Path, version: str = "2.3.2") -> Path:
    source = SOURCES / "fake_rknn_server.c"
    out = workdir / f"rknn_server-{version}"
    subprocess.run(
        ["gcc", "-O1", "-Wall", "-Werror", f'-DTWIN_VERSION="{version}"', "-o", str(out), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


@dataclass(frozen=True)
class RockchipAssets:
    runtime: Path
    server: Path
    old_runtime: Path  # a runtime of another release, for the version-mismatch twin


@dataclass(frozen=True)
class RockchipBoard:
    """The knobs of an RKNPU twin; the defaults are a healthy board that passes every check."""

    name: str = "rk3588-healthy"
    soc: str = "rk3588"
    driver_version: str = "0.9.8"
    sram_bytes: int | None = 0xEF000  # None: no SRAM given to the NPU
    server_running: bool = True
    server_supervised: bool = True  # False: no supervisor restarts a killed rknn_server
    runtime_matches_server: bool = True
    boot_log: tuple[str, ...] = ()  # extra kernel log lines since boot
    sram_unused: bool = False  # the runtime leaves the SRAM unused even with RKNN_FLAG_ENABLE_SRAM
    one_core: bool = False  # every core mask runs as fast as one core


SOC_FACTS = {
    # npu node, compatible, SRAM base, board compatible, model directory of the SDK demos
    "rk3588": ("fdab0000.npu", "rockchip,rk3588-rknpu", 0xFF001000, "rockchip,rk3588-evb1-lp4-v10", "RK3588"),
    "rk3576": ("27700000.npu", "rockchip,rk3576-rknpu", 0x3FF88000, "rockchip,rk3576-evb1-v10", "RK3576"),
}


def mm_bitmap(total: int) -> str:
    """/sys/kernel/debug/rknpu/mm as the driver prints it (RKNN SDK v2.3.2 user guide, section 5.7.3.2)."""
    pages = total // 0x1000
    rows = [f"[{row:03d}] [{'.' * min(32, pages - row * 32)}]" for row in range((pages + 31) // 32)]
    return (
        'SRAM bitmap: "*" - used, "." - free (1bit = 4KB)\n'
        + "\n".join(rows)
        + f"\nSRAM total size: {total}, used: 0, free: {total}\n"
    )


def rockchip_spec(
    board: RockchipBoard, assets: RockchipAssets, model: bytes, extra_files: dict[str, bytes] | None = None
) -> TwinSpec:
    """The twin of BOARD; EXTRA_FILES (board path -> content) adds files such as the .rknn models
    and their recordings of twins.rknn_models."""
    npu, compatible, sram_base, board_compat, model_dir = SOC_FACTS[board.soc]
    log = [f"[    1.234567] [drm] Initialized rknpu {board.driver_version} 20240828 for {npu} on minor 1"]
    files: dict[str, bytes | str | TwinFile] = {
        "/sys/kernel/debug/rknpu/version": f"RKNPU driver: v{board.driver_version}\n",
        "/sys/kernel/debug/rknpu/load": "NPU load:  Core0:  0%, Core1:  0%, Core2:  0%,\n",
        "/sys/class/drm/renderD129/device/of_node/compatible": compatible.encode() + b"\0",
        "/sys/firmware/devicetree/base/compatible": board_compat.encode()
        + b"\0"
        + f"rockchip,{board.soc}".encode()
        + b"\0",
        "/sys/firmware/devicetree/base/model": f"Rockchip {board.soc.upper()} EVB\0",
        f"/usr/share/rknn_mobilenet_demo/model/{model_dir}/mobilenet_v1.rknn": model,
        # Frequency governors a board exposes (devfreq of the NPU, cpufreq policies): check 7 pins
        # them to "performance" for its RKNPU measurement and must put these values back.
        f"/sys/class/devfreq/{npu}/governor": "simple_ondemand\n",
        "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor": "schedutil\n",
        "/sys/devices/system/cpu/cpufreq/policy4/scaling_governor": "schedutil\n",
        "/usr/share/meta-npu/build-manifest.json": json.dumps(
            {
                "schema": "npu-build-manifest/1",
                "npu_family": "rknpu",
                "machine": f"rockchip-{board.soc}-evb",
                "distro": "poky",
                "image": "npu-image",
                "driver": {"recipe": "linux-rockchip", "version": board.driver_version, "srcrev": None},
                "runtime": {
                    "recipe": "librknnrt",
                    "version": "2.3.2",
                    "srcrev": "42aa1d426c0a9e0869b6374edba009f7208a1926",
                },
                "delegate": None,
                "daemon": {
                    "recipe": "rknn-server",
                    "version": "2.3.2",
                    "srcrev": "42aa1d426c0a9e0869b6374edba009f7208a1926",
                },
                "models": [],
            },
            indent=1,
        ),
    }
    files.update(extra_files or {})
    if board.sram_bytes is not None:
        end = sram_base + board.sram_bytes
        log.append(
            f"[    1.234600] RKNPU {npu}: RKNPU: sram region: [0x{sram_base:016x}, 0x{end:016x}), "
            f"sram size: {board.sram_bytes:#x}"
        )
        files["/sys/kernel/debug/rknpu/mm"] = mm_bitmap(board.sram_bytes)
    log.extend(board.boot_log)
    # Switches of the stand-in librknnrt (rockchip/fake_librknnrt.c): a runtime that leaves the
    # SRAM unused, an NPU whose core mask changes nothing.
    if board.sram_unused:
        files["/etc/rknn-twin/no-sram"] = ""
    if board.one_core:
        files["/etc/rknn-twin/one-core"] = ""
    runtime = assets.runtime if board.runtime_matches_server else assets.old_runtime
    # Supervised as rknn-server.service (Restart=on-failure) would: the harness restarts it 0.2 s
    # after it dies, so check 3's kill-and-watch probe sees a new PID.
    processes = (
        [TwinProcess("rknn_server", SERVER_PATH, restart=board.server_supervised)]
        if board.server_running
        else []
    )
    return TwinSpec(
        name=board.name,
        files=files,
        devices={"/dev/dri/renderD129": DeviceNode(DRM_MAJOR, 129)},
        kernel_release="6.1.99-rockchip-standard",
        executables={RUNTIME_PATH: runtime.read_bytes(), SERVER_PATH: assets.server.read_bytes()},
        kernel_log="\n".join(log) + "\n",
        processes=processes,
    )


HEALTHY_RK3588 = RockchipBoard()
HEALTHY_RK3576 = RockchipBoard(name="rk3576-healthy", soc="rk3576", sram_bytes=0x78000)

# Each fault and the one check it must fail, with a phrase of that check's sentence.
FAULTS: dict[str, tuple[RockchipBoard, str, str]] = {
    "sram-missing": (RockchipBoard(name="rk3588-no-sram", sram_bytes=None), "memory", "The NPU has no SRAM"),
    "server-down": (
        RockchipBoard(name="rk3588-server-down", server_running=False),
        "runtime",
        "is not running",
    ),
    "version-mismatch": (
        RockchipBoard(name="rk3588-mismatch", runtime_matches_server=False),
        "runtime",
        "version",
    ),
    "server-not-supervised": (
        RockchipBoard(name="rk3588-unsupervised", server_supervised=False),
        "runtime",
        "rknn_server was killed and not restarted within 10 s: enable "
        "rknn-server.service (Restart=on-failure) or its init script.",
    ),
    "old-driver": (RockchipBoard(name="rk3588-old-driver", driver_version="0.8.2"), "driver", "0.8.2"),
    # drivers/rknpu/rknpu_job.c's timeout wording, as an RK3588 logs it
    "npu-job-timeout": (
        RockchipBoard(
            name="rk3588-job-timeout",
            boot_log=(
                "[  105.708333] RKNPU: failed to wait job, task counter: 0, flags: 0x5, ret = 0, "
                "elapsed time: 6226553us",
                "[  105.812210] RKNPU: job timeout, flags: 0x0:",
            ),
        ),
        "kernel_log",
        "an RKNPU job timed out in the kernel driver since boot",
    ),
}


def rockchip_assets(directory: Path) -> RockchipAssets:
    directory.mkdir(parents=True, exist_ok=True)
    return RockchipAssets(
        build_runtime(directory), build_server(directory), build_runtime(directory, "2.3.0")
    )
