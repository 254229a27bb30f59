# SPDX-License-Identifier: MIT
"""On-target NPU tools of meta-npu: npu-run (run a model on a backend) and npu-info (probe the NPU stack).

Runs on the board with Python >= 3.9, the standard library, numpy and the TFLite bindings only.
"""

TOOL_VERSION = "1.0.0"
