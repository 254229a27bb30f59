# SPDX-License-Identifier: MIT
"""The one-sentence error of the lab integration."""

from __future__ import annotations


class LabError(Exception):
    """A lab file or option cannot be used; str(error) names the thing and the fix."""
