# SPDX-License-Identifier: MIT
"""Sophgo CV18xx (Milk-V Duo 256M, SG2002 = cv181x) board trees and the programs they need.

A twin cannot run cviruntime (it needs the TPU), so the tests build a stand-in model_runner from
tests/twins/cv18xx/fake_model_runner.py: a real program with model_runner's command line and
output, compiled for one chip family (the real runtime is built with CHIP=…), running "twin
models": a real cvimodel header (magic "CviModel", chip[16] at byte offset 30, as cviruntime's
include/runtime/model.hpp lays it out) followed by a JSON body. `reference_outputs` recomputes
what it returns.

What a healthy Duo 256M tree presents, and where a real board has it: the device tree's root
compatible "cvitek,cv181x" and the ION "ion-region" node (75 MiB, meta-npu's
sg2002-milkv-duo256m-tpu-ion.dtsi), /dev/cvi-tpu0, cv181x_sys/cv181x_base/cv181x_tpu in
/proc/modules, the base module's
"CVITEK CHIP ID = N" line in dmesg (interdrv/base/base.c), the carveout heap's
/sys/kernel/debug/ion/cvi_carveout_heap_dump/total_mem, /usr/lib/libcviruntime.so and
/usr/bin/model_runner.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parent / "cv18xx" / "fake_model_runner.py"
MIB = 1 << 20
ION_BYTES = 75 * MIB
FORMATS = {"fp32": "float32", "i8": "int8", "u8": "uint8"}


@dataclass(frozen=True)
class TwinTensor:
    name: str
    shape: tuple[int, int, int, int]
    fmt: str  # model_runner's format name: fp32 | i8 | u8
    qscale: float = 1.0
    zero_point: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "fmt": self.fmt,
            "qscale": self.qscale,
            "zero_point": self.zero_point,
        }


CLASSIFIER_INPUT = TwinTensor("input", (1, 3, 32, 32), "i8", qscale=64.0)
CLASSIFIER_OUTPUT = TwinTensor("prob", (1, 10, 1, 1), "fp32")


def cvimodel(
    chip: str,
    inputs: list[TwinTensor],
    outputs: list[TwinTensor],
    weight: int = 3,
    skew: int = 0,
    version: tuple[int, int] = (1, 4),
) -> bytes:
    """A twin .cvimodel: cviruntime's 48-byte MODEL_HEADER, then the stand-in's JSON body."""
    body = json.dumps(
        {
            "inputs": [t.to_json() for t in inputs],
            "outputs": [t.to_json() for t in outputs],
            "weight": weight,
            "skew": skew,
        }
    ).encode()
    header = (
        b"CviModel"
        + struct.pack("<I", len(body))
        + bytes(version)
        + bytes(16)
        + chip.encode().ljust(16, b"\0")
        + bytes(2)
    )
    assert len(header) == 48
    return header + body


def quantized_input(array: np.ndarray, tensor: TwinTensor) -> np.ndarray:
    """What model_runner stores for an input: float inputs are quantized with qscale/zero point."""
    if array.dtype.kind == "f" and tensor.fmt in ("i8", "u8"):
        info = np.iinfo(FORMATS[tensor.fmt])
        array = np.clip(np.round(array * tensor.qscale) + tensor.zero_point, info.min, info.max)
    return array.astype(FORMATS[tensor.fmt]).reshape(-1)


def reference_outputs(
    arrays: list[np.ndarray],
    inputs: list[TwinTensor],
    outputs: list[TwinTensor],
    weight: int = 3,
    skew: int = 0,
) -> list[np.ndarray]:
    """The stand-in's outputs for ARRAYS (forward() of cv18xx/fake_model_runner.py)."""
    first = quantized_input(arrays[0], inputs[0]).astype(np.int64)
    result = []
    for j, tensor in enumerate(outputs):
        count = int(np.prod(tensor.shape))
        raw = np.resize(first, count) * weight + 3 * j + skew
        if tensor.fmt == "fp32":
            out = raw.astype(np.float32) * 0.5
        else:
            out = (raw & 0xFF).astype(np.uint8).view(FORMATS[tensor.fmt])
        result.append(out.reshape(tensor.shape))
    return result


