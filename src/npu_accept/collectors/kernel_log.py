# SPDX-License-Identifier: MIT
"""Check 8's facts: the board's kernel log after the model runs (`dmesg`, what a board has)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npu_accept.artifacts import keep
from npu_accept.collectors.board import run_bounded
from npu_accept.transport import CommandTimeout, OutputFlood

FACT_KEY = "kernel_log"
MAX_LINES = 20000
MAX_LINE_CHARS = 2000
TIMEOUT_S = 30.0


def collect_kernel_log(
    connection: Any, remote_dir: str, facts: Any, profile: Any, artifacts: Path
) -> dict[str, Any]:
    """dmesg's lines (bounded), saved as dmesg.txt in the board's artifacts."""
    try:
        result = run_bounded(connection, "dmesg", TIMEOUT_S)
    except CommandTimeout:
        return {FACT_KEY: {"lines": [], "error": f"dmesg did not finish within {TIMEOUT_S:.0f} s"}}
    except OutputFlood as exc:
        return {FACT_KEY: {"lines": [], "error": f"dmesg printed more than the suite keeps ({exc})"}}
    text = (
        result.stdout.decode("utf-8", "replace") if isinstance(result.stdout, bytes) else str(result.stdout)
    )
    if result.exit_code != 0:
        detail = result.stderr.decode("utf-8", "replace").strip()[:200] if result.stderr else ""
        return {
            FACT_KEY: {
                "lines": [],
                "error": f"dmesg failed with status {result.exit_code}" + (f" ({detail})" if detail else ""),
            }
        }
    lines = [line[:MAX_LINE_CHARS] for line in text.splitlines()[-MAX_LINES:]]
    keep(artifacts / "dmesg.txt", "\n".join(lines) + "\n")
    return {FACT_KEY: {"lines": lines, "error": None}}
