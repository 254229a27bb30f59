# SPDX-License-Identifier: MIT
"""The backend interface of npu-run.

A backend is a module `npu_target.backends.<module>` exposing one function:

    def run(request: RunRequest) -> RunResult

It raises `UsageError` for bad input (missing file, wrong input count or dtype) and `RunFailure`
when the model could not be loaded, delegated or invoked; it may also return a RunResult whose
`errors` list is non-empty (npu-run then exits 1 but still prints the JSON). Backends are looked
up by name here, so a backend whose module is not installed gives one clear sentence.  The
backends are the CPU reference (tflite-cpu) and those each family's probe module names in
`BACKENDS` (npu_target.probes): a new family's backend needs no edit here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..probes import family_backends

# backend name on the command line -> module under npu_target: the CPU reference of every board,
# then each installed family's own (its probe module's BACKENDS, npu_target.probes).
BACKEND_MODULES = {"tflite-cpu": "backends.tflite", **family_backends()}


@dataclass
class RunRequest:
    model: Path
    inputs: list[Path]
    output_dir: Path
    backend: str
    delegate: Path | None = None
    delegate_options: dict[str, str] = field(default_factory=dict)
    runs: int = 1
    warmup: int = 0
    no_xnnpack: bool = False
    threads: int | None = None


@dataclass
class TensorInfo:
    """One input or output tensor as the runtime sees it; scale/zero_point 0.0/0 when not quantized."""

    file: str
    name: str
    dtype: str
    shape: list[int]
    scale: float = 0.0
    zero_point: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "name": self.name,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "scale": float(self.scale),
            "zero_point": int(self.zero_point),
        }


@dataclass
class NodeCounts:
    """Nodes of the graph and how many the delegate under test (and XNNPACK) replaced."""

    total: int | None = None
    delegated: int = 0
    partitions: int = 0
    xnnpack_applied: bool = False
    xnnpack_nodes: int = 0
    xnnpack_partitions: int = 0
    source: str = "none"

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "delegated": self.delegated,
            "partitions": self.partitions,
            "xnnpack_applied": self.xnnpack_applied,
            "xnnpack_nodes": self.xnnpack_nodes,
            "xnnpack_partitions": self.xnnpack_partitions,
            "source": self.source,
        }


@dataclass
class RunResult:
    bindings: str
    model: dict[str, Any]
    delegate: dict[str, Any] | None
    nodes: NodeCounts
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    latency_ms: list[float]
    stderr_text: str = ""
    errors: list[str] = field(default_factory=list)
    npu: dict[str, Any] | None = None  # backend-specific NPU settings (rknn: core mask, SRAM in use)


RunFunction = Callable[[RunRequest], RunResult]


def load_backend(name: str) -> RunFunction:
    """Return the `run` function of backend `name`, or raise UsageError in one sentence."""
    module_name = BACKEND_MODULES.get(name)
    if module_name is None:
        known = ", ".join(sorted(BACKEND_MODULES))
        raise UsageError(f"unknown backend '{name}'; choose one of: {known}.")
    full = f"{__name__.rpartition('.')[0]}.{module_name}"  # npu_target.<module_name>
    where = f"npu_target/{module_name.replace('.', '/')}.py"
    try:
        module = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        raise UsageError(
            f"backend '{name}' is not part of this npu-tools installation "
            f"(module {where} is missing); install the image's npu-tools "
            "package or pick another backend."
        ) from None
    run: Callable[[RunRequest], RunResult] | None = getattr(module, "run", None)
    if run is None:
        raise UsageError(f"backend module {where} defines no run(); reinstall npu-tools.")
    return run


def load_inputs(paths: list[Path]) -> list[Any]:
    """The input tensors from .npy files, or a UsageError naming the file and the fix."""
    import numpy as np  # only backends need numpy; keep the interface importable without it

    arrays = []
    for path in paths:
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except FileNotFoundError:
            raise UsageError(f"input file {path} does not exist; give an existing .npy file.") from None
        except (OSError, ValueError) as exc:
            raise UsageError(
                f"input file {path} is not a readable .npy array ({exc}); save it with numpy.save."
            ) from None
    return arrays
