# SPDX-License-Identifier: MIT
"""What collectors share: commands with the suite's output bounds (a board is untrusted: a flood
is cut, not buffered), and a model's input tensors uploaded for a collector's own runs (in its own
directory under the board's temp dir, so no collector depends on where the main runs keep theirs)."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept.boardlink import run_bounded
from npu_accept.inputs import make_inputs

__all__ = ["TIMEOUT_S", "run_bounded", "upload_inputs"]

TIMEOUT_S = 30.0


def upload_inputs(connection: Any, remote_dir: str, where: str, spec: Any) -> list[str]:
    """The board paths of SPEC's inputs, written to REMOTE_DIR/WHERE (made if missing)."""
    remote = f"{remote_dir}/{where}"
    result = run_bounded(connection, f"mkdir -p {shlex.quote(remote)}", TIMEOUT_S)
    if result.exit_code != 0:
        raise RuntimeError(f"mkdir {remote} failed on the board with status {result.exit_code}")
    paths = []
    with tempfile.TemporaryDirectory(prefix="npu-accept-inputs-") as tmp:
        for index, array in enumerate(make_inputs(spec)):
            local = Path(tmp) / f"in{index}.npy"
            np.save(local, array, allow_pickle=False)
            paths.append(f"{remote}/in{index}.npy")
            connection.put(local, paths[-1])
    return paths
