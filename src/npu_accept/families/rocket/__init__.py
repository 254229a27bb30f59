# SPDX-License-Identifier: MIT
"""The rocket family: its diagnosis signatures (signatures.yaml) and checks."""

# The kernel lines of this family's NPU (npu-diagnose counts their errors as the NPU stack's).
KERNEL_SUBJECT = r"rocket|Rocket"
