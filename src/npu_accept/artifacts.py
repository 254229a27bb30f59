# SPDX-License-Identifier: MIT
"""Artifacts are evidence; verdicts and reports come first.

A board's files in `--artifacts` (its npu-info and npu-run JSON, output tensors, logs) are kept
when the disk has room. `keep` never raises for a full or failing disk: the suite judges from
what it holds in memory, so a full disk costs the evidence, never a verdict. Bulky data (output
tensors) is kept only while RESERVE_BYTES stay free afterwards, so that a chatty board cannot
take the room the reports are written into at the end: its tensors are dropped first.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

RESERVE_BYTES = 4 << 20  # room left for every board's small files and the reports


def keep(path: Path, data: bytes | str, bulky: bool = False) -> bool:
    """Write `data` to `path` if possible (bulky data only while RESERVE_BYTES stay free);
    whether it was written. A partial file is removed."""
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    try:
        if bulky and shutil.disk_usage(path.parent).free - len(raw) < RESERVE_BYTES:
            return False
        path.write_bytes(raw)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        return False
