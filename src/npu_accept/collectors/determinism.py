# SPDX-License-Identifier: MIT
"""Check 9's facts: each profile model run again on the NPU with the same input, its outputs
compared byte for byte with the first NPU run's (each run a new npu-run process, so a new
interpreter, delegate and NPU context)."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept.transport import CommandTimeout, TransportError

FACT_KEY = "determinism"
DEFAULT_RUNS = 3
RUN_TIMEOUT_S = 600.0


def runs_wanted(profile: Any) -> int:
    return int((profile.determinism or {}).get("runs", DEFAULT_RUNS))


def digest(arrays: list[np.ndarray]) -> list[str]:
    return [hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16] for a in arrays]


def first_difference(first: list[np.ndarray], other: list[np.ndarray]) -> str | None:
    """Where OTHER differs from FIRST (one clause), None when identical."""
    if len(first) != len(other):
        return f"{len(other)} outputs instead of {len(first)}"
    for index, (a, b) in enumerate(zip(first, other, strict=True)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"output {index} is {b.dtype}{list(b.shape)} instead of {a.dtype}{list(a.shape)}"
        if not np.array_equal(a, b):
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            where = int(np.argmax(diff))
            changed = int(np.count_nonzero(diff))
            return f"output {index} differs in {changed} of {a.size} values (largest at flat index {where})"
    return None


def collect_determinism(
    connection: Any, remote_dir: str, facts: Any, profile: Any, artifacts: Path
) -> dict[str, Any]:
    from npu_accept.collect import make_inputs  # collect imports the registry, which imports this

    runs = runs_wanted(profile)
    records: dict[str, Any] = {}
    for model in facts.models:
        if model.npu is None or not model.npu.ok or not model.npu.outputs:
            continue
        name = model.spec.name
        local = artifacts / name / "determinism"
        local.mkdir(parents=True, exist_ok=True)
        record: dict[str, Any] = {"runs": runs, "digests": [digest(model.npu.outputs)], "differs": None}
        try:
            inputs = _upload_inputs(connection, remote_dir, name, make_inputs(model.spec), local)
            for run in range(2, runs + 1):
                outputs = _run_once(connection, remote_dir, model, profile, inputs, run, local)
                record["digests"].append(digest(outputs))
                difference = first_difference(model.npu.outputs, outputs)
                if difference and record["differs"] is None:
                    record["differs"] = {"run": run, "what": difference}
        except (CommandTimeout, TransportError, RuntimeError) as exc:
            record["error"] = str(exc)
        records[name] = record
    (artifacts / "determinism.json").write_text(json.dumps(records, indent=1) + "\n")
    return {FACT_KEY: records}


def _upload_inputs(
    connection: Any, remote_dir: str, name: str, arrays: list[np.ndarray], local: Path
) -> list[str]:
    remote = f"{remote_dir}/determinism/{name}"
    result = connection.run(f"mkdir -p {shlex.quote(remote)}/out", timeout=30.0)
    if result.exit_code != 0:
        raise RuntimeError(f"mkdir {remote} failed on the board with status {result.exit_code}")
    paths = []
    for index, array in enumerate(arrays):
        path = local / f"in{index}.npy"
        np.save(path, array, allow_pickle=False)
        paths.append(f"{remote}/in{index}.npy")
        connection.put(path, paths[-1])
    return paths


def _run_once(
    connection: Any, remote_dir: str, model: Any, profile: Any, inputs: list[str], run: int, local: Path
) -> list[np.ndarray]:
    out = f"{remote_dir}/determinism/{model.spec.name}/out{run}"
    argv = ["python3", f"{remote_dir}/npu-run", "--model", model.spec.path, "--input", *inputs]
    argv += ["--output-dir", out, "--backend", model.spec.backend, "--runs", "1", "--warmup", "0", "--json"]
    if model.spec.backend == "tflite-delegate" and profile.delegate is not None:
        argv += ["--delegate", profile.delegate.path]
        for key, value in profile.delegate.options.items():
            argv += ["--delegate-option", f"{key}={value}"]
    result = connection.run(" ".join(shlex.quote(a) for a in argv), timeout=RUN_TIMEOUT_S)
    try:
        report = json.loads(result.stdout)
    except ValueError:
        report = None
    if result.exit_code != 0 or not isinstance(report, dict):
        raise RuntimeError(f"run {run} of {model.spec.name} failed with status {result.exit_code}")
    outputs = []
    for index, output in enumerate(report.get("outputs") or []):
        name = Path(str(output.get("file") or f"out{index}.npy")).name
        target = local / f"run{run}-{name}"
        connection.get(f"{out}/{name}", target)
        outputs.append(np.load(target, allow_pickle=False))
    return outputs
