# SPDX-License-Identifier: MIT
"""Check 10's facts: what each vendor-format model on the board records about its maker — the
toolkit version and target platform of a .rknn, the chip of a .cvimodel — read from the file
itself (copied from the board; bounded)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from npu_accept.collectors.board import run_bounded
from npu_accept.families.rknpu.pairing import rknn_model_info
from npu_accept.transport import CommandTimeout, TransportError

FACT_KEY = "model_files"
MAX_MODEL_BYTES = 256 << 20
CVIMODEL_CHIP = slice(30, 46)  # cviruntime include/runtime/model.hpp MODEL_HEADER.chip


def describe_model(data: bytes) -> dict[str, Any]:
    """What a model file says about the tool that made it."""
    if data.startswith(b"CviModel"):
        chip = data[CVIMODEL_CHIP].split(b"\0")[0].decode("ascii", "replace") if len(data) >= 48 else ""
        return {
            "format": "cvimodel",
            "chip": chip or None,
            "version": f"{data[12]}.{data[13]}" if len(data) > 13 else None,
        }
    info = rknn_model_info(data)
    if info is not None:
        return {
            "format": "rknn",
            "format_version": info.format_version,
            "toolkit": info.toolkit_version,
            "platform": info.target_platform,
        }
    return {"format": None}


def collect_model_files(
    connection: Any, remote_dir: str, facts: Any, profile: Any, artifacts: Path
) -> dict[str, Any]:
    records: dict[str, Any] = {}
    for spec in profile.models:
        try:
            records[spec.name] = _read(connection, spec.path, artifacts / spec.name)
        except (CommandTimeout, TransportError) as exc:
            records[spec.name] = {"format": None, "error": f"{spec.path} could not be copied ({exc})"}
    return {FACT_KEY: records}


def _read(connection: Any, path: str, local_dir: Path) -> dict[str, Any]:
    size = run_bounded(connection, f"wc -c < {shlex.quote(path)}", 30.0)
    text = (
        size.stdout.decode(errors="replace").strip() if isinstance(size.stdout, bytes) else str(size.stdout)
    )
    if size.exit_code != 0 or not text.isdigit():
        return {"format": None, "error": f"{path} is not readable on the board"}
    if int(text) > MAX_MODEL_BYTES:
        return {"format": None, "error": f"{path} is larger than {MAX_MODEL_BYTES >> 20} MiB"}
    local_dir.mkdir(parents=True, exist_ok=True)
    local = local_dir / Path(path).name
    connection.get(path, local)
    try:
        return describe_model(local.read_bytes())
    finally:
        local.unlink(missing_ok=True)
