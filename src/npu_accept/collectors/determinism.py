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

from npu_accept import npyio
from npu_accept.artifacts import keep
from npu_accept.transport import CommandTimeout, TransportError, visible
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
    from npu_accept.boardlink import Limits
    from npu_accept.collect import run_and_fetch

    runs = runs_wanted(profile)
    records: dict[str, Any] = {}
    for model in facts.models:
        if model.npu is None or not model.npu.ok or not model.npu.outputs:
            continue
        name = model.spec.name
        local = artifacts / name / "determinism"
        record: dict[str, Any] = {"runs": runs, "digests": [digest(model.npu.outputs)], "differs": None}
        try:
            if not model.remote_inputs:
                raise RuntimeError(f"the inputs of {name} are not on the board (collected without the suite)")
            # The inputs are the suite's own, still on the board. All runs, each a new npu-run
            # process, and their reports and outputs come back in one round trip.
            top = f"determinism/{name}"  # the profile schema keeps names to [A-Za-z0-9._-]
            script = "; ".join(_run_once(remote_dir, top, model, profile, run) for run in range(2, runs + 1))
            members, problem = run_and_fetch(
                connection, remote_dir, script, top, RUN_TIMEOUT_S * max(runs - 1, 1), Limits()
            )
            for run in range(2, runs + 1):
                outputs = _outputs_of(members, problem, f"{remote_dir}/{top}/out{run}", top, run, name)
                record["digests"].append(digest(outputs))
                difference = first_difference(model.npu.outputs, outputs)
                if difference and record["differs"] is None:
                    record["differs"] = {"run": run, "what": difference}
                if difference:  # the evidence; identical outputs are the first run's files
                    local.mkdir(parents=True, exist_ok=True)
                    for index, array in enumerate(outputs):
                        np.save(local / f"run{run}-out{index}.npy", array, allow_pickle=False)
        except (CommandTimeout, TransportError, RuntimeError, npyio.NpyError) as exc:
            record["error"] = str(exc)
        records[name] = record
    keep(artifacts / "determinism.json", json.dumps(records, indent=1) + "\n")
    return {FACT_KEY: records}


def _run_once(remote_dir: str, top: str, model: Any, profile: Any, run: int) -> str:
    """The shell command that runs the model once more into ``top/out<run>``: its report, stderr
    and exit status land in files there, fetched with the outputs."""
    out = f"{remote_dir}/{top}/out{run}"
    argv = ["python3", f"{remote_dir}/npu-run", "--model", model.spec.path, "--input", *model.remote_inputs]
    argv += ["--output-dir", out, "--backend", model.spec.backend, "--runs", "1", "--warmup", "0", "--json"]
    if model.spec.backend == "tflite-delegate" and profile.delegate is not None:
        argv += ["--delegate", profile.delegate.path]
        for key, value in profile.delegate.options.items():
            argv += ["--delegate-option", f"{key}={value}"]
    q = shlex.quote(out)
    return (
        f"mkdir -p {q} && {{ "
        + " ".join(shlex.quote(a) for a in argv)
        + f" </dev/null >{q}/{_REPORT} 2>{q}/{_STDERR}; echo $? >{q}/{_STATUS}; }}"
    )


_REPORT, _STDERR, _STATUS = ".npu-run.json", ".npu-run.stderr", ".status"


def _outputs_of(
    members: dict[str, bytes], problem: str, out: str, top: str, run: int, name: str
) -> list[np.ndarray]:
    """The outputs of one re-run, from the fetched files: its status and report first."""
    what = f"run {run} of {name}"
    folder = f"{top}/out{run}"
    status = members.get(f"{folder}/{_STATUS}", b"").strip()
    if not status:
        raise RuntimeError(f"{what} left no exit status ({problem})")
    try:
        report = validated(members.get(f"{folder}/{_REPORT}", b""), "npu-run", what)
    except BoardDataError:
        report = None
    if status != b"0" or report is None:
        raise RuntimeError(f"{what} failed with status {visible(status.decode(errors='replace'), 16)}")
    outputs = []
    for output in report["outputs"]:
        try:
            file = output_name(str(output["file"]), out, what)
        except BoardDataError as exc:
            raise RuntimeError(str(exc)) from None
        data = members.get(f"{folder}/{file}")
        if data is None:
            raise RuntimeError(f"the outputs of {what} did not arrive ({problem})")
        outputs.append(npyio.load_bytes(data, f"{what}: {file}"))
    return outputs
