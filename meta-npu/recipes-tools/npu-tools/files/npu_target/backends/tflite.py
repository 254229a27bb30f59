# SPDX-License-Identifier: MIT
"""tflite-cpu and tflite-delegate: run a .tflite model with tflite_runtime or ai_edge_litert.

Node counting: the Python interpreter lists every node of the model followed by one node named
DELEGATE per partition a delegate took (appended by ReplaceNodeSubsetsWithDelegateKernels). The
nodes a partition replaced are found by walking back from its output tensors to its input tensors
through the original nodes. External delegates are applied when the Interpreter is constructed,
XNNPACK (the default delegate) lazily in allocate_tensors, so the two are told apart by when their
DELEGATE nodes appear.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..delegate_log import delegate_version, delegation_lines
from ..errors import RunFailure, UsageError
from ..fdcapture import StderrCapture
from ..tflite_model import read_model
from . import NodeCounts, RunRequest, RunResult, TensorInfo, load_inputs

BINDINGS = ("tflite_runtime", "ai_edge_litert")


def _import_bindings() -> tuple[Any, str]:
    for package in BINDINGS:
        try:
            module = importlib.import_module(f"{package}.interpreter")
        except ImportError:
            continue
        version = getattr(importlib.import_module(package), "__version__", None)
        return module, f"{package} {version or 'unknown'}"
    raise UsageError(
        "no TFLite Python bindings found (neither tflite_runtime nor ai_edge_litert imports); "
        "install python3-tensorflow-lite on the board or pip install ai-edge-litert."
    )


def _replaced_nodes(ops: list[dict[str, Any]], delegate_index: int) -> set[int]:
    """Indices of the original nodes that the DELEGATE node `delegate_index` replaced."""
    producer: dict[int, int] = {}
    for op in ops:
        if op["op_name"] == "DELEGATE":
            continue
        for tensor in op["outputs"]:
            producer[int(tensor)] = op["index"]
    boundary = {int(t) for t in ops[delegate_index]["inputs"] if t >= 0}
    stack = [int(t) for t in ops[delegate_index]["outputs"] if t >= 0]
    seen_tensors: set[int] = set()
    replaced: set[int] = set()
    while stack:
        tensor = stack.pop()
        if tensor in seen_tensors or tensor in boundary:
            continue
        seen_tensors.add(tensor)
        node = producer.get(tensor)
        if node is None or node in replaced:
            continue
        replaced.add(node)
        stack.extend(int(t) for t in ops[node]["inputs"] if t >= 0)
    return replaced


def _count(ops: list[dict[str, Any]], delegate_nodes: list[int]) -> tuple[int, int]:
    replaced: set[int] = set()
    for index in delegate_nodes:
        replaced |= _replaced_nodes(ops, index)
    return len(replaced), len(delegate_nodes)


def _tensor_info(detail: dict[str, Any], file: str) -> TensorInfo:
    scale, zero_point = detail.get("quantization", (0.0, 0))
    return TensorInfo(
        file=file,
        name=str(detail["name"]),
        dtype=np.dtype(detail["dtype"]).name,
        shape=[int(d) for d in detail["shape"]],
        scale=float(scale),
        zero_point=int(zero_point),
    )


def _check_inputs(arrays: list[np.ndarray], details: list[dict[str, Any]], paths: list[Path]) -> None:
    if len(arrays) != len(details):
        raise UsageError(
            f"the model has {len(details)} input(s) but {len(arrays)} --input file(s) were "
            "given; pass one .npy per model input, in order."
        )
    # zip(strict=) needs Python 3.10 and the board may have 3.9; lengths were checked above.
    for array, detail, path in zip(arrays, details, paths):  # noqa: B905
        want_dtype = np.dtype(detail["dtype"])
        want_shape = tuple(int(d) for d in detail["shape"])
        if array.dtype != want_dtype or tuple(array.shape) != want_shape:
            raise UsageError(
                f"input {path} is {array.dtype.name}{list(array.shape)} but model input "
                f"'{detail['name']}' needs {want_dtype.name}{list(want_shape)}; save the array with that "
                "dtype and shape."
            )


def run(request: RunRequest) -> RunResult:
    summary = read_model(request.model)
    arrays = load_inputs(request.inputs)
    if request.runs < 1 or request.warmup < 0:
        raise UsageError("--runs must be at least 1 and --warmup at least 0.")
    use_delegate = request.backend == "tflite-delegate"
    if use_delegate and request.delegate is None:
        raise UsageError(
            "backend tflite-delegate needs --delegate LIB (e.g. /usr/lib/libneutron_delegate.so)."
        )
    if not use_delegate and request.delegate is not None:
        raise UsageError(
            "--delegate only applies to --backend tflite-delegate; drop it or change the backend."
        )
    tflite, bindings = _import_bindings()

    model_json = {
        "path": summary.path,
        "sha256": summary.sha256,
        "custom_ops": summary.custom_ops,
        "ops_total": summary.ops_total,
    }
    delegate_json: dict[str, Any] | None = None
    if use_delegate:
        delegate_json = {
            "path": str(request.delegate),
            "version": None,
            "options": dict(request.delegate_options),
            "loaded": False,
        }
    nodes = NodeCounts(total=summary.ops_total)
    result = RunResult(
        bindings=bindings,
        model=model_json,
        delegate=delegate_json,
        nodes=nodes,
        inputs=[],
        outputs=[],
        latency_ms=[],
    )

    # The runtime's log is echoed only for a real run: a usage error stays one sentence.
    capture = StderrCapture(echo=False)
    try:
        with capture:
            _run_captured(tflite, request, arrays, result)
    except RunFailure as failure:
        result.errors.append(str(failure))
    capture.replay()
    result.stderr_text = capture.text
    _cross_check(result, capture.text, use_delegate)
    return result


def _make_interpreter(tflite: Any, request: RunRequest, result: RunResult) -> Any:
    kwargs: dict[str, Any] = {"model_path": str(request.model)}
    if request.threads is not None:
        kwargs["num_threads"] = request.threads
    if request.no_xnnpack:
        resolver = getattr(tflite, "OpResolverType", None)
        if resolver is None:
            raise UsageError(
                "these TFLite bindings cannot disable XNNPACK (no OpResolverType); drop --no-xnnpack."
            )
        kwargs["experimental_op_resolver_type"] = resolver.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    if result.delegate is not None:
        assert request.delegate is not None
        if not request.delegate.exists():
            raise RunFailure(
                f"delegate library {request.delegate} does not exist; install the delegate "
                "package or fix --delegate."
            )
        try:
            delegate = tflite.load_delegate(str(request.delegate), dict(request.delegate_options))
        except (ValueError, OSError, AttributeError) as exc:
            raise RunFailure(
                f"delegate library {request.delegate} failed to load "
                f"({str(exc).strip() or type(exc).__name__})."
            ) from None
        result.delegate["loaded"] = True
        kwargs["experimental_delegates"] = [delegate]
    try:
        return tflite.Interpreter(**kwargs)
    except (ValueError, RuntimeError) as exc:
        raise RunFailure(
            f"the interpreter could not be built for {request.model} ({_first_line(exc)})."
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _run_captured(tflite: Any, request: RunRequest, arrays: list[np.ndarray], result: RunResult) -> None:
    interpreter = _make_interpreter(tflite, request, result)
    after_external = interpreter._get_ops_details()
    external_nodes = [op["index"] for op in after_external if op["op_name"] == "DELEGATE"]
    try:
        interpreter.allocate_tensors()
    except (ValueError, RuntimeError) as exc:
        raise RunFailure(f"allocate_tensors failed for {request.model} ({_first_line(exc)}).") from None
    ops = interpreter._get_ops_details()
    all_delegates = [op["index"] for op in ops if op["op_name"] == "DELEGATE"]
    lazy_nodes = [i for i in all_delegates if i not in external_nodes]
    nodes = result.nodes
    nodes.total = len(ops) - len(all_delegates)
    nodes.source = "execution-plan"
    if result.delegate is not None:
        nodes.delegated, nodes.partitions = _count(ops, external_nodes)
    nodes.xnnpack_nodes, nodes.xnnpack_partitions = _count(ops, lazy_nodes)
    nodes.xnnpack_applied = nodes.xnnpack_partitions > 0

    input_details = interpreter.get_input_details()
    _check_inputs(arrays, input_details, request.inputs)
    pairs = list(zip(input_details, request.inputs, arrays))  # noqa: B905 (checked, Python 3.9)
    result.inputs = [_tensor_info(d, str(p)) for d, p, _ in pairs]
    for detail, _, array in pairs:
        interpreter.set_tensor(detail["index"], array)
    latencies = []
    try:
        for i in range(request.warmup + request.runs):
            start = time.perf_counter()
            interpreter.invoke()
            elapsed = (time.perf_counter() - start) * 1000.0
            if i >= request.warmup:
                latencies.append(round(elapsed, 4))
    except (ValueError, RuntimeError) as exc:
        raise RunFailure(f"invoke failed for {request.model} ({_first_line(exc)}).") from None
    result.latency_ms = latencies
    request.output_dir.mkdir(parents=True, exist_ok=True)
    outputs = []
    for i, detail in enumerate(interpreter.get_output_details()):
        path = request.output_dir / f"out{i}.npy"
        np.save(path, np.array(interpreter.get_tensor(detail["index"])))
        outputs.append(_tensor_info(detail, str(path)))
    result.outputs = outputs


def _cross_check(result: RunResult, text: str, use_delegate: bool) -> None:
    """Compare the execution-plan count with the delegate's own log line, when it printed one."""
    if result.delegate is not None:
        result.delegate["version"] = delegate_version(text)
    if not use_delegate or result.nodes.source != "execution-plan":
        return
    for line in delegation_lines(text):
        if "xnnpack" in line.name.lower():
            continue
        partitions_differ = line.partitions is not None and line.partitions != result.nodes.partitions
        if line.delegated != result.nodes.delegated or partitions_differ:
            result.errors.append(
                f"the delegate logged '{line.text}' but the execution plan shows "
                f"{result.nodes.delegated} node(s) in {result.nodes.partitions} partition(s); "
                "the delegate's log cannot be trusted."
            )
        if line.total is not None and line.total != result.nodes.total:
            result.errors.append(
                f"the delegate counted {line.total} nodes but the model has "
                f"{result.nodes.total}; it saw a different graph."
            )
