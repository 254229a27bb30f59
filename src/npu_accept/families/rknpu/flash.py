# SPDX-License-Identifier: MIT
"""The flashing method this package registers with npu-flash (`npu_accept.flash.methods`)."""

from __future__ import annotations

from npu_accept.flash import rkdeveloptool

METHODS = {"rkdeveloptool": rkdeveloptool}
