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

TIMEOUT_S = 30.0


def upload_inputs(connection: Any, remote_dir: str, where: str, spec: Any) -> list[str]:
    """The board paths of SPEC's inputs, written to REMOTE_DIR/WHERE (made if missing)."""
    from npu_accept.collect import make_inputs  # collect imports the registry, which imports this

    remote = f"{remote_dir}/{where}"
    result = connection.run(f"mkdir -p {shlex.quote(remote)}", timeout=TIMEOUT_S)
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


def run_bounded(connection: Any, command: str, timeout: float) -> Any:
    """Run COMMAND with the suite's bounds on what it may print."""
    from npu_accept.collect import Limits, _run  # collect imports the registry, which imports this

    return _run(connection, command, timeout, Limits())
