# SPDX-License-Identifier: MIT
"""rknn: run a .rknn model on the Rockchip NPU through librknnrt's C API with ctypes.

Structures and constants are those of rknn_api.h in airockchip/rknn-toolkit2 v2.3.2
(rknpu2/runtime/Linux/librknn_api/include). No RKNN-Toolkit-Lite2 is needed: only
/usr/lib/librknnrt.so (the path rknn_server also loads) and numpy.

Inputs are passed with pass_through = 0 in the array's own type (uint8, int8, float16, float32:
librknnrt converts them to the model's input type, quantized or not); a 4-D input is always
passed as NHWC, as RKNN SDK 2.3.2's guide prescribes for the general API ("for a 4-D input
fmt=NHWC") and Rockchip's rknn_yolov5_demo does even when rknn_query reports NCHW dims, so the
.npy of such an input is [N, H, W, C]; other inputs keep the model's shape (fmt UNDEFINED).
Outputs are fetched raw (want_float = 0), in the model's output type and layout, with the
output's quantization (scale, zero point) in the JSON, so the host dequantizes.
Options (--delegate-option): "sram=1" sets RKNN_FLAG_ENABLE_SRAM on rknn_init (RKNN SDK v2.3.2
guide 5.7) and reads, while the context holds it, how much of the NPU SRAM is in use
(/sys/kernel/debug/rknpu/mm, "SRAM total size: T, used: U, free: F"); "core_mask=0|1|2|0_1|0_1_2|auto"
calls rknn_set_core_mask (guide 5.3, RKNN_NPU_CORE_*). Both are reported in the JSON's "npu".
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RunFailure, UsageError
from ..fdcapture import StderrCapture
from . import NodeCounts, RunRequest, RunResult, TensorInfo, load_inputs

RUNTIME_PATH = "/usr/lib/librknnrt.so"

RKNN_MAX_DIMS = 16
RKNN_MAX_NAME_LEN = 256
RKNN_FLAG_ENABLE_SRAM = 0x00000800
# rknn_core_mask of rknn_api.h: RKNN_NPU_CORE_AUTO, _0, _1, _2, _0_1, _0_1_2
CORE_MASKS = {"auto": 0, "0": 1, "1": 2, "2": 4, "0_1": 3, "0_1_2": 7}
MM_FILE = "/sys/kernel/debug/rknpu/mm"
MM_TOTALS = re.compile(r"SRAM total size: (\d+), used: (\d+), free: (\d+)")
RKNN_QUERY_IN_OUT_NUM = 0
RKNN_QUERY_INPUT_ATTR = 1
RKNN_QUERY_OUTPUT_ATTR = 2
RKNN_QUERY_SDK_VERSION = 5
RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC = 2
RKNN_TENSOR_NCHW = 0
RKNN_TENSOR_NHWC = 1

# rknn_tensor_type -> numpy dtype (INT4 and BFLOAT16 have no numpy equivalent)
TENSOR_TYPES: dict[int, str] = {
    0: "float32",
    1: "float16",
    2: "int8",
    3: "uint8",
    4: "int16",
    5: "uint16",
    6: "int32",
    7: "uint32",
    8: "int64",
    9: "bool",
}
NUMPY_TYPES = {np.dtype(name): code for code, name in TENSOR_TYPES.items()}

ERRORS = {
    -1: "RKNN_ERR_FAIL",
    -2: "RKNN_ERR_TIMEOUT",
    -3: "RKNN_ERR_DEVICE_UNAVAILABLE",
    -4: "RKNN_ERR_MALLOC_FAIL",
    -5: "RKNN_ERR_PARAM_INVALID",
    -6: "RKNN_ERR_MODEL_INVALID",
    -7: "RKNN_ERR_CTX_INVALID",
    -8: "RKNN_ERR_INPUT_INVALID",
    -9: "RKNN_ERR_OUTPUT_INVALID",
    -10: "RKNN_ERR_DEVICE_UNMATCH",
    -11: "RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL",
    -12: "RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION",
    -13: "RKNN_ERR_TARGET_PLATFORM_UNMATCH",
}

# rknn_context is uint32_t on 32-bit Arm (__arm__) and uint64_t elsewhere.
RknnContext = ctypes.c_uint32 if ctypes.sizeof(ctypes.c_void_p) == 4 else ctypes.c_uint64


class InOutNum(ctypes.Structure):
    _fields_ = [("n_input", ctypes.c_uint32), ("n_output", ctypes.c_uint32)]


class TensorAttr(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("n_dims", ctypes.c_uint32),
        ("dims", ctypes.c_uint32 * RKNN_MAX_DIMS),
        ("name", ctypes.c_char * RKNN_MAX_NAME_LEN),
        ("n_elems", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("fmt", ctypes.c_int),
        ("type", ctypes.c_int),
        ("qnt_type", ctypes.c_int),
        ("fl", ctypes.c_int8),
        ("zp", ctypes.c_int32),
        ("scale", ctypes.c_float),
        ("w_stride", ctypes.c_uint32),
        ("size_with_stride", ctypes.c_uint32),
        ("pass_through", ctypes.c_uint8),
        ("h_stride", ctypes.c_uint32),
    ]


class Input(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("buf", ctypes.c_void_p),
        ("size", ctypes.c_uint32),
        ("pass_through", ctypes.c_uint8),
        ("type", ctypes.c_int),
        ("fmt", ctypes.c_int),
    ]


class Output(ctypes.Structure):
    _fields_ = [
        ("want_float", ctypes.c_uint8),
        ("is_prealloc", ctypes.c_uint8),
        ("index", ctypes.c_uint32),
        ("buf", ctypes.c_void_p),
        ("size", ctypes.c_uint32),
    ]


class SdkVersion(ctypes.Structure):
    _fields_ = [("api_version", ctypes.c_char * 256), ("drv_version", ctypes.c_char * 256)]


@dataclass
class Tensor:
    """A model input or output as rknn_query reports it."""

    index: int
    name: str
    dims: list[int]
    dtype: str | None
    type_code: int
    fmt: int
    scale: float
    zero_point: int
    n_elems: int

    @property
    def input_shape(self) -> list[int]:
        """The shape of the data the general API takes for this input: NHWC when 4-D."""
        if len(self.dims) == 4 and self.fmt == RKNN_TENSOR_NCHW:
            n, c, h, w = self.dims
            return [n, h, w, c]
        return list(self.dims)

    @property
    def input_fmt(self) -> int:
        return RKNN_TENSOR_NHWC if len(self.dims) == 4 else self.fmt

    @classmethod
    def from_attr(cls, attr: TensorAttr) -> Tensor:
        affine = attr.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC
        return cls(
            index=attr.index,
            name=attr.name.decode("utf-8", "replace"),
            dims=[int(attr.dims[i]) for i in range(attr.n_dims)],
            dtype=TENSOR_TYPES.get(attr.type),
            type_code=attr.type,
            fmt=attr.fmt,
            scale=float(attr.scale) if affine else 0.0,
            zero_point=int(attr.zp) if affine else 0,
            n_elems=int(attr.n_elems),
        )


def _check(code: int, call: str) -> None:
    if code != 0:
        name = ERRORS.get(code, "unknown error")
        raise RunFailure(
            f"{call} failed with {code} ({name}); see the librknnrt log above and check "
            "that the model was converted for this SoC and the driver is loaded."
        )


def _load_runtime() -> ctypes.CDLL:
    path = os.environ.get("NPU_RUN_LIBRKNNRT", RUNTIME_PATH)
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        raise UsageError(
            f"cannot load the RKNN runtime {path} ({exc}); install librknnrt on the board."
        ) from None
    lib.rknn_init.argtypes = [
        ctypes.POINTER(RknnContext),
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_uint32,
        ctypes.c_void_p,
    ]
    lib.rknn_query.argtypes = [RknnContext, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
    lib.rknn_inputs_set.argtypes = [RknnContext, ctypes.c_uint32, ctypes.POINTER(Input)]
    lib.rknn_run.argtypes = [RknnContext, ctypes.c_void_p]
    lib.rknn_outputs_get.argtypes = [RknnContext, ctypes.c_uint32, ctypes.POINTER(Output), ctypes.c_void_p]
    lib.rknn_outputs_release.argtypes = [RknnContext, ctypes.c_uint32, ctypes.POINTER(Output)]
    lib.rknn_destroy.argtypes = [RknnContext]
    if hasattr(lib, "rknn_set_core_mask"):
        lib.rknn_set_core_mask.argtypes = [RknnContext, ctypes.c_int]
        lib.rknn_set_core_mask.restype = ctypes.c_int
    for name in (
        "rknn_init",
        "rknn_query",
        "rknn_inputs_set",
        "rknn_run",
        "rknn_outputs_get",
        "rknn_outputs_release",
        "rknn_destroy",
    ):
        getattr(lib, name).restype = ctypes.c_int
    return lib


def _init_flags(options: dict[str, str]) -> int:
    unknown = sorted(set(options) - {"sram", "core_mask"})
    if unknown:
        raise UsageError(
            f"unknown rknn option(s) {', '.join(unknown)}; the rknn backend knows sram=0|1 and "
            f"core_mask={'|'.join(CORE_MASKS)}."
        )
    sram = options.get("sram", "0")
    if sram not in ("0", "1"):
        raise UsageError(
            f"rknn option sram={sram} is not 0 or 1; pass --delegate-option sram=1 to use the NPU SRAM."
        )
    return RKNN_FLAG_ENABLE_SRAM if sram == "1" else 0


def _core_mask(options: dict[str, str]) -> int | None:
    name = options.get("core_mask")
    if name is None:
        return None
    if name not in CORE_MASKS:
        raise UsageError(f"rknn option core_mask={name} is not one of {', '.join(CORE_MASKS)}.")
    return CORE_MASKS[name]


def sram_in_use(mm_text: str | None) -> dict[str, Any]:
    """What /sys/kernel/debug/rknpu/mm says while a context holds the SRAM."""
    totals = MM_TOTALS.search(mm_text or "")
    if totals is None:
        return {"used_bytes": None, "total_bytes": None, "source": None}
    total, used, _free = (int(v) for v in totals.groups())
    return {"used_bytes": used, "total_bytes": total, "source": MM_FILE}


class Session:
    """One rknn context: init, query, run, release."""

    def __init__(self, lib: ctypes.CDLL, model: bytes, flags: int) -> None:
        self.lib = lib
        self.ctx = RknnContext(0)
        self._model = ctypes.create_string_buffer(model, len(model))
        _check(lib.rknn_init(ctypes.byref(self.ctx), self._model, len(model), flags, None), "rknn_init")

    def query(self, cmd: int, info: ctypes.Structure) -> None:
        _check(
            self.lib.rknn_query(self.ctx, cmd, ctypes.byref(info), ctypes.sizeof(info)), f"rknn_query({cmd})"
        )

    def tensors(self, cmd: int, count: int) -> list[Tensor]:
        found = []
        for index in range(count):
            attr = TensorAttr(index=index)
            self.query(cmd, attr)
            found.append(Tensor.from_attr(attr))
        return found

    def version(self) -> str:
        info = SdkVersion()
        self.query(RKNN_QUERY_SDK_VERSION, info)
        raw: bytes = info.api_version  # a ctypes Structure field: Any to the checker
        return raw.decode("utf-8", "replace").strip()

    def set_inputs(self, arrays: list[np.ndarray], tensors: list[Tensor]) -> None:
        inputs = (Input * len(arrays))()
        for slot, (array, tensor) in enumerate(zip(arrays, tensors)):  # noqa: B905 (Python 3.9)
            inputs[slot] = Input(
                index=tensor.index,
                buf=array.ctypes.data,
                size=array.nbytes,
                pass_through=0,
                type=NUMPY_TYPES[array.dtype],
                fmt=tensor.input_fmt,
            )
        _check(self.lib.rknn_inputs_set(self.ctx, len(arrays), inputs), "rknn_inputs_set")

    def run(self) -> float:
        start = time.perf_counter()
        _check(self.lib.rknn_run(self.ctx, None), "rknn_run")
        return (time.perf_counter() - start) * 1000.0

    def outputs(self, tensors: list[Tensor]) -> list[np.ndarray]:
        outs = (Output * len(tensors))()
        for slot, tensor in enumerate(tensors):
            outs[slot] = Output(want_float=0, is_prealloc=0, index=tensor.index)
        _check(self.lib.rknn_outputs_get(self.ctx, len(tensors), outs, None), "rknn_outputs_get")
        try:
            arrays = []
            for out, tensor in zip(outs, tensors):  # noqa: B905 (Python 3.9)
                if tensor.dtype is None:
                    raise RunFailure(
                        f"output '{tensor.name}' has rknn tensor type {tensor.type_code}, "
                        "which numpy cannot hold; convert the model with a standard type."
                    )
                raw = ctypes.string_at(out.buf, out.size)
                array = np.frombuffer(raw, dtype=tensor.dtype)
                if array.size != tensor.n_elems:
                    raise RunFailure(
                        f"output '{tensor.name}' has {array.size} elements but the model "
                        f"declares {tensor.n_elems}; the runtime and the model disagree."
                    )
                arrays.append(array.reshape(tensor.dims).copy())
            return arrays
        finally:
            self.lib.rknn_outputs_release(self.ctx, len(tensors), outs)

    def close(self) -> None:
        self.lib.rknn_destroy(self.ctx)


def _check_inputs(arrays: list[np.ndarray], paths: list[Path], tensors: list[Tensor]) -> None:
    if len(arrays) != len(tensors):
        raise UsageError(
            f"the model has {len(tensors)} input(s) but {len(arrays)} --input file(s) were "
            "given; pass one .npy per model input, in order."
        )
    for array, path, tensor in zip(arrays, paths, tensors):  # noqa: B905 (Python 3.9)
        if array.dtype not in NUMPY_TYPES:
            raise UsageError(
                f"input {path} is {array.dtype.name}, which librknnrt does not take; save it "
                "as uint8, int8, float16 or float32."
            )
        if list(array.shape) != tensor.input_shape:
            raise UsageError(
                f"input {path} has shape {list(array.shape)} but model input "
                f"'{tensor.name}' needs {tensor.input_shape}; save the array with that shape."
            )


def run(request: RunRequest) -> RunResult:
    if request.delegate is not None:
        raise UsageError(
            "--delegate does not apply to --backend rknn (the model runs on the NPU "
            "through librknnrt); drop it."
        )
    if request.runs < 1 or request.warmup < 0:
        raise UsageError("--runs must be at least 1 and --warmup at least 0.")
    try:
        model = request.model.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"model {request.model} cannot be read ({exc.strerror}); give an existing .rknn file."
        ) from None
    arrays = [np.ascontiguousarray(a) for a in load_inputs(request.inputs)]  # librknnrt reads flat C memory
    flags = _init_flags(request.delegate_options)
    _core_mask(request.delegate_options)
    lib = _load_runtime()
    result = RunResult(
        bindings="librknnrt",
        delegate=None,
        nodes=NodeCounts(source="runtime"),  # a vendor runtime: no TFLite nodes to count (docs/npu-run.md)
        model={
            "path": str(request.model),
            "sha256": hashlib.sha256(model).hexdigest(),
            "custom_ops": [],
            "ops_total": None,
        },
        inputs=[],
        outputs=[],
        latency_ms=[],
    )
    capture = StderrCapture(echo=False)
    try:
        with capture:
            _run_session(lib, model, flags, request, arrays, result)
    except RunFailure as failure:
        result.errors.append(str(failure))
    capture.replay()
    result.stderr_text = capture.text
    return result


def _run_session(
    lib: ctypes.CDLL,
    model: bytes,
    flags: int,
    request: RunRequest,
    arrays: list[np.ndarray],
    result: RunResult,
) -> None:
    session = Session(lib, model, flags)
    try:
        result.bindings = f"librknnrt {session.version()}"
        result.npu = _npu_settings(lib, session, flags, request.delegate_options)
        counts = InOutNum()
        session.query(RKNN_QUERY_IN_OUT_NUM, counts)
        inputs = session.tensors(RKNN_QUERY_INPUT_ATTR, counts.n_input)
        outputs = session.tensors(RKNN_QUERY_OUTPUT_ATTR, counts.n_output)
        _check_inputs(arrays, request.inputs, inputs)
        triples = zip(request.inputs, inputs, arrays)  # noqa: B905 (Python 3.9)
        result.inputs = [_info(path.name, t, str(array.dtype), t.input_shape) for path, t, array in triples]
        latencies = []
        produced: list[np.ndarray] = []
        for iteration in range(request.warmup + request.runs):
            session.set_inputs(arrays, inputs)
            elapsed = session.run()
            produced = session.outputs(outputs)
            if iteration >= request.warmup:
                latencies.append(round(elapsed, 3))
        result.latency_ms = latencies
        request.output_dir.mkdir(parents=True, exist_ok=True)
        for index, (array, tensor) in enumerate(zip(produced, outputs)):  # noqa: B905 (Python 3.9)
            name = f"out{index}.npy"
            np.save(request.output_dir / name, array)
            result.outputs.append(_info(name, tensor, str(array.dtype)))
    finally:
        session.close()


def _info(file: str, tensor: Tensor, dtype: str, shape: list[int] | None = None) -> TensorInfo:
    return TensorInfo(
        file=file,
        name=tensor.name,
        dtype=dtype,
        shape=list(tensor.dims) if shape is None else shape,
        scale=tensor.scale,
        zero_point=tensor.zero_point,
    )


def describe(tensors: list[Tensor]) -> list[dict[str, Any]]:
    """The tensors as plain dicts (for logs and tests)."""
    return [{"index": t.index, "name": t.name, "dims": t.dims, "dtype": t.dtype} for t in tensors]


def _npu_settings(lib: ctypes.CDLL, session: Session, flags: int, options: dict[str, str]) -> dict[str, Any]:
    """Apply the core mask and read the SRAM use while the context is alive."""
    mask = _core_mask(options)
    if mask is not None:
        if not hasattr(lib, "rknn_set_core_mask"):
            raise RunFailure(
                "this librknnrt has no rknn_set_core_mask; install a runtime of RKNN SDK 1.3.0 or newer."
            )
        _check(lib.rknn_set_core_mask(session.ctx, mask), "rknn_set_core_mask")
    sram: dict[str, Any] = {"requested": bool(flags & RKNN_FLAG_ENABLE_SRAM)}
    if sram["requested"]:
        try:
            text = Path(MM_FILE).read_text(errors="replace")
        except OSError:
            text = None
        sram.update(sram_in_use(text))
    return {"core_mask": options.get("core_mask"), "sram": sram}
