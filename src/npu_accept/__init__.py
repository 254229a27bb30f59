# SPDX-License-Identifier: MIT
"""Host side of meta-npu: prove on a real board that the NPU really works."""

from npu_accept.paths import make_target_package_importable

__version__ = "1.0.0"

make_target_package_importable()
