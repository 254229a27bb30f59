# SPDX-License-Identifier: MIT
"""The rknpu family: its diagnosis signatures and version pairings (signatures.yaml,
versions.yaml), its checks (checks/), findings, flashing method and pairing rules."""

# The kernel lines of this family's NPU (npu-diagnose counts their errors as the NPU stack's).
KERNEL_SUBJECT = r"rknpu|RKNPU"