def build_model_runner(workdir: Path, platform: str = "cv181x") -> Path:
    """The stand-in model_runner for a runtime built with CHIP=PLATFORM."""
    out = workdir / f"model_runner-{platform}"
    out.write_text(SOURCE.read_text().replace("@PLATFORM@", platform))
    out.chmod(0o755)
    return out


@dataclass(frozen=True)
class Cv18xxBoard:
    """The knobs of a CV18xx tree; the defaults are a healthy Milk-V Duo 256M."""

    name: str = "milkv-duo256m-healthy"
    chip: str = "cv181x"
    chip_id: int | None = 3
    tpu_device: bool = True
    modules_loaded: bool = True
    ion_bytes: int | None = ION_BYTES
    extra_files: dict[str, bytes] = field(default_factory=dict)


def _be32(*values: int) -> bytes:
    return b"".join(v.to_bytes(4, "big") for v in values)


def kernel_log(board: Cv18xxBoard) -> str:
    lines = ["[    0.000000] Linux version 5.10.4-tag- (builder) #1 PREEMPT"]
    if board.chip_id is not None:
        lines.append(f"[    1.203000] CVITEK CHIP ID = {board.chip_id}")
    if not board.tpu_device:
        # What cvi_tpu_probe() prints when the node lacks its clocks (interdrv/tpu).
        lines.append("[    1.204000] Cannot get clk_tpu_axi")
    return "\n".join(lines) + "\n"


def dmesg_program(directory: Path, board: Cv18xxBoard) -> Path:
    """A `dmesg` that prints the board's kernel log (npu-info runs the command)."""
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "kernel.log"
    log.write_text(kernel_log(board))
    program = directory / "dmesg"
    program.write_text(f"#!/bin/sh\nexec cat '{log}'\n")
    program.chmod(0o755)
    return directory


def board_tree(root: Path, board: Cv18xxBoard, model_runner: Path) -> Path:
    """Write the board's files under ROOT (npu-info --root / ProbeContext(root=ROOT))."""
    dt = "sys/firmware/devicetree/base"
    files: dict[str, bytes] = {
        f"{dt}/compatible": b"milkv,duo256m\0cvitek," + board.chip.encode() + b"\0",
        f"{dt}/model": b"Milk-V Duo256M\0",
        f"{dt}/reserved-memory/#address-cells": _be32(2),
        f"{dt}/reserved-memory/#size-cells": _be32(2),
        f"{dt}/tpu@c100000/compatible": b"cvitek,tpu\0",
        "proc/sys/kernel/osrelease": b"5.10.4-tag-\n",
        "usr/lib/libcviruntime.so": b"\x7fELF stand-in for libcviruntime.so\n",
        "usr/bin/model_runner": model_runner.read_bytes(),
        **board.extra_files,
    }
    if board.ion_bytes is not None:
        start = 0x8FE00000 - board.ion_bytes
        files[f"{dt}/reserved-memory/ion/compatible"] = b"ion-region\0"
        files[f"{dt}/reserved-memory/ion/size"] = _be32(0, board.ion_bytes)
        files[f"{dt}/reserved-memory/ion/alloc-ranges"] = _be32(0, start, 0, board.ion_bytes)
        files["sys/kernel/debug/ion/cvi_carveout_heap_dump/total_mem"] = f"{board.ion_bytes}\n".encode()
    if board.modules_loaded:
        chip = board.chip
        files["proc/modules"] = (
            f"{chip}_tpu 53248 0 - Live 0x0000000000000000 (O)\n"
            f"{chip}_base 24576 0 - Live 0x0000000000000000 (O)\n"
            f"{chip}_sys 32768 1 {chip}_base, Live 0x0000000000000000 (O)\n"
        ).encode()
    else:
        files["proc/modules"] = b""
    if board.tpu_device:
        files["dev/cvi-tpu0"] = b""
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "usr/bin/model_runner").chmod(0o755)
    return root
