# SPDX-License-Identifier: MIT
"""The cvitek-tpu family: its diagnosis signatures and version pairings (signatures.yaml,
versions.yaml), its checks (checks/) and findings."""

# The kernel lines of this family's NPU (npu-diagnose counts their errors as the NPU stack's).
KERNEL_SUBJECT = r"cvi[-_]?tpu"
