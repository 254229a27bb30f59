# SPDX-License-Identifier: MIT
"""i.MX95 (Neutron) board twins: a healthy Verdin EVK and one twin per fault the suite must catch.

What a healthy twin presents, and where a real board has it:
- /sys/devices/soc0/{soc_id,revision,family,machine}: "i.MX95", "2.0" (B0) — soc-imx9.c;
  revision "1.0" is A0 and "1.1" is A1 (drivers/soc/imx/soc-imx9.c, docs/PROVENANCE.md).
- /sys/module/neutron/version "1.0" (NEUTRON_DRIVER_VERSION of NXP's neutron_driver.c in
  drivers/staging/neutron), /dev/neutron0 (device_create "neutron%d" in neutron_device.c).
- /sys/class/remoteproc/remoteproc0/{name,firmware,state} running NeutronFirmware.elf, and the
  firmware file in /lib/firmware (a placeholder: nothing executes it in a twin).
- The device tree under /sys/firmware/devicetree/base with /reserved-memory/neutron-pool, a
  128 MiB "shared-dma-pool" exactly as meta-npu's imx95-19x19-verdin-neutron-pool.dtso declares.
- The build manifest /usr/share/meta-npu/build-manifest.json (docs/design.md).
- /usr/lib/libneutron_delegate.so: the twin delegate built from delegate/ (a real TFLite
  external delegate), configured by /etc/neutron-twin.conf (ok | constant | offset | fail-invoke |
  claim-none), and the models under /usr/share/npu-models: the real MediaPipe face detector and its
  "Neutron-converted" copy whose output RESHAPEs are the custom op NeutronGraph.
The kernel release is the one of the i.MX95 A0 field report (NXP BSP rel_imx_6.12.49_2.2.0).
Device-tree model/compatible strings are representative of an i.MX95 19x19 board, not read from a dtb.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from npu_accept.paths import packaged_profiles_dir
from npu_accept.sim import models
from npu_accept.sim.delegate.build import build_delegate
from npu_accept.sim.harness import DeviceNode, TwinFile, TwinSpec

if TYPE_CHECKING:  # imported where used at run time: the demo's TFLite runtime is optional
    from ai_edge_litert import schema_py_generated as schema

KERNEL_RELEASE = "6.12.49-lts-next-g759f4038100f"  # the field report's board
MODELS_DIR = "/usr/share/npu-models"
CONVERTED_NAME = "face_detection_short_range_neutron.tflite"
REFERENCE_NAME = "face_detection_short_range.tflite"
DELEGATE_PATH = "/usr/lib/libneutron_delegate.so"
POOL_BYTES = 0x08000000  # 128 MiB, meta-npu's Neutron pool overlay
NEUTRON_MAJOR = 240  # a local/experimental major: nothing binds it


@dataclass(frozen=True)
class TwinAssets:
    """Files built by the tests that every i.MX95 twin ships."""

    delegate: Path  # the compiled twin delegate .so
    converted: Path  # NPU model (has the NeutronGraph custom op)
    reference: Path  # the unconverted model the CPU runs


@dataclass(frozen=True)
class Imx95Board:
    """The knobs of an i.MX95 twin; the defaults are a healthy B0 board that passes every check."""

    name: str = "imx95-healthy"
    revision: str = "2.0"
    driver_version: str = "1.0"
    manifest_driver_version: str | None = "1.0"  # None: no build manifest on the board
    delegate_present: bool = True
    delegate_mode: str = "ok"
    pool_bytes: int | None = POOL_BYTES  # None: no Neutron pool in the device tree
    firmware_state: str = "running"
    converted: Path | None = None  # override the converted model (e.g. a slower build)
    reference: Path | None = None
    model_replaced: bool = False  # the manifest records another build of the converted model
    kernel_release: str = KERNEL_RELEASE
    boot_log: tuple[str, ...] = ()  # extra kernel log lines since boot
    run_fault: str | None = None  # a kernel message the delegate logs at each invoke (during the run)


HEALTHY = Imx95Board()

# One twin per fault; the value is (board, the check that must fail, words its message must contain).
FAULTS: dict[str, tuple[Imx95Board, str, str]] = {
    "a0": (replace(HEALTHY, name="imx95-a0", revision="1.0"), "silicon", "A0 (revision 1.0)"),
    "a1": (replace(HEALTHY, name="imx95-a1", revision="1.1"), "silicon", "A1 (revision 1.1)"),
    "old-driver": (
        replace(HEALTHY, name="imx95-old-driver", driver_version="0.9", manifest_driver_version="0.9"),
        "driver",
        "older than the profile minimum",
    ),
    "firmware-offline": (
        replace(HEALTHY, name="imx95-firmware-offline", firmware_state="offline"),
        "driver",
        "NeutronFirmware.elf is not running (remoteproc state 'offline')",
    ),
    "model-replaced": (
        replace(HEALTHY, name="imx95-model-replaced", model_replaced=True),
        "delegate",
        "is not the one the image was built with",
    ),
    "manifest-mismatch": (
        replace(HEALTHY, name="imx95-manifest-mismatch", manifest_driver_version="1.1"),
        "driver",
        "build manifest records 1.1",
    ),
    "delegate-zero-nodes": (
        replace(HEALTHY, name="imx95-claim-none", delegate_mode="claim-none"),
        "delegate",
        "offloaded 0 of",
    ),
    "delegate-missing": (
        replace(HEALTHY, name="imx95-no-delegate", delegate_present=False),
        "runtime",
        "libneutron_delegate.so is missing",
    ),
    "invoke-failure": (
        replace(HEALTHY, name="imx95-fail-invoke", delegate_mode="fail-invoke"),
        "delegate",
        "through the delegate failed",
    ),
    "degenerate-outputs": (
        replace(HEALTHY, name="imx95-constant", delegate_mode="constant:0.227"),
        "outputs",
        "does not match",
    ),
    "pool-missing": (replace(HEALTHY, name="imx95-no-pool", pool_bytes=None), "memory", "pool is missing"),
    # remoteproc_core.c's rproc_report_crash() wording, logged at boot
    "kernel-fault-at-boot": (
        replace(
            HEALTHY,
            name="imx95-rproc-crash",
            boot_log=(
                "[    2.300000] remoteproc remoteproc0: crash detected in imx95-neutron-rproc: type watchdog",
            ),
        ),
        "kernel_log",
        "since boot (before the run)",
    ),
    # arm-smmu-v3.c's event queue wording, logged by the NPU job itself
    "kernel-fault-during-run": (
        replace(
            HEALTHY, name="imx95-smmu-fault", run_fault="arm-smmu-v3 490d0000.iommu: event 0x10 received:"
        ),
        "kernel_log",
        "SMMU blocked a DMA access (an IOMMU fault) during the run",
    ),
    "nondeterministic": (
        replace(HEALTHY, name="imx95-jitter", delegate_mode="jitter"),
        "determinism",
        "differs from run 1",
    ),
    # a model converted with the Neutron SDK of LF 6.12.49_2.2.0 (the profile's) on a 6.12.20 BSP
    "sdk-bsp-mismatch": (
        replace(HEALTHY, name="imx95-bsp-6.12.20", kernel_release="6.12.20-lts-next"),
        "pairing",
        "Neutron SDK 2.2.2 of BSP LF 6.12.49_2.2.0 (kernel 6.12.49) but the board runs kernel 6.12.20",
    ),
}

# Slightly-off outputs within the profile's tolerance: must PASS every check.
SLIGHTLY_OFF = replace(HEALTHY, name="imx95-slightly-off", delegate_mode="offset:0.001")

# The i.MX95 A0 field report: an A0 board whose NPU returns constants (every anchor's box 0.227)
# — the summary must name A0 silicon as the root cause.
A0_FIELD_REPORT = replace(
    HEALTHY, name="imx95-a0-field-report", revision="1.0", delegate_mode="constant:0.227"
)


def _be32(*values: int) -> bytes:
    return struct.pack(f">{len(values)}I", *values)


def _manifest(board: Imx95Board, assets: TwinAssets) -> str:
    converted = board.converted or assets.converted
    reference = board.reference or assets.reference
    return json.dumps(
        {
            "schema": "npu-build-manifest/1",
            "npu_family": "neutron",
            "machine": "imx95-19x19-verdin",
            "distro": "fsl-imx-xwayland",
            "image": "npu-image",
            "kernel": {"recipe": "linux-imx", "version": "6.12.49", "srcrev": None},
            "driver": {"recipe": "linux-imx", "version": board.manifest_driver_version, "srcrev": None},
            "runtime": {"recipe": "neutron", "version": None, "srcrev": None},
            "delegate": {"recipe": "tensorflow-lite-neutron-delegate", "version": None, "srcrev": None},
            "daemon": None,
            "models": [
                {
                    "path": f"{MODELS_DIR}/{CONVERTED_NAME}",
                    "sha256": hashlib.sha256(
                        converted.read_bytes() + (b"another build" if board.model_replaced else b"")
                    ).hexdigest(),
                },
                {
                    "path": f"{MODELS_DIR}/{REFERENCE_NAME}",
                    "sha256": hashlib.sha256(reference.read_bytes()).hexdigest(),
                },
            ],
        },
        indent=2,
    )


def imx95_spec(board: Imx95Board, assets: TwinAssets) -> TwinSpec:
    """The TwinSpec of an i.MX95 Verdin EVK with the given knobs."""
    dt = "/sys/firmware/devicetree/base"
    files: dict[str, bytes | str | TwinFile] = {
        "/sys/devices/soc0/soc_id": "i.MX95\n",
        "/sys/devices/soc0/revision": f"{board.revision}\n",
        "/sys/devices/soc0/family": "Freescale i.MX\n",
        "/sys/devices/soc0/machine": "NXP i.MX95 19X19 Verdin EVK\n",
        f"{dt}/model": b"NXP i.MX95 19X19 Verdin EVK\x00",
        f"{dt}/compatible": b"fsl,imx95-19x19-verdin-evk\x00fsl,imx95\x00",
        f"{dt}/reserved-memory/#address-cells": _be32(2),
        f"{dt}/reserved-memory/#size-cells": _be32(2),
        f"{dt}/reserved-memory/ranges": b"",
        f"{dt}/neutron@4ab00004/compatible": b"fsl,imx95-neutron\x00",
        "/sys/module/neutron/version": f"{board.driver_version}\n",
        "/sys/module/neutron/initstate": "live\n",
        "/sys/class/remoteproc/remoteproc0/name": "imx95-neutron-rproc\n",
        "/sys/class/remoteproc/remoteproc0/firmware": "NeutronFirmware.elf\n",
        "/sys/class/remoteproc/remoteproc0/state": f"{board.firmware_state}\n",
        # /lib is the host's symlink to usr/lib inside the twin's overlay root: a twin file under /lib
        # would replace it and hide the host's libraries, so the firmware goes to where it resolves.
        "/usr/lib/firmware/NeutronFirmware.elf": b"\x7fELF twin placeholder: never executed\n",
        "/etc/neutron-twin.conf": f"# twin delegate fault mode\nmode = {board.delegate_mode}\n"
        + (f"kernel_log = {board.run_fault}\n" if board.run_fault else ""),
        f"{MODELS_DIR}/{CONVERTED_NAME}": (board.converted or assets.converted).read_bytes(),
        f"{MODELS_DIR}/{REFERENCE_NAME}": (board.reference or assets.reference).read_bytes(),
    }
    if board.pool_bytes is not None:
        files[f"{dt}/reserved-memory/neutron-pool/compatible"] = b"shared-dma-pool\x00"
        files[f"{dt}/reserved-memory/neutron-pool/reusable"] = b""
        files[f"{dt}/reserved-memory/neutron-pool/size"] = _be32(0, board.pool_bytes)
        files[f"{dt}/reserved-memory/neutron-pool/alignment"] = _be32(0, 0x00400000)
    if board.manifest_driver_version is not None:
        files["/usr/share/meta-npu/build-manifest.json"] = _manifest(board, assets)
    if board.delegate_present:
        files[DELEGATE_PATH] = TwinFile(assets.delegate.read_bytes(), 0o755)
    kernel_log = (
        "\n".join(
            [
                f"[    0.000000] Linux version {board.kernel_release} (oe-user@oe-host) #1 SMP PREEMPT",
                "[    2.101000] remoteproc remoteproc0: imx95-neutron-rproc is available",
                "[    2.102000] remoteproc remoteproc0: powering up imx95-neutron-rproc",
                "[    2.110000] remoteproc remoteproc0: Booting fw image NeutronFirmware.elf, size 38",
                "[    2.120000] remoteproc remoteproc0: remote processor imx95-neutron-rproc is now up",
                # dev_info() of NXP's neutron_device.c ("created neutron device, name=%s"); the device name
                # follows the imx95.dtsi node imx95-neutron@4ab00004.
                "[    2.130000] neutron 4ab00004.imx95-neutron: created neutron device, name=neutron0",
                *board.boot_log,
            ]
        )
        + "\n"
    )
    return TwinSpec(
        name=board.name,
        files=files,
        devices={"/dev/neutron0": DeviceNode(NEUTRON_MAJOR, 0)},
        kernel_release=board.kernel_release,
        kernel_log=kernel_log,
    )


def imx95_assets(directory: Path) -> TwinAssets:
    """The twin delegate, the real face detector and its "Neutron-converted" copy (cached in directory)."""
    from npu_accept.sim.delegate.convert import convert  # needs the TFLite bindings' flatbuffer schema

    directory.mkdir(parents=True, exist_ok=True)
    delegate = build_delegate(directory)
    reference = models.face_detector()
    converted = directory / CONVERTED_NAME
    if not converted.exists() or converted.stat().st_mtime < reference.stat().st_mtime:
        partial = directory / (CONVERTED_NAME + ".tmp")
        convert(reference, partial)
        partial.replace(converted)
    return TwinAssets(delegate=delegate, converted=converted, reference=reference)


def imx95_twin_profile(
    directory: Path, runs: int = 20, regression_tolerance: float = 1.0, golden: bool = True
) -> Path:
    """imx95-verdin.yaml with the twin's models and the twin's performance expectations.

    Everything that judges the silicon, driver, delegate, pool and outputs is the shipped profile's.
    Only the models differ (the twin ships the MediaPipe face detector; its input is a real photo)
    and the speed expectations: a twin's "NPU" is the host CPU, so it cannot be 2x faster than it.
    """
    directory.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((packaged_profiles_dir() / "imx95-verdin.yaml").read_text())
    photo = directory / "face_detection_input.npy"
    image = models.face_detection_input()
    np.save(photo, image)
    golden_files = _golden_outputs(models.face_detector(), image, directory) if golden else []
    data["name"] = "imx95-verdin-twin"
    data["description"] = (
        "A simulated i.MX95 Verdin EVK (board twin): the shipped imx95-verdin profile with the "
        "twin's model and speed expectations."
    )
    data["models"] = [
        {
            "name": "face_detection",
            "path": f"{MODELS_DIR}/{CONVERTED_NAME}",
            "reference": f"{MODELS_DIR}/{REFERENCE_NAME}",
            "inputs": [{"file": photo.name}],
            "golden": [g.name for g in golden_files] or None,
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
        "warmup": 3,
        "min_speedup": 0.2,
        "regression_tolerance": regression_tolerance,
        "statistic": "min",
    }
    path = directory / "imx95-verdin-twin.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _golden_outputs(model: Path, image: np.ndarray, directory: Path) -> list[Path]:
    """The reference model's outputs for the photo, computed on the host: the "golden" files a
    model package ships (here from the same TFLite the twin's CPU runs, so they must match)."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(model))
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], image)
    interpreter.invoke()
    paths = []
    for index, detail in enumerate(interpreter.get_output_details()):
        path = directory / f"face_detection_golden{index}.npy"
        np.save(path, interpreter.get_tensor(detail["index"]))
        paths.append(path)
    return paths


