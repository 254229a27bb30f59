# SPDX-License-Identifier: MIT
"""Host side of meta-npu: prove on a real board that the NPU really works."""

__version__ = "0.1.0"
