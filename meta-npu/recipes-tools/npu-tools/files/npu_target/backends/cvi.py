# SPDX-License-Identifier: MIT
"""cvi: run a .cvimodel on the Sophgo CV18xx TPU through cviruntime's model_runner.

model_runner (sophgo/cviruntime tool/model_runner.cpp) takes an .npz of inputs keyed by tensor
name (-i), the model (-m), writes an .npz of outputs keyed by tensor name (-o), runs -c times and
with --enable-timer prints "Performance result: N runs take T ms, each run takes X ms". It prints
every tensor's name, shape, format, qscale and zero point under "Inputs:"/"Outputs:".

The chip check happens here, before anything runs: a cvimodel's 48-byte header
(include/runtime/model.hpp MODEL_HEADER: magic "CviModel", body_size, major, minor, md5[16],
chip[16] at byte offset 30) names the chip family it was compiled for; a version 1.0 header has
no chip field and means cv183x (src/common/model.cpp). The board's family is its device tree's
root compatible.

Environment: NPU_RUN_MODEL_RUNNER names the model_runner to use (default: PATH, /usr/bin,
/mnt/system/usr/bin); NPU_RUN_DT_ROOT is the directory the device tree is read under (default
"/"), for boards whose tree is exported elsewhere and for tests.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import RunFailure, UsageError
from . import NodeCounts, RunRequest, RunResult, TensorInfo

MAGIC = b"CviModel"
HEADER_SIZE = 48
CHIP_OFFSET = 30
CHIP_SIZE = 16
DT_COMPATIBLE = ("/proc/device-tree/compatible", "/sys/firmware/devicetree/base/compatible")
MODEL_RUNNERS = ("/usr/bin/model_runner", "/mnt/system/usr/bin/model_runner")
RUN_TIMEOUT_S = 600
TAIL_CHARS = 2000

# model_runner's formatToStr() -> numpy dtype of the tensor as stored.
FORMATS = {
    "fp32": "float32",
    "i32": "int32",
    "u32": "uint32",
    "bf16": "uint16",
    "i16": "int16",
    "u16": "uint16",
    "i8": "int8",
    "u8": "uint8",
}
TENSOR_LINE = re.compile(
    r"^\s*\[(\d+)\]\s+(\S+)\s+<(\d+),(\d+),(\d+),(\d+)>,(\w+)"
    r"(?:,\s*qscale:([-\d.eE+]+),\s*zero_point:\s*(-?\d+))?"
)
PERFORMANCE = re.compile(r"each run takes ([\d.]+) ms")


@dataclass
class ModelHeader:
    version: tuple[int, int]
    chip: str


@dataclass
class TensorSpec:
    name: str
    shape: list[int]
    dtype: str
    qscale: float
    zero_point: int


def read_header(path: Path) -> ModelHeader:
    """The cvimodel header, or UsageError naming the file if it is not a cvimodel."""
    try:
        with path.open("rb") as f:
            head = f.read(HEADER_SIZE)
    except OSError as exc:
        raise UsageError(f"cannot read model {path} ({exc.strerror}); check the path.") from None
    if len(head) < HEADER_SIZE or not head.startswith(MAGIC):
        raise UsageError(
            f"{path} is not a cvimodel (no 'CviModel' header); compile the model with "
            "TPU-MLIR model_deploy for this board's chip family."
        )
    major, minor = head[12], head[13]
    if (major, minor) == (1, 0):
        return ModelHeader((1, 0), "cv183x")
    chip = head[CHIP_OFFSET : CHIP_OFFSET + CHIP_SIZE].split(b"\x00")[0].decode("ascii", "replace")
    return ModelHeader((major, minor), chip)


def board_chip(root: Path = Path("/")) -> str | None:
    for rel in DT_COMPATIBLE:
        try:
            data = (root / rel.lstrip("/")).read_bytes()
        except OSError:
            continue
        for value in data.split(b"\x00"):
            vendor, _, name = value.decode("ascii", "replace").partition(",")
            if vendor == "cvitek" and re.fullmatch(r"cv18[0-3]x", name):
                return name
    return None


def check_chip(model: Path, header: ModelHeader, board: str | None) -> None:
    if board is None:
        raise RunFailure(
            "cannot tell this board's CV18xx chip family (no cvitek,cv18xx in the device "
            "tree's root compatible); boot it with the vendor device tree."
        )
    if header.chip != board:
        raise RunFailure(
            f"{model.name} is a cvimodel built for {header.chip}, but this board is "
            f"{board}: it cannot run here; compile it again with TPU-MLIR model_deploy "
            f"--processor {board}."
        )


def find_model_runner() -> str:
    override = os.environ.get("NPU_RUN_MODEL_RUNNER")
    if override:
        if not os.access(override, os.X_OK):
            raise UsageError(
                f"NPU_RUN_MODEL_RUNNER={override} is not an executable; point it at model_runner or unset it."
            )
        return override
    found = shutil.which("model_runner") or next((p for p in MODEL_RUNNERS if os.access(p, os.X_OK)), None)
    if found is None:
        raise RunFailure(
            "model_runner is not installed (not on PATH, /usr/bin or /mnt/system/usr/bin); "
            "install cviruntime-tools."
        )
    return found


def parse_tensors(stdout: str) -> tuple[list[TensorSpec], list[TensorSpec]]:
    """The "Inputs:" and "Outputs:" tables model_runner prints."""
    inputs: list[TensorSpec] = []
    outputs: list[TensorSpec] = []
    current = inputs
    for line in stdout.splitlines():
        if line.startswith("Inputs:"):
            current = inputs
            continue
        if line.startswith("Outputs:"):
            current = outputs
            continue
        m = TENSOR_LINE.match(line)
        if m:
            current.append(
                TensorSpec(
                    name=m.group(2),
                    shape=[int(m.group(i)) for i in range(3, 7)],
                    dtype=FORMATS.get(m.group(7), m.group(7)),
                    qscale=float(m.group(8)) if m.group(8) else 0.0,
                    zero_point=int(m.group(9)) if m.group(9) else 0,
                )
            )
    return inputs, outputs


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RunFailure(
            f"model_runner did not finish within {RUN_TIMEOUT_S} s; the TPU may be hung (see dmesg)."
        ) from None


def _failure(proc: subprocess.CompletedProcess[str], what: str) -> RunFailure:
    log = (proc.stdout + proc.stderr).strip()
    chip = re.search(r"cvimodel built for (\S+) CANNOT run on platform (\S+)", log)
    if chip:
        return RunFailure(
            f"the runtime refused the model: it is built for {chip.group(1)} and this "
            f"runtime is for {chip.group(2)}; compile it with --processor {chip.group(2)}."
        )
    last = log.splitlines()[-1] if log else "no output"
    return RunFailure(f"model_runner failed to {what} (exit {proc.returncode}): {last}")


def _pack_inputs(request: RunRequest, specs: list[TensorSpec], path: Path) -> list[TensorInfo]:
    if len(request.inputs) != len(specs):
        raise UsageError(
            f"the model has {len(specs)} input(s) but {len(request.inputs)} --input file(s) "
            "were given; pass one .npy per input, in the model's order."
        )
    arrays: dict[str, np.ndarray] = {}
    infos = []
    for index, spec in enumerate(specs):
        file = request.inputs[index]
        try:
            array = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as exc:
            message = f"input {file} is not a readable .npy file ({exc}); save it with numpy.save."
            raise UsageError(message) from None
        if array.size != int(np.prod(spec.shape)):
            raise UsageError(
                f"input {file} has {array.size} values but model input {spec.name} takes "
                f"{int(np.prod(spec.shape))} (shape {spec.shape}); reshape or resize it."
            )
        arrays[spec.name] = array
        infos.append(
            TensorInfo(
                file=file.name,
                name=spec.name,
                dtype=str(array.dtype),
                shape=list(array.shape),
                scale=spec.qscale,
                zero_point=spec.zero_point,
            )
        )
    # numpy's stub matches **arrays against allow_pickle too; a tensor name is never that keyword,
    # and the board's numpy may predate it, so it is not passed.
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return infos


def run(request: RunRequest) -> RunResult:
    header = read_header(request.model)
    check_chip(request.model, header, board_chip(Path(os.environ.get("NPU_RUN_DT_ROOT", "/"))))
    runner = find_model_runner()
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="npu-run-cvi-") as tmp:
        in_npz, out_npz = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
        # A first call without inputs only loads the model and lists its tensors.
        info = _run([runner, "-m", str(request.model), "-c", "1"])
        if info.returncode != 0:
            raise _failure(info, "load the model")
        in_specs, out_specs = parse_tensors(info.stdout)
        inputs = _pack_inputs(request, in_specs, in_npz)
        base = [runner, "-i", str(in_npz), "-m", str(request.model)]
        if request.warmup:
            warm = _run([*base, "-c", str(request.warmup)])
            if warm.returncode != 0:
                raise _failure(warm, "run the warm-up")
        timed = _run([*base, "-o", str(out_npz), "-c", str(max(request.runs, 1)), "--enable-timer"])
        if timed.returncode != 0:
            raise _failure(timed, "run the model")
        per_run = PERFORMANCE.search(timed.stdout)
        if per_run is None:
            errors.append("model_runner printed no 'Performance result' line; latency is unknown.")
        request.output_dir.mkdir(parents=True, exist_ok=True)
        outputs = []
        with np.load(out_npz, allow_pickle=False) as results:
            for i, spec in enumerate(out_specs):
                if spec.name not in results:
                    errors.append(f"output {spec.name} is missing from model_runner's output file.")
                    continue
                array = results[spec.name]
                out_file = request.output_dir / f"out{i}.npy"
                np.save(out_file, array)
                outputs.append(
                    TensorInfo(
                        file=out_file.name,
                        name=spec.name,
                        dtype=str(array.dtype),
                        shape=list(array.shape),
                        scale=spec.qscale,
                        zero_point=spec.zero_point,
                    )
                )
    return RunResult(
        bindings=(
            f"cviruntime model_runner {runner} (cvimodel {header.version[0]}.{header.version[1]} "
            f"for {header.chip})"
        ),
        model={
            "path": str(request.model),
            "sha256": hashlib.sha256(request.model.read_bytes()).hexdigest(),
            "custom_ops": [],
            "ops_total": None,
        },
        delegate=None,
        nodes=NodeCounts(source="none"),
        inputs=inputs,
        outputs=outputs,
        # model_runner reports the mean of the timed runs, not each run.
        latency_ms=[float(per_run.group(1))] if per_run else [],
        stderr_text=(timed.stdout + timed.stderr)[-TAIL_CHARS:],
        errors=errors,
    )
