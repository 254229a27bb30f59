# SPDX-License-Identifier: MIT
"""Radxa ROCK 5B (mainline stack: Rocket accel driver + Mesa's Teflon TFLite delegate) board twins.

What a healthy twin presents, and where a real board has it:
- the rocket module: /sys/module/rocket/initstate "live" (module_present of npu_target/probes/rocket.py),
  the accel node /dev/accel/accel0 (char major 261, ACCEL_MAJOR of include/drm/drm_accel.h), and
  kernel log lines naming rocket (rocket.py keeps the dmesg lines containing "rocket"; the lines
  below are representative, not copied from a board's log).
- the device tree: board compatible "radxa,rock-5b" + "rockchip,rk3588" (what profile rock-5b's
  soc.compatible matches) and the three NPU cores "rockchip,rk3588-rknn-core" at fdab0000,
  fdac0000 and fdad0000 (the RK3588 NPU core addresses); kernel release 6.18 (kas/rock-5b.yml's
  linux-yocto; Rocket is in-tree, so the driver version is the kernel release).
- /usr/lib/libteflon.so (the path profile rock-5b names): NOT Mesa. It is the twin delegate of
  npu_accept/sim/delegate/ (a real TFLite external delegate in C) built under that file name and
  configured, through the profile's delegate option config=/etc/teflon-twin.conf, to claim the
  model's builtin RESHAPE nodes and compute them (a byte copy, which is what RESHAPE computes).
  Its log line is the twin delegate's ("NeutronDelegate delegate: N nodes delegated out of M …").
- the model: the twin cannot present the profile's quantized MobileNet v1 (not available to the
  tests), so the twin profile (`rocket_twin_profile`) is rock-5b.yaml with the real MediaPipe face
  detector of tests/models.py instead, run through the delegate and, as the reference, on the CPU
  (the same file, as rock-5b.yaml does), and the twin's performance expectations (a twin's "NPU" is
  the host CPU). Every other expectation is the shipped profile's.
- the build manifest /usr/share/meta-npu/build-manifest.json (docs/design.md).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import models
import numpy as np
import yaml

from npu_accept.paths import packaged_profiles_dir
from npu_accept.sim.delegate.build import build_delegate
from npu_accept.sim.harness import DeviceNode, TwinFile, TwinSpec

REPO = Path(__file__).resolve().parents[2]
PROFILES = packaged_profiles_dir()
KERNEL_RELEASE = "6.18.0-yocto-standard"  # linux-yocto 6.18 (kas/rock-5b.yml), LINUX_KERNEL_TYPE standard
DELEGATE_PATH = "/usr/lib/libteflon.so"  # profile rock-5b, delegate.path
DELEGATE_CONFIG = "/etc/teflon-twin.conf"
MODELS_DIR = "/usr/share/npu-models"
MODEL_NAME = "face_detection_short_range.tflite"
ACCEL_MAJOR = 261  # include/drm/drm_accel.h
NPU_CORES = ("fdab0000", "fdac0000", "fdad0000")


@dataclass(frozen=True)
class RocketAssets:
    """Files built by the tests that every ROCK 5B twin ships."""

    delegate: Path  # the twin delegate compiled as libteflon.so
    model: Path  # the real MediaPipe face detector


@dataclass(frozen=True)
class RocketBoard:
    """The knobs of a ROCK 5B twin; the defaults are a healthy board that passes every check."""

    name: str = "rock-5b-healthy"
    rocket_loaded: bool = True  # False: no rocket module, no /dev/accel/accel0
    delegate_mode: str = "ok"  # the twin delegate's mode (ok | constant[:V] | offset:E | claim-none …)


HEALTHY = RocketBoard()

# One twin per fault: (board, the check that must fail, words its message must contain).
FAULTS: dict[str, tuple[RocketBoard, str, str]] = {
    "rocket-missing": (
        replace(HEALTHY, name="rock-5b-no-rocket", rocket_loaded=False),
        "driver",
        "The rocket NPU driver is not present",
    ),
    "delegate-zero-nodes": (
        replace(HEALTHY, name="rock-5b-claim-none", delegate_mode="claim-none"),
        "delegate",
        "offloaded 0 of",
    ),
    "degenerate-outputs": (
        replace(HEALTHY, name="rock-5b-constant", delegate_mode="constant:0.227"),
        "outputs",
        "does not match",
    ),
}


def rocket_assets(directory: Path) -> RocketAssets:
    """The twin delegate built as libteflon.so and the real face detector (cached)."""
    directory.mkdir(parents=True, exist_ok=True)
    return RocketAssets(
        delegate=build_delegate(directory, name="libteflon.so"),
        model=models.model_path(models.FACE_DETECTION),
    )


def _manifest(assets: RocketAssets) -> str:
    return json.dumps(
        {
            "schema": "npu-build-manifest/1",
            "npu_family": "rocket",
            "machine": "rock-5b",
            "distro": "poky",
            "image": "npu-image",
            "kernel": {"recipe": "linux-yocto", "version": "6.18", "srcrev": None},
            "driver": {"recipe": "linux-yocto", "version": KERNEL_RELEASE, "srcrev": None},
            "runtime": {"recipe": "python3-tensorflow-lite", "version": None, "srcrev": None},
            "delegate": {"recipe": "mesa", "version": None, "srcrev": None},
            "daemon": None,
            "models": [
                {
                    "path": f"{MODELS_DIR}/{MODEL_NAME}",
                    "sha256": hashlib.sha256(assets.model.read_bytes()).hexdigest(),
                }
            ],
        },
        indent=2,
    )


def rocket_spec(board: RocketBoard, assets: RocketAssets) -> TwinSpec:
    """The TwinSpec of a ROCK 5B with the given knobs."""
    dt = "/sys/firmware/devicetree/base"
    files: dict[str, bytes | str | TwinFile] = {
        f"{dt}/model": b"Radxa ROCK 5B\x00",
        f"{dt}/compatible": b"radxa,rock-5b\x00rockchip,rk3588\x00",
        DELEGATE_CONFIG: "# twin delegate: claim the builtin RESHAPE nodes\n"
        f"claim = reshape\nmode = {board.delegate_mode}\n",
        DELEGATE_PATH: TwinFile(assets.delegate.read_bytes(), 0o755),
        f"{MODELS_DIR}/{MODEL_NAME}": assets.model.read_bytes(),
        "/usr/share/meta-npu/build-manifest.json": _manifest(assets),
    }
    for address in NPU_CORES:
        files[f"{dt}/npu@{address}/compatible"] = b"rockchip,rk3588-rknn-core\x00"
    log = [f"[    0.000000] Linux version {KERNEL_RELEASE} (oe-user@oe-host) #1 SMP PREEMPT"]
    devices: dict[str, DeviceNode] = {}
    if board.rocket_loaded:
        files["/sys/module/rocket/initstate"] = "live\n"
        devices["/dev/accel/accel0"] = DeviceNode(ACCEL_MAJOR, 0)
        log.append("[    5.412000] [drm] Initialized rocket 0.0.0 for rknn on minor 0")
    return TwinSpec(
        name=board.name,
        files=files,
        devices=devices,
        kernel_release=KERNEL_RELEASE,
        kernel_log="\n".join(log) + "\n",
    )


def rocket_twin_profile(directory: Path, runs: int = 10) -> Path:
    """rock-5b.yaml with the twin's model, the twin delegate's config option and the twin's
    performance expectations; silicon, driver, delegate and output thresholds are the shipped ones."""
    directory.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((PROFILES / "rock-5b.yaml").read_text())
    photo = directory / "face_detection_input.npy"
    np.save(photo, models.face_detection_input())
    data["name"] = "rock-5b-twin"
    data["delegate"] = {**data["delegate"], "options": {"config": DELEGATE_CONFIG}}
    data["models"] = [
        {
            "name": "face_detection",
            "path": f"{MODELS_DIR}/{MODEL_NAME}",
            "reference": f"{MODELS_DIR}/{MODEL_NAME}",
            "inputs": [{"file": photo.name}],
            "thresholds": {
                "cosine": 0.99,
                "euclid": 0.90,
                "sqnr_db": 20,
                "top_k": 5,
                "top_k_agree": 0.8,
                "max_abs": 0.05,
            },
        }
    ]
    # The fastest run, not p50: twins share the host's CPUs with everything else running on it.
    data["performance"] = {
        "runs": runs,
        "warmup": 2,
        "min_speedup": 0.2,
        "regression_tolerance": 1.0,
        "statistic": "min",
    }
    path = directory / "rock-5b-twin.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