def slowed_model(source: Path, target: Path, copies: int = 2) -> Path:
    """A "regressed build" of a model: its whole graph computed `copies` more times on the same input,
    so every inference really does more work; the copies' results are extra outputs (identical to
    the first ones), since the runtime skips work nobody reads."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(bytearray(source.read_bytes()), 0)
    graph = model.subgraphs[0]
    original = list(graph.operators)
    original_outputs = list(graph.outputs)
    produced = {int(t) for op in original for t in op.outputs}
    for copy in range(copies):
        clone_of: dict[int, int] = {}
        for index in sorted(produced):
            tensor = schema.TensorT.InitFromObj(_packed_tensor(graph.tensors[index]))
            tensor.name = (graph.tensors[index].name or b"") + f"/slow{copy}".encode()
            graph.tensors.append(tensor)
            clone_of[index] = len(graph.tensors) - 1
        for op in original:
            twin_op = schema.OperatorT.InitFromObj(_packed_operator(op))
            twin_op.inputs = [clone_of.get(int(t), int(t)) for t in op.inputs]
            twin_op.outputs = [clone_of[int(t)] for t in op.outputs]
            graph.operators.append(twin_op)
        # The copies' results become extra outputs, or the runtime would drop the unused work.
        graph.outputs = list(graph.outputs) + [clone_of[int(t)] for t in original_outputs]
    builder = flatbuffers.Builder(len(source.read_bytes()) * 2)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    target.write_bytes(bytes(builder.Output()))
    return target


def _packed_tensor(tensor: schema.TensorT) -> schema.Tensor:
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    builder = flatbuffers.Builder(256)
    builder.Finish(tensor.Pack(builder))
    return schema.Tensor.GetRootAs(builder.Output(), 0)


def _packed_operator(op: schema.OperatorT) -> schema.Operator:
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    builder = flatbuffers.Builder(256)
    builder.Finish(op.Pack(builder))
    return schema.Operator.GetRootAs(builder.Output(), 0)
