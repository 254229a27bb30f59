# SPDX-License-Identifier: MIT
"""RKNPU facts beyond the plain model runs: is the NPU SRAM really used, and do three cores beat one.

- SRAM: each profile model once more with RKNN_FLAG_ENABLE_SRAM (npu-run's rknn option sram=1);
  npu-run reads /sys/kernel/debug/rknpu/mm while its context holds the SRAM (RKNN SDK v2.3.2 guide
  5.7.3.2: "SRAM total size: 978944, used: 524288, free: 454656").
- Multi-core (boards whose NPU has three cores, RK3588): each model on core mask 0 and on 0_1_2
  (rknn_set_core_mask, guide 5.3), `performance.runs` runs each; the p50 speedup is reported.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept.artifacts import keep
from npu_accept.collectors.board import run_bounded, upload_inputs
from npu_accept.transport import CommandTimeout, TransportError

FACT_KEY = "rknn_modes"
RUN_TIMEOUT_S = 600.0
THREE_CORES = ("rockchip,rk3588",)


def three_cores(facts: Any, profile: Any) -> bool:
    compatible = set(((facts.info or {}).get("soc") or {}).get("compatible") or []) | set(
        profile.soc.compatible
    )
    return bool(compatible & set(THREE_CORES))


def collect_rknn_modes(
    connection: Any, remote_dir: str, facts: Any, profile: Any, artifacts: Path
) -> dict[str, Any]:
    record: dict[str, Any] = {"sram": {}, "multicore": {}}
    for model in facts.models:
        if model.spec.backend != "rknn" or model.npu is None or not model.npu.ok:
            continue
        name = model.spec.name
        try:
            inputs = upload_inputs(connection, remote_dir, f"rknn-modes/{name}", model.spec)
            report = _run(connection, remote_dir, model.spec.path, inputs, ["sram=1"], 1)
            record["sram"][name] = ((report.get("npu") or {}).get("sram") or {}) | {"error": None}
            if three_cores(facts, profile):
                runs = profile.performance.runs
                single = _run(connection, remote_dir, model.spec.path, inputs, ["core_mask=0"], runs)
                multi = _run(connection, remote_dir, model.spec.path, inputs, ["core_mask=0_1_2"], runs)
                record["multicore"][name] = _speedup(single, multi)
        except (CommandTimeout, TransportError, RuntimeError) as exc:
            record["sram"].setdefault(name, {"used_bytes": None, "error": str(exc)})
            record["multicore"].setdefault(name, {"error": str(exc)})
    keep(artifacts / "rknn-modes.json", json.dumps(record, indent=1) + "\n")
    return {FACT_KEY: record}


def _speedup(single: dict[str, Any], multi: dict[str, Any]) -> dict[str, Any]:
    one = float(np.percentile(single["latency_ms"], 50))
    three = float(np.percentile(multi["latency_ms"], 50))
    return {
        "single_p50_ms": one,
        "multi_p50_ms": three,
        "speedup": one / three if three > 0 else None,
        "error": None,
    }


def _run(
    connection: Any, remote_dir: str, model: str, inputs: list[str], options: list[str], runs: int
) -> dict[str, Any]:
    argv = ["python3", f"{remote_dir}/npu-run", "--model", model, "--input", *inputs]
    argv += [
        "--output-dir",
        f"{remote_dir}/rknn-modes/out",
        "--backend",
        "rknn",
        "--runs",
        str(runs),
        "--json",
    ]
    for option in options:
        argv += ["--delegate-option", option]
    result = run_bounded(connection, " ".join(shlex.quote(a) for a in argv), RUN_TIMEOUT_S)
    try:
        report = json.loads(result.stdout)
    except ValueError:
        report = None
    if result.exit_code != 0 or not isinstance(report, dict) or not report.get("latency_ms"):
        errors = (report or {}).get("errors") if isinstance(report, dict) else None
        detail = errors[0] if errors else f"status {result.exit_code}"
        raise RuntimeError(f"npu-run with {' '.join(options)} failed ({str(detail).rstrip('.')})")
    return report
