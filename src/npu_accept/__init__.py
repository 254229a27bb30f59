# SPDX-License-Identifier: MIT
"""Host side of meta-npu: prove on a real board that the NPU really works."""

import importlib.util

__version__ = "1.0.0"

if importlib.util.find_spec("npu_target") is None:  # a checkout on PYTHONPATH, not installed
    raise ImportError(
        "npu_accept needs its on-target package npu_target, which is not installed: install "
        "meta-npu-tools (`python3 -m pip install -e .` in the checkout), or put "
        "meta-npu/recipes-tools/npu-tools/files on PYTHONPATH beside src."
    )
