# SPDX-License-Identifier: MIT
"""The RKNN runtime's own log of each profile model, kept in the artifacts: one run with
RKNN_LOG_LEVEL=4 (per-layer information; RKNN SDK v2.3.2 user guide 5.x and 8.2.1), its stderr
saved as <model>/rknn-log-level-4.txt, so a failing check has the runtime's account beside it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

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
        inputs = f"{remote_dir}/{model.spec.name}/in0.npy"
        argv = ["python3", f"{remote_dir}/npu-run", "--model", model.spec.path, "--input", inputs]
        argv += ["--output-dir", f"{remote_dir}/rknn-log/{model.spec.name}", "--backend", "rknn"]
        argv += ["--runs", "1", "--warmup", "0", "--json"]
        command = f"RKNN_LOG_LEVEL={LOG_LEVEL} " + " ".join(shlex.quote(a) for a in argv)
        try:
            result = connection.run(command, timeout=RUN_TIMEOUT_S)
        except (CommandTimeout, TransportError) as exc:
            saved[model.spec.name] = None
            (artifacts / model.spec.name).mkdir(parents=True, exist_ok=True)
            (artifacts / model.spec.name / f"rknn-log-level-{LOG_LEVEL}.txt").write_text(
                f"not captured: {exc}\n"
            )
            continue
        local = artifacts / model.spec.name / f"rknn-log-level-{LOG_LEVEL}.txt"
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes((result.stderr or b"")[-MAX_LOG_BYTES:])
        saved[model.spec.name] = str(local.relative_to(artifacts.parent))
    return {FACT_KEY: saved}
