# SPDX-License-Identifier: MIT
"""npu-run: run a model on one backend and print the npu-run/1 JSON (docs/npu-run.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from . import TOOL_VERSION
from .backends import BACKEND_MODULES, RunRequest, RunResult, load_backend
from .cli import EXIT_FAILED, EXIT_OK, SentenceParser, emit, fail_usage
from .delegate_log import delegation_lines
from .errors import RunFailure, UsageError

SCHEMA = "npu-run/1"
STDERR_TAIL_CHARS = 4000


def build_parser() -> SentenceParser:
    parser = SentenceParser(prog="npu-run", description="Run a model on an NPU backend or the CPU.")
    parser.add_argument("--model", required=True, type=Path, help="model file (.tflite, .rknn, .cvimodel)")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        type=Path,
        metavar="IN.npy",
        help="one .npy per model input, in order (repeat)",
    )
    parser.add_argument("--output-dir", required=True, type=Path, help="where out<i>.npy are written")
    parser.add_argument("--backend", required=True, choices=sorted(BACKEND_MODULES))
    parser.add_argument("--delegate", type=Path, help="external TFLite delegate library")
    parser.add_argument(
        "--delegate-option",
        action="append",
        default=[],
        metavar="K=V",
        help="option passed to the delegate (repeat)",
    )
    parser.add_argument("--runs", type=int, default=1, help="timed invocations (default 1)")
    parser.add_argument("--warmup", type=int, default=0, help="untimed invocations first (default 0)")
    parser.add_argument("--threads", type=int, help="CPU threads of the interpreter")
    parser.add_argument(
        "--no-xnnpack", action="store_true", help="do not apply TFLite's default XNNPACK delegate"
    )
    parser.add_argument("--json", action="store_true", help="print the npu-run/1 JSON object")
    return parser


def parse_options(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(
                f"--delegate-option '{pair}' is not KEY=VALUE; write it as e.g. "
                "--delegate-option target=imx95."
            )
        options[key] = value
    return options


def to_json(request: RunRequest, result: RunResult) -> dict[str, Any]:
    lines = [line.text for line in delegation_lines(result.stderr_text)]
    doc = {
        "schema": SCHEMA,
        "tool_version": TOOL_VERSION,
        "backend": request.backend,
        "bindings": result.bindings,
        "model": result.model,
        "delegate": result.delegate,
        "nodes": result.nodes.to_json(),
        "inputs": [t.to_json() for t in result.inputs],
        "outputs": [t.to_json() for t in result.outputs],
        "latency_ms": result.latency_ms,
        "log": {"stderr_tail": result.stderr_text[-STDERR_TAIL_CHARS:], "delegate_lines": lines},
        "errors": result.errors,
    }
    if result.npu is not None:
        doc["npu"] = result.npu
    return doc


def human(doc: dict[str, Any]) -> str:
    nodes = doc["nodes"]
    lat = doc["latency_ms"]
    lines = [
        f"backend {doc['backend']} ({doc['bindings']}), model {doc['model']['path']}",
        f"nodes: {nodes['total']} total, {nodes['delegated']} delegated in {nodes['partitions']} "
        f"partition(s), XNNPACK {'applied' if nodes['xnnpack_applied'] else 'not applied'}",
    ]
    if lat:
        lines.append(f"latency: median {sorted(lat)[len(lat) // 2]:.3f} ms over {len(lat)} run(s)")
    lines += [f"output {o['file']}: {o['dtype']}{o['shape']}" for o in doc["outputs"]]
    lines += [f"error: {e}" for e in doc["errors"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        request = RunRequest(
            model=args.model,
            inputs=list(args.input),
            output_dir=args.output_dir,
            backend=args.backend,
            delegate=args.delegate,
            delegate_options=parse_options(args.delegate_option),
            runs=args.runs,
            warmup=args.warmup,
            no_xnnpack=args.no_xnnpack,
            threads=args.threads,
        )
        if not request.model.is_file():
            raise UsageError(f"model file {request.model} does not exist; give the path of the model.")
        if not request.inputs:
            raise UsageError("no --input given; pass one .npy file per model input.")
        result = load_backend(request.backend)(request)
    except UsageError as error:
        return fail_usage("npu-run", error)
    except RunFailure as failure:
        print(f"npu-run: {failure}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # one sentence, never a traceback, whatever a backend hit
        print(
            f"npu-run: the run failed unexpectedly ({type(exc).__name__}: "
            f"{str(exc).strip()[:300]}); report this with the command line.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    doc = to_json(request, result)
    if not emit(json.dumps(doc, indent=1) if args.json else human(doc)):
        return EXIT_FAILED
    return EXIT_FAILED if result.errors else EXIT_OK
