# SPDX-License-Identifier: MIT
"""Check 8 — No NPU fault in the kernel log, since boot or during the run (SMMU/IOMMU faults,
remoteproc crashes, firmware load failures, job timeouts), apart from the profile's allowlist."""


def test_kernel_log(judge):
    judge("kernel_log")
