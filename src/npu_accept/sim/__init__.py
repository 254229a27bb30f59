# SPDX-License-Identifier: MIT
"""Simulated boards ("board twins") for `npu-accept demo` and the project's tests.

A twin is a real OpenSSH sshd in private Linux namespaces presenting a board's files (sysfs,
device tree, device nodes, firmware, libraries, models) over the host's root; the suite talks to
it over SSH exactly as to a board, and the on-target tools run inside it on the host's CPU.
harness.py starts twins, imx95.py describes the NXP i.MX95 ones, delegate/ is the twin's TFLite
delegate standing in for NXP's Neutron delegate, models.py the real model and photo they run.
"""

from npu_accept.sim.harness import DeviceNode, Twin, TwinError, TwinFile, TwinProcess, TwinSpec, start_twin

__all__ = ["DeviceNode", "Twin", "TwinError", "TwinFile", "TwinProcess", "TwinSpec", "start_twin"]
