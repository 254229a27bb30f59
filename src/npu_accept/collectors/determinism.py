# SPDX-License-Identifier: MIT
"""Check 9's facts: each profile model run again on the NPU with the same input, its outputs
compared byte for byte with the first NPU run's (each run a new npu-run process, so a new
interpreter, delegate and NPU context)."""

from __future__ import annotations

import hashlib
import json
import posixpath
import shlex
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept import npyio
from npu_accept.transport import CommandTimeout, TransportError
from npu_accept.untrusted import BoardDataError, output_name, validated

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
    # collect imports the registry, which imports this
    from npu_accept.collect import fetch_files

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
            if not model.remote_inputs:
                raise RuntimeError(f"the inputs of {name} are not on the board (collected without the suite)")
            # The inputs are the suite's own, still on the board; each run is one round trip, and
            # the outputs of all runs come back in one stream.
            files = {
                run: _run_once(connection, remote_dir, model, profile, run, local)
                for run in range(2, runs + 1)
            }
            wanted = {member: path for items in files.values() for member, path in items}
            received: dict[str, bytes] = {}
            arrived, problem = fetch_files(connection, remote_dir, wanted, received=received)
            for run, items in files.items():
                if any(member not in arrived for member, _ in items):
                    raise RuntimeError(f"the outputs of run {run} of {name} did not arrive ({problem})")
                outputs = [npyio.load_bytes(received[member], str(path)) for member, path in items]
                record["digests"].append(digest(outputs))
                difference = first_difference(model.npu.outputs, outputs)
                if difference and record["differs"] is None:
                    record["differs"] = {"run": run, "what": difference}
        except (CommandTimeout, TransportError, RuntimeError, npyio.NpyError) as exc:
            record["error"] = str(exc)
        records[name] = record
    (artifacts / "determinism.json").write_text(json.dumps(records, indent=1) + "\n")
    return {FACT_KEY: records}


def _run_once(
    connection: Any, remote_dir: str, model: Any, profile: Any, run: int, local: Path
) -> list[tuple[str, Path]]:
    """Run the model once more; its output files (names under remote_dir, local paths), in order."""
    out = f"{remote_dir}/determinism/{model.spec.name}/out{run}"
    argv = ["python3", f"{remote_dir}/npu-run", "--model", model.spec.path, "--input", *model.remote_inputs]
    argv += ["--output-dir", out, "--backend", model.spec.backend, "--runs", "1", "--warmup", "0", "--json"]
    if model.spec.backend == "tflite-delegate" and profile.delegate is not None:
        argv += ["--delegate", profile.delegate.path]
        for key, value in profile.delegate.options.items():
            argv += ["--delegate-option", f"{key}={value}"]
    command = f"mkdir -p {shlex.quote(out)} && exec " + " ".join(shlex.quote(a) for a in argv)
    result = connection.run(command, timeout=RUN_TIMEOUT_S)
    what = f"run {run} of {model.spec.name}"
    try:
        report = validated(result.stdout, "npu-run", what)
    except BoardDataError:
        report = None
    if result.exit_code != 0 or report is None:
        raise RuntimeError(f"{what} failed with status {result.exit_code}")
    items = []
    for output in report["outputs"]:
        try:
            name = output_name(str(output["file"]), out, what)
        except BoardDataError as exc:
            raise RuntimeError(str(exc)) from None
        items.append((posixpath.relpath(f"{out}/{name}", remote_dir), local / f"run{run}-{name}"))
    return items
