# SPDX-License-Identifier: MIT
"""Board twins for the host tests: see docs/design.md "Board twins" and harness.py."""

from npu_accept.sim.harness import DeviceNode, Twin, TwinError, TwinFile, TwinProcess, TwinSpec, start_twin

__all__ = ["DeviceNode", "Twin", "TwinError", "TwinFile", "TwinProcess", "TwinSpec", "start_twin"]
