# SPDX-License-Identifier: MIT
"""The error a user of npu-flash can hit: one sentence that names the thing and the fix."""

from __future__ import annotations


class FlashError(Exception):
    """Flashing cannot go on; str(error) is one sentence naming the problem and the fix."""
