# SPDX-License-Identifier: MIT
"""On-target acceptance suite: `pytest pytests --target USER@HOST --board PROFILE`.

The plugin lives in the npu_accept package; running from a checkout works without installing it.
"""

import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parent.parent / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

# The plugin: options (--target, --board, …), per-board session fixtures, reports.
pytest_plugins = ["npu_accept.plugin"]
pytest_plugins.append("npu_accept.lab.pytest_labgrid")  # --lg-env: labgrid environments as --target
