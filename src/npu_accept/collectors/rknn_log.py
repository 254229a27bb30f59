# SPDX-License-Identifier: MIT
"""The RKNN runtime's own log of each profile model, kept in the artifacts: one run with
RKNN_LOG_LEVEL=4 (per-layer information; RKNN SDK v2.3.2 user guide 5.x and 8.2.1), its stderr
saved as <model>/rknn-log-level-4.txt, so a failing check has the runtime's account beside it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from npu_accept.collectors.board import run_bounded, upload_inputs
from npu_accept.transport import CommandTimeout, TransportError

FACT_KEY = "rknn_logs"
LOG_LEVEL = 4
MAX_LOG_BYTES = 4 << 20
RUN_TIMEOUT_S = 600.0


def collect_rknn_logs(
    connection: Any, remote_dir: str, facts: Any, profile: Any, artifacts: Path
) -> dict[str, Any]:
    saved: dict[str, str | None] = {}
    for model in facts.models:
        if model.spec.backend != "rknn":
            continue
        local = artifacts / model.spec.name / f"rknn-log-level-{LOG_LEVEL}.txt"
        local.parent.mkdir(parents=True, exist_ok=True)
        try:
            local.write_bytes(_capture(connection, remote_dir, model.spec)[-MAX_LOG_BYTES:])
            saved[model.spec.name] = str(local.relative_to(artifacts.parent))
        except (CommandTimeout, TransportError, RuntimeError) as exc:
            local.write_text(f"not captured: {exc}\n")
            saved[model.spec.name] = None
    return {FACT_KEY: saved}


def _capture(connection: Any, remote_dir: str, spec: Any) -> bytes:
    """The stderr of one run of SPEC with RKNN_LOG_LEVEL set."""
    inputs = upload_inputs(connection, remote_dir, f"rknn-log/{spec.name}", spec)
    argv = ["python3", f"{remote_dir}/npu-run", "--model", spec.path, "--input", *inputs]
    argv += ["--output-dir", f"{remote_dir}/rknn-log/{spec.name}/out", "--backend", "rknn"]
    argv += ["--runs", "1", "--warmup", "0", "--json"]
    command = f"RKNN_LOG_LEVEL={LOG_LEVEL} " + " ".join(shlex.quote(a) for a in argv)
    return run_bounded(connection, command, RUN_TIMEOUT_S).stderr or b""
